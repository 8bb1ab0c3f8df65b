"""What the query console's template shows, built from a run_sql envelope: result tables with
paging statements, the error with its marker and one-click fixes, the sidebar and the history."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser

from dsl.models import QueryLog
from dsl.schema import RESOURCES
from dsl.surfaces.console.edits import (
    Marker,
    apply_suggestion,
    marker_at,
    missing_semicolon,
    page_statement,
)
from dsl.surfaces.reference import HEADLINE_EXAMPLES
from flashcards.models import Workspace

HISTORY_SIZE = 20
# Log rows scanned for the history: repeats of one statement are shown once.
HISTORY_SCAN = 200
READ_TYPES = frozenset({"select", "show_tables", "describe"})


@dataclass(frozen=True)
class ConsoleRun:
    """One run: the statement as submitted and the envelope run_sql answered."""

    sql: str
    status_code: int
    body: dict[str, Any]
    elapsed_ms: float = 0.0


@dataclass
class ResultTable:
    title: str
    columns: list[str]
    rows: list[list[str]]
    row_count: int
    summary: str
    warnings: list[str] = field(default_factory=list)
    next_sql: str | None = None
    previous_sql: str | None = None


@dataclass(frozen=True)
class Fix:
    suggestion: str
    sql: str


@dataclass(frozen=True)
class ConsoleError:
    code: str
    message: str
    hint: str
    fixes: list[Fix]
    marker: Marker | None
    offset: int | None
    instructions: str
    # The whole statement corrected by the dialect's diagnostics (details.correctedSql), when it
    # is not already one of the fixes.
    corrected_sql: str | None = None


def cell(value: Any) -> str:
    """How one value shows in a table cell: JSON for arrays and objects, NULL for None."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    return list(columns)


def _summary(entry: dict[str, Any]) -> str:
    if entry.get("statementType") in READ_TYPES:
        count = entry.get("rowCount", 0)
        text = f"{count} row{'' if count == 1 else 's'}"
        if entry.get("offset"):
            text += f" from offset {entry['offset']}"
        return text + (" — more match" if entry.get("hasMore") else "")
    affected = entry.get("affectedCount", 0)
    return f"{affected} row{'' if affected == 1 else 's'} affected"


def _table(entry: dict[str, Any], title: str) -> ResultTable:
    rows = entry.get("rows") or []
    columns = _columns(rows)
    return ResultTable(
        title=title,
        columns=columns,
        rows=[[cell(row.get(name)) for name in columns] for row in rows],
        row_count=len(rows),
        summary=_summary(entry),
        warnings=list(entry.get("warnings") or []),
    )


def _with_paging(table: ResultTable, sql: str, data: dict[str, Any]) -> ResultTable:
    """Next / previous page of a single SELECT: the same statement with LIMIT and OFFSET set."""
    limit, offset = data.get("limit"), data.get("offset") or 0
    if data.get("statementType") != "select" or not isinstance(limit, int) or limit <= 0:
        return table
    if data.get("hasMore"):
        table.next_sql = page_statement(sql, limit=limit, offset=offset + limit)
    if offset > 0:
        table.previous_sql = page_statement(sql, limit=limit, offset=max(0, offset - limit))
    return table


def _tables(sql: str, data: dict[str, Any]) -> list[ResultTable]:
    if data.get("statementType") == "batch":
        return [
            _table(entry, f"Statement {index}: {entry.get('statementType', '')}")
            for index, entry in enumerate(data.get("statements") or [], 1)
        ]
    title = str(data.get("statementType", "")).replace("_", " ")
    return [_with_paging(_table(data, title), sql, data)]


# The envelope's instructions speak to agents ("retry the same endpoint", "data.statements"):
# people get this wording instead.
HUMAN_ERROR_INSTRUCTIONS = "Nothing was written. Fix the statement and press Run again."
HUMAN_DRY_RUN = "Dry run: nothing was written. Clear Dry run and press Run to apply it."
MISSING_SEMICOLON = "Two statements need a ; between them."
MISSING_SEMICOLON_HINT = (
    "End each statement with ; — the console runs them in order, all or nothing."
)


def _error(sql: str, body: dict[str, Any]) -> ConsoleError:
    error = body.get("error") or {}
    details = error.get("details") or {}
    position = details.get("position") or {}
    offset = position.get("offset")
    suggestions = [s for s in details.get("suggestions") or [] if isinstance(s, str)]
    if not isinstance(offset, int):
        offset = None
    message = str(error.get("message", ""))
    hint = str(details.get("hint") or "")
    fixes = (
        [Fix(s, apply_suggestion(sql, offset, s)) for s in suggestions]
        if offset is not None
        else []
    )
    corrected = details.get("correctedSql")
    split = missing_semicolon(sql, offset) if offset is not None else None
    if split is not None:
        message, hint, fixes, corrected = MISSING_SEMICOLON, MISSING_SEMICOLON_HINT, [], split
    if not isinstance(corrected, str) or corrected in {fix.sql for fix in fixes}:
        corrected = None
    return ConsoleError(
        code=str(error.get("code", "")),
        message=message,
        hint=hint,
        fixes=fixes,
        marker=marker_at(sql, offset) if offset is not None else None,
        offset=offset,
        instructions=HUMAN_ERROR_INSTRUCTIONS,
        corrected_sql=corrected,
    )


def run_context(run: ConsoleRun, *, workspace_id: str, dry_run: bool) -> dict[str, Any]:
    body = run.body
    context: dict[str, Any] = {
        "sql": run.sql,
        "elapsed_ms": run.elapsed_ms,
        "workspace_id": workspace_id,
        "dry_run": dry_run,
        "ran": True,
        "status_code": run.status_code,
        "request_id": body.get("requestId", ""),
    }
    if body.get("ok"):
        data = body.get("data") or {}
        context["tables"] = _tables(run.sql, data)
        context["warnings"] = list(data.get("warnings") or [])
        context["dry_run_applied"] = bool(data.get("dryRun"))
        context["instructions"] = HUMAN_DRY_RUN if context["dry_run_applied"] else ""
    else:
        context["error"] = _error(run.sql, body)
    return context


def history(user: AbstractBaseUser, just_run: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The user's last distinct statements from the query log, newest first. ``just_run`` (the
    statement of this request) comes first: the log is written off the request path, so its row
    may not be there yet."""
    seen: set[str] = set()
    entries: list[dict[str, Any]] = []
    rows = (
        QueryLog.objects.filter(user=user)
        .exclude(sql="")
        .order_by("-created_at", "-id")
        .values("sql", "workspace_id", "outcome", "created_at", "dry_run")[:HISTORY_SCAN]
    )
    for row in [just_run, *rows] if just_run and just_run["sql"] else rows:
        if row["sql"] in seen:
            continue
        seen.add(row["sql"])
        entries.append(row)
        if len(entries) == HISTORY_SIZE:
            break
    return entries


def page_context(workspaces: list[Workspace], recent: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "workspaces": workspaces,
        "resources": RESOURCES,
        "examples": HEADLINE_EXAMPLES,
        "history": recent,
    }
