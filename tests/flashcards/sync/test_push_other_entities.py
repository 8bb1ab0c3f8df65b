"""Push of deck snapshots, scheduler settings snapshots and appended review events."""

from __future__ import annotations

import pytest

from flashcards import services
from flashcards.models import Card, ChangeLog, Deck, DeckTag, ReviewEvent, Workspace
from tests.factories import make_card, make_deck
from tests.flashcards.sync.helpers import card_op, deck_op, new_id, operation, review_op, ts

pytestmark = pytest.mark.django_db


# ---------------------------------------------------------------- decks


def test_deck_create_update_and_tombstone(sync, workspace):
    deck_id = new_id()
    created = sync.push_one(
        deck_op(deck_id, at=ts(1), effort_levels=["fast", "fast", "long"], tags=["A", "a", "b"])
    )
    assert created["status"] == "applied"
    deck = Deck.objects.get(pk=deck_id)
    assert (deck.workspace_id, deck.effort_levels, deck.tags) == (
        workspace.pk,
        ["fast", "long"],
        ["A", "b"],
    )
    tag_rows = DeckTag.objects.filter(deck=deck).order_by("position")
    assert list(tag_rows.values_list("tag__key", flat=True)) == ["a", "b"]

    assert sync.push_one(deck_op(deck_id, at=ts(0), name="old"))["status"] == "ignored"
    assert sync.push_one(deck_op(deck_id, at=ts(2), name="Renamed"))["status"] == "applied"
    deleted = sync.push_one({**deck_op(deck_id, at=ts(3)), "payload": {"deleted_at": ts(3)}})
    assert deleted["status"] == "applied"
    deck.refresh_from_db()
    assert deck.name == "Renamed"
    assert deck.deleted_at is not None
    [change] = sync.pull(after=created["resulting_change_id"])["changes"]
    assert change["change_id"] == deleted["resulting_change_id"]
    assert change["payload"]["deleted_at"] == ts(3)


@pytest.mark.parametrize(
    ("payload", "complaint"),
    [
        ({"name": " "}, "name must not be empty"),
        ({"name": "x", "effort_levels": ["slow"]}, "effort_levels must be one of"),
        ({"name": "x", "front_text": "card field"}, "Unknown key(s)"),
        ({"effort_levels": []}, "name is required"),
    ],
)
def test_invalid_deck_snapshot_is_rejected(sync, payload, complaint):
    result = sync.push_one({**deck_op(new_id(), at=ts(1)), "payload": payload})
    assert result["status"] == "rejected"
    assert complaint in result["error"]


def test_deck_id_of_another_workspace_is_refused(sync, other_workspace):
    theirs = make_deck(other_workspace, name="theirs")
    result = sync.push_one(deck_op(str(theirs.pk), at=ts(9999), name="mine"))
    assert result["status"] == "rejected"
    theirs.refresh_from_db()
    assert theirs.name == "theirs"


# ---------------------------------------------------------------- scheduler settings


def settings_op(workspace_id: object, *, at: str, op_id: str | None = None, **payload):
    return operation("workspace_scheduler_settings", str(workspace_id), payload, at=at, op_id=op_id)


def test_settings_snapshot_applies_and_loses_to_newer_writes(sync, workspace):
    result = sync.push_one(
        settings_op(
            workspace.pk,
            at=ts(1),
            desired_retention=0.85,
            learning_steps_minutes=[2, 20],
            algorithm="fsrs-6",
            name="ignored echo",
        )
    )
    assert result["status"] == "applied"
    ws = Workspace.objects.get(pk=workspace.pk)
    assert (ws.desired_retention, ws.learning_steps_minutes, ws.name) == (
        0.85,
        [2, 20],
        "Personal",
    )
    assert ws.last_change_id == result["resulting_change_id"]
    stale = sync.push_one(settings_op(workspace.pk, at=ts(0), desired_retention=0.5))
    assert stale["status"] == "ignored"
    assert Workspace.objects.get(pk=workspace.pk).desired_retention == 0.85
    [change] = sync.pull(after=result["resulting_change_id"] - 1)["changes"]
    assert change["entity_type"] == "workspace_scheduler_settings"
    assert change["entity_id"] == str(workspace.pk)
    assert change["payload"]["desired_retention"] == 0.85


def test_settings_command_after_the_client_time_wins(sync, workspace):
    services.update_scheduler_settings(workspace, {"enable_fuzz": False})
    result = sync.push_one(settings_op(workspace.pk, at=ts(0), enable_fuzz=True))
    assert result["status"] == "ignored"
    assert Workspace.objects.get(pk=workspace.pk).enable_fuzz is False


