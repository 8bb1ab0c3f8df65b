"""Ready SQL: the steps below Django's public queryset API that the read path needs, in one place.
Checked against Django 5.2 and psycopg 3.3.

- ``inline_literals``: on PostgreSQL with client-side binding, the SQL of a ready read with its
  parameters written in by psycopg's own quoting (``mogrify``) — the only way any value of a caller
  reaches SQL text — split at the clock markers;
- ``clock_literal``: a bound NOW() as a timestamptz literal;
- ``fetch_rows``: one SELECT through Django's cursor, optionally with ``SET LOCAL
  statement_timeout`` in the same round trip and uuid / timestamptz loaded as text;
- ``published_timestamp``: PostgreSQL's timestamptz text → the published form.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import connection
from psycopg.types.string import TextLoader

from flashcards.services import format_timestamp


def inline_literals(
    sql: str, params: Sequence[Any], clock_positions: Sequence[int], db: Any = connection
) -> tuple[str, ...] | None:
    """PostgreSQL with client-side binding (Django's default): ``sql`` with every parameter
    written in by psycopg's own quoting — exactly the text client-side binding sends anyway —
    except the clock markers, at which the text is split. Running such SQL skips converting and
    quoting the same parameters on every request. None elsewhere."""
    if not _client_side_binding(db):
        return None
    sentinel = f"dsl_clock_{uuid.uuid4().hex}"
    positions = set(clock_positions)
    values = [sentinel if i in positions else param for i, param in enumerate(params)]
    with db.cursor() as cursor:
        text = cursor.cursor.mogrify(sql, values)
    pieces = text.split(f"'{sentinel}'")
    return tuple(pieces) if len(pieces) == len(positions) + 1 else None


def clock_literal(value: Any) -> str:
    """A bound clock value (an aware datetime on PostgreSQL) as a SQL literal."""
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise TypeError(f"Expected an aware datetime, got {value!r}")
    return f"'{value.isoformat()}'::timestamptz"


def _client_side_binding(db: Any) -> bool:
    if db.vendor != "postgresql":
        return False
    return not db.settings_dict.get("OPTIONS", {}).get("server_side_binding")


def fetch_rows(
    sql: str,
    params: Sequence[Any] | None,
    *,
    timeout_ms: int | None = None,
    stamps_as_text: bool = False,
    db: Any = connection,
) -> list[tuple]:
    """Run one SELECT and return its raw rows. ``timeout_ms`` (PostgreSQL, outside any
    transaction) sends ``SET LOCAL statement_timeout`` in the same round trip: PostgreSQL runs the
    statements of one simple query in one implicit transaction, so the limit applies to this
    SELECT and ends with it — one round trip instead of BEGIN, set_config, SELECT and COMMIT.

    ``stamps_as_text`` (PostgreSQL): uuid and timestamptz values come back as PostgreSQL's text —
    a uuid's text is already its published form, and ``published_timestamp`` makes a timestamp's
    by slicing — cheaper than building UUID and datetime objects only to print them again."""
    with db.cursor() as cursor:
        if stamps_as_text and db.vendor == "postgresql":
            adapters = cursor.cursor.adapters  # this cursor's own map: the connection is unchanged
            adapters.register_loader("uuid", TextLoader)
            adapters.register_loader("timestamptz", TextLoader)
        if timeout_ms is None:
            cursor.execute(sql, params)
            return cursor.fetchall()
        cursor.execute(f"SET LOCAL statement_timeout = {int(timeout_ms)}; {sql}", params)
        cursor.nextset()
        return cursor.fetchall()


def inline_timeout_possible(db: Any = connection) -> bool:
    """True where ``fetch_rows(timeout_ms=…)`` can bound a lone read without a transaction:
    PostgreSQL in autocommit with client-side parameter binding (Django's default; server-side
    binding cannot send two statements at once)."""
    if not _client_side_binding(db) or db.in_atomic_block:
        return False
    return db.get_autocommit()


def published_timestamp(text: str) -> str | None:
    """A timestamptz as PostgreSQL's text → the published form (UTC, milliseconds truncated, Z),
    exactly what ``format_timestamp`` makes of the same moment. In the UTC session time zone Django
    sets, with DateStyle ISO (which psycopg needs anyway), the text is "2026-11-30 00:08:04.144+00"
    — the fraction has 0 to 6 digits, trailing zeros dropped — so slicing is enough."""
    if text[-3:] == "+00" and text[4:5] == "-" and text[10:11] == " ":
        if text[19:20] == ".":
            return f"{text[:10]}T{text[11:19]}.{text[20:-3][:3]:0<3}Z"
        if len(text) == 22:
            return f"{text[:10]}T{text[11:19]}.000Z"
    # Any other shape (a year past 9999, another time zone): go through a datetime.
    return format_timestamp(datetime.fromisoformat(text))
