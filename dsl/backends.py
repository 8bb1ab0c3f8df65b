"""Every difference between SQLite and PostgreSQL that the dialect cares about, in one place.

The compiler asks this module for expressions and lookups whose meaning is the same on both
databases (dsl.md §6); nothing else in ``dsl`` looks at ``connection.vendor``:

- LIKE is case-sensitive and ILIKE case-insensitive on both (SQLite's LIKE folds ASCII case, so
  LIKE becomes GLOB there, and ILIKE SQLite's LIKE on ASCII text and a GLOB over Python-lowered
  text otherwise). Patterns follow
  PostgreSQL: ``%`` any run, ``_`` one character, a backslash makes the next character literal.
- LOWER / UPPER and the case-insensitive string order fold all of Unicode on both (SQLite's own
  functions fold ASCII only).
- uuid columns match LIKE in their canonical dashed lower-case text (SQLite stores 32 hex digits).
- string order: case-insensitive, then a code point tie-break (``COLLATE "C"`` on PostgreSQL, whose
  default collation is the locale's; SQLite's BINARY already is code point order).
- nulls first for ASC and last for DESC (PostgreSQL's default is the opposite for ASC).
- ``DATE(col)`` is the UTC calendar date on both.
- "JSON array holds this value" (decks.effort_levels): jsonb ``@>`` / SQLite ``json_each``.
- a correlated EXISTS that must be checked row by row (``PerRowExists``), and an uncorrelated
  id set computed once inside it (``InSubqueryOnce``): MATCH's tag check (dsl.compiler).
- the per-request statement time limit: ``set_config('statement_timeout', …, true)`` inside the
  request transaction on PostgreSQL — or, for a request that is one read, ``SET LOCAL
  statement_timeout`` sent with the SELECT in one round trip — and a progress handler that aborts
  the running statement after the deadline on SQLite (the connection stays usable).
- ``NOW()`` is bound late: the compiled SQL keeps a marker that each execution replaces with its
  own moment, so a statement that reads the clock can be compiled once and run many times.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from django.db import OperationalError, connection
from django.db.models import (
    BooleanField,
    DateTimeField,
    Exists,
    Expression,
    F,
    Func,
    Lookup,
    TextField,
)
from django.db.models.expressions import OrderBy
from django.db.models.functions import Collate, Lower, TruncDate, Upper
from django.db.models.lookups import In
from psycopg.types.string import TextLoader

from flashcards.services import format_timestamp, now_ms

# How many SQLite virtual-machine steps run between two deadline checks: about 0.1 ms of work,
# so the check costs nothing measurable and a runaway statement stops within a millisecond.
SQLITE_PROGRESS_STEPS = 10_000
POSTGRES_QUERY_CANCELED = "57014"

# A parsed LIKE pattern: literal characters, and the two wildcards as these markers.
ANY_RUN = object()
ONE_CHAR = object()


def is_postgresql() -> bool:
    return connection.vendor == "postgresql"


def parse_like_pattern(pattern: str) -> list[object]:
    """Split a PostgreSQL-style LIKE pattern into literal characters and wildcard markers.
    A trailing lone backslash is taken literally (PostgreSQL would reject the pattern)."""
    parts: list[object] = []
    chars = iter(pattern)
    for char in chars:
        if char == "\\":
            parts.append(next(chars, "\\"))
        elif char == "%":
            parts.append(ANY_RUN)
        elif char == "_":
            parts.append(ONE_CHAR)
        else:
            parts.append(char)
    return parts


def _render_like(parts: list[object]) -> str:
    """For LIKE with ``ESCAPE '\\'`` (both databases)."""
    out = []
    for part in parts:
        if part is ANY_RUN:
            out.append("%")
        elif part is ONE_CHAR:
            out.append("_")
        else:
            out.append("\\" + part if part in ("%", "_", "\\") else part)  # type: ignore[operator]
    return "".join(out)


def _render_glob(parts: list[object]) -> str:
    """For SQLite's GLOB, which is case-sensitive; ``*``, ``?`` and ``[`` are escaped as classes."""
    out = []
    for part in parts:
        if part is ANY_RUN:
            out.append("*")
        elif part is ONE_CHAR:
            out.append("?")
        else:
            out.append(f"[{part}]" if part in ("*", "?", "[") else part)  # type: ignore[str-format]
    return "".join(out)


class _PatternMatch(Lookup):
    """Base of the two pattern lookups. Used as expressions inside Q(), never registered on
    fields, so they cannot leak into the rest of the project. ``operator`` is PostgreSQL's."""

    prepare_rhs = False
    operator = "LIKE"

    def __init__(self, lhs: Expression | F, pattern: str) -> None:
        super().__init__(lhs, pattern)
        self.parts = parse_like_pattern(pattern)

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        lhs_sql, params = self.process_lhs(compiler, connection)
        return f"{lhs_sql} {self.operator} %s ESCAPE '\\'", [*params, _render_like(self.parts)]