@pytest.mark.parametrize(
    ("entity_id", "payload", "complaint"),
    [
        ("self", {"desired_retention": 1.5}, "desired_retention must be"),
        ("self", {"learning_steps_minutes": [10, 1]}, "strictly increasing"),
        ("self", {"algorithm": "sm-2"}, "algorithm must be"),
        ("self", {"deleted_at": ts(1)}, "Unknown key(s)"),
        ("other", {"desired_retention": 0.8}, "this workspace's id"),
    ],
)
def test_invalid_settings_snapshot_is_rejected(
    sync, workspace, other_workspace, entity_id, payload, complaint
):
    target = workspace.pk if entity_id == "self" else other_workspace.pk
    result = sync.push_one(settings_op(target, at=ts(1), **payload))
    assert result["status"] == "rejected"
    assert complaint in result["error"]
    assert Workspace.objects.get(pk=other_workspace.pk).desired_retention == 0.9


# ---------------------------------------------------------------- review events


def test_review_event_is_appended_without_rescheduling_the_card(sync, workspace):
    card_id = new_id()
    sync.push_one(card_op(card_id, at=ts(0)))
    event_id = new_id()
    result = sync.push_one(
        review_op(card_id, at=ts(1), event_id=event_id, client_event_id="ce-1", rating="easy")
    )
    assert result["status"] == "applied"
    event = ReviewEvent.objects.get(pk=event_id)
    assert (event.workspace_id, event.card_id, event.rating, event.client_event_id) == (
        workspace.pk,
        Card.objects.get(pk=card_id).pk,
        3,
        "ce-1",
    )
    assert services.format_timestamp(event.reviewed_at_client) == ts(1)
    assert event.sequence == 1
    assert Card.objects.get(pk=card_id).fsrs_card_state == "new"
    change = ChangeLog.objects.get(workspace=workspace, change_id=result["resulting_change_id"])
    assert (change.entity_type, change.action) == ("review_event", "append")


def test_review_event_deduplicated_by_id_and_by_client_event_id(sync):
    card_id = new_id()
    sync.push_one(card_op(card_id, at=ts(0)))
    event_id = new_id()
    first = sync.push_one(review_op(card_id, at=ts(1), event_id=event_id, client_event_id="ce-1"))
    same_id = sync.push_one(review_op(card_id, at=ts(1), event_id=event_id, client_event_id="x"))
    same_client_event = sync.push_one(review_op(card_id, at=ts(1), client_event_id="ce-1"))
    assert [same_id["status"], same_client_event["status"]] == ["duplicate", "duplicate"]
    assert same_id["resulting_change_id"] == first["resulting_change_id"]
    assert same_client_event["resulting_change_id"] == first["resulting_change_id"]
    assert ReviewEvent.objects.count() == 1
    # The same client_event_id from another installation (replica) is another review.
    other = sync.push_one(
        review_op(card_id, at=ts(1), client_event_id="ce-1"), installation_id="laptop"
    )
    assert other["status"] == "applied"
    assert ReviewEvent.objects.count() == 2


def test_review_of_a_deleted_card_is_still_history(sync):
    card_id = new_id()
    sync.push_one(card_op(card_id, at=ts(0)))
    sync.push_one(card_op(card_id, at=ts(2), deleted_at=ts(2)))
    assert sync.push_one(review_op(card_id, at=ts(1)))["status"] == "applied"


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        ({"rating": 4}, "rating must be"),
        ({"rating": True}, "rating must be"),
        ({"review_grade": "hard"}, "does not match rating"),
        ({"reviewed_at_client": "soon"}, "reviewed_at_client must be"),
        ({"client_event_id": ""}, "client_event_id must be"),
        ({"card_id": "nope"}, "card_id must be a UUID"),
        ({"card_id": new_id()}, "No card with card_id"),
        ({"review_event_id": new_id()}, "must equal entity_id"),
    ],
)
def test_invalid_review_event_is_rejected(sync, change, complaint):
    card_id = new_id()
    sync.push_one(card_op(card_id, at=ts(0)))
    op = review_op(card_id, at=ts(1))
    result = sync.push_one({**op, "payload": {**op["payload"], **change}})
    assert result["status"] == "rejected"
    assert complaint in result["error"]
    assert ReviewEvent.objects.count() == 0


def test_review_event_action_must_be_append(sync):
    card_id = new_id()
    sync.push_one(card_op(card_id, at=ts(0)))
    result = sync.push_one({**review_op(card_id, at=ts(1)), "action": "upsert"})
    assert result["status"] == "rejected"
    assert "must be 'append'" in result["error"]


def test_review_of_a_card_or_event_id_of_another_workspace_is_refused(sync, other_workspace):
    theirs = make_card(other_workspace)
    result = sync.push_one(review_op(str(theirs.pk), at=ts(1)))
    assert result["status"] == "rejected"
    their_event = services.submit_review(other_workspace, theirs.pk, 2).review_event
    mine = new_id()
    sync.push_one(card_op(mine, at=ts(0)))
    result = sync.push_one(review_op(mine, at=ts(1), event_id=str(their_event.pk)))
    assert result["status"] == "rejected"
    assert "already in use" in result["error"]
    assert ReviewEvent.objects.filter(card__workspace=other_workspace).count() == 1
