"""Push of card snapshots: creation with client ids, last-writer-wins, idempotency, tombstones."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from flashcards import services
from flashcards.models import AppliedOperation, Card, CardTag, ChangeLog, Installation
from tests.factories import make_card
from tests.flashcards.sync.helpers import SyncClient, card_op, new_id, ts

pytestmark = pytest.mark.django_db


def test_push_creates_a_card_with_the_client_id(sync, workspace):
    card_id = new_id()
    result = sync.push_one(
        card_op(
            card_id,
            at=ts(1),
            op_id="op-1",
            front_text="  Hola ",
            tags=["Spanish", "spanish", " verbs "],
            effort_level="medium",
            created_at=ts(0),
        )
    )
    assert result["operation_id"] == "op-1"
    assert result["status"] == "applied"
    assert result["error"] is None
    card = Card.objects.get(pk=card_id)
    assert card.workspace_id == workspace.pk
    assert card.front_text == "Hola"
    assert card.tags == ["Spanish", "verbs"]
    assert card.effort_level == "medium"
    assert services.format_timestamp(card.created_at) == ts(0)
    assert services.format_timestamp(card.client_updated_at) == ts(1)
    assert card.last_operation_id == "op-1"
    replica = Installation.objects.get(workspace=workspace, installation_id="phone-1").replica_id
    assert card.last_modified_by_replica_id == replica
    assert list(
        CardTag.objects.filter(card=card).order_by("position").values_list("tag__name", flat=True)
    ) == [
        "Spanish",
        "verbs",
    ]
    change = ChangeLog.objects.get(workspace=workspace, change_id=result["resulting_change_id"])
    assert (change.entity_type, change.entity_id, change.operation_id) == ("card", card_id, "op-1")


def test_push_snapshot_with_scheduling_state(sync):
    card_id = new_id()
    schedule = {
        "fsrs_card_state": "review",
        "due_at": ts(60 * 24 * 3),
        "reps": 3,
        "lapses": 1,
        "fsrs_step_index": None,
        "fsrs_stability": 3.25,
        "fsrs_difficulty": 5.5,
        "fsrs_last_reviewed_at": ts(0),
        "fsrs_scheduled_days": 3,
    }
    assert sync.push_one(card_op(card_id, at=ts(1), **schedule))["status"] == "applied"
    [change] = sync.pull()["changes"]
    payload = change["payload"]
    assert {k: payload[k] for k in schedule} == schedule
    assert payload["deleted_at"] is None


@pytest.mark.parametrize(
    ("schedule", "complaint"),
    [
        ({"fsrs_card_state": "review", "reps": 1}, "fsrs_stability must not be null"),
        ({"fsrs_card_state": "new", "due_at": ts(5)}, "due_at must be null"),
        (
            {
                "fsrs_card_state": "learning",
                "fsrs_stability": 1.0,
                "fsrs_difficulty": 5.0,
                "fsrs_last_reviewed_at": ts(0),
                "fsrs_scheduled_days": 0,
            },
            "fsrs_step_index must not be null",
        ),
        ({"fsrs_card_state": "sleeping"}, "fsrs_card_state must be one of"),
        ({"reps": -1}, "reps must be a whole number"),
        ({"fsrs_card_state": "new", "fsrs_difficulty": 11}, "fsrs_difficulty must be"),
    ],
)
def test_inconsistent_scheduling_state_is_rejected(sync, schedule, complaint):
    card_id = new_id()
    result = sync.push_one(card_op(card_id, at=ts(1), **schedule))
    assert result["status"] == "rejected"
    assert complaint in result["error"]
    assert result["resulting_change_id"] is None
    assert not Card.objects.filter(pk=card_id).exists()


def _lww_setup(sync):
    card_id = new_id()
    sync.push_one(card_op(card_id, at=ts(10), op_id="op-m", front_text="first"))
    return card_id


@pytest.mark.parametrize(
    ("minutes", "op_id", "expected"),
    [
        (9, "op-z", "ignored"),  # older timestamp loses whatever the ids
        (10, "op-a", "ignored"),  # same time and replica, smaller operation id
        (10, "op-z", "applied"),  # same time and replica, greater operation id
        (11, "op-a", "applied"),  # newer timestamp wins
    ],
)
def test_last_writer_wins_on_time_then_operation_id(sync, minutes, op_id, expected):
    card_id = _lww_setup(sync)
    result = sync.push_one(card_op(card_id, at=ts(minutes), op_id=op_id, front_text="second"))
    assert result["status"] == expected
    card = Card.objects.get(pk=card_id)
    assert card.front_text == ("second" if expected == "applied" else "first")
    if expected == "ignored":
        assert result["resulting_change_id"] is None
        assert card.last_operation_id == "op-m"


def test_equal_time_tie_breaks_on_replica_id(sync, workspace):
    card_a, card_b = new_id(), new_id()
    # Register two installations; their replica ids are server-generated, so sort them.
    sync.push_one(card_op(card_a, at=ts(0)), installation_id="tablet")
    sync.push_one(card_op(card_b, at=ts(0)), installation_id="laptop")
    replicas = dict(
        Installation.objects.filter(workspace=workspace).values_list(
            "replica_id", "installation_id"
        )
    )
    low, high = (replicas[r] for r in sorted(replicas))

    sync.push_one(card_op(card_a, at=ts(5), op_id="zzz", front_text="low"), installation_id=low)
    result = sync.push_one(
        card_op(card_a, at=ts(5), op_id="aaa", front_text="high"), installation_id=high
    )
    assert result["status"] == "applied"  # greater replica id wins the tie, op id regardless

    sync.push_one(card_op(card_b, at=ts(5), op_id="aab", front_text="high"), installation_id=high)
    result = sync.push_one(
        card_op(card_b, at=ts(5), op_id="zzy", front_text="low"), installation_id=low
    )
    assert result["status"] == "ignored"
    assert Card.objects.get(pk=card_a).front_text == "high"
    assert Card.objects.get(pk=card_b).front_text == "high"


def test_server_write_after_the_client_time_wins(sync, workspace):
    card = make_card(workspace, front_text="server")
    result = sync.push_one(card_op(str(card.pk), at=ts(0), front_text="stale phone"))
    assert result["status"] == "ignored"
    card.refresh_from_db()
    assert card.front_text == "server"


def test_repeated_operation_is_duplicate_with_its_first_change(sync, workspace):
    card_id = new_id()
    op = card_op(card_id, at=ts(1), op_id="op-1")
    first = sync.push_one(op)
    again = sync.push_one({**op, "payload": {**op["payload"], "front_text": "changed"}})
    assert again["status"] == "duplicate"
    assert again["resulting_change_id"] == first["resulting_change_id"]
    assert Card.objects.get(pk=card_id).front_text == "Hola"
    assert AppliedOperation.objects.filter(workspace=workspace, operation_id="op-1").count() == 1


def test_repeat_inside_one_push_and_repeat_of_an_ignored_operation(sync):
    card_id = new_id()
    sync.push_one(card_op(card_id, at=ts(10), op_id="base"))
    stale = card_op(card_id, at=ts(1), op_id="stale")
    fresh = card_op(card_id, at=ts(20), op_id="fresh", front_text="new")
    results = sync.push([stale, fresh, fresh, stale])
    assert [r["status"] for r in results] == ["ignored", "applied", "duplicate", "duplicate"]
    assert results[2]["resulting_change_id"] == results[1]["resulting_change_id"]
    assert results[3]["resulting_change_id"] is None


def test_same_operation_id_from_another_installation_is_not_a_duplicate(sync):
    card_a, card_b = new_id(), new_id()
    sync.push_one(card_op(card_a, at=ts(1), op_id="op-1"), installation_id="phone")
    result = sync.push_one(card_op(card_b, at=ts(1), op_id="op-1"), installation_id="laptop")
    assert result["status"] == "applied"


def test_rejected_operation_does_not_abort_the_others(sync, workspace):
    good_1, bad, good_2 = new_id(), new_id(), new_id()
    results = sync.push(
        [
            card_op(good_1, at=ts(1), op_id="a"),
            card_op(bad, at=ts(1), op_id="b", front_text="   "),
            card_op(good_2, at=ts(1), op_id="c", tags=["x"]),
        ]
    )
    assert [r["status"] for r in results] == ["applied", "rejected", "applied"]
    assert "front_text must not be empty" in results[1]["error"]
    assert results[2]["resulting_change_id"] == results[0]["resulting_change_id"] + 1
    assert set(Card.objects.filter(workspace=workspace).values_list("id", flat=True)) == {
        Card.objects.get(pk=good_1).pk,
        Card.objects.get(pk=good_2).pk,
    }
    # A rejected operation leaves no idempotency key: fixed, it can be sent again.
    retry = sync.push_one(card_op(bad, at=ts(1), op_id="b", front_text="fixed"))
    assert retry["status"] == "applied"


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        ({"entity_type": "note"}, "entity_type must be one of"),
        ({"action": "append"}, "action for card must be 'upsert'"),
        ({"entity_id": "not-a-uuid"}, "entity_id must be a UUID"),
        ({"client_updated_at": "yesterday"}, "client_updated_at must be an ISO-8601"),
        ({"client_updated_at": None}, "client_updated_at must be an ISO-8601"),
        ({"payload": ["front_text"]}, "payload must be a JSON object"),
        ({"payload": {"front_text": "a", "back_text": "b", "colour": 1}}, "Unknown key(s)"),
        ({"payload": {"front_text": "a"}}, "back_text is required"),
        ({"payload": {"front_text": "a\x00", "back_text": ""}}, "NUL"),
        ({"payload": {"front_text": "a", "back_text": "", "card_id": new_id()}}, "must equal"),
        ({"payload": {"front_text": "a", "back_text": "", "metadata": []}}, "metadata must be"),
        ({"payload": {"front_text": "a", "back_text": "", "tags": "x"}}, "tags must be a list"),
    ],
)
def test_invalid_operations_are_rejected_with_a_message(sync, change, complaint):
    op = {**card_op(new_id(), at=ts(1)), **change}
    result = sync.push_one(op)
    assert result["status"] == "rejected"
    assert complaint in result["error"]


def test_card_id_of_another_workspace_is_refused(sync, other_workspace):
    theirs = make_card(other_workspace, front_text="theirs")
    result = sync.push_one(card_op(str(theirs.pk), at=ts(9999), front_text="mine now"))
    assert result["status"] == "rejected"
    assert "already in use" in result["error"]
    theirs.refresh_from_db()
    assert theirs.front_text == "theirs"
    assert theirs.workspace_id == other_workspace.pk


def test_tombstone_then_resurrection(sync, workspace):
    card_id = new_id()
    sync.push_one(card_op(card_id, at=ts(1), tags=["t"]))
    deleted = sync.push_one(card_op(card_id, at=ts(2), deleted_at=ts(2)))
    assert deleted["status"] == "applied"
    card = Card.objects.get(pk=card_id)
    assert services.format_timestamp(card.deleted_at) == ts(2)
    change = ChangeLog.objects.get(workspace=workspace, change_id=deleted["resulting_change_id"])
    assert change.action == "delete"
    with pytest.raises(services.NotFoundError):
        services.get_live_card(workspace, card_id)
    # An older edit made offline before the delete loses to it.
    assert sync.push_one(card_op(card_id, at=ts(1.5), deleted_at=None))["status"] == "ignored"
    # A newer snapshot without the tombstone brings the card back (plain last-writer-wins).
    assert sync.push_one(card_op(card_id, at=ts(3), deleted_at=None))["status"] == "applied"
    assert services.get_live_card(workspace, card_id).tags == ["t"]


def test_partial_snapshot_keeps_absent_keys(sync):
    card_id = new_id()
    sync.push_one(card_op(card_id, at=ts(1), tags=["keep"], effort_level="long"))
    result = sync.push_one({**card_op(card_id, at=ts(2)), "payload": {"deleted_at": ts(2)}})
    assert result["status"] == "applied"
    card = Card.objects.get(pk=card_id)
    assert (card.front_text, card.tags, card.effort_level) == ("Hola", ["keep"], "long")
    assert card.deleted_at is not None


def test_pulled_payload_can_be_pushed_back(sync):
    card_id = new_id()
    sync.push_one(card_op(card_id, at=ts(1), metadata={"version": 1, "source": {"app": "ios"}}))
    payload = sync.pull()["changes"][0]["payload"]
    payload["back_text"] = "edited"
    result = sync.push_one({**card_op(card_id, at=ts(2)), "payload": payload})
    assert result["status"] == "applied"
    card = Card.objects.get(pk=card_id)
    assert card.back_text == "edited"
    assert card.metadata == {"version": 1, "source": {"app": "ios"}}


def test_push_costs_a_bounded_number_of_queries_per_operation(api, workspace):
    sync = SyncClient(api, workspace.pk)
    sync.push([])  # warm-up: registers the installation, refreshes the key's last use

    def cost(count: int, minutes: int) -> int:
        ops = [card_op(new_id(), at=ts(minutes), tags=["a", "b"]) for _ in range(count)]
        with CaptureQueriesContext(connection) as queries:
            assert {r["status"] for r in sync.push(ops)} == {"applied"}
        return len(queries)

    one, ten = cost(1, 1), cost(10, 2)
    assert (ten - one) / 9 <= 12


def _tag_rows(card_id: str) -> list[str]:
    return list(
        CardTag.objects.filter(card_id=card_id)
        .order_by("position")
        .values_list("tag__name", flat=True)
    )


def test_tag_rows_exist_for_live_cards_only(sync, workspace):
    """A tombstone takes its tag rows with it (the card keeps its tags); a card brought back —
    with or without tags in the snapshot — gets them again. Whole-workspace tag counts rely on it
    (they read the tag rows without joining the cards)."""
    card_id = new_id()
    sync.push_one(card_op(card_id, at=ts(1), tags=["a", "b"]))
    assert _tag_rows(card_id) == ["a", "b"]
    sync.push_one(card_op(card_id, at=ts(2), deleted_at=ts(2), tags=["a", "b"]))
    assert _tag_rows(card_id) == [] and Card.objects.get(pk=card_id).tags == ["a", "b"]
    sync.push_one({**card_op(card_id, at=ts(3)), "payload": {"deleted_at": None}})
    assert _tag_rows(card_id) == ["a", "b"]
    sync.push_one({**card_op(card_id, at=ts(4)), "payload": {"deleted_at": ts(4)}})
    assert _tag_rows(card_id) == []
    sync.push_one(card_op(card_id, at=ts(5), deleted_at=None, tags=["c"]))
    assert _tag_rows(card_id) == ["c"]
    services.delete_cards(workspace, [card_id])
    assert _tag_rows(card_id) == []


def test_an_operation_id_reused_for_another_card_is_rejected_not_a_duplicate(sync, workspace):
    card_a, card_b = new_id(), new_id()
    first = sync.push_one(card_op(card_a, at=ts(1), op_id="op-1"))
    assert first["status"] == "applied"
    reused = sync.push_one(card_op(card_b, at=ts(2), op_id="op-1", front_text="other"))
    assert reused["status"] == "rejected", reused
    assert "op-1" in reused["error"] and card_a in reused["error"]
    assert not Card.objects.filter(pk=card_b).exists()
    # Inside one push too.
    card_c, card_d = new_id(), new_id()
    results = sync.push(
        [card_op(card_c, at=ts(3), op_id="op-2"), card_op(card_d, at=ts(3), op_id="op-2")]
    )
    assert [r["status"] for r in results] == ["applied", "rejected"]
