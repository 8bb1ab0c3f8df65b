"""The response of a request (dsl.md §2.1-§2.3, §8): each statement's entry, the ``data`` of one
statement or of a batch, the instructions that say what to do next, and the envelope kept within
the size budgets (a write's rows dropped to fit, a read too large refused)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dsl.language import ast
from dsl.language import plan as p
from dsl.language.errors import QUERY_RESULT_TOO_LARGE, DslError
from dsl.runtime.querylog import ExecutionStats, envelope_size
from dsl.settings import dsl_settings

Finish = Callable[[dict[str, Any], str], dict[str, Any]]


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


def read_entry(
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


def write_entry(plan: p.Plan, rows: list[dict[str, Any]], affected: int) -> dict[str, Any]:
    return {
        "statementType": plan.statement_type,
        "resource": plan.resource.name,  # type: ignore[union-attr]
        "rows": rows,
        "affectedCount": affected,
        "rowsOmitted": False,
        "warnings": [],
    }


def single_data(sql: str, result: StatementResult) -> dict[str, Any]:
    """One statement's ``data``: its entry with sql / normalizedSql at their §2.1 / §2.2 place."""
    entry = result.entry
    echo = {"sql": sql.strip(), "normalizedSql": result.parsed.normalized_sql}
    head: tuple[str, ...]
    if result.is_write:
        head = ("statementType", "resource")
    else:
        head = ("statementType", "resource", "rows", "rowCount", "limit", "offset", "hasMore")
    data = {key: entry[key] for key in head}
    data.update(echo)
    data.update({key: value for key, value in entry.items() if key not in data})
    return data


def batch_data(batch: ast.Batch, results: list[StatementResult]) -> dict[str, Any]:
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


def respond(
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
            data = single_data(batch.sql, results[0])
        else:
            data = batch_data(batch, results)
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
