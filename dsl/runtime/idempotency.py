"""Idempotency-Key handling for the SQL endpoints (dsl.md §1).

A successful response is stored inside the request's own transaction, so the record exists exactly
when the writes it describes were committed; a concurrent duplicate fails on the unique constraint,
rolls back its own writes and replays the winner's response instead."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import DataError, transaction
from django.utils import timezone

from dsl.models import IdempotencyRecord
from dsl.settings import dsl_settings
from flashcards.api.bodies import IDEMPOTENCY_KEY_PATTERN
from flashcards.models import ApiKey

MAX_KEY_LENGTH = 200

logger = logging.getLogger(__name__)


class InvalidIdempotencyKey(ValueError):
    pass


class IdempotencyKeyReused(Exception):
    """The key was used before with a different request body."""


@dataclass(frozen=True)
class IdempotencyScope:
    scope: str
    key: str
    fingerprint: str
    api_key: ApiKey | None


_KEY = re.compile(IDEMPOTENCY_KEY_PATTERN)


def clean_key(raw: str) -> str:
    """The key as sent, if it has the published form (flashcards.api.bodies)."""
    if not _KEY.match(raw):
        raise InvalidIdempotencyKey(
            f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} printable ASCII characters."
        )
    return raw


def fingerprint(payload: Any) -> str:
    """A stable hash of what was asked; callers pass the endpoint and the parsed body."""
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def scope_for(
    *,
    raw_key: str,
    api_key: ApiKey | None,
    user: Any,
    workspace: Any,
    request_fingerprint: str,
) -> IdempotencyScope:
    """Keyed by principal and workspace: one key sent to two workspaces is two requests."""
    principal = f"key:{api_key.pk}" if api_key is not None else f"user:{getattr(user, 'pk', '')}"
    scope = f"{principal}/ws:{workspace.pk}"
    return IdempotencyScope(scope, clean_key(raw_key), request_fingerprint, api_key)


def _live(scope: IdempotencyScope) -> IdempotencyRecord | None:
    cutoff = timezone.now() - timedelta(hours=dsl_settings.IDEMPOTENCY_TTL_HOURS)
    # Expired records of this principal are dead weight: dropping them on each lookup bounds the
    # table to a day of keyed requests per principal, and makes an expired key reusable.
    IdempotencyRecord.objects.filter(scope=scope.scope, created_at__lt=cutoff).delete()
    record: IdempotencyRecord | None = IdempotencyRecord.objects.filter(
        scope=scope.scope, key=scope.key
    ).first()
    return record


def stored_response(scope: IdempotencyScope) -> IdempotencyRecord | None:
    """The stored response to replay, None when the key is new; raises IdempotencyKeyReused when
    the key was used with another body."""
    record = _live(scope)
    if record is None:
        return None
    if record.fingerprint != scope.fingerprint:
        raise IdempotencyKeyReused()
    return record


def store(scope: IdempotencyScope, status_code: int, body: dict[str, Any]) -> None:
    """Save the response; call inside the request transaction, which an IntegrityError (a
    concurrent duplicate got there first) must roll back. A body the database cannot hold (a NUL
    inside a comment of the echoed sql, refused by PostgreSQL's jsonb) is not stored: the request
    still succeeds, it just cannot be replayed."""
    try:
        with transaction.atomic():
            IdempotencyRecord.objects.create(
                scope=scope.scope,
                key=scope.key,
                api_key=scope.api_key,
                fingerprint=scope.fingerprint,
                status_code=status_code,
                body=body,
                created_at=timezone.now(),
            )
    except DataError:
        logger.warning("Idempotency record for key %r not stored: body not storable", scope.key)
