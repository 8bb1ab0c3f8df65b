"""The dialect's one error type and its rendering into ``error.details`` (dsl.md §9)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

QUERY_INVALID_SQL = "QUERY_INVALID_SQL"
QUERY_RESULT_TOO_LARGE = "QUERY_RESULT_TOO_LARGE"
QUERY_TIMEOUT = "QUERY_TIMEOUT"

# Used when a raise site has no better advice, so every error still carries a hint sentence.
_DEFAULT_HINTS: dict[str, str] = {
    "syntax_error": "Check the statement against the grammar page (docs.grammarUrl); statements are SHOW TABLES, DESCRIBE, SELECT, INSERT, UPDATE and DELETE.",
    "unsupported_syntax": "Rewrite the statement with the supported subset described in the grammar documentation.",
    "unknown_resource": "Run SHOW TABLES to list the resources: workspace, cards, decks, review_events.",
    "unknown_column": "Run DESCRIBE <resource> to list its columns.",
    "read_only_column": "Only write the writable columns listed by DESCRIBE (read_only = false).",
    "not_filterable": "Filter on a different column; DESCRIBE shows which columns are filterable.",
    "not_sortable": "Sort on a different column; DESCRIBE shows which columns are sortable.",
    "type_mismatch": "Use a literal of the column's type; DESCRIBE shows each column's type.",
    "invalid_value": "Use one of the values the column allows; DESCRIBE shows allowed_values.",
    "missing_where": "Add a WHERE naming the rows (at most {MAX_ROWS_PER_WRITE} per statement), e.g. WHERE card_id IN ('<id>', ...); for every row, read the ids a page at a time (SELECT card_id FROM cards LIMIT {MAX_ROWS_PER_SELECT}) and name them.",
    "empty_statement": "Remove the empty statement; separate statements with a single ';'.",
    "too_many_rows": "Narrow the WHERE clause or work in pages of at most {MAX_ROWS_PER_WRITE} rows, e.g. by card_id.",
    "too_many_statements": "Send at most {MAX_STATEMENTS} statements per request; split the batch.",
    "too_long": "Send a shorter sql string (at most {MAX_SQL_BYTES:,} bytes); split the work into several requests.",
    "too_deep": "Remove redundant parentheses or split the condition into several queries.",
    "too_complex": "Split the condition into several queries with fewer predicates or IN values.",
    "wrong_endpoint": "Send reads to /v1/agent/sql/query and writes to /v1/agent/sql/execute.",
    "limit_out_of_range": "Use LIMIT with a whole number from 1 to {MAX_ROWS_PER_SELECT} and OFFSET with a whole number from 0.",
}


def default_hint(reason: str) -> str:
    """The hint for ``reason`` when the raise site has none, with the configured limits
    (dsl.md §8, ``dsl_settings``) written in: a hint never names another limit than the message."""
    template = _DEFAULT_HINTS.get(reason, "")
    if "{" not in template:
        return template
    from dsl.settings import DEFAULTS, dsl_settings

    return template.format(**{key: getattr(dsl_settings, key) for key in DEFAULTS})


class DslError(Exception):
    """A failure the caller can fix; rendered as a 400 with ``error.details`` from ``to_details``."""

    def __init__(
        self,
        message: str,
        *,
        reason: str,
        code: str = QUERY_INVALID_SQL,
        hint: str | None = None,
        offset: int | None = None,
        suggestions: Iterable[str] = (),
        statement_index: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.base_message = message
        self.hint = hint if hint is not None else default_hint(reason)
        self.offset = offset
        self.suggestions = list(suggestions)
        self.statement_index = statement_index
        # The whole sql corrected so that it validates, when dsl.teaching found such a fix.
        self.corrected_sql: str | None = None

    @property
    def message(self) -> str:
        if self.statement_index is None:
            return self.base_message
        return f"Statement {self.statement_index} failed: {self.base_message}"

    def __str__(self) -> str:
        return self.message

    def in_statement(self, index: int) -> DslError:
        """Mark the error as belonging to statement ``index`` of a batch (keeps the first mark)."""
        if self.statement_index is None:
            self.statement_index = index
        return self

    def to_details(self, sql: str) -> dict[str, Any]:
        details: dict[str, Any] = {
            "validationIssues": [{"path": "sql", "code": self.reason, "message": self.message}],
            "reason": self.reason,
        }
        if self.offset is not None:
            details["position"] = position_of(sql, self.offset)
        if self.statement_index is not None:
            details["statementIndex"] = self.statement_index
        details["hint"] = self.hint
        details["suggestions"] = list(self.suggestions)
        if self.corrected_sql is not None:
            details["correctedSql"] = self.corrected_sql
        return details


def position_of(sql: str, offset: int) -> dict[str, int]:
    """1-based line and column of a 0-based ``offset`` (clamped to ``len(sql)``, the end of input)."""
    offset = max(0, min(offset, len(sql)))
    line_start = sql.rfind("\n", 0, offset) + 1
    return {
        "line": sql.count("\n", 0, offset) + 1,
        "column": offset - line_start + 1,
        "offset": offset,
    }


def closest_names(
    name: str, candidates: Iterable[str], limit: int = 3, cutoff: float = 0.6
) -> list[str]:
    """The visible names closest to a misspelt ``name``, best first (difflib ratio ≥ cutoff)."""
    return difflib.get_close_matches(name, list(candidates), n=limit, cutoff=cutoff)


def did_you_mean(suggestions: list[str]) -> str:
    """`` Did you mean x?`` / `` Did you mean x or y?`` — empty when there is nothing to suggest."""
    if not suggestions:
        return ""
    if len(suggestions) == 1:
        return f" Did you mean {suggestions[0]}?"
    return f" Did you mean {', '.join(suggestions[:-1])} or {suggestions[-1]}?"
