"""Pull: the latest state of each changed entity after a cursor, from every write path."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from flashcards import services
from flashcards.models import Workspace
from tests.factories import make_card, make_cards, make_deck
from tests.flashcards.sync.helpers import SyncClient, card_op, new_id, review_op, ts
from tests.support.envelope import data_of, post_sql

pytestmark = pytest.mark.django_db


def test_empty_workspace_pulls_nothing(sync):
    assert sync.pull() == {"changes": [], "next_change_id": 0, "has_more": False}


def test_each_entity_appears_once_at_its_latest_change(sync, workspace):
    a, b = make_cards(workspace, 2)
    services.update_cards(workspace, [a.pk], {"front_text": "a2"})
    services.update_cards(workspace, [a.pk], {"front_text": "a3"})
    data = sync.pull()
    assert [(c["entity_id"], c["change_id"]) for c in data["changes"]] == [
        (str(b.pk), 2),
        (str(a.pk), 4),
    ]
    assert data["changes"][1]["payload"]["front_text"] == "a3"
    assert data["next_change_id"] == 4
    assert data["has_more"] is False
    assert sync.pull(after=4)["changes"] == []
    assert sync.pull(after=3)["changes"][0]["entity_id"] == str(a.pk)


def test_pages_follow_the_cursor_without_gaps(sync, workspace):
    cards = make_cards(workspace, 7)
    services.update_cards(workspace, [cards[0].pk], {"back_text": "changed"})
    seen, after, pages = [], 0, 0
    while True:
        data = sync.pull(after=after, limit=3)
        pages += 1
        seen.extend(c["entity_id"] for c in data["changes"])
        after = data["next_change_id"]
        if not data["has_more"]:
            break
    assert pages == 3
    assert sorted(seen) == sorted(str(c.pk) for c in cards)
    assert after == Workspace.objects.get(pk=workspace.pk).last_change_id


def test_payload_shapes_and_tombstones(sync, workspace):
    card = make_card(workspace, tags=["x"])
    deck = make_deck(workspace, tags=["x"])
    services.delete_cards(workspace, [card.pk])
    result = services.submit_review(workspace, make_card(workspace).pk, "good")
    changes = {c["entity_type"] + ":" + c["entity_id"]: c for c in sync.pull()["changes"]}
    tombstone = changes[f"card:{card.pk}"]["payload"]
    assert tombstone["deleted_at"] is not None
    assert tombstone["card_id"] == str(card.pk)
    assert tombstone["tags"] == ["x"]
    assert changes[f"deck:{deck.pk}"]["payload"]["deleted_at"] is None
    assert set(changes[f"deck:{deck.pk}"]["payload"]) == {
        "deck_id",
        "name",
        "effort_levels",
        "tags",
        "created_at",
        "updated_at",
        "deleted_at",
    }
    event = changes[f"review_event:{result.review_event.pk}"]["payload"]
    assert event["review_grade"] == "good"
    assert event["sequence"] == 1
    reviewed = changes[f"card:{result.card.pk}"]["payload"]
    assert reviewed["fsrs_card_state"] == "learning"


def test_writes_of_every_path_reach_the_next_pull(sync, workspace):
    start = sync.pull()["next_change_id"]
    card = make_card(workspace)
    services.update_scheduler_settings(workspace, {"desired_retention": 0.8})
    services.reset_progress(workspace, services.RESET_CONFIRMATION)
    data = sync.pull(after=start)
    assert [c["entity_type"] for c in data["changes"]] == ["workspace_scheduler_settings", "card"]
    assert data["changes"][0]["payload"]["desired_retention"] == 0.8
    assert data["changes"][1]["entity_id"] == str(card.pk)


def test_a_push_is_seen_by_another_installation_pull(sync):
    card_id = new_id()
    result = sync.push_one(card_op(card_id, at=ts(1), front_text="from phone"))
    [change] = sync.pull()["changes"]
    assert change == {
        "change_id": result["resulting_change_id"],
        "entity_type": "card",
        "entity_id": card_id,
        "payload": change["payload"],
    }
    assert change["payload"]["front_text"] == "from phone"


def test_pull_never_returns_another_workspace_changes(sync, workspace, other_workspace):
    make_cards(other_workspace, 3)
    make_deck(other_workspace)
    mine = make_card(workspace)
    services.update_scheduler_settings(other_workspace, {"enable_fuzz": False})
    data = sync.pull()
    assert [c["entity_id"] for c in data["changes"]] == [str(mine.pk)]
    assert sync.pull(after=0, limit=500)["next_change_id"] == 1


def test_pull_query_count_does_not_grow_with_the_page(api, workspace):
    sync = SyncClient(api, workspace.pk)
    card = make_card(workspace)
    services.submit_review(workspace, card.pk, 2)
    make_deck(workspace)
    services.update_scheduler_settings(workspace, {"enable_fuzz": False})
    sync.pull()  # warm-up: the key's last-used stamp is refreshed on first use
    with CaptureQueriesContext(connection) as small:
        sync.pull(limit=500)
    make_cards(workspace, 40)
    for _ in range(3):
        make_deck(workspace)
    for card in make_cards(workspace, 5):
        services.submit_review(workspace, card.pk, 1)
    with CaptureQueriesContext(connection) as large:
        data = sync.pull(limit=500)
    assert len(data["changes"]) > 50
    assert len(large) == len(small)


def test_review_pushed_through_sync_is_pulled(sync):
    card_id = new_id()
    sync.push_one(card_op(card_id, at=ts(0)))
    event_id = new_id()
    sync.push_one(review_op(card_id, at=ts(1), event_id=event_id))
    [_, change] = sync.pull()["changes"]
    assert (change["entity_type"], change["entity_id"]) == ("review_event", event_id)
    assert change["payload"]["card_id"] == card_id


def test_explicit_command_over_http_reaches_the_next_pull(api, sync, workspace):
    card = make_card(workspace)
    start = sync.pull()["next_change_id"]
    response = api.post("/v1/agent/reviews", {"card_id": str(card.pk), "rating": 2}, format="json")
    assert response.status_code == 200
    event_id = response.json()["data"]["review_event"]["review_event_id"]
    changes = sync.pull(after=start)["changes"]
    assert [(c["entity_type"], c["entity_id"]) for c in changes] == [
        ("review_event", event_id),
        ("card", str(card.pk)),
    ]
    assert changes[1]["payload"]["reps"] == 1


def test_dialect_writes_over_http_reach_the_next_pull(api, sync):
    def sql(statement: str) -> dict:
        return data_of(post_sql(api, statement))

    [row] = sql("INSERT INTO cards (front_text, back_text) VALUES ('Hola', 'Hello')")["rows"]
    [insert] = sync.pull()["changes"]
    assert (insert["entity_id"], insert["payload"]["back_text"]) == (row["card_id"], "Hello")
    sql("UPDATE cards SET back_text = 'Hi' WHERE front_text = 'Hola'")
    sql("INSERT INTO decks (name, tags) VALUES ('Spanish', ('es'))")
    sql("DELETE FROM cards WHERE front_text = 'Hola'")
    changes = sync.pull(after=insert["change_id"])["changes"]
    assert [(c["entity_type"], c["payload"]["deleted_at"] is None) for c in changes] == [
        ("deck", True),
        ("card", False),
    ]
    assert changes[1]["payload"]["back_text"] == "Hi"
    # A phone that edited the card offline before the delete loses to the tombstone.
    stale = sync.push_one(card_op(row["card_id"], at=ts(0), deleted_at=None))
    assert stale["status"] == "ignored"
