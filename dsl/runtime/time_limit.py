"""The per-request statement time limit (dsl.md §8) on both databases:
``set_config('statement_timeout', …, true)`` inside the request transaction on PostgreSQL (a
request that is one read sends ``SET LOCAL statement_timeout`` with its SELECT instead,
dsl.runtime.ready_sql), and on SQLite a progress handler that aborts the running statement after the
deadline (the connection stays usable) with the wait for another writer's lock cut to the same
budget."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import OperationalError, connection

from dsl.runtime.backends import is_postgresql

# How many SQLite virtual-machine steps run between two deadline checks: about 0.1 ms of work,
# so the check costs nothing measurable and a runaway statement stops within a millisecond.
SQLITE_PROGRESS_STEPS = 10_000
POSTGRES_QUERY_CANCELED = "57014"


class QueryTimeout(Exception):
    """The request ran out of statement time (dsl.md §8)."""


def is_timeout(exc: BaseException) -> bool:
    """True for the database error raised when the deadline cut a statement short."""
    if isinstance(exc, QueryTimeout):
        return True
    if not isinstance(exc, OperationalError):
        return False
    cause = exc.__cause__
    if getattr(cause, "sqlstate", None) == POSTGRES_QUERY_CANCELED:
        return True
    return connection.vendor == "sqlite" and "interrupted" in str(exc).lower()


class Deadline:
    """The request's statement-time budget. ``arm()`` before each statement: it raises
    QueryTimeout when the budget is spent and, on PostgreSQL, hands the rest of it to the server
    (which must be inside the request transaction, as ``set_config(..., true)`` is local to it)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expires_at = time.monotonic() + seconds

    def remaining(self) -> float:
        return self.expires_at - time.monotonic()

    def check(self) -> int:
        """The budget left in whole milliseconds (at least 1); QueryTimeout once it is spent."""
        remaining = self.remaining()
        if remaining <= 0:
            raise QueryTimeout()
        return max(1, int(remaining * 1000))

    def arm(self) -> None:
        remaining = self.remaining()
        if remaining <= 0:
            raise QueryTimeout()
        if is_postgresql():
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT set_config('statement_timeout', %s, true)",
                    [str(max(1, int(remaining * 1000)))],
                )


@contextmanager
def statement_deadline(seconds: float) -> Iterator[Deadline]:
    """Bound the database time of everything run inside. On SQLite a progress handler aborts the
    running statement once the deadline passes, and the wait for another writer's lock (the busy
    timeout, which no progress handler sees) is cut to the same budget, so a locked database
    answers "database is locked" (a 503) within the limit; both are restored on exit."""
    deadline = Deadline(seconds)
    if connection.vendor != "sqlite":
        yield deadline
        return
    connection.ensure_connection()
    raw = connection.connection

    def over_time() -> int:
        return 1 if time.monotonic() > deadline.expires_at else 0

    raw.set_progress_handler(over_time, SQLITE_PROGRESS_STEPS)
    configured_ms = sqlite_busy_timeout_ms(connection)
    raw.execute(f"PRAGMA busy_timeout = {min(configured_ms, max(1, int(seconds * 1000)))}")
    try:
        yield deadline
    finally:
        raw.set_progress_handler(None, SQLITE_PROGRESS_STEPS)
        raw.execute(f"PRAGMA busy_timeout = {configured_ms}")


def sqlite_busy_timeout_ms(db: Any = connection) -> int:
    """The busy timeout a SQLite connection was opened with (config/settings.py)."""
    return int(float(db.settings_dict.get("OPTIONS", {}).get("timeout", 5)) * 1000)


def read_transaction_needed() -> bool:
    """Reads need a transaction only where the time limit is scoped to one (PostgreSQL). SQLite
    opens write transactions with BEGIN IMMEDIATE, so wrapping reads would serialise them."""
    return is_postgresql()
