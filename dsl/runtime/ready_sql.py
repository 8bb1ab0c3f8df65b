"""Ready SQL: the steps below Django's public queryset API that the read path needs, in one place.
Checked against Django 5.2 and psycopg 3.3 (tests/dsl/test_ready_sql.py holds each to its public
equivalent).

- ``generate``: a queryset's SQL, parameters and column converters from Django's own SQL compiler
  (``Query.get_compiler().as_sql()``, ``get_converters``), with NOW() left as a marker;
- ``converted``: those converters applied to fetched rows, as ``SQLCompiler.results_iter`` does;
- ``sqlite_shortcuts``: on SQLite, Django's uuid / datetime / JSON converters replaced by direct
  formatting (dsl.runtime.rows);
- ``paged``: the SQL with a request's LIMIT / OFFSET (``DatabaseOperations.limit_offset_sql``);
- ``inline_literals``: on PostgreSQL with client-side binding, the SQL of a ready read with its
  parameters written in by psycopg's own quoting (``mogrify``) — the only way any value of a caller
  reaches SQL text — split at the clock markers;
- ``clock_literal``: a bound NOW() as a timestamptz literal;
- ``fetch_rows``: one SELECT through Django's cursor, optionally with ``SET LOCAL
  statement_timeout`` in the same round trip and uuid / timestamptz loaded as text;
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db import connection, models
from django.db.models import QuerySet
from django.db.models.expressions import Col
from psycopg.types.string import TextLoader

from dsl.runtime import clock as statement_clock
from dsl.runtime import rows


@dataclass(frozen=True)
class GeneratedSql:
    sql: str
    params: tuple[Any, ...]
    # Per selected position: Django's converters of that column and its expression.
    converters: dict[int, tuple[list[Any], Any]]
    width: int | None  # rows carry Django's extra ordering columns past this many


def generate(queryset: QuerySet, db: Any = connection) -> GeneratedSql | None:
    """The SQL Django would run for ``queryset`` (a values_list() one), NOW() left as
    ``statement_clock.ClockParam`` markers; None when the WHERE can match nothing (Django's
    EmptyResultSet)."""
    sql_compiler = queryset.query.get_compiler(connection=db)
    try:
        with statement_clock.clock(statement_clock.DEFERRED):
            sql, params = sql_compiler.as_sql()
    except EmptyResultSet:
        return None
    fields = [selected[0] for selected in sql_compiler.select[: sql_compiler.col_count]]
    return GeneratedSql(
        sql,
        tuple(params),
        sql_compiler.get_converters(fields),
        sql_compiler.col_count if sql_compiler.has_extra_select else None,
    )


def converted(
    fetched: list[tuple[Any, ...]],
    width: int | None,
    converters: Sequence[tuple[int, Sequence[Any], Any]],
    db: Any = connection,
) -> list[tuple[Any, ...]]:
    """Fetched rows as ``SQLCompiler.results_iter`` returns them: trimmed to the selected columns
    and each converted column passed through its converters."""
    if width is not None:
        fetched = [row[:width] for row in fetched]
    if not converters:
        return fetched
    result = []
    for row in fetched:
        values = list(row)
        for position, convs, expression in converters:
            value = values[position]
            for convert in convs:
                value = convert(value, expression, db)
            values[position] = value
        result.append(tuple(values))
    return result


def paged(sql: str, offset: int, count: int, db: Any = connection) -> str:
    """``sql`` limited to ``count`` rows from ``offset``, in the database's own spelling."""
    return f"{sql} {db.ops.limit_offset_sql(offset, offset + count)}"


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
) -> list[tuple[Any, ...]]:
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
            rows: list[tuple[Any, ...]] = cursor.fetchall()
            return rows
        cursor.execute(f"SET LOCAL statement_timeout = {int(timeout_ms)}; {sql}", params)
        cursor.nextset()
        fetched: list[tuple[Any, ...]] = cursor.fetchall()
        return fetched


def inline_timeout_possible(db: Any = connection) -> bool:
    """True where ``fetch_rows(timeout_ms=…)`` can bound a lone read without a transaction:
    PostgreSQL in autocommit with client-side parameter binding (Django's default; server-side
    binding cannot send two statements at once)."""
    if not _client_side_binding(db) or db.in_atomic_block:
        return False
    return bool(db.get_autocommit())


def sqlite_shortcuts(
    converters: dict[int, tuple[list[Any], Any]],
) -> tuple[dict[int, tuple[list[Any], Any]], dict[int, Callable[[Any], Any]]]:
    """On SQLite, the converters Django would run on plain uuid, datetime and JSON columns,
    replaced by cheaper equivalents: a datetime (already parsed by the driver) or a uuid's hex
    goes straight to its published text, without the aware datetime or UUID object Django builds
    first; a JSON column is ``json.loads`` without the field's generic wrapper. Returns the
    converters left to run and, per position, the formatter that replaces the published one.
    Anything else — an expression, a field with its own decoder — keeps Django's converters."""
    kept: dict[int, tuple[list[Any], Any]] = {}
    formatters: dict[int, Callable[[Any], Any]] = {}
    for position, (convs, expression) in converters.items():
        field = expression.target if isinstance(expression, Col) else None
        names = [getattr(convert, "__name__", "") for convert in convs]
        if isinstance(field, models.DateTimeField) and names == ["convert_datetimefield_value"]:
            formatters[position] = rows.naive_utc_datetime
        elif isinstance(field, models.UUIDField) and names == ["convert_uuidfield_value"]:
            formatters[position] = rows.uuid_hex
        elif (
            isinstance(field, models.JSONField)
            and field.decoder is None
            and names == ["from_db_value"]
        ):
            kept[position] = ([_json_column], expression)
        else:
            kept[position] = (convs, expression)
    return kept, formatters


def _json_column(value: Any, expression: Any, db: Any) -> Any:
    return None if value is None else json.loads(value)
