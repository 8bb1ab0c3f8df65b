"""The cache backends: the default (Django's file cache with `add` and `incr` made atomic across
processes) and Redis with bounds (``BoundedRedisCache``, below).

Django's FileBasedCache implements both as read-then-write, so two uvicorn workers counting the
same API key's requests can lose increments and let a burst through the rate limit. An exclusive
`flock` on one lock file in the cache directory serialises just those two operations; reads and
plain sets stay lock-free. Redis or Memcached (atomic by themselves) remain the production choice
(docs/deployment.md)."""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

from django.core.cache.backends.filebased import FileBasedCache
from django.core.cache.backends.redis import RedisCache

logger = logging.getLogger(__name__)


class LockingFileBasedCache(FileBasedCache):
    @contextmanager
    def _exclusive(self) -> Iterator[None]:
        os.makedirs(self._dir, exist_ok=True)
        with open(os.path.join(self._dir, ".atomic.lock"), "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def add(self, key: Any, value: Any, timeout: Any = None, version: int | None = None) -> bool:
        with self._exclusive():
            return super().add(key, value, timeout, version)

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        with self._exclusive():
            return super().incr(key, delta, version)


class CacheUnavailable(Exception):
    """Raised at once, without a round trip, while a Redis that just failed is remembered as down."""


class BoundedRedisCache(RedisCache):
    """Django's Redis cache with bounds (docs/deployment.md, "Redis"):

    - one connection pool per process, shared by every request. Django's cache handler keeps one
      cache object per context (asgiref's Local), and the server runs each request in a copied
      context, so each request built a fresh ``RedisCacheClient`` and with it a pool and a TCP
      connection of its own;
    - connect and socket timeouts of ``CACHE_TIMEOUT_SECONDS`` (default 0.25) and no retry inside
      redis-py (which retries three times with back-off by default): a hung Redis costs a request
      at most that long;
    - a Redis that failed is remembered as down for ``CACHE_RETRY_SECONDS`` (default 2): calls
      meanwhile raise ``CacheUnavailable`` at once (every caller already treats a cache error as
      "no cache"), and the failure is logged once per interval, not per request.
    """

    _clients: ClassVar[dict[tuple[Any, ...], Any]] = {}
    _clients_lock = threading.Lock()
    _down_until = 0.0
    _down_logged_until = 0.0

    def __init__(self, server: Any, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        import redis
        from django.conf import settings
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        # What makes two cache objects share a client: their configuration, not the objects built
        # from it below (a Retry object has no value equality).
        options: dict[str, Any] = dict(getattr(self, "_options", {}))
        self._identity = (tuple(self._servers), repr(sorted(options.items())))
        timeout = float(getattr(settings, "CACHE_TIMEOUT_SECONDS", 0.25))
        self._options = {
            "socket_connect_timeout": timeout,
            "socket_timeout": timeout,
            "retry": Retry(NoBackoff(), 0),
            "health_check_interval": 0,
            **options,
        }
        self._failures = (redis.ConnectionError, redis.TimeoutError, OSError)
        self.retry_seconds = float(getattr(settings, "CACHE_RETRY_SECONDS", 2))

    @property
    def _cache(self) -> Any:  # type: ignore[override]
        identity = (os.getpid(), *self._identity)
        client = self._clients.get(identity)
        if client is None:
            with self._clients_lock:
                client = self._clients.get(identity)
                if client is None:
                    client = self._class(self._servers, **self._options)
                    self._clients[identity] = client
        return client

    def _bounded(self, call: Any, *args: Any, **kwargs: Any) -> Any:
        cls = type(self)
        now = time.monotonic()
        if now < cls._down_until:
            raise CacheUnavailable("Redis is unavailable (failed less than a moment ago)")
        try:
            return call(*args, **kwargs)
        except self._failures as exc:
            now = time.monotonic()
            cls._down_until = now + self.retry_seconds
            if now >= cls._down_logged_until:
                cls._down_logged_until = now + self.retry_seconds
                logger.warning(
                    "Redis cache unavailable (%s: %s); working without it, retrying in %.1f s",
                    type(exc).__name__,
                    exc,
                    self.retry_seconds,
                )
            raise CacheUnavailable(str(exc)) from exc


def _bounded_method(name: str) -> Any:
    def method(self: BoundedRedisCache, *args: Any, **kwargs: Any) -> Any:
        return self._bounded(getattr(super(BoundedRedisCache, self), name), *args, **kwargs)

    method.__name__ = name
    return method


for _name in (
    "add",
    "get",
    "set",
    "touch",
    "delete",
    "get_many",
    "has_key",
    "incr",
    "set_many",
    "delete_many",
    "clear",
):
    setattr(BoundedRedisCache, _name, _bounded_method(_name))


def is_remembered_failure(exc: BaseException) -> bool:
    """A cache error already logged once for this interval (callers need not log it again)."""
    return isinstance(exc, CacheUnavailable)
