"""Anki's own schedule comes across: collections studied by the official ``anki`` scheduler with
FSRS on, imported through the REST route and compared card by card with Anki's stored values."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from flashcards.interchange.anki_schedule import AnkiDay, day_settings, memory_state
from flashcards.models import Card, ReviewEvent
from tests.fixtures.anki_studied import studied_package

pytest.importorskip("anki")

STATES = {1: "learning", 2: "review", 3: "relearning"}


@pytest.mark.parametrize("legacy", [False, True], ids=["latest", "legacy"])
def test_fsrs_cards_take_anki_memory_state_and_due(upload, workspace, tmp_path, legacy):
    package = studied_package(tmp_path, legacy=legacy)
    status, body = upload(package.path)
    assert status == 200, body
    report = body["data"]
    schedules = report["schedules"]
    assert schedules["fromAnki"] == 6 and schedules["replayed"] == 0
    assert schedules["taken"] == 6 and schedules["rebuilt"] == 0
    assert report["anki"]["suspended"] == 1
    (preset,) = schedules["presets"]
    assert preset["cards"] == 6 and preset["desiredRetention"] == 0.85
    assert schedules["proposedSettings"]["desired_retention"] == 0.85
    assert schedules["proposedSettings"]["learning_steps_minutes"] == [2, 15]
    assert schedules["proposedSettings"]["relearning_steps_minutes"] == [5]
    assert schedules["settingsApplied"] is True
    workspace.refresh_from_db()
    assert workspace.desired_retention == 0.85
    assert workspace.learning_steps_minutes == [2, 15]
    assert workspace.relearning_steps_minutes == [5]

    cards = {c.front_text: c for c in Card.objects.filter(workspace=workspace)}
    assert set(cards) == set(package.cards)
    for front, anki in package.cards.items():
        card = cards[front]
        assert card.reps == anki.reps and card.lapses == anki.lapses, front
        if anki.anki_type == 0:
            assert card.fsrs_card_state == "new" and card.due_at is None
            continue
        assert card.fsrs_card_state == STATES[anki.anki_type], front
        assert card.due_at == anki.due_at, front
        assert card.fsrs_stability == pytest.approx(anki.stability, abs=1e-4), front
        assert card.fsrs_difficulty == pytest.approx(anki.difficulty, abs=1e-3), front
        if anki.anki_type == 2:
            assert card.fsrs_scheduled_days == anki.interval
        # The log is still history.
        assert ReviewEvent.objects.filter(card=card).count() == anki.reps, front
    assert cards["siete"].metadata["source"]["suspended"] is True
    assert cards["tres"].fsrs_step_index == 1  # one of two steps done
    assert cards["cuatro"].fsrs_step_index == 0


def test_dry_run_proposes_settings_and_writes_none(upload, workspace, tmp_path):
    package = studied_package(tmp_path)
    status, body = upload(package.path, dry_run="true")
    assert status == 200, body
    schedules = body["data"]["schedules"]
    assert schedules["proposedSettings"]["desired_retention"] == 0.85
    assert schedules["settingsApplied"] is False
    workspace.refresh_from_db()
    assert workspace.desired_retention == 0.9
    assert not Card.objects.filter(workspace=workspace).exists()


def test_reimport_keeps_a_review_made_here_after_anki(upload, api, workspace, tmp_path):
    package = studied_package(tmp_path)
    assert upload(package.path)[0] == 200
    card = Card.objects.get(workspace=workspace, front_text="uno")
    anki_due = card.due_at
    from flashcards.services.scheduling import submit_review

    submit_review(workspace, card.id, rating=2, reviewed_at=card.due_at + timedelta(hours=1))
    card.refresh_from_db()
    assert card.due_at > anki_due
    reviewed_here = card.due_at
    status, body = upload(package.path)
    assert status == 200, body
    card.refresh_from_db()
    assert card.due_at == reviewed_here


def test_anki_day_starts_at_rollover_in_the_recorded_offset():
    # Created 2026-12-01 05:00 in Los Angeles (UTC-8, localOffset 480 minutes west).
    crt = int(datetime(2026, 12, 1, 13, 0, tzinfo=UTC).timestamp())
    day = day_settings(crt, {"rollover": 4, "localOffset": 480})
    assert day.start_of(0) == datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    assert day.start_of(3) == datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
    # Created before the rollover hour: that night still belongs to the day before.
    early = AnkiDay(int(datetime(2026, 12, 1, 2, 0, tzinfo=UTC).timestamp()), 4, UTC)
    assert early.start_of(1) == datetime(2026, 12, 1, 4, 0, tzinfo=UTC)
    named = day_settings(crt, {"rollover": 4}, "America/Los_Angeles")
    assert named.start_of(0) == datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    # Summer time in the named zone: the day starts an hour earlier in UTC.
    assert named.start_of(200).astimezone(timezone(timedelta(hours=-7))).hour == 4
    assert day_settings(crt, {"rollover": 99}).rollover == 4


@pytest.mark.parametrize(
    "data",
    ["", "{}", '{"s": "x", "d": 2}', '{"s": -1, "d": 5}', '{"s": 3, "d": 11}', "[1]", "{bad"],
)
def test_unusable_memory_state_is_replayed(data):
    assert memory_state(data) is None


def test_memory_state_reads_stability_difficulty_and_last_review():
    state = memory_state('{"pos":1,"s":13.0461,"d":1.0,"dr":0.9,"decay":0.154,"lrt":1796161277}')
    assert state == {"s": 13.0461, "d": 1.0, "dr": 0.9, "lrt": 1796161277.0}


def test_cards_without_memory_state_are_replayed_and_counted(upload, workspace, tmp_path):
    from tests.fixtures.anki_packages import official_package

    package = official_package(tmp_path, "apkg")
    status, body = upload(package.path)
    assert status == 200, body
    schedules = body["data"]["schedules"]
    with_history = sum(1 for c in package.cards if any(e > 0 for _, e, _ in c.log))
    assert schedules["fromAnki"] == 0 and schedules["taken"] == 0
    assert schedules["rebuilt"] == schedules["replayed"] == with_history
    assert schedules["proposedSettings"] is None and schedules["settingsApplied"] is False
    workspace.refresh_from_db()
    assert workspace.desired_retention == 0.9
