"""Golden-vector parity: the scheduler must reproduce the reference app's FSRS-6 output exactly.

The vectors (tests/fixtures/fsrs-full-vectors.json) come from flashcards-open-source-app (MIT,
Copyright (c) 2026 Kirill Markin); web and phone clients compute the same values, so timestamps
must be string-equal and floats bit-equal.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from flashcards.scheduling import (
    CardSchedule,
    SchedulerSettings,
    format_js_timestamp,
    rebuild_schedule,
    review_card,
)
from tests.fixtures import fsrs_vectors

FIXTURES = fsrs_vectors()


def _settings(raw: dict[str, Any]) -> SchedulerSettings:
    assert raw["algorithm"] == "fsrs-6"
    return SchedulerSettings(
        desired_retention=raw["desiredRetention"],
        learning_steps_minutes=tuple(raw["learningStepsMinutes"]),
        relearning_steps_minutes=tuple(raw["relearningStepsMinutes"]),
        maximum_interval_days=raw["maximumIntervalDays"],
        enable_fuzz=raw["enableFuzz"],
    )


def _reviews(raw: list[dict[str, Any]]) -> list[tuple[int, datetime]]:
    return [(item["rating"], datetime.fromisoformat(item["at"])) for item in raw]


def _optional_timestamp(value: datetime | None) -> str | None:
    return None if value is None else format_js_timestamp(value)


def _assert_float_bits(actual: float | None, expected: float | int | None, field: str) -> None:
    if expected is None:
        assert actual is None, field
        return
    assert actual is not None, field
    # float.hex equality is bit equality for finite values (distinguishes nothing JSON can't hold).
    assert float(actual).hex() == float(expected).hex(), f"{field}: {actual!r} != {expected!r}"


def _assert_matches(actual: CardSchedule, expected: dict[str, Any]) -> None:
    assert _optional_timestamp(actual.due_at) == expected["dueAt"]
    assert actual.reps == expected["reps"]
    assert actual.lapses == expected["lapses"]
    assert actual.state == expected["fsrsCardState"]
    assert actual.step_index == expected["fsrsStepIndex"]
    _assert_float_bits(actual.stability, expected["fsrsStability"], "fsrsStability")
    _assert_float_bits(actual.difficulty, expected["fsrsDifficulty"], "fsrsDifficulty")
    assert _optional_timestamp(actual.last_reviewed_at) == expected["fsrsLastReviewedAt"]
    assert actual.scheduled_days == expected["fsrsScheduledDays"]


def test_all_fifteen_fixtures_are_present() -> None:
    assert len(FIXTURES) == 15
    assert len({fixture["name"] for fixture in FIXTURES}) == 15


@pytest.mark.parametrize("fixture", FIXTURES, ids=[fixture["name"] for fixture in FIXTURES])
def test_incremental_reviews_match_expected(fixture: dict[str, Any]) -> None:
    settings = _settings(fixture["settings"])
    schedule = CardSchedule.new()
    for rating, reviewed_at in _reviews(fixture["reviews"]):
        schedule = review_card(schedule, settings, rating, reviewed_at)
    _assert_matches(schedule, fixture["expected"])


@pytest.mark.parametrize("fixture", FIXTURES, ids=[fixture["name"] for fixture in FIXTURES])
def test_rebuilt_schedule_matches_rebuilt_expected(fixture: dict[str, Any]) -> None:
    settings = _settings(fixture["settings"])
    rebuilt = rebuild_schedule(settings, _reviews(fixture["reviews"]))
    _assert_matches(rebuilt, fixture["rebuiltExpected"])
