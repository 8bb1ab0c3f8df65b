"""Every difference between SQLite and PostgreSQL that the dialect cares about, in one place.

The compiler asks this module for expressions and lookups whose meaning is the same on both
databases (dsl.md §6); outside this module and its three siblings named at the end, nothing in
``dsl`` looks at ``connection.vendor``:

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
- ``DATE(col)`` is the learning day of col (flashcards.scheduling.day): the date on the workspace
  zone's wall clock moved back by its day-start hour — ``AT TIME ZONE`` on PostgreSQL, a
  registered function on SQLite; for UTC and hour 0 the UTC calendar date, as before.
- "JSON array holds this value" (decks.effort_levels): jsonb ``@>`` / SQLite ``json_each``.
- a correlated EXISTS that must be checked row by row (``PerRowExists``), and an uncorrelated
  id set computed once inside it (``InSubqueryOnce``): MATCH's tag check (dsl.runtime.compiler).

The time limit's differences are dsl.runtime.time_limit's, NOW() bound late is dsl.runtime.clock, and
the few steps below Django's public API (running ready SQL, psycopg's quoting) are dsl.runtime.ready_sql.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from django.db import connection
from django.db.models import (
    BooleanField,
    DateField,
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

from flashcards.scheduling.day import LearningDay

# A parsed LIKE pattern: literal characters, and the two wildcards as these markers.
ANY_RUN = object()
ONE_CHAR = object()


def is_postgresql() -> bool:
    return bool(connection.vendor == "postgresql")


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
            text = str(part)
            out.append("\\" + text if text in ("%", "_", "\\") else text)
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
            text = str(part)
            out.append(f"[{text}]" if text in ("*", "?", "[") else text)
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
SQLITE_LEARNING_DATE = "dsl_learning_date"


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
    raw.create_function(SQLITE_LEARNING_DATE, 3, _sqlite_learning_date, deterministic=True)


def _sqlite_learning_date(value: Any, time_zone: str, hour: int) -> str | None:
    # Django stores an aware datetime on SQLite as naive UTC text.
    if value is None:
        return None
    moment = datetime.fromisoformat(str(value)).replace(tzinfo=UTC)
    return LearningDay(time_zone, int(hour)).date_of(moment).isoformat()


class UnicodeLower(Lower):
    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        sql, params = self.as_sql(compiler, connection, function=SQLITE_LOWER, **extra)
        return sql, params


class UnicodeUpper(Upper):
    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        sql, params = self.as_sql(compiler, connection, function=SQLITE_UPPER, **extra)
        return sql, params


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
    def output_field(self) -> BooleanField:
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
        sql, params = self.as_sql(
            compiler, connection, template="EXISTS(%(subquery)s OFFSET 0)", **extra
        )
        return sql, params


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


class LearningDate(Func):
    """The learning day of a datetime column, computed by the database for every row."""

    output_field = DateField()

    def __init__(self, expression: Expression | F, day: LearningDay) -> None:
        super().__init__(expression)
        self.day = day

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        sql, params = compiler.compile(self.source_expressions[0])
        return (
            f"CAST(({sql} AT TIME ZONE %s) - make_interval(hours => %s) AS date)",
            [*params, self.day.time_zone, self.day.starts_at_hour],
        )

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        sql, params = compiler.compile(self.source_expressions[0])
        return (
            f"{SQLITE_LEARNING_DATE}({sql}, %s, %s)",
            [*params, self.day.time_zone, self.day.starts_at_hour],
        )


def learning_date(expr: Expression | F, day: LearningDay) -> Func | TruncDate:
    """``DATE(col)``: the UTC date when the day is UTC from midnight (an index-friendly cast),
    else the learning day."""
    if day.is_utc_midnight:
        return TruncDate(expr, tzinfo=UTC)
    return LearningDate(expr, day)


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
    return [key.desc(**nulls) if descending else key.asc(**nulls) for key in keys]
