"""Hints say the configured limits (#20 item 7, dsl.md §8): with every limit of ``dsl_settings``
overridden, each limit error's message and hint name the same, configured number — never the
default one."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import override_settings

from dsl.settings import DEFAULTS
from tests.support.envelope import post_sql

LIMITS = {
    "MAX_ROWS_PER_SELECT": 7,
    "MAX_ROWS_PER_WRITE": 3,
    "MAX_STATEMENTS": 5,
    "MAX_SQL_BYTES": 4_321,
    "MAX_READ_ENVELOPE_CHARS": 40_000,
    "MAX_WRITE_ENVELOPE_CHARS": 40_000,
    "STATEMENT_TIMEOUT_SECONDS": 4.0,
    "MAX_IN_VALUES": 9,
    "MAX_DEPTH": 6,
    "MAX_PREDICATES": 11,
    "IDEMPOTENCY_TTL_HOURS": 2,
    "MAX_PATTERN_BYTES": 1_234,
}


def test_every_limit_is_overridden() -> None:
    assert set(LIMITS) == set(DEFAULTS)
    assert all(LIMITS[key] != DEFAULTS[key] for key in LIMITS)


def _numbers(text: str) -> set[int]:
    return {int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", text)}


def _error(api: Any, sql: str) -> dict[str, Any]:
    body = post_sql(api, sql, dry_run=True).json()
    assert not body["ok"], sql
    return body["error"]


CASES = [
    # (sql, reason, the limit that message and hint must name)
    ("SELECT * FROM cards;" * 6, "too_many_statements", "MAX_STATEMENTS"),
    ("SELECT * FROM cards WHERE front_text = '" + "x" * 4_400 + "'", "too_long", "MAX_SQL_BYTES"),
    (
        "SELECT * FROM cards WHERE reps IN (" + ", ".join(str(n) for n in range(10)) + ")",
        "too_complex",
        "MAX_IN_VALUES",
    ),
    (
        "INSERT INTO cards (front_text, back_text) VALUES "
        + ", ".join(f"('f{n}', 'b{n}')" for n in range(4)),
        "too_many_rows",
        "MAX_ROWS_PER_WRITE",
    ),
    (
        "SELECT * FROM cards WHERE front_text LIKE '" + "x" * 1_300 + "'",
        "too_long",
        "MAX_PATTERN_BYTES",
    ),
]


@pytest.mark.parametrize(("sql", "reason", "limit"), CASES, ids=[c[1] for c in CASES])
def test_message_and_hint_name_the_configured_limit(
    api: Any, sql: str, reason: str, limit: str
) -> None:
    with override_settings(FLASHCARDS_DSL=LIMITS):
        error = _error(api, sql)
    assert error["details"]["reason"] == reason, error
    configured, default = LIMITS[limit], DEFAULTS[limit]
    assert configured in _numbers(error["message"]), error["message"]
    assert configured in _numbers(error["details"]["hint"]), error["details"]["hint"]
    for text in (error["message"], error["details"]["hint"]):
        assert default not in _numbers(text), text


def test_write_limits_in_hints_follow_the_setting(api: Any) -> None:
    with override_settings(FLASHCARDS_DSL=LIMITS):
        missing = _error(api, "DELETE FROM cards")
        truncate = _error(api, "TRUNCATE cards")
        page = _error(api, "SELECT * FROM cards LIMIT ALL")
    assert "at most 3 per statement" in missing["details"]["hint"], missing
    assert "100" not in missing["details"]["hint"]
    assert "at most 3 per statement" in truncate["message"], truncate
    assert "at most 7 rows" in page["message"], page
    assert "LIMIT 7" in page["details"]["hint"], page


def test_the_default_limits_still_read_as_before(api: Any) -> None:
    error = _error(api, "SELECT * FROM cards;" * 51)
    assert error["details"]["hint"] == "Send at most 50 statements per request; split the batch."
