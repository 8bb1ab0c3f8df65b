"""Fixed-window counters in the shared cache: per-address and per-account budgets for logins
and client registrations. A cache outage lets the request through (as the API's rate limit)."""

from __future__ import annotations

import logging
import time

from django.core.cache import cache

logger = logging.getLogger("flashcards.security")


def _key(name: str, window: int) -> str:
    return f"fc-counter:{name}:{int(time.time() // window)}"


def count(name: str, window: int) -> int:
    try:
        return int(cache.get(_key(name, window)) or 0)
    except Exception:  # pragma: no cover - cache outage
        logger.exception("counter cache unavailable")
        return 0


def hit(name: str, window: int) -> int:
    """Count one event under ``name`` in the current window; the new count."""
    key = _key(name, window)
    try:
        if cache.add(key, 1, timeout=window + 1):
            return 1
        return int(cache.incr(key))
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=window + 1)
        return 1
    except Exception:  # pragma: no cover - cache outage
        logger.exception("counter cache unavailable")
        return 0


def clear(name: str, window: int) -> None:
    try:
        cache.delete(_key(name, window))
    except Exception:  # pragma: no cover - cache outage
        logger.exception("counter cache unavailable")


def seconds_left(window: int) -> int:
    return max(1, int(window - time.time() % window))


def client_address(request: object) -> str:
    meta = getattr(request, "META", {}) or {}
    return str(meta.get("REMOTE_ADDR") or "unknown")
