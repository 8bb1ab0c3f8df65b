"""Data-driven corpora in the style of sqlglot's fixtures.

``corpus/valid.sql``: every line must parse and validate, with the given normalizedSql.
``corpus/invalid.txt``: every line must fail with the given reason at the given offset.
The formats are described at the top of each file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dsl.language.errors import DslError
from dsl.language.parser import parse_batch
from dsl.language.validator import validate_batch

CORPUS = Path(__file__).parent / "corpus"
ARROW = " -- => "


def _valid_cases() -> list[tuple[str, str]]:
    cases = []
    for line in (CORPUS / "valid.sql").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("--"):
            continue
        sql, arrow, expected = line.rpartition(ARROW)
        assert arrow, f"valid.sql line without '{ARROW.strip()}': {line!r}"
        cases.append((sql, sql.strip() if expected == "=" else expected))
    return cases


def _invalid_cases() -> list[tuple[str, int | None, str]]:
    cases = []
    for line in (CORPUS / "invalid.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        label, tab, sql = line.partition("\t")
        reason, at, offset = label.partition("@")
        assert tab and at, f"invalid.txt line not '<reason>@<offset><TAB><sql>': {line!r}"
        cases.append((reason, None if offset == "none" else int(offset), sql))
    return cases


VALID = _valid_cases()
INVALID = _invalid_cases()


def test_the_corpora_are_substantial() -> None:
    assert len(VALID) + len(INVALID) >= 150


def test_every_headline_example_of_the_spec_is_in_the_valid_corpus() -> None:
    statements = {sql.strip() for sql, _ in VALID}
    headline = [  # transcribed from dsl.md §10
        "SELECT * FROM cards WHERE tags OVERLAP ('english') AND effort_level IN ('fast', 'medium') "
        "ORDER BY updated_at DESC LIMIT 20 OFFSET 0",
        "UPDATE cards SET back_text = 'Updated answer' WHERE card_id = "
        "'123e4567-e89b-42d3-a456-426614174000'",
        "SELECT tag, COUNT(*) AS card_count FROM cards GROUP BY tag ORDER BY card_count DESC "
        "LIMIT 20 OFFSET 0",
        "SELECT rating, COUNT(*) AS reviews FROM review_events GROUP BY rating ORDER BY reviews DESC "
        "LIMIT 10 OFFSET 0",
        "SELECT review_grade, COUNT(*) AS total_reviews FROM review_events GROUP BY review_grade "
        "ORDER BY total_reviews DESC LIMIT 10 OFFSET 0",
        "SELECT * FROM cards WHERE tags OVERLAP ('english', 'grammar') AND effort_level IN "
        "('fast', 'medium') ORDER BY updated_at DESC LIMIT 20 OFFSET 0",
        "INSERT INTO decks (name, effort_levels, tags) VALUES ('Grammar', ('medium', 'long'), "
        "('english', 'grammar'))",
        "UPDATE cards SET back_text = 'Updated answer', tags = ('english', 'verbs') WHERE card_id = "
        "'123e4567-e89b-42d3-a456-426614174000'",
        "DELETE FROM cards WHERE card_id IN ('123e4567-e89b-42d3-a456-426614174000', "
        "'123e4567-e89b-42d3-a456-426614174001')",
    ]
    assert [s for s in headline if s not in statements] == []


@pytest.mark.parametrize(("sql", "normalized"), VALID, ids=[sql[:60] for sql, _ in VALID])
def test_valid_statement(sql: str, normalized: str) -> None:
    batch = parse_batch(sql)
    assert batch.normalized_sql == normalized
    plans = validate_batch(batch)
    assert len(plans) == len(batch.statements)


@pytest.mark.parametrize(
    ("reason", "offset", "sql"), INVALID, ids=[f"{r}:{sql[:50]}" for r, _, sql in INVALID]
)
def test_invalid_statement(reason: str, offset: int | None, sql: str) -> None:
    with pytest.raises(DslError) as caught:
        validate_batch(parse_batch(sql))
    error = caught.value
    assert error.reason == reason, error.message
    assert error.offset == offset, error.message
    details = error.to_details(sql)
    assert details["reason"] == reason
    assert details["validationIssues"][0]["message"] == error.message
    assert details["hint"]
    assert ("position" in details) == (offset is not None)
