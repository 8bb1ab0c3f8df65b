"""The per-API-key rate limit of the agent surfaces (domain.md §6): `AGENT_RATE_LIMIT` requests per
minute, shared by every /v1/agent/* route and the MCP tools, counted in Django's default cache so all
worker processes see one budget.

A fixed one-minute window keyed by the window's start: `cache.add` + `cache.incr` is two round trips
and atomic on Redis/Memcached, where a sliding log would rewrite a whole list per request.
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
    """Count one request for `principal`. Returns None when it is allowed, else the seconds to wait
    until the window resets. A cache outage lets requests through rather than failing them."""
    limit = rate_limit()
    if limit <= 0:
        return None
    now = time.time() if now is None else now
    window = int(now // WINDOW_SECONDS)
    cache_key = f"agent-rate:{principal}:{window}"
    try:
        cache.add(cache_key, 0, timeout=WINDOW_SECONDS * 2)
        count = cache.incr(cache_key)
    except ValueError:
        # The key expired between add and incr (clock at the window edge): start it again.
        cache.set(cache_key, 1, timeout=WINDOW_SECONDS * 2)
        count = 1
    except Exception:
        logger.exception("Rate-limit cache unavailable; letting the request through")
        return None
    if count <= limit:
        return None
    return max((window + 1) * WINDOW_SECONDS - now, 1.0)


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
