"""The row serialisers give exactly the dialect's `SELECT *` rows: same keys, same order, same
value formats — so a card returned by an explicit command or an export matches the SQL answer."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.urls import reverse

from dsl.resources import get_resource
from flashcards import services
from flashcards.models import Card, Deck, ReviewEvent, Workspace
from flashcards.serializers import (
    CARD_COLUMNS,
    DECK_COLUMNS,
    REVIEW_EVENT_COLUMNS,
    WORKSPACE_COLUMNS,
    card_row,
    deck_row,
    review_event_row,
    workspace_row,
)
from tests.factories import make_card, make_deck

T0 = datetime(2026, 3, 5, 10, 0, 0, 123000, tzinfo=UTC)


@pytest.mark.parametrize(
    ("resource", "columns"),
    [
        ("cards", CARD_COLUMNS),
        ("decks", DECK_COLUMNS),
        ("review_events", REVIEW_EVENT_COLUMNS),
        ("workspace", WORKSPACE_COLUMNS),
    ],
)
def test_columns_follow_the_published_schema(resource, columns):
    assert columns == tuple(c.name for c in get_resource(resource).readable_columns)


def test_value_formats(workspace):
    card = make_card(workspace, tags=["Verbs"])
    result = services.submit_review(workspace, card.id, "easy", reviewed_at=T0)
    row = card_row(result.card)
    assert tuple(row) == CARD_COLUMNS
    assert row["card_id"] == str(card.id) and row["card_id"] == row["card_id"].lower()
    assert row["fsrs_last_reviewed_at"] == "2026-03-05T10:00:00.123Z"
    assert row["due_at"].endswith("Z") and len(row["due_at"]) == 24
    assert row["tags"] == ["Verbs"]
    assert isinstance(row["fsrs_stability"], float)
    event = review_event_row(result.review_event)
    assert (event["rating"], event["review_grade"]) == (3, "easy")
    assert event["reviewed_at_client"] == "2026-03-05T10:00:00.123Z"
    assert workspace_row(workspace)["learning_steps_minutes"] == [1, 10]


def test_rows_equal_the_dialects_select_star(api, workspace):
    card = make_card(workspace, tags=["Verbs", "spanish"], effort_level="long")
    services.submit_review(workspace, card.id, 2, reviewed_at=T0)
    make_deck(workspace, tags=["verbs"], effort_levels=["fast"])
    expected = {
        "cards": [card_row(c) for c in Card.objects.filter(workspace=workspace)],
        "decks": [deck_row(d) for d in Deck.objects.filter(workspace=workspace)],
        "review_events": [
            review_event_row(e) for e in ReviewEvent.objects.filter(workspace=workspace)
        ],
        "workspace": [workspace_row(Workspace.objects.get(pk=workspace.pk))],
    }
    for resource, rows in expected.items():
        response = api.post(
            reverse("agent-sql"), {"sql": f"SELECT * FROM {resource}"}, format="json"
        )
        assert response.status_code == 200, response.json()
        assert response.json()["data"]["rows"] == rows, resource
