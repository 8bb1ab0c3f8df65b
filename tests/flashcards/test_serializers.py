"""The row serialisers give exactly the dialect's `SELECT *` rows: same keys, same order, same
value formats — so a card returned by an explicit command or an export matches the SQL answer."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from django.urls import reverse

from dsl.schema import get_resource
from flashcards import services
from flashcards.models import Card, Deck, ReviewEvent, Workspace
from flashcards.rows import (
    CARD_COLUMNS,
    DECK_COLUMNS,
    REVIEW_EVENT_COLUMNS,
    WORKSPACE_COLUMNS,
    card_row,
    deck_row,
    review_event_row,
    workspace_row,
)
from flashcards.schema import CARDS, RESOURCES, ColumnType
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


# What a published value of each type looks like (dsl.md §2.4).
_UUID_TEXT = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_TIMESTAMP_TEXT = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
_PUBLISHED: dict[ColumnType, Callable[[Any], bool]] = {
    ColumnType.UUID: lambda v: isinstance(v, str) and bool(_UUID_TEXT.match(v)),
    ColumnType.STRING: lambda v: isinstance(v, str),
    ColumnType.INTEGER: lambda v: type(v) is int,
    ColumnType.NUMBER: lambda v: type(v) is float,
    ColumnType.BOOLEAN: lambda v: type(v) is bool,
    ColumnType.DATETIME: lambda v: isinstance(v, str) and bool(_TIMESTAMP_TEXT.match(v)),
    ColumnType.JSON: lambda v: json.loads(json.dumps(v)) == v,
    ColumnType.STRING_ARRAY: lambda v: type(v) is list and all(isinstance(x, str) for x in v),
    ColumnType.INTEGER_ARRAY: lambda v: type(v) is list and all(type(x) is int for x in v),
}


def _factory_rows(workspace) -> dict[str, list[dict[str, Any]]]:
    """Rows of every resource as the database hands them back: a new card (its scheduling memory
    null), a reviewed one (set), a deck and a review event."""
    make_card(workspace)
    reviewed = make_card(workspace, tags=["Verbs", "spanish"], effort_level="medium")
    services.submit_review(workspace, reviewed.id, "good", reviewed_at=T0)
    make_deck(workspace, tags=["verbs"], effort_levels=["fast", "long"])
    return {
        "cards": [card_row(c) for c in Card.objects.filter(workspace=workspace)],
        "decks": [deck_row(d) for d in Deck.objects.filter(workspace=workspace)],
        "review_events": [
            review_event_row(e) for e in ReviewEvent.objects.filter(workspace=workspace)
        ],
        "workspace": [workspace_row(Workspace.objects.get(pk=workspace.pk))],
    }


def test_every_value_is_published_in_its_columns_type(workspace):
    schemas = {resource.name: resource for resource in RESOURCES}
    for resource, rows in _factory_rows(workspace).items():
        columns = schemas[resource].readable_columns
        assert rows, resource
        for row in rows:
            assert tuple(row) == tuple(c.name for c in columns), resource
            for column in columns:
                value = row[column.name]
                where = f"{resource}.{column.name} = {value!r}"
                if value is None:
                    assert column.nullable, where
                    continue
                assert _PUBLISHED[column.type](value), where
                if column.allowed_values is not None:
                    items = value if column.is_array else [value]
                    assert set(items) <= set(column.allowed_values), where


def test_nullable_columns_publish_null(workspace):
    row = card_row(make_card(workspace))
    nulls = {c.name for c in CARDS.readable_columns if row[c.name] is None}
    assert nulls == {
        "due_at",
        "fsrs_step_index",
        "fsrs_scheduled_days",
        "fsrs_stability",
        "fsrs_difficulty",
        "fsrs_last_reviewed_at",
    }
