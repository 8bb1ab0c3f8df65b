"""Bootstrap (every live and tombstoned entity, keyset-paged) and review-history pull."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from flashcards import services
from tests.factories import make_card, make_cards, make_deck
from tests.flashcards.sync.helpers import SyncClient, card_op, new_id, review_op, ts

pytestmark = pytest.mark.django_db


def _bootstrap_all(sync, limit):
    entries, cursor, pages = [], None, []
    while True:
        data = sync.bootstrap(cursor=cursor, limit=limit)
        pages.append(data)
        entries.extend(data["entries"])
        cursor = data["next_cursor"]
        if not data["has_more"]:
            assert cursor is None
            return entries, pages


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 7, 8, 1000])
def test_bootstrap_returns_every_entity_once_at_any_page_size(sync, workspace, limit):
    cards = make_cards(workspace, 4)
    decks = [make_deck(workspace, name=f"d{i}") for i in range(2)]
    services.delete_cards(workspace, [cards[0].pk])
    services.delete_decks(workspace, [decks[0].pk])
    entries, pages = _bootstrap_all(sync, limit)
    assert [(e["entity_type"], e["entity_id"]) for e in entries] == [
        ("workspace_scheduler_settings", str(workspace.pk)),
        *sorted(("card", str(c.pk)) for c in cards),
        *sorted(("deck", str(d.pk)) for d in decks),
    ]
    assert all(len(page["entries"]) <= limit for page in pages)
    by_id = {e["entity_id"]: e["payload"] for e in entries}
    assert by_id[str(cards[0].pk)]["deleted_at"] is not None
    assert by_id[str(decks[0].pk)]["deleted_at"] is not None
    assert by_id[str(cards[1].pk)]["deleted_at"] is None
    assert by_id[str(workspace.pk)]["desired_retention"] == 0.9
    # Every page names the change number read before the first page.
    assert {page["next_change_id"] for page in pages} == {8}


def test_changes_during_bootstrap_are_caught_by_the_following_pull(sync, workspace):
    early = make_cards(workspace, 3)
    first = sync.bootstrap(limit=2)
    late = make_card(workspace)
    services.update_cards(workspace, [early[0].pk], {"front_text": "edited"})
    rest = sync.bootstrap(cursor=first["next_cursor"], limit=1000)
    assert rest["next_change_id"] == first["next_change_id"] == 3
    pulled = sync.pull(after=first["next_change_id"])["changes"]
    assert {c["entity_id"] for c in pulled} == {str(late.pk), str(early[0].pk)}


def test_bootstrap_is_scoped_to_the_workspace(sync, workspace, other_workspace):
    make_cards(other_workspace, 3)
    make_deck(other_workspace)
    mine = make_card(workspace)
    entries, _ = _bootstrap_all(sync, 1000)
    assert [e["entity_id"] for e in entries] == [str(workspace.pk), str(mine.pk)]


@pytest.mark.parametrize("cursor", ["", "not base64!", "eyJ4IjogMX0", 7, ["a"]])
def test_bad_bootstrap_cursor_is_400(sync, cursor):
    response = sync.post("bootstrap", {"cursor": cursor})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "REQUEST_INVALID"


def test_bootstrap_query_count_does_not_grow_with_the_page(api, workspace):
    sync = SyncClient(api, workspace.pk)
    make_cards(workspace, 2)
    make_deck(workspace)
    sync.bootstrap()
    with CaptureQueriesContext(connection) as small:
        sync.bootstrap(limit=1000)
    make_cards(workspace, 60)
    for _ in range(5):
        make_deck(workspace)
    with CaptureQueriesContext(connection) as large:
        data = sync.bootstrap(limit=1000)
    assert len(data["entries"]) == 1 + 62 + 6
    assert len(large) == len(small)


# ---------------------------------------------------------------- review history


def test_review_history_pages_by_sequence(sync, workspace, other_workspace):
    card = make_card(workspace)
    theirs = make_card(other_workspace)
    services.submit_review(other_workspace, theirs.pk, 2)
    sync.push_one(card_op(new_id(), at=ts(0)))
    events = [services.submit_review(workspace, card.pk, 2).review_event for _ in range(3)]
    pushed_id = new_id()
    sync.push_one(review_op(str(card.pk), at=ts(9999999), event_id=pushed_id, rating=0))
    first = sync.history(limit=3)
    assert [e["review_event_id"] for e in first["review_events"]] == [str(e.pk) for e in events]
    assert [e["sequence"] for e in first["review_events"]] == [1, 2, 3]
    assert (first["next_sequence"], first["has_more"]) == (3, True)
    second = sync.history(after=first["next_sequence"], limit=3)
    [pushed] = second["review_events"]
    assert (pushed["review_event_id"], pushed["rating"], pushed["review_grade"]) == (
        pushed_id,
        0,
        "again",
    )
    assert (second["next_sequence"], second["has_more"]) == (4, False)
    assert sync.history(after=4) == {"review_events": [], "next_sequence": 4, "has_more": False}


def test_review_history_keeps_events_of_deleted_cards(sync, workspace):
    card = make_card(workspace)
    services.submit_review(workspace, card.pk, 1)
    services.delete_cards(workspace, [card.pk])
    [event] = sync.history()["review_events"]
    assert event["card_id"] == str(card.pk)


def test_history_query_count_does_not_grow_with_the_page(api, workspace):
    sync = SyncClient(api, workspace.pk)
    card = make_card(workspace)
    services.submit_review(workspace, card.pk, 2)
    sync.history()
    with CaptureQueriesContext(connection) as small:
        sync.history()
    for _ in range(20):
        services.submit_review(workspace, card.pk, 2)
    with CaptureQueriesContext(connection) as large:
        assert len(sync.history()["review_events"]) == 21
    assert len(large) == len(small)
