"""The query log's writer: rows are written off the request path, in batches, by one background
thread per process (docs/deployment.md, "The query log").

- A request puts its row on a bounded in-process queue (``QUERY_LOG_QUEUE_SIZE``, default 10,000)
  and goes on; the writer stores what arrives within ``QUERY_LOG_FLUSH_SECONDS`` (default 0.1) of
  a first row, up to ``QUERY_LOG_BATCH`` rows (default 200), with one ``bulk_create``: a row is in
  the table a tenth of a second after its response, and a busy server pays one transaction per
  batch instead of one per request.
- Nothing is dropped silently. A full queue means the database is not keeping up: the request then
  writes its own row, as before this writer existed, and the overflow is counted and logged. A
  batch the database refuses is retried row by row; rows refused because the database is
  unavailable (a SQLite lock held past the busy timeout) are tried again for up to
  ``QUERY_LOG_RETRY_SECONDS`` (default 60); a row that still cannot be stored is counted and
  logged with its request id.
- The queue is flushed when the server shuts down (the ASGI lifespan's shutdown, config.asgi, and an
  ``atexit`` hook for other exits). What a crash (SIGKILL, power loss) can lose is what was queued
  and not yet written: about ``QUERY_LOG_FLUSH_SECONDS`` of requests, never more than the queue
  holds.
- ``QUERY_LOG_ASYNC=0`` writes every row on the request path (the test suite does: its tests run in
  transactions a second connection cannot see). A row refused there because the database is
  unavailable still goes to the writer thread, which retries it as above: that request was
  answered (503), so its row is owed too.
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction

from dsl.models import QueryLog
from flashcards.http.db_errors import is_database_unavailable
from flashcards.services.bulk_rows import insert_rows

logger = logging.getLogger(__name__)

IDLE_SECONDS = 5.0


def _setting(name: str, default: float) -> float:
    return float(getattr(settings, name, default))


@dataclass
class WriterStats:
    queued: int = 0
    written: int = 0
    overflowed: int = 0  # rows written on the request path because the queue was full
    failed: int = 0  # rows the database refused even one by one (each logged)


_COLUMNS = tuple(field.attname for field in QueryLog._meta.concrete_fields if not field.primary_key)


def _insert_many(rows: Sequence[QueryLog]) -> None:
    """The batch in one transaction through the plain multi-row INSERT the bulk writers share
    (``flashcards.services.bulk_rows``): ``bulk_create`` without its per-row SQL assembly, most of
    its cost at a few dozen rows; values go through each field's ``get_db_prep_save``, so they are
    stored exactly as the ORM stores them (tests/dsl/test_querylog_writer.py)."""
    with transaction.atomic():
        insert_rows(QueryLog, _COLUMNS, ([getattr(row, c) for c in _COLUMNS] for row in rows))


def write_rows(
    rows: Sequence[QueryLog], stats: WriterStats | None = None, *, keep_unavailable: bool = False
) -> list[QueryLog]:
    """Store rows: one statement for the batch, row by row if the batch is refused. With
    ``keep_unavailable``, rows refused because the database is unavailable (a SQLite lock held
    past the busy timeout, a lost connection) are returned for a later attempt instead of failed:
    the requests a locked database answered with 503 are the ones whose rows arrive late."""
    try:
        _insert_many(rows)
        if stats is not None:
            stats.written += len(rows)
        return []
    except Exception as exc:
        if keep_unavailable and is_database_unavailable(exc):
            return list(rows)
        if len(rows) == 1:
            _failed(rows[0], stats)
            return []
        logger.warning(
            "A batch of %d query-log rows was refused; writing them one by one", len(rows)
        )
    kept: list[QueryLog] = []
    for row in rows:
        try:
            row.pk = None
            row.save(force_insert=True)
            if stats is not None:
                stats.written += 1
        except Exception as exc:
            if keep_unavailable and is_database_unavailable(exc):
                kept.append(row)
            else:
                _failed(row, stats)
    return kept


def _failed(row: QueryLog, stats: WriterStats | None) -> None:
    if stats is not None:
        stats.failed += 1
    # Logging must never turn an answered request into a failure (the database may be the very
    # thing that is down), so the row is reported here instead of raised.
    logger.exception("Could not write the query log row of request %s", row.request_id)


class QueryLogWriter:
    def __init__(self) -> None:
        self.stats = WriterStats()
        self._queue: queue.Queue[QueryLog] | None = None
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._last_overflow_log = 0.0

    def submit(self, row: QueryLog) -> None:
        if not getattr(settings, "QUERY_LOG_ASYNC", True):
            if write_rows([row], self.stats, keep_unavailable=True):
                self._enqueue_for_retry(row)
            return
        rows = self._started()
        try:
            rows.put_nowait(row)
            self.stats.queued += 1
        except queue.Full:
            self.stats.overflowed += 1
            now = time.monotonic()
            if now - self._last_overflow_log >= 10:
                self._last_overflow_log = now
                logger.warning(
                    "The query-log queue is full (%d rows): writing on the request path "
                    "(%d overflowed rows so far)",
                    rows.maxsize,
                    self.stats.overflowed,
                )
            write_rows([row], self.stats)

    def _enqueue_for_retry(self, row: QueryLog) -> None:
        try:
            self._started().put_nowait(row)
            self.stats.queued += 1
        except queue.Full:
            _failed(row, self.stats)

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until every queued row is written; False if that took longer than ``timeout``."""
        rows = self._queue
        if rows is None:
            return True
        deadline = time.monotonic() + timeout
        while rows.unfinished_tasks:
            if time.monotonic() > deadline:
                logger.error("%d query-log rows still unwritten at shutdown", rows.unfinished_tasks)
                return False
            time.sleep(0.01)
        return True

    def _started(self) -> queue.Queue[QueryLog]:
        if self._queue is not None and self._thread is not None and self._thread.is_alive():
            return self._queue
        with self._start_lock:
            if self._queue is None:
                self._queue = queue.Queue(maxsize=int(_setting("QUERY_LOG_QUEUE_SIZE", 10_000)))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="query-log-writer", daemon=True
                )
                self._thread.start()
            return self._queue

    def _run(self) -> None:
        rows = self._queue
        assert rows is not None
        batch_size = max(1, int(_setting("QUERY_LOG_BATCH", 200)))
        while True:
            try:
                first = rows.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                # Idle: close the connection (a persistent one, without a pool) until the next row.
                connection.close()
                first = rows.get()
            batch = [first]
            # Rows that arrive within the window join the batch: one transaction for many rows
            # instead of one each, which on a busy server is most of the writer's cost.
            deadline = time.monotonic() + _setting("QUERY_LOG_FLUSH_SECONDS", 0.1)
            while len(batch) < batch_size:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                try:
                    batch.append(rows.get(timeout=remaining))
                except queue.Empty:
                    break
            try:
                self._write_retrying(batch)
            finally:
                for _ in batch:
                    rows.task_done()
                if "pool" in connection.settings_dict.get("OPTIONS", {}):
                    # A pooled connection goes back between batches: held while idle, it is one a
                    # request cannot have (a pool of one would answer the next request 503).
                    connection.close()

    def _write_retrying(self, batch: list[QueryLog]) -> None:
        """Write a batch, retrying the rows an unavailable database refused for up to
        ``QUERY_LOG_RETRY_SECONDS`` (default 60) before they are counted as failed and logged."""
        give_up_at = time.monotonic() + _setting("QUERY_LOG_RETRY_SECONDS", 60)
        pause = 0.1
        pending = write_rows(batch, self.stats, keep_unavailable=True)
        while pending and time.monotonic() < give_up_at:
            time.sleep(pause)
            pause = min(pause * 2, 5.0)
            connection.close_if_unusable_or_obsolete()
            pending = write_rows(pending, self.stats, keep_unavailable=True)
        for row in pending:
            _failed(row, self.stats)


writer = QueryLogWriter()
atexit.register(writer.flush)
