"""Two tenants: no statement of one may see or change a row of the other (dsl.md §1, domain.md §6)."""

from __future__ import annotations

import pytest

from flashcards import services
from flashcards.models import Card, ChangeLog, Deck
from tests.factories import make_card, make_deck

pytestmark = pytest.mark.django_db

SHARED_TEXT = "shared words"


@pytest.fixture
def tenants(workspace, other_workspace):
    """Both workspaces hold look-alike cards, decks, tags and reviews."""
    mine = make_card(workspace, front_text=SHARED_TEXT, tags=["Common", "mine"])
    theirs = make_card(other_workspace, front_text=SHARED_TEXT, tags=["common", "theirs"])
    services.submit_review(workspace, mine.id, "good")
    services.submit_review(other_workspace, theirs.id, "again")
    make_deck(workspace, name="Deck", tags=["common"])
    other_deck = make_deck(other_workspace, name="Deck", tags=["common"])
    return mine, theirs, other_deck


READS = [
    "SELECT * FROM cards",
    "SELECT card_id FROM cards WHERE MATCH('shared')",
    "SELECT card_id, tag FROM cards",
    "SELECT card_id, t FROM cards UNNEST tags AS t",
    "SELECT tag, COUNT(*) AS n FROM cards GROUP BY tag",
    "SELECT COUNT(*) AS n, SUM(reps) AS reps FROM cards",
    "SELECT card_id FROM cards WHERE tags OVERLAP ('common', 'theirs')",
    "SELECT card_id FROM cards WHERE tags CONTAINS ('common')",
    "SELECT card_id FROM review_events",
    "SELECT review_grade, COUNT(*) AS n FROM review_events GROUP BY review_grade",
    "SELECT deck_id, name FROM decks WHERE tags = ('common')",
    "SELECT * FROM workspace",
]


@pytest.mark.parametrize("statement", READS)
def test_reads_see_only_the_workspace(ok, tenants, workspace, statement):
    _, theirs, other_deck = tenants
    data = ok(statement)
    text = str(data["rows"])
    assert str(theirs.id) not in text and str(other_deck.id) not in text
    assert "theirs" not in text and str(theirs.workspace_id) not in text


def test_aggregates_count_only_the_workspace(ok, tenants):
    assert ok("SELECT COUNT(*) AS n FROM cards")["rows"] == [{"n": 1}]
    assert ok("SELECT COUNT(*) AS n FROM review_events")["rows"] == [{"n": 1}]
    assert ok("SELECT tag, COUNT(*) AS n FROM cards GROUP BY tag")["rows"] == [
        {"tag": "Common", "n": 1},
        {"tag": "mine", "n": 1},
    ]


def test_reads_by_the_other_workspaces_ids_find_nothing(ok, tenants):
    _, theirs, other_deck = tenants
    assert ok(f"SELECT * FROM cards WHERE card_id = '{theirs.id}'")["rows"] == []
    assert ok(f"SELECT * FROM review_events WHERE card_id = '{theirs.id}'")["rows"] == []
    assert ok(f"SELECT * FROM decks WHERE deck_id = '{other_deck.id}'")["rows"] == []


def test_writes_by_the_other_workspaces_ids_change_nothing(ok, tenants, other_workspace):
    _, theirs, other_deck = tenants
    changes = ChangeLog.objects.filter(workspace=other_workspace).count()
    statements = [
        f"UPDATE cards SET back_text = 'hacked' WHERE card_id = '{theirs.id}'",
        f"UPDATE cards SET tags = ('x') WHERE card_id IN ('{theirs.id}') RETURNING *",
        f"DELETE FROM cards WHERE card_id = '{theirs.id}' RETURNING *",
        f"UPDATE decks SET name = 'hacked' WHERE deck_id = '{other_deck.id}'",
        f"DELETE FROM decks WHERE deck_id = '{other_deck.id}'",
    ]
    for statement in statements:
        data = ok(statement)
        assert data["affectedCount"] == 0 and data["rows"] == [], statement
    theirs.refresh_from_db()
    other_deck.refresh_from_db()
    assert (theirs.back_text, theirs.tags, theirs.deleted_at) == (
        "Back 0",
        ["common", "theirs"],
        None,
    )
    assert (other_deck.name, other_deck.deleted_at) == ("Deck", None)
    assert ChangeLog.objects.filter(workspace=other_workspace).count() == changes


def test_matching_writes_touch_only_the_workspace(ok, tenants, workspace, other_workspace):
    mine, theirs, _ = tenants
    data = ok(f"UPDATE cards SET back_text = 'mine only' WHERE front_text = '{SHARED_TEXT}'")
    assert data["rows"] == [{"card_id": str(mine.id)}]
    data = ok("DELETE FROM decks WHERE name = 'Deck'")
    assert data["affectedCount"] == 1
    assert Card.objects.get(pk=theirs.id).back_text == "Back 0"
    assert Deck.objects.filter(workspace=other_workspace, deleted_at__isnull=True).count() == 1


def test_insert_lands_in_the_selected_workspace(ok, workspace, other_workspace):
    data = ok("INSERT INTO cards (front_text, back_text, tags) VALUES ('q', 'a', ('common'))")
    created = Card.objects.get(pk=data["rows"][0]["card_id"])
    assert created.workspace_id == workspace.id
    assert not Card.objects.filter(workspace=other_workspace).exists()
