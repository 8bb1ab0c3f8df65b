"""Server-side prepared statements for ready reads repeated on one PostgreSQL connection.

A ready read (dsl.runtime.reads.ReadySelect) is fixed SQL text for one plan in one workspace: literals
written in by psycopg's quoting (dsl.runtime.ready_sql.inline_literals), only the clock left open. Once the
same page of it (the same LIMIT and OFFSET) has run ``PREPARE_AFTER`` times in this process, it is
prepared on the connection and run with ``EXECUTE``, the moment as its only parameters. From then
on PostgreSQL can reuse a generic plan — which for such text is the plan it would make anyway,
since everything but the clock is known — and skip planning, often half of a short read's server
time at 100k cards. It is what psycopg does for any statement run five times with server-side
binding (``prepare_threshold``), which Django's client-side binding forgoes.

Everything still travels in one round trip: ``[DEALLOCATE …;] [PREPARE …;] SET LOCAL
statement_timeout = …; EXECUTE …`` as one simple query, so the time limit applies exactly as on
the plain path (dsl.runtime.ready_sql.fetch_rows). What each connection has prepared is remembered per
driver connection (a pool's connections keep theirs), at most ``MAX_PER_CONNECTION``, the least
recently used deallocated first. After any error on this path the connection's statements are no
longer trusted (``PREPARE`` survives a failed ``EXECUTE``): the next use starts with ``DEALLOCATE
ALL``. A statement the server no longer has (a pooler's ``DISCARD ALL``), already has, or can no
longer run as planned (a migration changed a column's type) makes the read fall back to the plain
text at once.

Off with ``DSL_PREPARED_READS=0``: behind PgBouncer in transaction pooling mode, SQL-level
prepared statements do not follow the client from one server connection to the next.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from psycopg.types.string import TextLoader

# psycopg's own default prepare_threshold: a text run this often is worth preparing.
PREPARE_AFTER = 5
# psycopg's default prepared_max.
MAX_PER_CONNECTION = 100

# The server no longer has the statement, already has one of that name, or refuses it because a
# migration changed a column it returns ("cached plan must not change result type"): run the
# plain text, which the server plans afresh.
_STATEMENT_GONE = frozenset({"26000", "42P05", "0A000"})

_ids = itertools.count(1)
_ids_lock = threading.Lock()


def new_id() -> int:
    """A process-unique number for one ready read's statements."""
    with _ids_lock:
        return next(_ids)


def enabled() -> bool:
    return bool(getattr(settings, "DSL_PREPARED_READS", True))


class _Prepared:
    """What one driver connection has prepared, in least recently used order."""

    __slots__ = ("__weakref__", "names", "untrusted")

    def __init__(self) -> None:
        self.names: OrderedDict[str, None] = OrderedDict()
        self.untrusted = False


_by_connection: weakref.WeakKeyDictionary[Any, _Prepared] = weakref.WeakKeyDictionary()
_by_connection_lock = threading.Lock()


def _state(driver_connection: Any) -> _Prepared:
    # The map is shared by the server's threads; each entry is used by one thread at a time (a
    # driver connection belongs to one thread, or to one pool checkout), so needs no lock of its own.
    with _by_connection_lock:
        state = _by_connection.get(driver_connection)
        if state is None:
            state = _by_connection[driver_connection] = _Prepared()
        return state


def prepared_names(db: Any) -> tuple[str, ...]:
    """The statements this module believes ``db``'s current connection holds (for tests)."""
    state = _by_connection.get(db.connection)
    return tuple(state.names) if state is not None else ()


def fetch(
    name: str,
    text: str,
    clock_args: Sequence[str],
    *,
    timeout_ms: int,
    stamps_as_text: bool,
    db: Any,
) -> list[tuple[Any, ...]] | None:
    """Run the prepared statement ``name`` (``text`` with ``$1``… for ``clock_args``, each a
    timestamptz literal), preparing it first if this connection has not; the rows, or None when
    the server refused the statement itself and the caller should run the plain text."""
    db.ensure_connection()
    state = _state(db.connection)
    parts: list[str] = []
    if state.untrusted:
        parts.append("DEALLOCATE ALL")
        state.names.clear()
    fresh = name not in state.names
    if fresh:
        while len(state.names) >= MAX_PER_CONNECTION:
            evicted, _ = state.names.popitem(last=False)
            parts.append(f"DEALLOCATE {evicted}")
        types = f" ({', '.join(['timestamptz'] * len(clock_args))})" if clock_args else ""
        parts.append(f"PREPARE {name}{types} AS {text}")
    else:
        state.names.move_to_end(name)
    parts.append(f"SET LOCAL statement_timeout = {int(timeout_ms)}")
    parts.append(f"EXECUTE {name}({', '.join(clock_args)})" if clock_args else f"EXECUTE {name}")
    try:
        with db.cursor() as cursor:
            if stamps_as_text:
                adapters = cursor.cursor.adapters
                adapters.register_loader("uuid", TextLoader)
                adapters.register_loader("timestamptz", TextLoader)
            cursor.execute("; ".join(parts), None)
            for _ in range(len(parts) - 1):
                cursor.nextset()
            rows: list[tuple[Any, ...]] = cursor.fetchall()
    except Exception as exc:
        state.untrusted = True
        if getattr(exc.__cause__, "sqlstate", None) in _STATEMENT_GONE:
            return None
        raise
    state.untrusted = False
    if fresh:
        state.names[name] = None
    return rows
