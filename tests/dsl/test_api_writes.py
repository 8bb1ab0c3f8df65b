"""Writes through POST /v1/agent/sql and /v1/agent/sql/execute (dsl.md §2.2, §7)."""

from __future__ import annotations

import pytest
from django.test import override_settings

from flashcards.models import Card, ChangeLog, Deck
from tests.factories import make_card, make_cards, make_deck
from tests.support.envelope import EXECUTE_URL, check_envelope, post_sql

pytestmark = pytest.mark.django_db

WRITE_KEYS = [
    "statementType",
    "resource",
    "sql",
    "normalizedSql",
    "rows",
    "affectedCount",
    "rowsOmitted",
    "warnings",
]


def live_cards(workspace):
    return Card.objects.filter(workspace=workspace, deleted_at__isnull=True)


def test_insert_returns_ids_in_values_order(ok, workspace):
    data = ok(
        "INSERT INTO cards (front_text, back_text, tags, effort_level) VALUES "
        "('  uno ', 'one', ('Spanish', 'spanish', ' numbers '), 'medium'), ('dos', '', (), 'fast')"
    )
    assert list(data) == WRITE_KEYS
    assert data["statementType"] == "insert" and data["resource"] == "cards"
    assert data["affectedCount"] == 2 and data["rowsOmitted"] is False
    ids = [row["card_id"] for row in data["rows"]]
    assert [list(row) for row in data["rows"]] == [["card_id"], ["card_id"]]
    first, second = (Card.objects.get(pk=card_id) for card_id in ids)
    # The service's invariants apply: trimming, tag normalisation, defaults.
    assert (first.front_text, first.tags, first.effort_level) == (
        "uno",
        ["Spanish", "numbers"],
        "medium",
    )
    assert (second.front_text, second.back_text, second.card_type) == ("dos", "", "basic")
    assert ChangeLog.objects.filter(workspace=workspace, entity_id__in=ids).count() == 2


def test_insert_returning_star_and_canonical_tag_spelling(ok, workspace):
    make_card(workspace, tags=["English"])
    data = ok(
        "INSERT INTO cards (front_text, back_text, tags) VALUES ('q', 'a', ['english']) RETURNING *"
    )
    row = data["rows"][0]
    assert row["tags"] == ["English"]
    assert row["fsrs_card_state"] == "new" and row["due_at"] is None
    assert next(iter(row)) == "card_id" and "tag" not in row


def test_insert_deck(ok, workspace):
    data = ok(
        "INSERT INTO decks (name, effort_levels, tags) VALUES ('Grammar', '{medium,long}', ()) "
        "RETURNING deck_id, name, effort_levels"
    )
    row = data["rows"][0]
    assert row["name"] == "Grammar" and row["effort_levels"] == ["medium", "long"]
    assert Deck.objects.get(pk=row["deck_id"]).workspace_id == workspace.id


def test_update_returns_ids_and_returning_shows_the_row_after(ok, workspace):
    cards = make_cards(workspace, 3)
    data = ok(f"UPDATE cards SET back_text = 'new' WHERE card_id = '{cards[1].id}'")
    assert data["rows"] == [{"card_id": str(cards[1].id)}] and data["affectedCount"] == 1
    data = ok(
        "UPDATE cards SET effort_level = 'long', tags = ('x') WHERE front_text IN ('Front 0', "
        "'Front 2') RETURNING card_id, effort_level, tags, back_text"
    )
    assert data["affectedCount"] == 2
    assert {row["card_id"] for row in data["rows"]} == {str(cards[0].id), str(cards[2].id)}
    assert all(row["effort_level"] == "long" and row["tags"] == ["x"] for row in data["rows"])
    assert Card.objects.get(pk=cards[1].id).back_text == "new"


def test_update_matching_nothing_succeeds_with_zero(sql, workspace):
    make_cards(workspace, 1)
    response = sql("UPDATE cards SET back_text = 'x' WHERE reps > 10")
    body = check_envelope(response)
    assert body["data"]["affectedCount"] == 0 and body["data"]["rows"] == []
    assert "No row matched" in body["instructions"]