class CaseSensitiveLike(_PatternMatch):
    lookup_name = "dsl_like"

    def as_sqlite(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        lhs_sql, params = self.process_lhs(compiler, connection)
        return f"{lhs_sql} GLOB %s", [*params, _render_glob(self.parts)]


class CaseInsensitiveLike(_PatternMatch):
    lookup_name = "dsl_ilike"
    operator = "ILIKE"

    def as_sqlite(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        """SQLite's LIKE folds ASCII case only. Text with a non-ASCII character is lowered in
        Python (``dsl_lower``) and matched against the lowered pattern with the case-sensitive
        GLOB, so 'É' matches 'é' as with PostgreSQL's ILIKE. ASCII text (as many characters as
        bytes) gets the same answer from SQLite's own LIKE against the lowered pattern, without
        a call into Python for every row: lowering ASCII text changes only A-Z, which LIKE
        already ignores, and keeps every character in place."""
        lhs_sql, params = self.process_lhs(compiler, connection)
        parts = [part.lower() if isinstance(part, str) else part for part in self.parts]
        sql = (
            f"CASE WHEN length(CAST({lhs_sql} AS BLOB)) = length({lhs_sql}) "
            f"THEN {lhs_sql} LIKE %s ESCAPE '\\' "
            f"ELSE {SQLITE_LOWER}({lhs_sql}) GLOB %s END"
        )
        return sql, [*params, *params, *params, _render_like(parts), *params, _render_glob(parts)]


def like(expr: Expression | F, pattern: str, *, case_insensitive: bool) -> Lookup:
    lookup = CaseInsensitiveLike if case_insensitive else CaseSensitiveLike
    return lookup(expr, pattern)


def substring_pattern(text: str) -> str:
    """The LIKE pattern that finds ``text`` anywhere, its wildcards taken literally."""
    escaped = "".join("\\" + char if char in ("%", "_", "\\") else char for char in text)
    return f"%{escaped}%"


# SQLite's lower() and upper() change ASCII letters only; these Python-backed functions (registered
# on every SQLite connection by ``register_sqlite_functions``) fold all of Unicode, as
# PostgreSQL's do under a UTF-8 locale.
SQLITE_LOWER = "dsl_lower"
SQLITE_UPPER = "dsl_upper"


def _text_function(convert: Any) -> Any:
    def apply(value: Any) -> Any:
        return convert(value) if isinstance(value, str) else value

    return apply


def register_sqlite_functions(sender: Any, connection: Any, **kwargs: Any) -> None:
    """``connection_created`` receiver."""
    if connection.vendor != "sqlite":
        return
    raw = connection.connection
    raw.create_function(SQLITE_LOWER, 1, _text_function(str.lower), deterministic=True)
    raw.create_function(SQLITE_UPPER, 1, _text_function(str.upper), deterministic=True)


class UnicodeLower(Lower):
    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        return self.as_sql(compiler, connection, function=SQLITE_LOWER, **extra)


class UnicodeUpper(Upper):
    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        return self.as_sql(compiler, connection, function=SQLITE_UPPER, **extra)


class UuidText(Func):
    """A uuid column as its canonical text ``xxxxxxxx-xxxx-…`` in lower case."""

    output_field = TextField()

    def __init__(self, expression: Expression | F) -> None:
        super().__init__(expression)

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        sql, params = compiler.compile(self.source_expressions[0])
        return f"CAST({sql} AS text)", list(params)

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        sql, params = compiler.compile(self.source_expressions[0])
        pieces = [(1, 8), (9, 4), (13, 4), (17, 4), (21, 12)]
        text = " || '-' || ".join(f"substr({sql}, {start}, {length})" for start, length in pieces)
        return f"lower({text})", list(params) * len(pieces)


_BOOLEAN = BooleanField()


class JsonArrayHas(Lookup):
    """The JSON array in ``lhs`` holds the scalar ``rhs`` (exact, case-sensitive)."""

    lookup_name = "dsl_json_array_has"
    prepare_rhs = False

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        lhs_sql, params = self.process_lhs(compiler, connection)
        return f"{lhs_sql} @> %s::jsonb", [*params, json.dumps([self.rhs])]

    def as_sqlite(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        lhs_sql, params = self.process_lhs(compiler, connection)
        return (
            f"EXISTS (SELECT 1 FROM json_each({lhs_sql}) WHERE json_each.value = %s)",
            [*params, self.rhs],
        )

    @property
    def output_field(self) -> BooleanField:  # type: ignore[override]
        return _BOOLEAN


class PerRowExists(Exists):
    """EXISTS(correlated subquery) that PostgreSQL checks for each outer row it reads.

    PostgreSQL may turn a correlated EXISTS into a hash of every matching row (a "hashed
    SubPlan"), built before the first outer row; it prefers that when it expects to call the
    subquery for many rows, which it does for a scan under LIMIT. For MATCH's tag check that hash
    held every card of every workspace with a tag containing the text — 67,000 rows and 30-40 ms
    for MATCH('english') at any workspace size, growing with the other tenants' data — where
    checking the ~70 cards the page needs takes 0.7 ms. ``OFFSET 0`` is PostgreSQL's documented
    fence: an EXISTS whose subquery has an OFFSET is not rewritten, so it stays a per-row check
    through the index on its correlation column. SQLite always checks row by row."""

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, Any]:
        return self.as_sql(compiler, connection, template="EXISTS(%(subquery)s OFFSET 0)", **extra)


class InSubqueryOnce(In):
    """``lhs IN (uncorrelated subquery)``, evaluated once per statement even inside a per-row
    subquery. SQLite materialises an uncorrelated IN list once; PostgreSQL would re-join it for
    every outer row there, so it is written ``lhs = ANY(ARRAY(subquery))``, an InitPlan that
    runs once."""

    lookup_name = "dsl_in_once"

    def as_postgresql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        lhs_sql, lhs_params = self.process_lhs(compiler, connection)
        rhs_sql, rhs_params = self.process_rhs(compiler, connection)
        return f"{lhs_sql} = ANY(ARRAY{rhs_sql})", [*lhs_params, *rhs_params]


def json_array_has(field: str, value: str) -> Lookup:
    return JsonArrayHas(F(field), value)


def utc_date(expr: Expression | F) -> TruncDate:
    return TruncDate(expr, tzinfo=UTC)


def code_point_order(expr: Expression | F) -> Expression | F:
    return Collate(expr, "C") if is_postgresql() else expr


def order_by(
    expr: Expression | F,
    *,
    descending: bool,
    nulls_first: bool | None,
    nullable: bool,
    is_string: bool,
) -> list[OrderBy]:
    """ORDER BY terms for one dialect order item (dsl.md §6.3). Non-nullable columns get no
    NULLS clause so PostgreSQL can still walk their indexes."""
    if nulls_first is None:
        nulls_first = not descending
    nulls: dict[str, bool] = {}
    if nullable:
        nulls = {"nulls_first": True} if nulls_first else {"nulls_last": True}
    keys: list[Expression | F] = (
        [code_point_order(UnicodeLower(expr)), code_point_order(expr)] if is_string else [expr]
    )
    return [
        key.desc(**nulls) if descending else key.asc(**nulls)  # type: ignore[union-attr]
        for key in keys
    ]


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


# The statement clock ---------------------------------------------------------------------------

# What ``StatementClock`` renders as: a moment, or DEFERRED to leave a ``ClockParam`` marker in
# the parameters (for SQL compiled once and executed many times, see ``dsl.executor``).
DEFERRED = object()
_clock: ContextVar[Any] = ContextVar("dsl_statement_clock", default=None)
_DATETIME_FIELD = DateTimeField()


@contextmanager
def clock(moment: Any) -> Iterator[None]:
    """Render ``StatementClock`` expressions compiled inside as ``moment`` (or DEFERRED)."""
    token = _clock.set(moment)
    try:
        yield
    finally:
        _clock.reset(token)


def _datetime_param(value: datetime, db: Any) -> Any:
    # What Django passes to the driver for a datetime compared with a DateTimeField.
    return _DATETIME_FIELD.get_db_prep_value(value, db, prepared=False)


class ClockParam:
    """The marker a deferred ``StatementClock`` leaves among the query parameters."""

    __slots__ = ("relative",)

    def __init__(self, relative: Any) -> None:
        self.relative = relative

    def bind(self, moment: datetime, db: Any) -> Any:
        return _datetime_param(self.relative.resolve(moment), db)

    def __repr__(self) -> str:
        return f"ClockParam({self.relative!r})"


class StatementClock(Expression):
    """``NOW()`` (± an interval) as a query parameter decided when the SQL is generated: the
    moment of ``clock()``, else the current time (a queryset evaluated outside the executor)."""

    output_field = DateTimeField()

    def __init__(self, relative: Any) -> None:
        super().__init__()
        self.relative = relative

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        moment = _clock.get()
        if moment is DEFERRED:
            return "%s", [ClockParam(self.relative)]
        return "%s", [_datetime_param(self.relative.resolve(moment or now_ms()), connection)]


def bind_clock(
    params: Sequence[Any], positions: Sequence[int], moment: datetime, db: Any = connection
) -> list[Any]:
    """The parameters of deferred SQL with each clock marker replaced by ``moment``'s value."""
    bound = list(params)
    for position in positions:
        bound[position] = bound[position].bind(moment, db)
    return bound


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
