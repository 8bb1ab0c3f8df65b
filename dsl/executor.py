"""Runs the statements of one request and shapes the ``data`` of the response (dsl.md §2.1-§2.4).

Reads evaluate a compiled queryset (``limit + 1`` rows, to know whether more exist); writes call
the flashcards service functions, which enforce the invariants, stamp sync metadata and record
the change log. A request with any write runs in one transaction, so statement N sees the effects
of statements before it and a failure anywhere leaves nothing behind; a dry run rolls that
transaction back after shaping the response.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any
from uuid import UUID as UUIDType

from django.core.exceptions import EmptyResultSet
from django.db import (
    DEFAULT_DB_ALIAS,
    DataError,
    IntegrityError,
    connection,
    connections,
    models,
    transaction,
)
from django.db.models.expressions import Col

from dsl import ast, backends, compiler, diagnostics, ready_sql, statement_clock, time_limit
from dsl import plan as p
from dsl import validator as v
from dsl.errors import QUERY_RESULT_TOO_LARGE, DslError
from dsl.parser import Limits, parse_batch
from dsl.querylog import ExecutionStats, envelope_size
from dsl.resources import BOOLEAN, DATETIME, INTEGER, NUMBER, UUID, Column, Resource
from dsl.settings import dsl_settings
from flashcards import services
from flashcards.models import Workspace
from flashcards.services import DomainError, format_timestamp, now_ms
from flashcards.services.timestamps import parse_timestamp

Finish = Callable[[dict[str, Any], str], dict[str, Any]]

ENDPOINT_ANY = "/v1/agent/sql"
ENDPOINT_READ = "/v1/agent/sql/query"
ENDPOINT_WRITE = "/v1/agent/sql/execute"
_WRITE_NODES = (ast.Insert, ast.Update, ast.Delete)
_STATEMENT_TYPES: dict[type, str] = {
    ast.ShowTables: "show_tables",
    ast.Describe: "describe",
    ast.Select: "select",
    ast.Insert: "insert",
    ast.Update: "update",
    ast.Delete: "delete",
}
_ZERO = timedelta(0)
# Parsed and validated statements are immutable and depend only on the text and the limits, so
# repeated requests (an agent paging, a dashboard polling) skip the parser. Long texts are not
# kept, to bound the memory this can take.
_PREPARED_CACHE_SIZE = 512
_CACHEABLE_SQL_CHARS = 4096
_DOMAIN_REASONS = {"too_many_rows": "too_many_rows", "read_only_column": "read_only_column"}

_CREATE = {"cards": services.create_cards, "decks": services.create_decks}
_UPDATE = {"cards": services.update_cards, "decks": services.update_decks}
_DELETE = {"cards": services.delete_cards, "decks": services.delete_decks}


def current_limits() -> Limits:
    """The parser's and validator's limits, from the one settings object (dsl.md §8)."""
    return Limits(
        max_sql_bytes=int(dsl_settings.MAX_SQL_BYTES),
        max_statements=int(dsl_settings.MAX_STATEMENTS),
        max_nesting=int(dsl_settings.MAX_DEPTH),
        max_predicates=int(dsl_settings.MAX_PREDICATES),
        max_list_values=int(dsl_settings.MAX_IN_VALUES),
        max_insert_rows=int(dsl_settings.MAX_ROWS_PER_WRITE),
    )


# Values ----------------------------------------------------------------------------------------


def _uuid(value: Any) -> str:
    # UUID objects print in lower case already; other values (text) are normalised.
    return str(value) if type(value) is UUIDType else str(value).lower()


def _date(value: date) -> str:
    return value.isoformat()


def _integer(value: Any) -> int:
    return value if type(value) is int else int(value)


def _number(value: Any) -> float:
    return value if type(value) is float else float(value)


def _boolean(value: Any) -> bool:
    return bool(value)


def _datetime(value: datetime) -> str | None:
    # The database hands back aware UTC datetimes; isoformat is the fast path to the published
    # form (it truncates to milliseconds, as format_timestamp does).
    if value.utcoffset() == _ZERO:
        return value.isoformat(timespec="milliseconds")[:-6] + "Z"
    return format_timestamp(value)


_FORMATTERS: dict[str, Callable[[Any], Any]] = {
    UUID: _uuid,
    DATETIME: _datetime,
    compiler.DATE: _date,
    INTEGER: _integer,
    NUMBER: _number,
    BOOLEAN: _boolean,
}


# PostgreSQL's text of a uuid is already the published form.
_TEXT_STAMP_FORMATTERS = {
    key: value for key, value in _FORMATTERS.items() if key not in (UUID, DATETIME)
} | {DATETIME: ready_sql.published_timestamp}

# Published as the Python type the driver (with Django's converters) returns for a model field.
_NATIVE_TYPES = frozenset({INTEGER, NUMBER, BOOLEAN})


def _naive_utc_datetime(value: Any) -> str:
    # SQLite's driver hands back a naive datetime (Django stores UTC there); the published form
    # without building an aware copy first. Text (a value the driver did not convert) is parsed.
    if type(value) is not datetime:
        value = parse_timestamp(str(value))
    if value.tzinfo is not None:
        return format_timestamp(value)
    return value.isoformat(timespec="milliseconds") + "Z"


def _uuid_hex(value: Any) -> str:
    # SQLite stores a uuid as its 32 hex digits.
    text = str(value).lower()
    if len(text) != 32:
        return str(UUIDType(text))
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


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
            formatters[position] = _naive_utc_datetime
        elif isinstance(field, models.UUIDField) and names == ["convert_uuidfield_value"]:
            formatters[position] = _uuid_hex
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


def row_formatter(
    columns: tuple[compiler.OutputColumn, ...],
    *,
    stamps_as_text: bool = False,
    overrides: dict[int, Callable[[Any], Any]] | None = None,
) -> Callable[[tuple], dict[str, Any]]:
    """Turns a value tuple into an output row (dsl.md §2.4): keys in item order, values in their
    published formats, None as null. Values that need no conversion (texts, JSON, most numbers)
    are copied by ``dict(zip(...))`` in C; only the converted columns cost Python per row.
    ``stamps_as_text``: uuid and datetime values arrive as PostgreSQL's text
    (``ready_sql.fetch_rows``)."""
    formatters = _TEXT_STAMP_FORMATTERS if stamps_as_text else _FORMATTERS
    overrides = overrides or {}
    keys = tuple(column.key for column in columns)
    last = {key: index for index, key in enumerate(keys)}  # a repeated key keeps its last value
    converted = tuple(
        (index, column.key, convert)
        for index, column in enumerate(columns)
        if (convert := overrides.get(index) or formatters.get(column.type)) is not None
        and last[column.key] == index
        and (index in overrides or not (column.plain_field and column.type in _NATIVE_TYPES))
    )

    def format_row(values: tuple) -> dict[str, Any]:
        row = dict(zip(keys, values, strict=True))
        for index, key, convert in converted:
            value = values[index]
            if value is not None:
                row[key] = convert(value)
        return row

    return format_row


# Statements ------------------------------------------------------------------------------------


@dataclass
class StatementResult:
    """One executed statement: its entry of ``data`` (without sql / normalizedSql) and facts
    the response needs."""

    parsed: ast.ParsedStatement
    plan: p.Plan
    entry: dict[str, Any]
    next_offset: int | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def is_write(self) -> bool:
        return self.plan.is_write


def _read_entry(
    statement_type: str,
    resource: str | None,
    rows: list[dict[str, Any]],
    *,
    limit: int | None = None,
    offset: int | None = None,
    has_more: bool = False,
    warnings: list[str],
) -> dict[str, Any]:
    return {
        "statementType": statement_type,
        "resource": resource,
        "rows": rows,
        "rowCount": len(rows),
        "limit": limit,
        "offset": offset,
        "hasMore": has_more,
        "warnings": warnings,
    }


def _write_entry(plan: p.Plan, rows: list[dict[str, Any]], affected: int) -> dict[str, Any]:
    return {
        "statementType": plan.statement_type,
        "resource": plan.resource.name,  # type: ignore[union-attr]
        "rows": rows,
        "affectedCount": affected,
        "rowsOmitted": False,
        "warnings": [],
    }


class _Runner:
    """Executes statements for one workspace at one moment (NOW() is the same in all of them)."""

    def __init__(
        self,
        workspace: Workspace,
        now: datetime,
        deadline: time_limit.Deadline,
        *,
        inline_timeout: bool = False,
        db: Any = None,
    ) -> None:
        self.workspace = workspace
        self.now = now
        self.deadline = deadline
        # This thread's connection itself: each use of the ``connection`` proxy costs a lookup.
        self.db = connections[DEFAULT_DB_ALIAS] if db is None else db
        # A lone read outside any transaction (PostgreSQL) sends its time limit with the SELECT.
        self.inline_timeout = inline_timeout
        self.max_rows = int(dsl_settings.MAX_ROWS_PER_SELECT)
        self.max_write_rows = int(dsl_settings.MAX_ROWS_PER_WRITE)

    def run(self, parsed: ast.ParsedStatement, plan: p.Plan) -> StatementResult:
        if isinstance(plan, p.SelectPlan):
            return self.select(parsed, plan)
        if isinstance(plan, p.ShowTablesPlan):
            rows = [resource.show_tables_row() for resource in plan.resources]
            return StatementResult(
                parsed, plan, _read_entry("show_tables", None, rows, warnings=[])
            )
        if isinstance(plan, p.DescribePlan):
            rows = [column.describe_row() for column in plan.resource.columns]
            entry = _read_entry("describe", plan.resource.name, rows, warnings=[])
            return StatementResult(parsed, plan, entry)
        if isinstance(plan, p.InsertPlan):
            return self.insert(parsed, plan)
        if isinstance(plan, p.UpdatePlan):
            return self.update(parsed, plan)
        return self.delete(parsed, plan)

    def select(self, parsed: ast.ParsedStatement, plan: p.SelectPlan) -> StatementResult:
        warnings: list[str] = []
        limit = self.max_rows if plan.limit is None else plan.limit
        if limit > self.max_rows:
            warnings.append(
                f"LIMIT {limit} was lowered to {self.max_rows}, the most rows one SELECT returns; "
                "page with OFFSET."
            )
            limit = self.max_rows
        offset = plan.offset or 0
        db = self.db
        ready = _ready_select(plan, self.workspace, db)
        timeout_ms = self.deadline.check() if self.inline_timeout else None
        values = ready.fetch(self.now, offset, limit + 1, timeout_ms=timeout_ms, db=db)
        has_more = len(values) > limit
        format_row = ready.format_row
        rows = [format_row(row) for row in values[:limit]]
        entry = _read_entry(
            "select",
            plan.resource.name,
            rows,
            limit=limit,
            offset=offset,
            has_more=has_more,
            warnings=warnings,
        )
        next_offset = offset + limit if has_more else None
        return StatementResult(parsed, plan, entry, next_offset, warnings)

    def insert(self, parsed: ast.ParsedStatement, plan: p.InsertPlan) -> StatementResult:
        created = _CREATE[plan.resource.name](self.workspace, plan.row_dicts())
        ids = [obj.pk for obj in created]
        rows = self._written_rows(plan.resource, plan.returning, ids)
        return StatementResult(parsed, plan, _write_entry(plan, rows, len(ids)))

    def update(self, parsed: ast.ParsedStatement, plan: p.UpdatePlan) -> StatementResult:
        ids = self._target_ids(parsed, plan)
        changes = {column.name: value for column, value in plan.assignments}
        updated = _UPDATE[plan.resource.name](self.workspace, ids, changes)
        ids = [obj.pk for obj in updated]
        rows = self._written_rows(plan.resource, plan.returning, ids)
        return StatementResult(parsed, plan, _write_entry(plan, rows, len(ids)))

    def delete(self, parsed: ast.ParsedStatement, plan: p.DeletePlan) -> StatementResult:
        ids = self._target_ids(parsed, plan)
        # RETURNING of a DELETE shows the rows as they were just before deletion.
        before = self._rows_by_id(plan.resource, plan.returning, ids) if plan.returning else {}
        deleted = [obj.pk for obj in _DELETE[plan.resource.name](self.workspace, ids)]
        rows = [before[row_id] for row_id in deleted if row_id in before]
        return StatementResult(parsed, plan, _write_entry(plan, rows, len(deleted)))

    def _target_ids(self, parsed: ast.ParsedStatement, plan: p.UpdatePlan | p.DeletePlan) -> list:
        """The ids the WHERE matches; more than the limit is refused before anything is written."""
        ids = compiler.matching_ids(
            plan.resource,
            self.workspace,
            plan.where,
            limit=self.max_write_rows + 1,
            now=self.now,
        )
        if len(ids) > self.max_write_rows:
            verb = plan.statement_type.upper()
            where = getattr(parsed.node, "where", None)
            raise DslError(
                f"The WHERE clause matches more than {self.max_write_rows} rows; one {verb} "
                f"changes at most {self.max_write_rows}. Nothing was changed.",
                reason="too_many_rows",
                offset=where.span[0] if where is not None else parsed.span[0],
                hint=(
                    "Narrow the WHERE clause, or work in pages: SELECT the ids first, then "
                    f"{verb} ... WHERE {plan.resource.id_column} IN (...) with at most "
                    f"{self.max_write_rows} ids."
                ),
            )
        return ids

    def _written_rows(
        self, resource: Resource, returning: tuple[Column, ...] | None, ids: list
    ) -> list[dict[str, Any]]:
        """Without RETURNING, each written row is just its id; with it, the listed columns of
        the row after the write. Both in the order of ``ids``."""
        if returning is None:
            return [{resource.id_column: _uuid(row_id)} for row_id in ids]
        by_id = self._rows_by_id(resource, returning, ids)
        return [by_id[row_id] for row_id in ids if row_id in by_id]

    def _rows_by_id(
        self, resource: Resource, returning: tuple[Column, ...], ids: list
    ) -> dict[Any, dict[str, Any]]:
        """RETURNING rows, read back through the workspace-scoped queryset."""
        if not ids:
            return {}
        compiled = compiler.select_by_ids(resource, self.workspace, returning, ids)
        format_row = row_formatter(compiled.columns)
        return {values[0]: format_row(values[1:]) for values in compiled.queryset}


# The request -----------------------------------------------------------------------------------


def _check_endpoint(batch: ast.Batch, mode: str) -> None:
    """/v1/agent/sql/query only reads and /v1/agent/sql/execute only writes (dsl.md §1)."""
    if mode == "any":
        return
    for parsed in batch.statements:
        is_write = isinstance(parsed.node, _WRITE_NODES)
        if is_write == (mode == "write"):
            continue
        kind = _statement_keyword(parsed.node)
        if is_write:
            message = (
                f"{kind} is a write, and {ENDPOINT_READ} only runs reads (SHOW TABLES, DESCRIBE, "
                f"SELECT). Send writes to {ENDPOINT_WRITE}."
            )
            hint = f"POST the same body to {ENDPOINT_WRITE}, or to {ENDPOINT_ANY} for a batch that mixes reads and writes."
        else:
            message = (
                f"{kind} is a read, and {ENDPOINT_WRITE} only runs writes (INSERT, UPDATE, "
                f"DELETE). Send reads to {ENDPOINT_READ}."
            )
            hint = f"POST the same body to {ENDPOINT_READ}, or to {ENDPOINT_ANY} for a batch that mixes reads and writes."
        error = DslError(message, reason="wrong_endpoint", offset=parsed.span[0], hint=hint)
        if len(batch.statements) > 1:
            error.in_statement(parsed.index)
        raise error


def _statement_keyword(node: ast.Statement) -> str:
    if isinstance(node, ast.ShowTables):
        return "SHOW TABLES"
    return type(node).__name__.upper()


def _domain_error(error: DomainError, parsed: ast.ParsedStatement, plan: p.Plan) -> DslError:
    """An invariant the service functions enforce, reported like any other invalid sql."""
    resource = plan.resource.name  # type: ignore[union-attr]
    where = f" Check the value of {error.field}." if error.field else ""
    return DslError(
        error.message,
        reason=_DOMAIN_REASONS.get(error.code, "invalid_value"),
        offset=parsed.span[0],
        hint=f"Fix the value and retry.{where} DESCRIBE {resource} lists each column's rules.",
    )


def _database_rejected(parsed: ast.ParsedStatement) -> DslError:
    return DslError(
        "The database rejected a value of this statement (too long or out of range).",
        reason="invalid_value",
        offset=parsed.span[0],
        hint="Use shorter texts and values within range, then retry.",
    )


class _PreparedCache:
    """A small thread-safe LRU of (sql, limits) → (batch, plans) for statements that validated."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[tuple[str, Limits], tuple[ast.Batch, tuple[p.Plan, ...]]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()

    def get(self, key: tuple[str, Limits]) -> tuple[ast.Batch, tuple[p.Plan, ...]] | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[str, Limits], value: tuple[ast.Batch, tuple[p.Plan, ...]]) -> None:
        if len(key[0]) > _CACHEABLE_SQL_CHARS:
            return
        with self._lock:
            self._items[key] = value
            if len(self._items) > self._size:
                self._items.popitem(last=False)


