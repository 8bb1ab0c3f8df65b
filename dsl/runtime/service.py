"""``run_sql``: the one function every surface (REST, browsable API, MCP, console) calls to run sql.

It checks the ``sql`` argument, answers idempotent replays, runs the executor under the request's
statement time limit, turns every failure into the dsl.md §2 envelope (a 500 only for a bug, never
for an input) and writes exactly one query-log row."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import DatabaseError, IntegrityError

from dsl.language.errors import QUERY_RESULT_TOO_LARGE, QUERY_TIMEOUT, DslError
from dsl.runtime import idempotency, querylog
from dsl.runtime.executor import execute_batch
from dsl.runtime.querylog import ExecutionStats
from dsl.runtime.time_limit import is_timeout, statement_deadline
from dsl.settings import dsl_settings
from flashcards.http import db_errors
from flashcards.http.envelope import Envelope
from flashcards.models import ApiKey, Workspace

logger = logging.getLogger(__name__)

SURFACES = ("rest", "mcp", "browsable", "console")
MODES = ("any", "read", "write")
REPLAYED_HEADER = "Idempotent-Replayed"

INVALID_SQL_INSTRUCTIONS = (
    "Fix the sql using error.message and error.details (hint, position, suggestions), then retry "
    "the same endpoint."
)
BATCH_FAILED_INSTRUCTIONS = (
    "Statement {index} failed and nothing in the batch was applied: fix it using error.message and "
    "error.details, then resend the whole batch."
)
WRONG_ENDPOINT_INSTRUCTIONS = (
    "Resend the same body to the endpoint named in error.message (/v1/agent/sql accepts reads and "
    "writes together)."
)
ERROR_INSTRUCTIONS = {
    QUERY_TIMEOUT: (
        "The request ran out of time and nothing was written: narrow it (a more selective WHERE, "
        "a smaller LIMIT, fewer statements) and retry."
    ),
    QUERY_RESULT_TOO_LARGE: (
        "The result is too large to return and nothing was written: select fewer columns or lower "
        "LIMIT and page with OFFSET, then retry."
    ),
}


@dataclass(frozen=True)
class SqlOutcome:
    status_code: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


class _RequestInvalid(Exception):
    pass


def _check_sql(sql: object) -> str:
    if sql is None:
        raise _RequestInvalid('The body needs "sql": a string with one or more statements.')
    if not isinstance(sql, str):
        raise _RequestInvalid(f'"sql" must be a string; got {type(sql).__name__}.')
    if not sql.strip():
        raise _RequestInvalid('"sql" must not be empty, e.g. "SHOW TABLES".')
    try:
        sql.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _RequestInvalid('"sql" must be Unicode text; it holds a lone surrogate.') from exc
    return sql


def _dsl_error_instructions(error: DslError) -> str:
    if error.code in ERROR_INSTRUCTIONS:
        return ERROR_INSTRUCTIONS[error.code]
    if error.reason == "wrong_endpoint":
        return WRONG_ENDPOINT_INSTRUCTIONS
    if error.statement_index is not None:
        return BATCH_FAILED_INSTRUCTIONS.format(index=error.statement_index)
    return INVALID_SQL_INSTRUCTIONS


def _timeout_error(seconds: float, statement_index: int | None) -> DslError:
    limit = f"{seconds:g}"
    return DslError(
        f"The request exceeded its statement time limit of {limit} s and was cancelled; nothing "
        "was written.",
        code=QUERY_TIMEOUT,
        reason="timeout",
        hint="Narrow the query: filter with a more selective WHERE, lower LIMIT or split the batch.",
        statement_index=statement_index,
    )


def run_sql(
    *,
    sql: object,
    workspace: Workspace,
    user: AbstractBaseUser | None,
    api_key: ApiKey | None,
    surface: str,
    mode: str,
    dry_run: bool,
    request_id: str,
    docs: dict[str, str],
    idempotency_key: str | None = None,
    request_fingerprint: str | None = None,
) -> SqlOutcome:
    if surface not in SURFACES or mode not in MODES:
        raise ValueError(f"run_sql: bad surface {surface!r} or mode {mode!r}")
    started = time.perf_counter()
    stats = ExecutionStats()
    envelope = Envelope(request_id, docs)
    log_reason: str | None = None
    try:
        outcome, log_reason = _run(
            sql=sql,
            workspace=workspace,
            user=user,
            api_key=api_key,
            mode=mode,
            dry_run=dry_run,
            envelope=envelope,
            stats=stats,
            idempotency_key=idempotency_key,
            request_fingerprint=request_fingerprint,
        )
    except Exception as exc:
        outcome = _unexpected(envelope, exc, request_id)
    querylog.record(
        request_id=request_id,
        surface=surface,
        sql=sql if isinstance(sql, str) else "",
        body=outcome.body,
        status_code=outcome.status_code,
        duration_ms=(time.perf_counter() - started) * 1000,
        user=user,
        api_key=api_key,
        workspace=workspace,
        stats=stats,
        dry_run=dry_run,
        reason=log_reason,
    )
    return outcome


def _run(
    *,
    sql: object,
    workspace: Workspace,
    user: AbstractBaseUser | None,
    api_key: ApiKey | None,
    mode: str,
    dry_run: bool,
    envelope: Envelope,
    stats: ExecutionStats,
    idempotency_key: str | None,
    request_fingerprint: str | None,
) -> tuple[SqlOutcome, str | None]:
    """The outcome and, for replays, the reason to log."""
    try:
        text = _check_sql(sql)
        scope = None
        if idempotency_key is not None:
            scope = idempotency.scope_for(
                raw_key=idempotency_key,
                api_key=api_key,
                user=user,
                workspace=workspace,
                request_fingerprint=request_fingerprint
                or idempotency.fingerprint({"mode": mode, "sql": text, "dry_run": dry_run}),
            )
            stored = idempotency.stored_response(scope)
            if stored is not None:
                return _replay(stored), "idempotent_replay"
    except (_RequestInvalid, idempotency.InvalidIdempotencyKey) as exc:
        return SqlOutcome(400, envelope.failure("REQUEST_INVALID", str(exc))), None
    except idempotency.IdempotencyKeyReused:
        message = "This Idempotency-Key was already used with a different request body."
        return SqlOutcome(409, envelope.failure("IDEMPOTENCY_KEY_REUSED", message)), None

    def store(body: dict[str, Any]) -> None:
        if scope is not None:
            idempotency.store(scope, 200, body)

    timeout = float(dsl_settings.STATEMENT_TIMEOUT_SECONDS)
    try:
        with statement_deadline(timeout) as deadline:
            body = execute_batch(
                text,
                workspace,
                mode=mode,
                dry_run=dry_run,
                deadline=deadline,
                stats=stats,
                finish=envelope.success,
                before_commit=store,
            )
        return SqlOutcome(200, body), None
    except DslError as error:
        return _dsl_failure(envelope, error, text), None
    except IntegrityError as exc:
        # The idempotency insert: a concurrent request with the same key committed first, and
        # this one's writes were rolled back. Answer with its response.
        stored = idempotency.stored_response(scope) if scope is not None else None
        if stored is None:
            return _dsl_failure(envelope, _refused(exc, stats.current_statement), text), None
        return _replay(stored), "idempotent_replay"
    except Exception as exc:
        if is_timeout(exc):
            timed_out = _timeout_error(timeout, stats.current_statement)
            return _dsl_failure(envelope, timed_out, text), None
        if isinstance(exc, DatabaseError) and not db_errors.is_database_unavailable(exc):
            return _dsl_failure(envelope, _refused(exc, stats.current_statement), text), None
        raise


def _refused(exc: DatabaseError, statement_index: int | None) -> DslError:
    """A statement the database itself refused (SQLite's "LIKE or GLOB pattern too complex", a
    datatype mismatch, PostgreSQL's program limits): the caller's to fix, not an outage."""
    cause = exc.__cause__
    sqlstate = str(getattr(cause, "sqlstate", "") or "")
    name = str(getattr(cause, "sqlite_errorname", "") or "")
    if sqlstate.startswith("22") or name == "SQLITE_MISMATCH":
        reason = "type_mismatch"
    elif sqlstate.startswith("54") or name in ("SQLITE_ERROR", "SQLITE_TOOBIG"):
        reason = "too_complex"
    else:
        reason = "invalid_value"
    said = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return DslError(
        f"The database refused the statement: {said.rstrip('.')}.",
        reason=reason,
        hint="Simplify the statement: shorter patterns and values, fewer conditions.",
        statement_index=statement_index,
    )


def _unexpected(envelope: Envelope, exc: Exception, request_id: str) -> SqlOutcome:
    """A database outage is a 503 the caller can retry (as on every /v1/ route, see
    flashcards.http.db_errors); anything else is a bug: logged, and a 500 as the last resort."""
    if db_errors.is_database_unavailable(exc):
        logger.warning(
            "Database unavailable in dialect request %s: %s", request_id, type(exc).__name__
        )
        message, details = db_errors.unavailable_error(exc)
        body = envelope.failure(db_errors.SERVICE_UNAVAILABLE, message, details=details)
        return SqlOutcome(503, body, {"Retry-After": str(db_errors.RETRY_AFTER_SECONDS)})
    logger.exception("Unexpected error in dialect request %s", request_id)
    return SqlOutcome(500, envelope.failure("INTERNAL_ERROR", "Internal server error."))


def _replay(stored: Any) -> SqlOutcome:
    return SqlOutcome(stored.status_code, stored.body, {REPLAYED_HEADER: "true"})


def _dsl_failure(envelope: Envelope, error: DslError, sql: str) -> SqlOutcome:
    body = envelope.failure(
        error.code,
        error.message,
        details=error.to_details(sql),
        instructions=_dsl_error_instructions(error),
    )
    return SqlOutcome(400, body)
