"""The default cache: Django's file cache with `add` and `incr` made atomic across processes.

Django's FileBasedCache implements both as read-then-write, so two uvicorn workers counting the
same API key's requests can lose increments and let a burst through the rate limit. An exclusive
`flock` on one lock file in the cache directory serialises just those two operations; reads and
plain sets stay lock-free. Redis or Memcached (atomic by themselves) remain the production choice
(docs/deployment.md)."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.cache.backends.filebased import FileBasedCache


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
