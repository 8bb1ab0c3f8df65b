"""API keys: `fca_<8-char key id>_<26-char secret>` in Crockford base32 (dsl.md §1). Only a
SHA-256 of the secret is stored; the secret has 130 random bits, so a slow hash buys nothing."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from datetime import timedelta
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import OperationalError, connection, transaction
from django.db.models import Exists, OuterRef

from flashcards.models import ApiKey, Membership, Workspace
from flashcards.services import key_cache
from flashcards.services.common import DomainError, check_storable
from flashcards.services.timestamps import now_ms
from flashcards.services.workspaces import get_member_workspace

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
KEY_ID_LENGTH = 8
SECRET_LENGTH = 26
LAST_USED_REFRESH = timedelta(minutes=5)
_DUMMY_HASH = hashlib.sha256(b"0" * SECRET_LENGTH).hexdigest()
_KEY_RE = re.compile(r"^FCA_([0-9A-HJKMNP-TV-Z]{8})_([0-9A-HJKMNP-TV-Z]{26})$")


class InvalidApiKey(Exception):
    """Authentication failed: malformed, unknown, wrong secret or revoked. Deliberately one type so
    callers cannot leak which."""


def _random(length: int) -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(length))


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def clean_label(label: object) -> str:
    if not isinstance(label, str) or not (1 <= len(label.strip()) <= 120):
        raise DomainError("A key label must be 1 to 120 characters.", field="label")
    check_storable(label, "label")
    return label.strip()


@transaction.atomic
def create_api_key(
    user: AbstractBaseUser, label: str = "agent", *, workspace: Workspace | None = None
) -> tuple[ApiKey, str]:
    """Create a key; returns it with the plaintext, which is never stored or shown again."""
    label = clean_label(label)
    if workspace is not None:
        workspace = get_member_workspace(user, workspace.pk)
    while True:
        key_id = _random(KEY_ID_LENGTH)
        if not ApiKey.objects.filter(key_id=key_id).exists():
            break
    secret = _random(SECRET_LENGTH)
    api_key = ApiKey.objects.create(
        user=user,
        label=label,
        key_id=key_id,
        secret_hash=hash_secret(secret),
        selected_workspace=workspace,
    )
    return api_key, f"fca_{key_id}_{secret}"


def revoke_api_key(api_key: ApiKey) -> ApiKey:
    if api_key.revoked_at is None:
        api_key.revoked_at = now_ms()
        api_key.save(update_fields=["revoked_at"])
    return api_key


def parse_key(raw: str) -> tuple[str, str]:
    """Normalise case, spaces and dashes, then split into (key id, secret)."""
    cleaned = re.sub(r"[\s-]+", "", raw).upper()
    match = _KEY_RE.match(cleaned)
    if not match:
        raise InvalidApiKey("Malformed API key.")
    return match.group(1), match.group(2)


def _load_key(key_id: str) -> ApiKey | None:
    """The key with its user and selected workspace in one query; ``selection_is_member`` says
    whether the selection is still a live workspace of the key's user, so that
    ``resolve_key_workspace`` needs no query of its own in the common case."""
    membership = Membership.objects.filter(
        user_id=OuterRef("user_id"),
        workspace_id=OuterRef("selected_workspace_id"),
        workspace__deleted_at__isnull=True,
    )
    return (
        ApiKey.objects.select_related("user", "selected_workspace")
        .annotate(selection_is_member=Exists(membership))
        .filter(key_id=key_id)
        .first()
    )


def authenticate_api_key(raw: str) -> ApiKey:
    """The active key a raw ``fca_…`` string names, or InvalidApiKey. Served from the per-process
    cache of ``key_cache`` when it holds the key (no query); loaded by one query otherwise."""
    key_id, secret = parse_key(raw)
    digest = hash_secret(secret)
    generation = key_cache.current_generation()
    api_key = key_cache.keys.get(key_id, digest, generation)
    if api_key is None:
        api_key = _load_key(key_id)
        # Compare against a dummy hash when the id is unknown so timing does not reveal key ids.
        expected = api_key.secret_hash if api_key else _DUMMY_HASH
        if not hmac.compare_digest(expected, digest) or api_key is None:
            raise InvalidApiKey("Unknown API key or wrong secret.")
        if api_key.revoked_at is not None:
            raise InvalidApiKey("This API key has been revoked.")
        if not api_key.user.is_active:
            raise InvalidApiKey("The key's user is inactive.")
        key_cache.keys.put(api_key, generation)
    now = now_ms()
    stale = api_key.last_used_at is None or now - api_key.last_used_at >= LAST_USED_REFRESH
    if stale and _touch_last_used(api_key.pk, now):
        api_key.last_used_at = now
    return api_key


def _touch_last_used(pk: int, now: Any) -> bool:
    """Record that the key was used: bookkeeping, so it never makes a request wait. On SQLite,
    outside a transaction, the write is tried without waiting for the database lock (busy
    timeout 0); while another writer holds it the write is skipped and tried again by the key's
    next request. Inside a transaction (which holds the lock already) it is a plain update."""
    if connection.vendor != "sqlite" or connection.in_atomic_block:
        ApiKey.objects.filter(pk=pk).update(last_used_at=now)
        return True
    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA busy_timeout")
        (busy_ms,) = cursor.fetchone()
        cursor.execute("PRAGMA busy_timeout = 0")
        try:
            ApiKey.objects.filter(pk=pk).update(last_used_at=now)
            return True
        except OperationalError:
            return False  # "database is locked": another writer's turn; not this read's business
        finally:
            cursor.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