_prepared = _PreparedCache(_PREPARED_CACHE_SIZE)

_READY_CACHE_SIZE = 256
_ready: OrderedDict[tuple[int, object, str], ReadySelect] = OrderedDict()
_ready_lock = threading.Lock()


@dataclass(frozen=True)
class ReadySelect:
    """A SELECT compiled once down to SQL. Django builds the queryset (``dsl.compiler``) and
    generates its SQL; this keeps that SQL, its parameters with NOW() as late-bound markers, and
    Django's converters of the selected columns, so a repeated read skips queryset construction
    and SQL generation — which cost more than the statement itself on a 20-row page
    (docs/benchmarks.md)."""

    plan: p.SelectPlan
    columns: tuple[compiler.OutputColumn, ...]
    sql: str | None  # None: the WHERE can match nothing (Django's EmptyResultSet)
    params: tuple[Any, ...]
    clock_positions: tuple[int, ...]
    width: int | None  # trim rows to this many columns (Django's extra ordering columns)
    converters: tuple[tuple[int, tuple[Any, ...], Any], ...]
    format_row: Callable[[tuple], dict[str, Any]]
    stamps_as_text: bool  # uuid / timestamptz fetched as PostgreSQL's text
    # PostgreSQL: the SQL with its parameters written in, split at the clock markers
    # (ready_sql.inline_literals); None runs ``sql`` with ``params``.
    literal_pieces: tuple[str, ...] | None = None

    @classmethod
    def build(cls, plan: p.SelectPlan, workspace: Workspace) -> ReadySelect:
        compiled = compiler.compile_select(plan, workspace, now=None)
        sql_compiler = compiled.queryset.query.get_compiler(connection=connection)
        try:
            with statement_clock.clock(statement_clock.DEFERRED):
                sql, params = sql_compiler.as_sql()
        except EmptyResultSet:
            format_row = row_formatter(compiled.columns)
            return cls(plan, compiled.columns, None, (), (), None, (), format_row, False)
        fields = [selected[0] for selected in sql_compiler.select[: sql_compiler.col_count]]
        converters = sql_compiler.get_converters(fields)
        # PostgreSQL's text for uuid / timestamptz, unless Django converts such a column itself.
        stamps_as_text = backends.is_postgresql() and not any(
            column.type in (UUID, DATETIME) and index in converters
            for index, column in enumerate(compiled.columns)
        )
        overrides: dict[int, Callable[[Any], Any]] = {}
        if connection.vendor == "sqlite":
            converters, overrides = sqlite_shortcuts(converters)
            overrides = {i: f for i, f in overrides.items() if i < len(compiled.columns)}
        format_row = row_formatter(
            compiled.columns, stamps_as_text=stamps_as_text, overrides=overrides
        )
        clock_positions = tuple(
            i for i, param in enumerate(params) if isinstance(param, statement_clock.ClockParam)
        )
        return cls(
            plan,
            compiled.columns,
            sql,
            tuple(params),
            clock_positions,
            sql_compiler.col_count if sql_compiler.has_extra_select else None,
            tuple((pos, tuple(convs), expr) for pos, (convs, expr) in converters.items()),
            format_row,
            stamps_as_text,
            ready_sql.inline_literals(sql, params, clock_positions),
        )

    def fetch(
        self,
        moment: datetime,
        offset: int,
        count: int,
        *,
        timeout_ms: int | None,
        db: Any = connection,
    ) -> list[tuple]:
        """``count`` rows from ``offset``, as Django would return them from values_list()."""
        if self.sql is None:
            return []
        pieces = self.literal_pieces
        params: tuple[Any, ...] | None
        if pieces is not None:
            text = pieces[0]
            for position, piece in zip(self.clock_positions, pieces[1:], strict=True):
                text += ready_sql.clock_literal(self.params[position].bind(moment, db)) + piece
            params = None
        else:
            text, params = self.sql, self.params
            if self.clock_positions:
                params = tuple(statement_clock.bind_clock(params, self.clock_positions, moment, db))
        sql = f"{text} {db.ops.limit_offset_sql(offset, offset + count)}"
        rows = ready_sql.fetch_rows(
            sql, params, timeout_ms=timeout_ms, stamps_as_text=self.stamps_as_text, db=db
        )
        if self.width is not None:
            rows = [row[: self.width] for row in rows]
        if not self.converters:
            return rows
        converted = []
        for row in rows:
            values = list(row)
            for pos, convs, expression in self.converters:
                value = values[pos]
                for convert in convs:
                    value = convert(value, expression, db)
                values[pos] = value
            converted.append(tuple(values))
        return converted


