"""A per-process cache of authenticated API keys: the key, its user and its selected workspace,
loaded together by one query and reused for up to ``AUTH_CACHE_SECONDS`` (default 5), so a request
with a known key costs no database round trip before its own work (docs/deployment.md, "What a
request costs").

Staleness is bounded twice:

- Every change this product makes to what the cache holds — a key created, revoked or re-selected,
  a user saved, a membership added or removed, a workspace renamed, deleted or given new scheduler
  settings — clears this process's entries at once and, when its transaction commits, bumps one
  *generation* counter in Django's shared cache. Lookups read that counter (one cache read, at
  most every ``AUTH_GENERATION_CHECK_SECONDS``, default 0.25, per process) and ignore entries
  stored under an older one, so other processes see the change within a quarter of a second.
- Changes made behind the product's back (raw SQL, `QuerySet.update` elsewhere) or while the shared
  cache is unreachable are seen after at most ``AUTH_CACHE_SECONDS``.

A cache that cannot be read turns the cache off for that request (the key is loaded from the
database), never the other way round. Cached ``ApiKey`` instances are shared by the requests of a
process: callers treat them as read-only (the services that change a key invalidate it).
"""

from __future__ import annotations

import hmac
import logging
import threading
import time
from collections import OrderedDict
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction

from flashcards.cache import is_remembered_failure
from flashcards.models import ApiKey

logger = logging.getLogger(__name__)

GENERATION_KEY = "auth-generation"
MAX_ENTRIES = 4096
_UNREADABLE = object()


def ttl_seconds() -> float:
    """Read on every call so override_settings applies; 0 turns the cache off."""
    return float(getattr(settings, "AUTH_CACHE_SECONDS", 5) or 0)


def generation_check_seconds() -> float:
    return float(getattr(settings, "AUTH_GENERATION_CHECK_SECONDS", 0.25) or 0)


_memo: tuple[object, float] | None = None


def current_generation() -> object:
    """The shared generation (0 when never bumped), or a sentinel when the cache cannot be read.
    Read from the shared cache at most every ``AUTH_GENERATION_CHECK_SECONDS`` (default 0.25) per
    process: a change made in another process is seen here within that time."""
    global _memo
    now = time.monotonic()
    memo = _memo
    if memo is not None and now < memo[1]:
        return memo[0]
    try:
        generation = cache.get(GENERATION_KEY) or 0
    except Exception as exc:
        if not is_remembered_failure(exc):  # else logged once for the interval already
            logger.warning("Auth cache generation unreadable; loading the key from the database")
        return _UNREADABLE
    _memo = (generation, now + generation_check_seconds())
    return generation


def forget_generation() -> None:
    global _memo
    _memo = None


class _KeyCache:
    def __init__(self) -> None:
        self._entries: OrderedDict[str, tuple[ApiKey, object, float]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key_id: str, digest: str, generation: object) -> ApiKey | None:
        if generation is _UNREADABLE or ttl_seconds() <= 0:
            return None
        with self._lock:
            entry = self._entries.get(key_id)
            if entry is None:
                return None
            api_key, stored_generation, expires = entry
            if stored_generation != generation or time.monotonic() >= expires:
                del self._entries[key_id]
                return None
            self._entries.move_to_end(key_id)
        # The secret is compared as on a miss: a cached key id never admits another secret.
        return api_key if hmac.compare_digest(api_key.secret_hash, digest) else None

    def put(self, api_key: ApiKey, generation: object) -> None:
        seconds = ttl_seconds()
        if generation is _UNREADABLE or seconds <= 0:
            return
        with self._lock:
            self._entries[api_key.key_id] = (api_key, generation, time.monotonic() + seconds)
            self._entries.move_to_end(api_key.key_id)
            while len(self._entries) > MAX_ENTRIES:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


keys = _KeyCache()


def _bump_generation() -> None:
    try:
        try:
            cache.incr(GENERATION_KEY)
        except ValueError:  # never bumped (or evicted): any new value differs from the 0 read
            cache.set(GENERATION_KEY, 1, timeout=None)
    except Exception as exc:
        if not is_remembered_failure(exc):  # else logged once for the interval already
            logger.exception(
                "Could not bump the auth cache generation; other processes see the change "
                "within AUTH_CACHE_SECONDS"
            )
    # Again after the commit: a request of this process that read the old rows between the first
    # clear and the commit must not keep them.
    forget_generation()
    keys.clear()


def invalidate() -> None:
    """Forget cached keys here now, and everywhere once the current transaction commits (at once
    outside a transaction). The shared bump waits for the commit so that no process can reload the
    old rows under the new generation."""
    keys.clear()
    transaction.on_commit(_bump_generation)


def invalidate_on_change(sender: Any, **kwargs: Any) -> None:
    """Receiver of post_save / post_delete for the models the cache holds (flashcards.apps)."""
    update_fields = kwargs.get("update_fields")
    if sender is ApiKey and update_fields is not None and set(update_fields) <= {"last_used_at"}:
        return
    invalidate()
