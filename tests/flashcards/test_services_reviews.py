"""submit_review: FSRS with the workspace's settings, the append-only log, idempotency, refusals."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from flashcards import services
from flashcards.models import Card, ChangeLog, ReviewEvent
from flashcards.scheduling import SchedulerSettings, rebuild_schedule
from flashcards.services import DomainError, NotFoundError
from flashcards.services.scheduling import card_schedule
from tests.factories import make_card

T0 = datetime(2026, 3, 5, 10, 0, tzinfo=UTC)
AGAIN, HARD, GOOD, EASY = 0, 1, 2, 3


def test_first_review_moves_a_new_card_to_learning(workspace):
    card = make_card(workspace)
    result = services.submit_review(workspace, card.id, GOOD, reviewed_at=T0)
    assert result.created
    card.refresh_from_db()
    assert card.fsrs_card_state == "learning"
    assert card.reps == 1 and card.lapses == 0
    assert card.fsrs_last_reviewed_at == T0
    assert card.due_at == T0 + timedelta(minutes=10)  # default steps [1, 10]: Good → step 2
    event = result.review_event
    assert (event.rating, event.sequence, event.reviewed_at_client) == (GOOD, 1, T0)
    assert event.reviewed_at_server.microsecond % 1000 == 0
    assert event.card_id == card.id


def test_schedule_matches_the_scheduler_with_the_workspace_settings(workspace):
    settings = {
        "desired_retention": 0.85,
        "learning_steps_minutes": [5],
        "relearning_steps_minutes": [3, 30],
        "maximum_interval_days": 200,
        "enable_fuzz": False,
    }
    services.update_scheduler_settings(workspace, settings)
    card = make_card(workspace)
    reviews = [(GOOD, T0), (GOOD, T0 + timedelta(days=1)), (AGAIN, T0 + timedelta(days=9))]
    for rating, at in reviews:
        services.submit_review(workspace, card.id, rating, reviewed_at=at)
    card.refresh_from_db()
    expected = rebuild_schedule(
        SchedulerSettings(
            desired_retention=0.85,
            learning_steps_minutes=(5,),
            relearning_steps_minutes=(3, 30),
            maximum_interval_days=200,
            enable_fuzz=False,
        ),
        reviews,
    )
    assert card_schedule(card) == expected
    assert card.fsrs_card_state == "relearning"
    assert card.lapses == 1


def test_lapses_count_only_again_from_review(workspace):
    card = make_card(workspace)
    services.submit_review(workspace, card.id, AGAIN, reviewed_at=T0)
    services.submit_review(workspace, card.id, EASY, reviewed_at=T0 + timedelta(minutes=2))
    card.refresh_from_db()
    assert (card.fsrs_card_state, card.lapses) == ("review", 0)
    services.submit_review(workspace, card.id, AGAIN, reviewed_at=T0 + timedelta(days=5))
    card.refresh_from_db()
    assert (card.fsrs_card_state, card.lapses, card.reps) == ("relearning", 1, 3)
    assert card.fsrs_step_index == 0


def test_sequence_numbers_are_per_workspace_and_monotonic(workspace, other_workspace):
    a, b = make_card(workspace), make_card(workspace)
    theirs = make_card(other_workspace)
    first = services.submit_review(workspace, a.id, GOOD, reviewed_at=T0)
    other = services.submit_review(other_workspace, theirs.id, GOOD, reviewed_at=T0)
    second = services.submit_review(workspace, b.id, HARD, reviewed_at=T0)
    third = services.submit_review(workspace, a.id, GOOD, reviewed_at=T0 + timedelta(hours=1))
    assert [first.review_event.sequence, second.review_event.sequence] == [1, 2]
    assert third.review_event.sequence == 3
    assert other.review_event.sequence == 1
    workspace.refresh_from_db()
    assert workspace.last_review_sequence == 3


def test_a_review_records_the_event_and_the_card_in_the_change_log(workspace):
    card = make_card(workspace)
    result = services.submit_review(workspace, card.id, GOOD, reviewed_at=T0)
    log = list(
        ChangeLog.objects.filter(workspace=workspace)
        .order_by("change_id")
        .values_list("change_id", "entity_type", "entity_id", "action")
    )
    assert log[1:] == [
        (2, "review_event", str(result.review_event.id), "append"),
        (3, "card", str(card.id), "upsert"),
    ]


@pytest.mark.parametrize(
    ("rating", "expected"),
    [("again", 0), ("Hard", 1), (" GOOD ", 2), ("easy", 3), (3, 3), (2.0, 2)],
)
def test_rating_words_and_numbers(workspace, rating, expected):
    card = make_card(workspace)
    assert services.submit_review(workspace, card.id, rating).review_event.rating == expected


@pytest.mark.parametrize("rating", [4, -1, True, False, "great", "", None, 1.5, "2", [2]])
def test_bad_ratings_are_refused_and_nothing_is_written(workspace, rating):
    card = make_card(workspace)
    with pytest.raises(DomainError) as exc:
        services.submit_review(workspace, card.id, rating)
    assert exc.value.field == "rating"
    assert not ReviewEvent.objects.exists()
    card.refresh_from_db()
    assert card.reps == 0


def test_repeat_with_the_same_client_event_id_returns_the_first_result(workspace):
    card = make_card(workspace)
    first = services.submit_review(
        workspace, card.id, GOOD, reviewed_at=T0, client_event_id="tap-1"
    )
    changes = ChangeLog.objects.count()
    repeat = services.submit_review(
        workspace, card.id, AGAIN, reviewed_at=T0 + timedelta(hours=1), client_event_id="tap-1"
    )
    assert not repeat.created
    assert repeat.review_event.id == first.review_event.id
    assert repeat.review_event.rating == GOOD
    assert ReviewEvent.objects.count() == 1
    assert ChangeLog.objects.count() == changes
    card.refresh_from_db()
    assert card.reps == 1


def test_repeat_with_the_same_review_event_id_returns_the_first_result(workspace):
    card = make_card(workspace)
    event_id = uuid.uuid4()
    first = services.submit_review(workspace, card.id, GOOD, review_event_id=event_id)
    assert first.review_event.id == event_id
    repeat = services.submit_review(workspace, card.id, EASY, review_event_id=str(event_id))
    assert not repeat.created
    assert ReviewEvent.objects.count() == 1


def test_a_review_event_id_of_another_workspace_is_refused(workspace, other_workspace):
    theirs = make_card(other_workspace)
    event_id = uuid.uuid4()
    services.submit_review(other_workspace, theirs.id, GOOD, review_event_id=event_id)
    card = make_card(workspace)
    with pytest.raises(DomainError) as exc:
        services.submit_review(workspace, card.id, GOOD, review_event_id=event_id)
    assert exc.value.field == "review_event_id"
    assert not ReviewEvent.objects.filter(workspace=workspace).exists()


@pytest.mark.parametrize("client_event_id", ["", "   ", "x" * 201, 5, "a\x00b"])
def test_bad_client_event_ids_are_refused(workspace, client_event_id):
    card = make_card(workspace)
    with pytest.raises(DomainError) as exc:
        services.submit_review(workspace, card.id, GOOD, client_event_id=client_event_id)
    assert exc.value.field == "client_event_id"


def test_a_review_earlier_than_the_last_one_is_refused(workspace):
    card = make_card(workspace)
    services.submit_review(workspace, card.id, GOOD, reviewed_at=T0)
    before = Card.objects.get(pk=card.pk)
    with pytest.raises(DomainError) as exc:
        services.submit_review(workspace, card.id, GOOD, reviewed_at=T0 - timedelta(seconds=1))
    assert exc.value.field == "reviewed_at"
    assert "2026-03-05T10:00:00.000Z" in exc.value.message
    assert ReviewEvent.objects.count() == 1
    card.refresh_from_db()
    assert card_schedule(card) == card_schedule(before)


def test_a_review_at_the_same_instant_as_the_last_one_is_accepted(workspace):
    card = make_card(workspace)
    services.submit_review(workspace, card.id, GOOD, reviewed_at=T0)
    services.submit_review(workspace, card.id, GOOD, reviewed_at=T0)
    assert ReviewEvent.objects.count() == 2


def test_deleted_unknown_and_malformed_cards_are_refused(workspace):
    card = make_card(workspace)
    services.delete_cards(workspace, [card.id])
    for card_id in (card.id, uuid.uuid4()):
        with pytest.raises(NotFoundError):
            services.submit_review(workspace, card_id, GOOD)
    with pytest.raises(DomainError) as exc:
        services.submit_review(workspace, "12", GOOD)
    assert exc.value.field == "card_id"
    assert not ReviewEvent.objects.exists()


def test_review_time_defaults_to_now(workspace):
    card = make_card(workspace)
    before = services.now_ms()
    event = services.submit_review(workspace, card.id, EASY).review_event
    assert before <= event.reviewed_at_client == event.reviewed_at_server


def test_review_time_is_truncated_to_milliseconds(workspace):
    card = make_card(workspace)
    at = datetime(2026, 3, 5, 10, 0, 0, 999999, tzinfo=UTC)
    event = services.submit_review(workspace, card.id, GOOD, reviewed_at=at).review_event
    event.refresh_from_db()
    assert event.reviewed_at_client == datetime(2026, 3, 5, 10, 0, 0, 999000, tzinfo=UTC)


@pytest.mark.django_db
def test_review_too_far_in_the_future_is_a_domain_error(workspace):
    card = make_card(workspace)
    with pytest.raises(services.DomainError, match="too far in the future"):
        services.submit_review(
            workspace, card.id, "easy", reviewed_at=datetime(9999, 12, 31, tzinfo=UTC)
        )
