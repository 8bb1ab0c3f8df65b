"""The per-principal rate limits of every agent surface (domain.md §6): `AGENT_RATE_LIMIT` requests
per minute per user — all their API keys, OAuth connections and browser sessions share one budget —
spent by every /v1/agent/* route (the browsable API included), the MCP tools and the query console,
counted in Django's default cache so all worker processes see one budget; and at most
`AGENT_CONCURRENT_STATEMENTS` statements of one user in flight at once in a process, so one user
cannot hold every server thread. Each refusal is a 429 RATE_LIMITED that names the limit, with
Retry-After.

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

Counting without a cache round trip per request: each process takes *slots* of the shared count in
chunks (one `cache.incr(key, n)` hands it slots total-n+1 … total) and spends them locally, so most
requests cost a dictionary lookup under a lock. A request is judged by its own slot number exactly
as above (`previous * (1 - elapsed) + slot <= limit`); slot numbers are unique across processes, so
the limit holds across every process as before. The chunk shrinks as the estimate nears the limit
(an eighth of the headroom, at most 32, at least 1): far below the limit a chunk saves up to 31
round trips, near it every request takes its own slot, so refusals stay exact. The price is that
a process's unspent slots count as spent: at most 31 per process and minute, and only while the
key is far from its limit. The previous window's count is read once per window and process.
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.cache import cache
from rest_framework.throttling import BaseThrottle

from flashcards.cache import is_remembered_failure
from flashcards.http.envelope import ApiError
from flashcards.models import ApiKey
from flashcards.services import timestamps

logger = logging.getLogger(__name__)

WINDOW_SECONDS = 60
AGENT_PATH_PREFIX = "/v1/agent/"
MAX_CHUNK = 32
HEADROOM_SHARE = 8


def rate_limit() -> int:
    """Requests per minute per key; read on every call so override_settings applies."""
    return int(getattr(settings, "AGENT_RATE_LIMIT", 120) or 0)


def concurrent_limit() -> int:
    """Statements of one principal in flight at once per process; 0 disables the bound."""
    return int(getattr(settings, "AGENT_CONCURRENT_STATEMENTS", 2) or 0)


def principal_key(request: Any) -> str | None:
    """Whose budget a request spends: its user's, whichever key, OAuth connection or session it
    came with. Named after the user's row number and the moment they joined, so a fresh database
    that hands the row number out again does not inherit the counts. Anonymous requests
    (discovery, the grammar page) are not limited."""
    user = getattr(request, "user", None)
    if user is None or not getattr(user, "is_authenticated", False):
        auth = getattr(request, "auth", None)
        user = auth.user if isinstance(auth, ApiKey) else None
    if user is None:
        return None
    joined = getattr(user, "date_joined", None)
    stamp = int(joined.timestamp() * 1_000_000) if joined is not None else 0
    return f"user:{user.pk}.{stamp}"


def rate_limited(wait: float) -> ApiError:
    seconds = retry_after_seconds(wait)
    return ApiError(
        "RATE_LIMITED",
        f"Rate limit exceeded: at most {rate_limit()} requests per minute for this user (all "
        f"their API keys and sessions together); retry in {seconds} seconds.",
        status_code=429,
        details={
            "retryAfterSeconds": seconds,
            "limit": "AGENT_RATE_LIMIT",
            "perMinute": rate_limit(),
        },
        headers={"Retry-After": str(seconds)},
    )


def check_rate(request: Any) -> None:
    """Spend one request of the request's principal; raises the 429 ``ApiError`` when over."""
    principal = principal_key(request)
    if principal is None:
        return
    wait = consume(principal)
    if wait is not None:
        raise rate_limited(wait)


_in_flight: dict[str, int] = {}
_in_flight_lock = threading.Lock()
CONCURRENT_RETRY_SECONDS = 1


class statement_slot:
    """Hold one of the principal's ``AGENT_CONCURRENT_STATEMENTS`` slots while a statement runs;
    raises the 429 ``ApiError`` when all are taken."""

    def __init__(self, request: Any) -> None:
        self.principal = principal_key(request)
        self.held = False

    def __enter__(self) -> statement_slot:
        limit = concurrent_limit()
        if self.principal is None or limit <= 0:
            return self
        with _in_flight_lock:
            running = _in_flight.get(self.principal, 0)
            if running >= limit:
                raise ApiError(
                    "RATE_LIMITED",
                    f"Too many statements at once: at most {limit} of this user's statements "
                    f"run at the same time; retry in {CONCURRENT_RETRY_SECONDS} seconds.",
                    status_code=429,
                    details={
                        "retryAfterSeconds": CONCURRENT_RETRY_SECONDS,
                        "limit": "AGENT_CONCURRENT_STATEMENTS",
                        "concurrent": limit,
                    },
                    headers={"Retry-After": str(CONCURRENT_RETRY_SECONDS)},
                )
            _in_flight[self.principal] = running + 1
            self.held = True
        return self

    def __exit__(self, *exc_info: object) -> None:
        if not self.held:
            return
        with _in_flight_lock:
            left = _in_flight.get(self.principal or "", 1) - 1
            if left > 0:
                _in_flight[self.principal or ""] = left
            else:
                _in_flight.pop(self.principal or "", None)
        self.held = False


