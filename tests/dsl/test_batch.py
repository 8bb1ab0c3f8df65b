"""Batches (dsl.md §2.3, §7): atomic with any write, later statements see earlier ones, dry runs
leave nothing behind."""

from __future__ import annotations

import pytest

from flashcards.models import Card, ChangeLog, Deck, Tag
from tests.factories import make_cards

pytestmark = pytest.mark.django_db

BATCH_KEYS = [
    "statementType",
    "resource",
    "sql",
    "normalizedSql",
    "statements",
    "statementCount",
    "affectedCountTotal",
    "rowsOmitted",
    "warnings",
]


def test_batch_shape(ok, workspace):
    make_cards(workspace, 2)
    data = ok(
        "SELECT card_id FROM cards LIMIT 500 ;\n"
        "INSERT INTO decks (name) VALUES ('a'), ('b');  DESCRIBE decks;"
    )
    assert list(data) == BATCH_KEYS
    assert data["statementType"] == "batch" and data["resource"] is None
    assert data["normalizedSql"] == (
        "SELECT card_id FROM cards LIMIT 500; INSERT INTO decks (name) VALUES ('a'), ('b'); "
        "DESCRIBE decks"
    )
    assert data["statementCount"] == 3 and data["affectedCountTotal"] == 2
    assert data["rowsOmitted"] is False
    assert [s["statementType"] for s in data["statements"]] == ["select", "insert", "describe"]
    for entry in data["statements"]:
        assert "sql" not in entry and "normalizedSql" not in entry and "dryRun" not in entry
    assert len(data["warnings"]) == 1 and data["warnings"][0].startswith("Statement 1: ")
    assert data["statements"][0]["warnings"] == [data["warnings"][0][len("Statement 1: ") :]]


def test_later_statements_see_earlier_ones(ok, workspace):
    data = ok(
        "INSERT INTO cards (front_text, back_text, tags) VALUES ('q', 'a', ('fresh'));"
        "UPDATE cards SET back_text = 'changed' WHERE tags OVERLAP ('FRESH');"
        "SELECT back_text, tag FROM cards WHERE tag = 'fresh';"
        "DELETE FROM cards WHERE back_text = 'changed';"
        "SELECT COUNT(*) AS n FROM cards"
    )
    statements = data["statements"]
    assert statements[1]["affectedCount"] == 1
    assert statements[2]["rows"] == [{"back_text": "changed", "tag": "fresh"}]
    assert statements[3]["affectedCount"] == 1
    assert statements[4]["rows"] == [{"n": 0}]
    assert data["affectedCountTotal"] == 3


def test_a_failing_statement_rolls_back_earlier_writes(fails, workspace):
    make_cards(workspace, 1)
    changes = ChangeLog.objects.count()
    error = fails(
        "INSERT INTO cards (front_text, back_text, tags) VALUES ('new', 'a', ('brand-new'));"
        "INSERT INTO decks (name) VALUES ('deck');"
        "UPDATE cards SET front_text = '   ' WHERE reps = 0"
    )
    assert error["message"].startswith("Statement 3 failed: ")
    assert error["details"]["statementIndex"] == 3
    assert error["details"]["reason"] == "invalid_value"
    assert Card.objects.count() == 1 and not Deck.objects.exists()
    assert not Tag.objects.filter(key="brand-new").exists()
    assert ChangeLog.objects.count() == changes


def test_too_many_rows_in_a_later_statement_rolls_back(fails, workspace):
    make_cards(workspace, 100)
    error = fails(
        "INSERT INTO cards (front_text, back_text) VALUES ('one more', 'a');"
        "DELETE FROM cards WHERE reps = 0"
    )
    assert error["details"]["reason"] == "too_many_rows"
    assert error["details"]["statementIndex"] == 2
    assert Card.objects.filter(deleted_at__isnull=True).count() == 100


def test_dry_run_leaves_no_rows_and_no_change_log(ok, workspace):
    make_cards(workspace, 1)
    cards, changes, tags = Card.objects.count(), ChangeLog.objects.count(), Tag.objects.count()
    data = ok(
        "INSERT INTO cards (front_text, back_text, tags) VALUES ('q', 'a', ('dry'));"
        "SELECT front_text FROM cards WHERE tags OVERLAP ('dry');"
        "DELETE FROM cards WHERE front_text = 'Front 0'",
        dry_run=True,
    )
    assert data["dryRun"] is True and list(data)[-1] == "dryRun"
    assert data["statements"][1]["rows"] == [{"front_text": "q"}]
    assert data["affectedCountTotal"] == 2
    assert (Card.objects.count(), ChangeLog.objects.count(), Tag.objects.count()) == (
        cards,
        changes,
        tags,
    )
    assert Card.objects.get().deleted_at is None
