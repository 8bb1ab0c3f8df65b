"""Runs the statements of one request (dsl.md §2): parse and validate (prepared plans reused,
dsl.runtime.reads), check the endpoint, then each statement under the time limit — reads through their
ready SQL (dsl.runtime.reads), writes through the flashcards service functions, which enforce the
invariants, stamp sync metadata and record the change log. A request with any write runs in one
transaction, so statement N sees the effects of statements before it and a failure anywhere
leaves nothing behind; a dry run rolls that transaction back after the response is shaped
(dsl.runtime.responses). Rows are formatted by dsl.runtime.rows.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from datetime import datetime, timedelta
from typing import Any

from django.db import (
    DEFAULT_DB_ALIAS,
    DataError,
    IntegrityError,
    connections,
    transaction,
)

from dsl import teaching as diagnostics
from dsl.language import ast
from dsl.language import plan as p
from dsl.language import validator as v
from dsl.language.errors import DslError
from dsl.language.parser import Limits, parse_batch
from dsl.runtime import compiler, ready_sql, responses, rows, time_limit
from dsl.runtime import reads as caches
from dsl.runtime.querylog import ExecutionStats
from dsl.schema import Column, Resource
from dsl.settings import dsl_settings
from flashcards import services
from flashcards.models import Workspace
from flashcards.services import DomainError, now_ms

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
_DOMAIN_REASONS = {"too_many_rows": "too_many_rows", "read_only_column": "read_only_column"}

_CREATE = {"cards": services.create_cards, "decks": services.create_decks}
_UPDATE = {"cards": services.update_cards, "decks": services.update_decks}
_DELETE = {"cards": services.delete_cards, "decks": services.delete_decks}


def current_limits() -> Limits:
    """The parser's and validator's limits, from the one settings object (dsl.md §8); built again
    only after the settings reload."""
    cached = _limits_memo.get(dsl_settings.generation)
    if cached is not None:
        return cached
    limits = Limits(
        max_sql_bytes=int(dsl_settings.MAX_SQL_BYTES),
        max_statements=int(dsl_settings.MAX_STATEMENTS),
        max_nesting=int(dsl_settings.MAX_DEPTH),
        max_predicates=int(dsl_settings.MAX_PREDICATES),
        max_list_values=int(dsl_settings.MAX_IN_VALUES),
        max_insert_rows=int(dsl_settings.MAX_ROWS_PER_WRITE),
        max_pattern_bytes=int(dsl_settings.MAX_PATTERN_BYTES),
    )
    _limits_memo.clear()
    _limits_memo[dsl_settings.generation] = limits
    return limits


_limits_memo: dict[int, Limits] = {}


# Statements ------------------------------------------------------------------------------------


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

    def run(self, parsed: ast.ParsedStatement, plan: p.Plan) -> responses.StatementResult:
        if isinstance(plan, p.SelectPlan):
            return self.select(parsed, plan)
        if isinstance(plan, p.ShowTablesPlan):
            rows = [resource.show_tables_row() for resource in plan.resources]
            return responses.StatementResult(
                parsed, plan, responses.read_entry("show_tables", None, rows, warnings=[])
            )
        if isinstance(plan, p.DescribePlan):
            rows = [column.describe_row() for column in plan.resource.columns]
            entry = responses.read_entry("describe", plan.resource.name, rows, warnings=[])
            return responses.StatementResult(parsed, plan, entry)
        if isinstance(plan, p.InsertPlan):
            return self.insert(parsed, plan)
        if isinstance(plan, p.UpdatePlan):
            return self.update(parsed, plan)
        return self.delete(parsed, plan)

    def select(self, parsed: ast.ParsedStatement, plan: p.SelectPlan) -> responses.StatementResult:
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
        ready = caches.ready_select(plan, self.workspace, db)
        timeout_ms = self.deadline.check() if self.inline_timeout else None
        values = ready.fetch(self.now, offset, limit + 1, timeout_ms=timeout_ms, db=db)
        has_more = len(values) > limit
        format_row = ready.format_row
        rows = [format_row(row) for row in values[:limit]]
        entry = responses.read_entry(
            "select",
            plan.resource.name,
            rows,
            limit=limit,
            offset=offset,
            has_more=has_more,
            warnings=warnings,
        )
        next_offset = offset + limit if has_more else None
        return responses.StatementResult(parsed, plan, entry, next_offset, warnings)

    def insert(self, parsed: ast.ParsedStatement, plan: p.InsertPlan) -> responses.StatementResult:
        created = _CREATE[plan.resource.name](self.workspace, plan.row_dicts())
        ids = [obj.pk for obj in created]
        rows = self._written_rows(plan.resource, plan.returning, ids)
        return responses.StatementResult(parsed, plan, responses.write_entry(plan, rows, len(ids)))

    def update(self, parsed: ast.ParsedStatement, plan: p.UpdatePlan) -> responses.StatementResult:
        ids = self._target_ids(parsed, plan)
        changes = {column.name: value for column, value in plan.assignments}
        updated = _UPDATE[plan.resource.name](self.workspace, ids, changes)
        ids = [obj.pk for obj in updated]
        rows = self._written_rows(plan.resource, plan.returning, ids)
        return responses.StatementResult(parsed, plan, responses.write_entry(plan, rows, len(ids)))

    def delete(self, parsed: ast.ParsedStatement, plan: p.DeletePlan) -> responses.StatementResult:
        ids = self._target_ids(parsed, plan)
        # RETURNING of a DELETE shows the rows as they were just before deletion.
        before = self._rows_by_id(plan.resource, plan.returning, ids) if plan.returning else {}
        deleted = [obj.pk for obj in _DELETE[plan.resource.name](self.workspace, ids)]
        rows = [before[row_id] for row_id in deleted if row_id in before]
        return responses.StatementResult(
            parsed, plan, responses.write_entry(plan, rows, len(deleted))
        )

    def _target_ids(
        self, parsed: ast.ParsedStatement, plan: p.UpdatePlan | p.DeletePlan
    ) -> list[Any]:
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
        self, resource: Resource, returning: tuple[Column, ...] | None, ids: list[Any]
    ) -> list[dict[str, Any]]:
        """Without RETURNING, each written row is just its id; with it, the listed columns of
        the row after the write. Both in the order of ``ids``."""
        if returning is None:
            return [{resource.id_column: rows.published_uuid(row_id)} for row_id in ids]
        by_id = self._rows_by_id(resource, returning, ids)
        return [by_id[row_id] for row_id in ids if row_id in by_id]

    def _rows_by_id(
        self, resource: Resource, returning: tuple[Column, ...], ids: list[Any]
    ) -> dict[Any, dict[str, Any]]:
        """RETURNING rows, read back through the workspace-scoped queryset."""
        if not ids:
            return {}
        compiled = compiler.select_by_ids(resource, self.workspace, returning, ids)
        format_row = rows.row_formatter(compiled.columns)
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
    cached = caches.prepared.get(key)
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
    caches.prepared.put(key, prepared)
    return prepared


def execute_batch(
    sql: str,
    workspace: Workspace,
    *,
    mode: str,
    dry_run: bool,
    deadline: time_limit.Deadline,
    stats: ExecutionStats,
    finish: responses.Finish,
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
    # All or nothing: the write services called inside need no savepoints of their own.
    with services.all_or_nothing() if needs_transaction else nullcontext():
        results: list[responses.StatementResult] = []
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
        body = responses.respond(batch, results, dry_run=dry_run, finish=finish, stats=stats)
        if dry_run:
            if needs_transaction:
                transaction.set_rollback(True)
        elif before_commit is not None:
            before_commit(body)
    return body


def _with_index(error: DslError, parsed: ast.ParsedStatement, several: bool) -> DslError:
    return error.in_statement(parsed.index) if several else error


def _count(stats: ExecutionStats, result: responses.StatementResult) -> None:
    if result.is_write:
        stats.rows_affected += result.entry["affectedCount"]
    else:
        stats.rows_returned += result.entry["rowCount"]