def _ready_select(plan: p.SelectPlan, workspace: Workspace, db: Any = connection) -> ReadySelect:
    """The ReadySelect of a plan in a workspace, reused across requests. Plans come from the
    prepared-statement cache, so the same SQL yields the same plan object; the workspace id is
    part of the key because it is a parameter of the scope filter every query starts from."""
    key = (id(plan), workspace.pk, db.vendor)
    with _ready_lock:
        found = _ready.get(key)
        if found is not None and found.plan is plan:
            _ready.move_to_end(key)
            return found
    ready = ReadySelect.build(plan, workspace)
    with _ready_lock:
        _ready[key] = ready
        if len(_ready) > _READY_CACHE_SIZE:
            _ready.popitem(last=False)
    return ready


def _record(stats: ExecutionStats, batch: ast.Batch) -> None:
    for parsed in batch.statements:
        node = parsed.node
        stats.add_statement(_STATEMENT_TYPES[type(node)], getattr(node, "resource", None))


def prepare(
    sql: str, limits: Limits, mode: str, stats: ExecutionStats
) -> tuple[ast.Batch, tuple[p.Plan, ...]]:
    """Parse, check the endpoint, validate; raises DslError. The statement types are recorded
    as soon as they are known, so a request that fails validation is still logged with them."""
    key = (sql, limits)
    cached = _prepared.get(key)
    if cached is not None:
        _record(stats, cached[0])
        _check_endpoint(cached[0], mode)
        return cached
    try:
        batch = parse_batch(sql, limits)
    except DslError as error:
        raise diagnostics.teach(error, sql, limits) from None
    _record(stats, batch)
    _check_endpoint(batch, mode)
    try:
        prepared = (batch, v.validate_batch(batch, limits))
    except DslError as error:
        raise diagnostics.teach(error, sql, limits) from None
    _prepared.put(key, prepared)
    return prepared


