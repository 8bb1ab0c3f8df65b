"""The per-process cache of authenticated keys (flashcards.services.key_cache): a known key costs
no query, and every change the product makes is seen at once — here, and in other processes
through the shared generation; changes behind its back within AUTH_CACHE_SECONDS."""

from __future__ import annotations

import time

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from flashcards import services
from flashcards.models import ApiKey, Membership
from flashcards.services import InvalidApiKey, key_cache


def _queries(function, *args):
    with CaptureQueriesContext(connection) as captured:
        result = function(*args)
    return result, len(captured.captured_queries)


def test_a_known_key_and_its_workspace_cost_no_query(api_key, workspace):
    services.authenticate_api_key(api_key.plaintext)  # its first use also stamps last_used_at
    key_cache.keys.clear()
    first, loading = _queries(services.authenticate_api_key, api_key.plaintext)
    assert loading == 1  # the key, its user and its selection together
    assert services.resolve_key_workspace(first) == workspace
    again, cached = _queries(services.authenticate_api_key, api_key.plaintext)
    assert again.pk == api_key.pk and cached == 0
    resolved, resolving = _queries(services.resolve_key_workspace, again)
    assert resolved == workspace and resolving == 0


def test_a_cached_key_id_never_admits_another_secret(api_key):
    services.authenticate_api_key(api_key.plaintext)
    key_id = api_key.plaintext.split("_")[1]
    with pytest.raises(InvalidApiKey):
        services.authenticate_api_key(f"fca_{key_id}_{'0' * 26}")
    assert services.authenticate_api_key(api_key.plaintext).pk == api_key.pk


def test_revocation_is_seen_by_the_next_request(api_key):
    services.authenticate_api_key(api_key.plaintext)
    services.revoke_api_key(ApiKey.objects.get(pk=api_key.pk))
    with pytest.raises(InvalidApiKey, match="revoked"):
        services.authenticate_api_key(api_key.plaintext)


def test_a_new_selection_is_seen_by_the_next_request(api_key, user, workspace):
    second = services.create_workspace(user, "Second")
    key = services.authenticate_api_key(api_key.plaintext)
    assert services.resolve_key_workspace(key) == workspace
    services.select_key_workspace(ApiKey.objects.get(pk=api_key.pk), second.pk)
    key = services.authenticate_api_key(api_key.plaintext)
    assert services.resolve_key_workspace(key) == second


def test_losing_the_membership_is_seen_by_the_next_request(api_key, user, workspace):
    key = services.authenticate_api_key(api_key.plaintext)
    assert services.resolve_key_workspace(key) == workspace
    Membership.objects.filter(user=user, workspace=workspace).delete()
    key = services.authenticate_api_key(api_key.plaintext)
    # Self-healed away from the workspace it may no longer use: a new Personal one.
    resolved = services.resolve_key_workspace(key)
    assert resolved != workspace and resolved.name == "Personal"


def test_a_deactivated_user_is_refused_at_the_next_request(api_key, user):
    services.authenticate_api_key(api_key.plaintext)
    user.is_active = False
    user.save()
    with pytest.raises(InvalidApiKey, match="inactive"):
        services.authenticate_api_key(api_key.plaintext)


def test_another_process_change_is_seen_through_the_shared_generation(api_key, monkeypatch):
    """Another process revoked the key and bumped the generation: this process's entry, stored
    under the old generation, is not used again."""
    services.authenticate_api_key(api_key.plaintext)
    ApiKey.objects.filter(pk=api_key.pk).update(revoked_at=api_key.created_at)
    # Behind the cache's back and without a bump: still served from the cache...
    assert services.authenticate_api_key(api_key.plaintext).pk == api_key.pk
    cache.set(key_cache.GENERATION_KEY, (cache.get(key_cache.GENERATION_KEY) or 0) + 1)
    # ...until the generation moves, as the other process's commit does, and this process next
    # reads it (at most AUTH_GENERATION_CHECK_SECONDS later).
    clock = [time.monotonic() + key_cache.generation_check_seconds() + 0.01]
    monkeypatch.setattr(key_cache.time, "monotonic", lambda: clock[0])
    with pytest.raises(InvalidApiKey, match="revoked"):
        services.authenticate_api_key(api_key.plaintext)


def test_a_change_behind_the_products_back_is_seen_within_the_bound(api_key, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(key_cache.time, "monotonic", lambda: clock[0])
    services.authenticate_api_key(api_key.plaintext)
    ApiKey.objects.filter(pk=api_key.pk).update(revoked_at=api_key.created_at)
    clock[0] += key_cache.ttl_seconds() - 0.01
    assert services.authenticate_api_key(api_key.plaintext).pk == api_key.pk
    clock[0] += 0.02
    with pytest.raises(InvalidApiKey, match="revoked"):
        services.authenticate_api_key(api_key.plaintext)


def test_an_unreadable_shared_cache_turns_the_cache_off(api_key, monkeypatch):
    services.authenticate_api_key(api_key.plaintext)

    def broken(*args, **kwargs):
        raise ConnectionError("cache down")

    monkeypatch.setattr(key_cache.cache, "get", broken)
    key_cache.forget_generation()  # as once the last reading is AUTH_GENERATION_CHECK_SECONDS old
    ApiKey.objects.filter(pk=api_key.pk).update(revoked_at=api_key.created_at)
    with pytest.raises(InvalidApiKey, match="revoked"):
        services.authenticate_api_key(api_key.plaintext)


def test_zero_seconds_turns_the_cache_off(api_key, settings):
    settings.AUTH_CACHE_SECONDS = 0
    services.authenticate_api_key(api_key.plaintext)
    _, queries = _queries(services.authenticate_api_key, api_key.plaintext)
    assert queries == 1


def test_the_generation_is_bumped_only_when_the_change_commits(
    api_key, django_capture_on_commit_callbacks
):
    before = cache.get(key_cache.GENERATION_KEY) or 0
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        services.revoke_api_key(ApiKey.objects.get(pk=api_key.pk))
    assert (cache.get(key_cache.GENERATION_KEY) or 0) == before
    for callback in callbacks:
        callback()
    assert cache.get(key_cache.GENERATION_KEY) == before + 1


def test_refreshing_last_used_does_not_invalidate(api_key):
    services.authenticate_api_key(api_key.plaintext)
    before = cache.get(key_cache.GENERATION_KEY) or 0
    ApiKey.objects.get(pk=api_key.pk).save(update_fields=["last_used_at"])
    assert (cache.get(key_cache.GENERATION_KEY) or 0) == before


def test_the_shared_generation_is_read_at_most_every_quarter_second(api_key, monkeypatch):
    clock = [5000.0]
    monkeypatch.setattr(key_cache.time, "monotonic", lambda: clock[0])
    reads = []
    real_get = key_cache.cache.get
    monkeypatch.setattr(
        key_cache.cache, "get", lambda *a, **k: reads.append(a) or real_get(*a, **k)
    )
    for _ in range(10):
        services.authenticate_api_key(api_key.plaintext)
    assert len(reads) == 1
    clock[0] += key_cache.generation_check_seconds()
    services.authenticate_api_key(api_key.plaintext)
    assert len(reads) == 2