def test_update_more_than_100_rows_is_refused_before_writing(fails, workspace):
    make_cards(workspace, 100)
    make_cards(workspace, 1)
    error = fails("UPDATE cards SET back_text = 'changed' WHERE reps = 0")
    assert error["details"]["reason"] == "too_many_rows"
    assert not live_cards(workspace).filter(back_text="changed").exists()


def test_update_exactly_100_rows_is_allowed(ok, workspace):
    make_cards(workspace, 100)
    assert ok("UPDATE cards SET card_type = 'cloze' WHERE reps = 0")["affectedCount"] == 100


def test_delete_is_soft_and_returning_shows_the_row_before(ok, workspace):
    card, kept = make_cards(workspace, 2, tags=["t"])
    data = ok(f"DELETE FROM cards WHERE card_id = '{card.id}' RETURNING card_id, tags")
    assert data["rows"] == [{"card_id": str(card.id), "tags": ["t"]}]
    assert Card.objects.get(pk=card.id).deleted_at is not None
    assert ok("SELECT card_id FROM cards")["rows"] == [{"card_id": str(kept.id)}]
    assert ok("SELECT tag, COUNT(*) AS n FROM cards GROUP BY tag")["rows"] == [{"tag": "t", "n": 1}]
    assert ChangeLog.objects.filter(entity_id=str(card.id), action="delete").count() == 1
    again = ok(f"DELETE FROM cards WHERE card_id = '{card.id}'")
    assert again["affectedCount"] == 0 and again["rows"] == []


def test_delete_decks(ok, workspace):
    deck = make_deck(workspace, name="Old")
    data = ok("DELETE FROM decks WHERE name = 'Old'")
    assert data["rows"] == [] and data["affectedCount"] == 1
    assert Deck.objects.get(pk=deck.id).deleted_at is not None


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("INSERT INTO cards (front_text, back_text) VALUES ('   ', 'a')", "front_text"),
        ("INSERT INTO decks (name) VALUES ('')", "name"),
        ("UPDATE cards SET front_text = '' WHERE reps = 0", "front_text"),
    ],
)
def test_invariant_failures_are_invalid_value(fails, workspace, statement, message):
    make_cards(workspace, 1)
    error = fails(statement)
    assert error["code"] == "QUERY_INVALID_SQL"
    assert error["details"]["reason"] == "invalid_value" and message in error["message"]
    assert live_cards(workspace).count() == 1 and not Deck.objects.exists()


def test_too_long_card_type_is_invalid_value_not_a_crash(fails, workspace):
    error = fails(
        f"INSERT INTO cards (front_text, back_text, card_type) VALUES ('q', 'a', '{'x' * 150}')"
    )
    assert error["details"]["reason"] == "invalid_value"
    assert not Card.objects.exists()


def test_execute_endpoint_runs_writes(api, workspace):
    response = post_sql(
        api, "INSERT INTO cards (front_text, back_text) VALUES ('q', 'a')", url=EXECUTE_URL
    )
    assert check_envelope(response)["data"]["affectedCount"] == 1


@override_settings(FLASHCARDS_DSL={"MAX_WRITE_ENVELOPE_CHARS": 1500})
def test_oversized_write_drops_rows_but_succeeds(ok, workspace):
    values = ", ".join(f"('question {i}', '{'a' * 50}')" for i in range(20))
    data = ok(f"INSERT INTO cards (front_text, back_text) VALUES {values} RETURNING *")
    assert data["rows"] == [] and data["rowsOmitted"] is True and data["affectedCount"] == 20
    assert live_cards(workspace).count() == 20


def test_dry_run_write_changes_nothing(ok, workspace):
    card = make_card(workspace)
    changes = ChangeLog.objects.count()
    data = ok(f"UPDATE cards SET back_text = 'dry' WHERE card_id = '{card.id}'", dry_run=True)
    assert data["dryRun"] is True and data["affectedCount"] == 1
    assert Card.objects.get(pk=card.id).back_text == "Back 0"
    assert ChangeLog.objects.count() == changes
