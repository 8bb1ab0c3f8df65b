"""API keys: format, hashing, authentication failures, lenient parsing, last-used throttling."""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta

import pytest

from flashcards import services
from flashcards.models import ApiKey
from flashcards.services import DomainError, InvalidApiKey, NotFoundError
from tests.factories import UserFactory

KEY_RE = re.compile(r"^fca_[0-9A-HJKMNP-TV-Z]{8}_[0-9A-HJKMNP-TV-Z]{26}$")


@pytest.fixture
def key_and_plaintext(user, workspace):
    return services.create_api_key(user, "laptop agent", workspace=workspace)


def test_created_key_has_the_documented_format_and_authenticates(key_and_plaintext, user):
    api_key, plaintext = key_and_plaintext
    assert KEY_RE.match(plaintext)
    assert plaintext.split("_")[1] == api_key.key_id
    assert services.authenticate_api_key(plaintext) == api_key
    assert services.authenticate_api_key(plaintext).user == user


def test_only_a_hash_of_the_secret_is_stored(key_and_plaintext):
    api_key, plaintext = key_and_plaintext
    secret = plaintext.split("_")[2]
    stored = ApiKey.objects.filter(pk=api_key.pk).values().get()
    assert stored["secret_hash"] == hashlib.sha256(secret.encode()).hexdigest()
    assert not any(secret in str(value) for value in stored.values())


def test_keys_are_unique(user):
    keys = {services.create_api_key(user, "k")[1] for _ in range(20)}
    assert len(keys) == 20
    assert ApiKey.objects.values("key_id").distinct().count() == 20


def test_wrong_secret_and_unknown_key_id_fail(key_and_plaintext):
    api_key, plaintext = key_and_plaintext
    secret = plaintext.split("_")[2]
    wrong_secret = f"fca_{api_key.key_id}_{'0' * 26 if secret != '0' * 26 else '1' * 26}"
    unknown_id = f"fca_{'0' * 8 if api_key.key_id != '0' * 8 else '1' * 8}_{secret}"
    for candidate in (wrong_secret, unknown_id):
        with pytest.raises(InvalidApiKey):
            services.authenticate_api_key(candidate)


def test_revoked_keys_fail_and_revoking_twice_keeps_the_first_time(key_and_plaintext):
    api_key, plaintext = key_and_plaintext
    services.revoke_api_key(api_key)
    first = ApiKey.objects.get(pk=api_key.pk).revoked_at
    assert first is not None
    services.revoke_api_key(ApiKey.objects.get(pk=api_key.pk))
    assert ApiKey.objects.get(pk=api_key.pk).revoked_at == first
    with pytest.raises(InvalidApiKey):
        services.authenticate_api_key(plaintext)


def test_keys_of_inactive_users_fail(key_and_plaintext, user):
    user.is_active = False
    user.save()
    with pytest.raises(InvalidApiKey):
        services.authenticate_api_key(key_and_plaintext[1])


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "fca_",
        "Bearer fca_x",
        "fca_ABCDEFGH",
        "fca_ABCDEFG_0123456789ABCDEFGHJKMNPQRS",  # 7-char id
        "fca_ABCDEFGH_0123456789ABCDEFGHJKMNPQR",  # 25-char secret
        "fca_ABCDEFGH_0123456789ABCDEFGHJKMNPQRST",  # 27-char secret
        "fca_ABCDEFGI_0123456789ABCDEFGHJKMNPQRS",  # I is not Crockford base32
        "fcb_ABCDEFGH_0123456789ABCDEFGHJKMNPQRS",
        "fca_ABCDEFGH_0123456789ABCDEFGHJKMNPQRS\x00",
        "ключ",
    ],
)
def test_malformed_keys_fail(db, raw):
    with pytest.raises(InvalidApiKey):
        services.authenticate_api_key(raw)


def test_parsing_ignores_case_spaces_and_dashes(key_and_plaintext):
    api_key, plaintext = key_and_plaintext
    variants = [
        plaintext.lower(),
        f"  {plaintext}\n",
        "-".join(plaintext[i : i + 4] for i in range(0, len(plaintext), 4)),
        " ".join(plaintext),
    ]
    for variant in variants:
        assert services.authenticate_api_key(variant) == api_key


def test_last_used_is_refreshed_at_most_every_five_minutes(key_and_plaintext, settings):
    # The test moves last_used_at behind the service's back, which a cached key would not see
    # until its entry lapses (tests/flashcards/test_key_cache.py): read the database every time.
    settings.AUTH_CACHE_SECONDS = 0
    api_key, plaintext = key_and_plaintext
    assert api_key.last_used_at is None
    services.authenticate_api_key(plaintext)
    first = ApiKey.objects.get(pk=api_key.pk).last_used_at
    assert first is not None
    ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=first - timedelta(minutes=4))
    services.authenticate_api_key(plaintext)
    assert ApiKey.objects.get(pk=api_key.pk).last_used_at == first - timedelta(minutes=4)
    ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=first - timedelta(minutes=6))
    services.authenticate_api_key(plaintext)
    assert ApiKey.objects.get(pk=api_key.pk).last_used_at >= first


@pytest.mark.parametrize("label", ["", "   ", "x" * 121, None])
def test_labels_are_1_to_120_characters(user, label):
    with pytest.raises(DomainError) as exc:
        services.create_api_key(user, label)
    assert exc.value.field == "label"
    assert not ApiKey.objects.exists()


def test_label_is_trimmed_and_120_characters_are_fine(user):
    assert services.create_api_key(user, "  agent  ")[0].label == "agent"
    assert services.create_api_key(user, "x" * 120)[0].label == "x" * 120


def test_a_key_cannot_select_a_workspace_of_someone_else(user, other_workspace):
    with pytest.raises(NotFoundError):
        services.create_api_key(user, "k", workspace=other_workspace)
    assert not ApiKey.objects.exists()


def test_each_key_has_its_own_selected_workspace(user, workspace):
    second = services.create_workspace(user, "Work")
    first_key, _ = services.create_api_key(user, "a", workspace=workspace)
    second_key, _ = services.create_api_key(user, "b", workspace=second)
    assert services.resolve_key_workspace(first_key) == workspace
    assert services.resolve_key_workspace(second_key) == second
    other = UserFactory()
    assert services.create_api_key(other, "c")[0].selected_workspace is None
