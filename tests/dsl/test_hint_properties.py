"""dsl.md §9.1 "never mislead", as properties: for statements that fail, a statement a hint shows
(after its "e.g." or "read first:") parses and validates, ``correctedSql`` parses and validates,
and explaining an error never raises or loses the reason, position or hint.

The statements are the corpora's, and random edits of valid ones: a foreign construct spliced in
at a random token boundary, a name swapped for a word agents use, or a token dropped. No database
is needed: a hint's statement is checked by the same parser and validator the endpoint runs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsl import habits
from dsl import teaching as diagnostics
from dsl.language.errors import DslError
from dsl.language.lexer import tokenize
from dsl.language.parser import parse_batch
from dsl.language.validator import validate_batch

CORPUS = Path(__file__).parent / "corpus"
REASONS = {
    "syntax_error", "unsupported_syntax", "unknown_resource", "unknown_column",
    "read_only_column", "not_filterable", "not_sortable", "type_mismatch", "invalid_value",
    "missing_where", "empty_statement", "too_many_rows", "too_many_statements", "too_long",
    "too_deep", "too_complex", "wrong_endpoint", "limit_out_of_range",
}  # fmt: skip
STATEMENT_START = re.compile(r"(SELECT|INSERT|UPDATE|DELETE|SHOW|DESCRIBE|DESC)\b")
PLACEHOLDER = re.compile(r"<[^>]*>|\.\.\.|…")


def _valid_statements() -> list[str]:
    lines = (CORPUS / "valid.sql").read_text(encoding="utf-8").splitlines()
    statements = [line.rpartition(" -- => ")[0] for line in lines if " -- => " in line]
    habit_lines = (CORPUS / "habits.jsonl").read_text(encoding="utf-8").splitlines()
    statements += [json.loads(line)["retry"] for line in habit_lines if line.strip()]
    return [s for s in statements if s.strip()]


def _failing_statements() -> list[str]:
    statements = []
    for line in (CORPUS / "invalid.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#") and "\t" in line:
            statements.append(line.partition("\t")[2])
    for line in (CORPUS / "habits.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            statements.append(json.loads(line)["sql"])
    return statements


VALID = _valid_statements()
FAILING = _failing_statements()

# Constructs of other dialects (and slips), spliced into valid statements at random.
FOREIGN = [
    "CURRENT_DATE", "GETDATE()", "datetime('now')", "::date", "::text", "TOP 5", "FETCH FIRST 3 ROWS ONLY",
    "LIMIT 5, 10", "@> ARRAY['x']", "&& ARRAY['x']", "|| 'x'", "~* 'a'", "REGEXP 'a'", "COLLATE NOCASE",
    "FILTER (WHERE rating = 0)", "OVER ()", "ON CONFLICT DO NOTHING", "JOIN decks ON 1 = 1", "c.",
    "IS NULL", "= NULL", "== 1", "IN 'a', 'b'", "BETWEEN 1, 2", "`x`", "[x]", "E'x'", "INTERVAL 7 DAY",
    "DATEADD(day, -7, GETDATE())", "date_trunc('day', created_at)", "COALESCE(due_at, NOW())",
    "ROUND(AVG(reps), 2)", "STRING_AGG(tag, ',')", "DISTINCT ON (card_id)", "CASE WHEN reps = 0 THEN 1 END",
    "array_length(tags, 1) = 0", "FIND_IN_SET('a', tags)", "JSON_CONTAINS(tags, '\"a\"')",
    "LEFT(front_text, 2) = 'ab'", "LENGTH(front_text) > 3", "(SELECT 1)", "WITH x AS (SELECT 1)",
    "UNION SELECT * FROM decks", "DEFAULT", "RETURNING rowid", "LIMIT ALL", "OFFSET 2 ROWS",
    "information_schema.tables", "sqlite_master", "\\d", "PRAGMA table_info(cards)", "1", "'x'", ",",
    "(", ")", "WHERE", "AND", "NOT",
]  # fmt: skip
WORDS = sorted(
    {w for table in habits.COLUMN_SYNONYMS.values() for w in table}
    | set(habits.RESOURCE_SYNONYMS)
    | {"getdate", "sysdate", "iif", "nvl", "ifnull", "datediff", "strftime", "ilike", "regexp"}
)


def _shown_statement(hint: str) -> str | None:
    """The statement a hint shows: what follows its last "e.g." or "read first:", when that
    starts a statement and is not a template with placeholders."""
    marker = max(hint.rfind("e.g. "), hint.rfind("read first: "))
    if marker < 0:
        return None
    shown = (
        hint[marker:].split(" ", 1)[1] if hint[marker:].startswith("e.g.") else hint[marker + 12 :]
    )
    shown = shown.removesuffix(".")
    if not STATEMENT_START.match(shown) or PLACEHOLDER.search(shown):
        return None
    return shown


def _problem(statement: str) -> str | None:
    try:
        validate_batch(parse_batch(statement))
    except DslError as error:
        return error.message
    return None


def _explained(sql: str) -> DslError | None:
    try:
        validate_batch(parse_batch(sql))
    except DslError as error:
        return diagnostics.teach(error, sql)
    return None


def _check_teaching(sql: str) -> None:
    error = _explained(sql)
    if error is None:
        return
    assert error.reason in REASONS, (sql, error.reason)
    assert error.hint, sql
    if error.offset is not None:
        assert 0 <= error.offset <= len(sql), (sql, error.offset)
    shown = _shown_statement(error.hint)
    if shown is not None:
        assert _problem(shown) is None, (sql, error.hint, _problem(shown))
    if error.corrected_sql is not None:
        assert _problem(error.corrected_sql) is None, (sql, error.corrected_sql)


@pytest.mark.parametrize("sql", FAILING, ids=[s[:50] for s in FAILING])
def test_every_corpus_error_teaches_without_misleading(sql: str) -> None:
    _check_teaching(sql)


def _mutate(base: str, where: int, how: int, piece: str) -> str:
    tokens = tokenize(base)
    if not tokens:
        return piece
    tok = tokens[where % len(tokens)]
    if how == 0:  # splice a construct in before the token
        return f"{base[: tok.lexpos]}{piece} {base[tok.lexpos :]}"
    if how == 1:  # replace a name with a word agents use
        return f"{base[: tok.lexpos]}{piece} {base[tok.end :]}"
    return f"{base[: tok.lexpos]} {base[tok.end :]}"  # drop the token


HINT_SETTINGS = settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@HINT_SETTINGS
@given(
    base=st.sampled_from(VALID),
    where=st.integers(0, 60),
    how=st.integers(0, 2),
    foreign=st.sampled_from(FOREIGN),
    word=st.sampled_from(WORDS),
)
def test_random_failures_never_get_a_hint_that_fails(
    base: str, where: int, how: int, foreign: str, word: str
) -> None:
    _check_teaching(_mutate(base, where, how, foreign if how == 0 else word))
