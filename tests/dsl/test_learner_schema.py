"""A schema an agent reads at once (issue #22): DESCRIBE says what a deck matches and what "due"
means, and a guessed media column says that cards hold text only."""

from __future__ import annotations

import pytest


def _description(ok, resource, column):
    [row] = [r for r in ok(f"DESCRIBE {resource}")["rows"] if r["column_name"] == column]
    return row["description"]


def test_describe_states_the_deck_rule_and_due(ok):
    assert "any of these tags" in _description(ok, "decks", "tags")
    assert "() = any tag" in _description(ok, "decks", "tags")
    assert "any of these" in _description(ok, "decks", "effort_levels")
    due = _description(ok, "cards", "due_at")
    assert "null for a new card" in due and "OR due_at IS NULL" in due


@pytest.mark.parametrize("column", ["image", "attachment", "media", "audio"])
def test_a_media_column_says_cards_hold_text_only(fails, column):
    error = fails(f"SELECT card_id, {column} FROM cards")
    assert error["details"]["reason"] == "unknown_column"
    assert "text only" in error["details"]["hint"]