@dataclass
class _Allowance:
    """One principal's slots of one window in this process: ``ranges`` are reserved, unspent
    slots as [next, end) pairs, lowest first; ``previous`` is the previous window's shared count."""

    window: int
    previous: int | None = None
    ranges: list[list[int]] = field(default_factory=list)
    last_total: int = 0


_allowances: dict[str, _Allowance] = {}
_lock = threading.Lock()
MAX_PRINCIPALS = 10_000


def reset_local_allowances() -> None:
    """Forget this process's reserved slots (tests clear the shared cache between cases)."""
    with _lock:
        _allowances.clear()


def _window_key(principal: str, window: int) -> str:
    return f"agent-rate:{principal}:{window}"


def _take_local(principal: str, window: int) -> tuple[int, int] | _Allowance:
    """A reserved slot and the previous count when this process has one; else the allowance to
    refill."""
    with _lock:
        allowance = _allowances.get(principal)
        if allowance is None or allowance.window != window:
            if len(_allowances) >= MAX_PRINCIPALS:
                _allowances.clear()
            allowance = _allowances[principal] = _Allowance(window)
        if allowance.ranges and allowance.previous is not None:
            spare = allowance.ranges[0]
            slot = spare[0]
            spare[0] += 1
            if spare[0] >= spare[1]:
                allowance.ranges.pop(0)
            return slot, allowance.previous
        return allowance


def _reserve(
    principal: str, window: int, allowance: _Allowance, limit: int, elapsed: float
) -> tuple[int, int]:
    """Take a chunk of slots from the shared count; returns this request's slot and the previous
    window's count."""
    previous = allowance.previous
    if previous is None:
        previous = int(cache.get(_window_key(principal, window - 1)) or 0)
    headroom = limit - previous * (1 - elapsed) - allowance.last_total
    chunk = max(1, min(MAX_CHUNK, int(headroom // HEADROOM_SHARE)))
    cache_key = _window_key(principal, window)
    try:
        # Two windows' life: made at or after its window's start, the count outlives the next
        # window, which reads it as `previous`.
        cache.add(cache_key, 0, timeout=WINDOW_SECONDS * 2)
        total = cache.incr(cache_key, chunk)
    except ValueError:
        # The key expired between add and incr (clock at the window edge): start it again.
        cache.set(cache_key, chunk, timeout=WINDOW_SECONDS * 2)
        total = chunk
    first = total - chunk + 1
    with _lock:
        if allowance.window == window:
            allowance.previous = previous
            allowance.last_total = max(allowance.last_total, total)
            # Kept beside any slots another thread of this process reserved meanwhile: every
            # reserved slot is spent by some request, so none of the budget lapses unused.
            if chunk > 1:
                allowance.ranges.append([first + 1, total + 1])
                allowance.ranges.sort()
    return first, previous


def consume(principal: str, *, now: float | None = None) -> float | None:
    """Count one request for `principal`. Returns None when it is allowed, else the seconds until
    a retry would be allowed (`_seconds_until_allowed`). A cache outage lets requests through rather
    than failing them."""
    limit = rate_limit()
    if limit <= 0:
        return None
    now = timestamps.epoch_seconds() if now is None else now
    window = int(now // WINDOW_SECONDS)
    elapsed = (now - window * WINDOW_SECONDS) / WINDOW_SECONDS
    local = _take_local(principal, window)
    if isinstance(local, tuple):
        slot, previous = local
    else:
        try:
            slot, previous = _reserve(principal, window, local, limit, elapsed)
        except Exception as exc:
            if not is_remembered_failure(exc):  # else logged once for the interval already
                logger.exception("Rate-limit cache unavailable; letting the request through")
            return None
    if previous * (1 - elapsed) + slot <= limit:
        return None
    wait = _seconds_until_allowed(now, window, previous, slot, limit)
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
    SQL views and the browsable API get it without naming it). A refusal is raised as the 429
    ``ApiError`` naming the limit, rather than DRF's generic Throttled."""

    def allow_request(self, request: Any, view: Any) -> bool:
        if request.path.startswith(AGENT_PATH_PREFIX):
            check_rate(request)
        return True
