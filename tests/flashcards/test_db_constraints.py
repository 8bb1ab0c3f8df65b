"""The database refuses what the services refuse, even when code bypasses the services."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import IntegrityError, transaction

from flashcards import services
from flashcards.models import Card, ChangeLog, ReviewEvent, Tag, Workspace
from tests.factories import make_card

T0 = datetime(2026, 3, 5, 10, 0, tzinfo=UTC)

REVIEW_STATE = {
    "fsrs_card_state": "review",
    "due_at": T0,
    "fsrs_step_index": None,
    "fsrs_stability": 3.2,
    "fsrs_difficulty": 5.1,
    "fsrs_last_reviewed_at": T0,
    "fsrs_scheduled_days": 3,
}


def refused(operation) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        operation()


@pytest.fixture
def card(workspace) -> Card:
    return make_card(workspace)


def update(card: Card, **fields) -> None:
    Card.objects.filter(pk=card.pk).update(**fields)


def test_consistent_states_are_accepted(card):
    update(card, **REVIEW_STATE)
    update(card, **(REVIEW_STATE | {"fsrs_card_state": "learning", "fsrs_step_index": 0}))
    update(card, **(REVIEW_STATE | {"fsrs_card_state": "relearning", "fsrs_step_index": 1}))
    # A reviewed card without a due date is not forbidden by the rule (only new ⇒ due_at null).
    update(card, **(REVIEW_STATE | {"due_at": None}))


@pytest.mark.parametrize(
    "fields",
    [
        {"due_at": T0},
        {"fsrs_step_index": 0},
        {"fsrs_stability": 1.0},
        {"fsrs_difficulty": 1.0},
        {"fsrs_last_reviewed_at": T0},
        {"fsrs_scheduled_days": 0},
    ],
)
def test_a_new_card_holds_no_scheduling_state(card, fields):
    refused(lambda: update(card, **fields))


@pytest.mark.parametrize(
    "missing", ["fsrs_stability", "fsrs_difficulty", "fsrs_last_reviewed_at", "fsrs_scheduled_days"]
)
@pytest.mark.parametrize("state", ["learning", "review", "relearning"])
def test_a_reviewed_card_holds_its_memory_state(card, state, missing):
    step = None if state == "review" else 0
    fields = REVIEW_STATE | {"fsrs_card_state": state, "fsrs_step_index": step, missing: None}
    refused(lambda: update(card, **fields))


def test_step_index_matches_the_state(card):
    refused(lambda: update(card, **(REVIEW_STATE | {"fsrs_step_index": 0})))
    for state in ("learning", "relearning"):
        refused(lambda s=state: update(card, **(REVIEW_STATE | {"fsrs_card_state": s})))


def test_unknown_state_effort_and_negative_counts_are_refused(card):
    refused(lambda: update(card, fsrs_card_state="mastered"))
    refused(lambda: update(card, effort_level="huge"))
    refused(lambda: update(card, reps=-1))
    refused(lambda: update(card, lapses=-1))


@pytest.mark.parametrize("rating", [-1, 4])
def test_review_rating_range(workspace, card, rating):
    event = services.submit_review(workspace, card.id, 2).review_event
    refused(lambda: ReviewEvent.objects.filter(pk=event.pk).update(rating=rating))


def test_client_event_ids_are_unique_per_workspace_and_replica(workspace, card):
    event = services.submit_review(workspace, card.id, 2, client_event_id="e1").review_event

    def duplicate(**overrides):
        fields = {
            "workspace": workspace,
            "card": card,
            "client_event_id": "e1",
            "replica_id": event.replica_id,
            "rating": 1,
            "reviewed_at_client": T0,
            "reviewed_at_server": T0,
            "sequence": 99,
        }
        return ReviewEvent.objects.create(**(fields | overrides))

    refused(duplicate)
    refused(lambda: duplicate(client_event_id="e2", sequence=event.sequence))
    duplicate(replica_id="another-replica")  # same client id from another replica is fine


def test_change_numbers_are_unique_per_workspace(workspace, other_workspace, card):
    entry = ChangeLog.objects.get(workspace=workspace)
    fields = {
        "entity_type": "card",
        "entity_id": "x",
        "action": "upsert",
        "replica_id": "server",
        "operation_id": "op",
        "recorded_at": T0,
    }
    refused(
        lambda: ChangeLog.objects.create(workspace=workspace, change_id=entry.change_id, **fields)
    )
    ChangeLog.objects.create(workspace=other_workspace, change_id=entry.change_id, **fields)


def test_tag_keys_are_unique_per_workspace(workspace):
    make_card(workspace, tags=["Spanish"])
    refused(lambda: Tag.objects.create(workspace=workspace, key="spanish", name="SPANISH"))


@pytest.mark.parametrize(
    "fields", [{"desired_retention": 1.0}, {"desired_retention": 0}, {"maximum_interval_days": 0}]
)
def test_workspace_settings_ranges(workspace, fields):
    refused(lambda: Workspace.objects.filter(pk=workspace.pk).update(**fields))
