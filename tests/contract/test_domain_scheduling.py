"""domain.md §3: the 15 golden FSRS-6 vectors reproduced through the public API — settings via
the scheduler-settings command, a card inserted through the dialect, the reviews submitted to
POST /v1/agent/reviews — and the final state compared exactly (strings for timestamps, floats to
the bit) in the review response and in `SELECT *`."""

from __future__ import annotations

from typing import Any

import pytest

from tests.contract.domain_support import agent, insert_card, ok, review, rows, sql
from tests.fixtures import fsrs_vectors

pytestmark = pytest.mark.django_db

FIXTURES: list[dict[str, Any]] = fsrs_vectors()
EXPECTED_COLUMNS = {
    "dueAt": "due_at",
    "reps": "reps",
    "lapses": "lapses",
    "fsrsCardState": "fsrs_card_state",
    "fsrsStepIndex": "fsrs_step_index",
    "fsrsStability": "fsrs_stability",
    "fsrsDifficulty": "fsrs_difficulty",
    "fsrsLastReviewedAt": "fsrs_last_reviewed_at",
    "fsrsScheduledDays": "fsrs_scheduled_days",
}
SETTINGS_COLUMNS = {
    "desiredRetention": "desired_retention",
    "learningStepsMinutes": "learning_steps_minutes",
    "relearningStepsMinutes": "relearning_steps_minutes",
    "maximumIntervalDays": "maximum_interval_days",
    "enableFuzz": "enable_fuzz",
}


def test_all_fifteen_vectors_are_present():
    assert len(FIXTURES) == 15


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f["name"] for f in FIXTURES])
def test_golden_vector_through_the_api(fixture):
    client = agent("fsrs")
    body = {SETTINGS_COLUMNS[k]: v for k, v in fixture["settings"].items() if k != "algorithm"}
    ok(client.post("/v1/agent/workspace/scheduler-settings", body, format="json"))
    card_id = insert_card(client, fixture["name"], "answer")
    card: dict[str, Any] = {}
    for step in fixture["reviews"]:
        card = ok(review(client, card_id=card_id, rating=step["rating"], reviewed_at=step["at"]))[
            "card"
        ]
    expected = {EXPECTED_COLUMNS[k]: v for k, v in fixture["expected"].items()}
    actual = {column: card[column] for column in expected}
    assert actual == expected
    for column in ("fsrs_stability", "fsrs_difficulty"):
        assert repr(actual[column]) == repr(expected[column])
    [row] = rows(client, f"SELECT * FROM cards WHERE card_id = '{card_id}'")
    assert {column: row[column] for column in expected} == expected


def test_a_card_is_due_when_due_at_has_passed_and_new_cards_are_never_due():
    client = agent("due")
    due = insert_card(client, "due")
    later = insert_card(client, "later")
    insert_card(client, "new")
    gone = insert_card(client, "gone")
    ok(review(client, card_id=due, rating=0, reviewed_at="2020-01-01T00:00:00Z"))
    ok(review(client, card_id=gone, rating=0, reviewed_at="2020-01-01T00:00:00Z"))
    ok(review(client, card_id=later, rating=3))
    sql(client, f"DELETE FROM cards WHERE card_id = '{gone}'")
    found = rows(client, "SELECT front_text FROM cards WHERE due_at <= NOW()")
    assert found == [{"front_text": "due"}]
    assert rows(client, "SELECT front_text FROM cards WHERE due_at IS NULL") == [
        {"front_text": "new"}
    ]
