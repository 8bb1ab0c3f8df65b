"""The default cache's `add` + `incr` (the rate limiter's counter) lose no increment when several
processes count at once — the situation of several uvicorn workers behind one API key."""

from __future__ import annotations

import multiprocessing

from flashcards.cache import LockingFileBasedCache

PROCESSES = 4
INCREMENTS = 150


def _count(location: str) -> None:
    cache = LockingFileBasedCache(location, {})
    for _ in range(INCREMENTS):
        cache.add("counter", 0, timeout=60)
        cache.incr("counter")


def test_concurrent_increments_are_all_counted(tmp_path):
    location = str(tmp_path / "cache")
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_count, args=(location,)) for _ in range(PROCESSES)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    assert LockingFileBasedCache(location, {}).get("counter") == PROCESSES * INCREMENTS


def test_behaves_like_the_file_cache(tmp_path):
    cache = LockingFileBasedCache(str(tmp_path / "cache"), {})
    assert cache.add("k", 1) is True
    assert cache.add("k", 2) is False
    assert cache.incr("k", 5) == 6
    assert cache.get("k") == 6
