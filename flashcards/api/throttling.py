"""The per-API-key rate limit of the agent surfaces (domain.md §6): `AGENT_RATE_LIMIT` requests per
minute, shared by every /v1/agent/* route and the MCP tools, counted in Django's default cache so all
worker processes see one budget.

A sliding-window counter (the usual two-window approximation). Requests are counted per fixed
one-minute window, keyed by the window's start, with `cache.add` + `cache.incr` (atomic on
Redis/Memcached and on our LockingFileBasedCache). A request is allowed when

    previous_window_count * (1 - elapsed_fraction_of_current_window) + current_window_count <= limit

i.e. the previous minute's requests are assumed spread evenly over it and fade out as the current
minute goes on. A plain fixed window let a burst straddling a window boundary spend up to twice the
budget within a few seconds (a full budget at 00:00:59 and another at 00:01:00); here the second
burst finds the first one still weighing almost fully. The cost is one extra `cache.get` (the
previous window's count) per request; a sliding log would be exact but rewrites a whole list per
request, which the file cache cannot do atomically. The approximation is not exact either: a burst
of k requests just before a boundary is treated as if spread over the whole minute, so k·s/60 of
them are forgiven s seconds into the next minute. An even burst of n requests lasting D seconds thus
gets at most n·D/240 extra: under one for 120 requests in less than two seconds.

Refused requests still count, so a client hammering through its 429s stays refused. A cache outage
lets requests through rather than failing them.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache
from rest_framework.throttling import BaseThrottle

from flashcards.models import ApiKey

logger = logging.getLogger(__name__)

WINDOW_SECONDS = 60
AGENT_PATH_PREFIX = "/v1/agent/"


def rate_limit() -> int:
    """Requests per minute per key; read on every call so override_settings applies."""
    return int(getattr(settings, "AGENT_RATE_LIMIT", 120) or 0)


def principal_key(request: Any) -> str | None:
    """Whose budget a request spends: its API key, else its logged-in user; anonymous requests
    (discovery, the grammar page) are not limited."""
    auth = getattr(request, "auth", None)
    if isinstance(auth, ApiKey):
        return f"key:{auth.pk}"
    user = getattr(request, "user", None)
    if user is not None and getattr(user, "is_authenticated", False):
        return f"user:{user.pk}"
    return None


def consume(principal: str, *, now: float | None = None) -> float | None:
    """Count one request for `principal`. Returns None when it is allowed, else the seconds until
    a retry would be allowed (`_seconds_until_allowed`). A cache outage lets requests through rather
    than failing them."""
    limit = rate_limit()
    if limit <= 0:
        return None
    now = time.time() if now is None else now
    window = int(now // WINDOW_SECONDS)
    cache_key = f"agent-rate:{principal}:{window}"
    try:
        try:
            # Two windows' life: made at or after its window's start, the count outlives the next
            # window, which reads it as `previous`.
            cache.add(cache_key, 0, timeout=WINDOW_SECONDS * 2)
            current = cache.incr(cache_key)
        except ValueError:
            # The key expired between add and incr (clock at the window edge): start it again.
            cache.set(cache_key, 1, timeout=WINDOW_SECONDS * 2)
            current = 1
        previous = int(cache.get(f"agent-rate:{principal}:{window - 1}") or 0)
    except Exception:
        logger.exception("Rate-limit cache unavailable; letting the request through")
        return None
    elapsed = (now - window * WINDOW_SECONDS) / WINDOW_SECONDS
    if previous * (1 - elapsed) + current <= limit:
        return None
    wait = _seconds_until_allowed(now, window, previous, current, limit)
    # Capped at one window: clients of a per-minute limit expect Retry-After within a minute.
    # A client that spent a whole minute's budget and retries then may be told to wait a little
    # more (the estimate still weighs that minute); nothing gets through early.
    return min(max(wait, 1.0), float(WINDOW_SECONDS))


def _seconds_until_allowed(
    now: float, window: int, previous: int, current: int, limit: int
) -> float:
    """How long until one more request (counted as `current + 1`, nobody else spending the key)
    would pass the sliding estimate. The estimate only falls as time passes, and is continuous
    across the window boundary (the current count becomes the previous one at full weight), so the
    first moment it fits is the answer."""
    window_end = (window + 1) * WINDOW_SECONDS
    if current + 1 <= limit:
        # Still in this window: wait until previous * (1 - f) <= limit - current - 1. Here
        # previous * (1 - elapsed) > limit - current, so this lands before the window's end.
        return window_end - now - WINDOW_SECONDS * (limit - current - 1) / previous
    # This window alone is full: in the next one `current` is the previous count and the retry is
    # its first request, allowed once current * (1 - g) + 1 <= limit. With a limit of 1 that is
    # the next window's end (g = 1), where its own (empty) count becomes the previous one.
    return window_end - now + WINDOW_SECONDS * (1 - (limit - 1) / current)


def retry_after_seconds(wait: float) -> int:
    return max(math.ceil(wait), 1)


class AgentRateThrottle(BaseThrottle):
    """DRF throttle for every view under /v1/agent/ (configured as a default throttle class, so the
    SQL views get it without naming it)."""

    def __init__(self) -> None:
        self._wait: float | None = None

    def allow_request(self, request: Any, view: Any) -> bool:
        if not request.path.startswith(AGENT_PATH_PREFIX):
            return True
        principal = principal_key(request)
        if principal is None:
            return True
        self._wait = consume(principal)
        return self._wait is None

    def wait(self) -> float | None:
        return None if self._wait is None else float(retry_after_seconds(self._wait))