def execute_batch(
    sql: str,
    workspace: Workspace,
    *,
    mode: str,
    dry_run: bool,
    deadline: time_limit.Deadline,
    stats: ExecutionStats,
    finish: Finish,
    before_commit: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Parse, validate and run ``sql``; returns the full success envelope built by ``finish``
    from ``data`` and ``instructions``. ``before_commit`` sees that envelope inside the request
    transaction (idempotency records are stored there); it is not called for dry runs.
    Raises DslError (statement-indexed in batches) for anything the caller can fix."""
    limits = current_limits()
    batch, plans = prepare(sql, limits, mode, stats)
    has_write = any(plan.is_write for plan in plans)
    several = len(plans) > 1
    db = connections[DEFAULT_DB_ALIAS]  # this thread's connection, not the lookup proxy
    # One read needs no transaction: on PostgreSQL its time limit travels with the SELECT.
    inline_timeout = not has_write and not several and ready_sql.inline_timeout_possible(db)
    runner = _Runner(workspace, now_ms(), deadline, inline_timeout=inline_timeout, db=db)
    needs_transaction = has_write or (time_limit.read_transaction_needed() and not inline_timeout)
    with transaction.atomic() if needs_transaction else nullcontext():
        results: list[StatementResult] = []
        for parsed, plan in zip(batch.statements, plans, strict=True):
            if several:
                stats.current_statement = parsed.index
            if inline_timeout:
                deadline.check()
            else:
                deadline.arm()
            try:
                result = runner.run(parsed, plan)
            except DslError as error:
                if several:
                    error.in_statement(parsed.index)
                raise
            except DomainError as error:
                raise _with_index(_domain_error(error, parsed, plan), parsed, several) from error
            except (DataError, IntegrityError) as error:
                raise _with_index(_database_rejected(parsed), parsed, several) from error
            results.append(result)
            _count(stats, result)
        body = _respond(batch, results, dry_run=dry_run, finish=finish, stats=stats)
        if dry_run:
            if needs_transaction:
                transaction.set_rollback(True)
        elif before_commit is not None:
            before_commit(body)
    return body


def _with_index(error: DslError, parsed: ast.ParsedStatement, several: bool) -> DslError:
    return error.in_statement(parsed.index) if several else error


def _count(stats: ExecutionStats, result: StatementResult) -> None:
    if result.is_write:
        stats.rows_affected += result.entry["affectedCount"]
    else:
        stats.rows_returned += result.entry["rowCount"]


# The response ----------------------------------------------------------------------------------


def _single_data(sql: str, result: StatementResult) -> dict[str, Any]:
    """One statement's ``data``: its entry with sql / normalizedSql at their §2.1 / §2.2 place."""
    entry = result.entry
    echo = {"sql": sql.strip(), "normalizedSql": result.parsed.normalized_sql}
    if result.is_write:
        head = ("statementType", "resource")
    else:
        head = ("statementType", "resource", "rows", "rowCount", "limit", "offset", "hasMore")
    data = {key: entry[key] for key in head}
    data.update(echo)
    data.update({key: value for key, value in entry.items() if key not in data})
    return data


def _batch_data(batch: ast.Batch, results: list[StatementResult]) -> dict[str, Any]:
    writes = [r for r in results if r.is_write]
    return {
        "statementType": "batch",
        "resource": None,
        "sql": batch.sql.strip(),
        "normalizedSql": batch.normalized_sql,
        "statements": [r.entry for r in results],
        "statementCount": len(results),
        "affectedCountTotal": sum(r.entry["affectedCount"] for r in writes) if writes else None,
        "rowsOmitted": any(r.entry.get("rowsOmitted") for r in writes),
        "warnings": [
            f"Statement {r.parsed.index}: {warning}" for r in results for warning in r.warnings
        ],
    }


def _respond(
    batch: ast.Batch,
    results: list[StatementResult],
    *,
    dry_run: bool,
    finish: Finish,
    stats: ExecutionStats | None = None,
) -> dict[str, Any]:
    """The envelope, kept within the size budgets of dsl.md §8: a write's rows are dropped
    (rowsOmitted) until it fits; a read that does not fit is an error."""

    def build() -> dict[str, Any]:
        if len(results) == 1:
            data = _single_data(batch.sql, results[0])
        else:
            data = _batch_data(batch, results)
        if dry_run:
            data["dryRun"] = True
        return finish(data, _instructions(results, dry_run=dry_run))

    body = build()
    size, full = _budgeted_size(body)
    droppable = sorted(
        (r for r in results if r.is_write and r.entry["rows"]),
        key=lambda r: envelope_size({"rows": r.entry["rows"]}),
        reverse=True,
    )
    while size > dsl_settings.MAX_WRITE_ENVELOPE_CHARS and droppable:
        entry = droppable.pop(0).entry
        entry["rows"], entry["rowsOmitted"] = [], True
        body = build()
        size, full = _budgeted_size(body)
    if size > dsl_settings.MAX_READ_ENVELOPE_CHARS and not all(r.is_write for r in results):
        raise _too_large(size)
    if stats is not None:
        stats.measured(body, full)  # the query log's result_size, without encoding it again
    return body


def _budgeted_size(body: dict[str, Any]) -> tuple[int, int]:
    """The envelope's size as the budgets of dsl.md §8 count it — without ``normalizedSql``, the
    server's restatement of the caller's own ``sql`` — and its whole size. Counting the statement
    twice would halve the room of every long statement, and a read with the largest IN list the
    dialect allows (1,000 ids) could never be answered."""
    echo = len(json.dumps(body["data"]["normalizedSql"], ensure_ascii=False)) - len('""')
    full = envelope_size(body)
    return full - echo, full


def _too_large(size: int) -> DslError:
    limit = int(dsl_settings.MAX_READ_ENVELOPE_CHARS)
    return DslError(
        f"The result would be {size:,} characters of JSON; reads may return at most {limit:,}. "
        "Nothing was written.",
        code=QUERY_RESULT_TOO_LARGE,
        reason="result_too_large",
        hint=(
            "Select only the columns you need (SELECT * includes long texts), lower LIMIT and "
            "page with OFFSET, e.g. SELECT card_id, front_text FROM cards LIMIT 20 OFFSET 0."
        ),
    )


def _instructions(results: list[StatementResult], *, dry_run: bool) -> str:
    parts = []
    if dry_run:
        parts.append("Dry run: nothing was written; resend with dry_run false to apply.")
    several = len(results) > 1
    for result in results:
        prefix = f"Statement {result.parsed.index}: " if several else ""
        if result.next_offset is not None:
            limit = result.entry["limit"]
            parts.append(
                f"{prefix}More rows match; run the same query with LIMIT {limit} OFFSET "
                f"{result.next_offset} for the next page."
            )
        if result.entry.get("rowsOmitted"):
            parts.append(
                f"{prefix}The written rows were left out to keep the response small; read them "
                "back with SELECT by id."
            )
    if len(parts) == (1 if dry_run else 0):
        parts.append(_done(results, dry_run=dry_run))
    return " ".join(parts)


def _done(results: list[StatementResult], *, dry_run: bool) -> str:
    if len(results) > 1:
        return f"All {len(results)} statements succeeded; the results are in data.statements."
    result = results[0]
    entry = result.entry
    kind = entry["statementType"]
    if kind == "show_tables":
        return "Run DESCRIBE <table_name> to see a resource's columns, then SELECT from it."
    if kind == "describe":
        return (
            f"Use these columns in SELECT, WHERE and ORDER BY on {entry['resource']}; columns with "
            "read_only false can be written with INSERT and UPDATE."
        )
    if kind == "select":
        return f"All matching rows are shown ({entry['rowCount']}); no further page exists."
    if entry["affectedCount"] == 0:
        return (
            f"No row matched, so nothing changed; check the WHERE clause with a SELECT on "
            f"{entry['resource']} first."
        )
    verb = {"insert": "inserted", "update": "updated", "delete": "deleted"}[kind]
    if dry_run:
        return f"It would have {verb} {entry['affectedCount']} row(s) of {entry['resource']}."
    return (
        f"The statement {verb} {entry['affectedCount']} row(s) of {entry['resource']} and is "
        "saved; read the rows back with SELECT if needed."
    )
