"""dsl.md §10: the headline examples, run as written through HTTP on seeded data.

The examples name the cards '123e4567-e89b-42d3-a456-426614174000' / '…4001'. Services generate
card ids, so the workspace is loaded with ``import_workspace`` — the documented way to load
fixture data with chosen ids (domain.md §7) — which goes through the same invariants and tags."""

from __future__ import annotations

import uuid

import pytest

from flashcards import services
from flashcards.models import Card, Workspace
from flashcards.services.transfer import import_workspace
from tests.support.envelope import check_envelope, post_sql

pytestmark = pytest.mark.django_db

CARD_A = "123e4567-e89b-42d3-a456-426614174000"
CARD_B = "123e4567-e89b-42d3-a456-426614174001"
EXAMPLES = [
    "SELECT * FROM cards WHERE tags OVERLAP ('english') AND effort_level IN ('fast', 'medium') ORDER BY updated_at DESC LIMIT 20 OFFSET 0",
    "UPDATE cards SET back_text = 'Updated answer' WHERE card_id = '123e4567-e89b-42d3-a456-426614174000'",
    "SELECT tag, COUNT(*) AS card_count FROM cards GROUP BY tag ORDER BY card_count DESC LIMIT 20 OFFSET 0",
    "SELECT rating, COUNT(*) AS reviews FROM review_events GROUP BY rating ORDER BY reviews DESC LIMIT 10 OFFSET 0",
    "SELECT review_grade, COUNT(*) AS total_reviews FROM review_events GROUP BY review_grade ORDER BY total_reviews DESC LIMIT 10 OFFSET 0",
    "SELECT * FROM cards WHERE tags OVERLAP ('english', 'grammar') AND effort_level IN ('fast', 'medium') ORDER BY updated_at DESC LIMIT 20 OFFSET 0",
    "INSERT INTO decks (name, effort_levels, tags) VALUES ('Grammar', ('medium', 'long'), ('english', 'grammar'))",
    "UPDATE cards SET back_text = 'Updated answer', tags = ('english', 'verbs') WHERE card_id = '123e4567-e89b-42d3-a456-426614174000'",
    "DELETE FROM cards WHERE card_id IN ('123e4567-e89b-42d3-a456-426614174000', '123e4567-e89b-42d3-a456-426614174001')",
]


def card(card_id: str, front: str, tags: list[str], effort: str, day: int) -> dict:
    stamp = f"2026-03-{day:02d}T10:00:00.000Z"
    return {
        "card_id": card_id,
        "front_text": front,
        "back_text": f"answer to {front}",
        "card_type": "basic",
        "tags": tags,
        "effort_level": effort,
        "metadata": {"version": 1, "source": {"kind": "fixture"}},
        "due_at": None,
        "created_at": stamp,
        "updated_at": stamp,
        "reps": 0,
        "lapses": 0,
        "fsrs_card_state": "new",
        "fsrs_step_index": None,
        "fsrs_scheduled_days": None,
        "fsrs_stability": None,
        "fsrs_difficulty": None,
        "fsrs_last_reviewed_at": None,
    }


def review(card_id: str, rating: int, minute: int) -> dict:
    stamp = f"2026-03-10T10:{minute:02d}:00.000Z"
    return {
        "review_event_id": str(uuid.uuid4()),
        "card_id": card_id,
        "client_event_id": f"event-{minute}",
        "rating": rating,
        "review_grade": ("again", "hard", "good", "easy")[rating],
        "reviewed_at_client": stamp,
        "reviewed_at_server": stamp,
    }


@pytest.fixture
def seeded(db, client_for):
    """Six cards (two with the examples' ids) and four review events, and a key on them."""
    other = [str(uuid.uuid4()) for _ in range(4)]
    document = {
        "format": 1,
        "workspace": {
            "workspace_id": str(uuid.uuid4()),
            "name": "Examples",
            "created_at": "2026-03-01T00:00:00.000Z",
            "algorithm": "fsrs-6",
            "desired_retention": 0.9,
            "learning_steps_minutes": [1, 10],
            "relearning_steps_minutes": [10],
            "maximum_interval_days": 36500,
            "enable_fuzz": True,
        },
        "cards": [
            card(CARD_A, "How are you?", ["English", "greetings"], "fast", 1),
            card(CARD_B, "Past of go", ["english", "Grammar"], "medium", 2),
            card(other[0], "Subjunctive", ["grammar"], "long", 3),
            card(other[1], "Hola", ["Spanish"], "fast", 4),
            card(other[2], "Idioms", ["English"], "long", 5),
            card(other[3], "Articles", ["Grammar"], "fast", 6),
        ],
        "decks": [],
        "review_events": [
            review(CARD_A, 2, 1),
            review(CARD_A, 2, 2),
            review(CARD_A, 0, 3),
            review(other[1], 3, 4),
        ],
    }
    report = import_workspace(document, owner_username="examples")
    workspace = Workspace.objects.get(pk=report.workspace_id)
    owner = workspace.members.get()
    _, plaintext = services.create_api_key(owner, "examples", workspace=workspace)
    client = client_for(plaintext)

    def run(statement: str) -> dict:
        response = post_sql(client, statement)
        body = check_envelope(response)
        assert response.status_code == 200 and body["ok"], body
        return body["data"]

    run.workspace = workspace
    run.other = other
    return run


def fronts(data: dict) -> list[str]:
    return [row["front_text"] for row in data["rows"]]


def test_all_examples_in_order(seeded):
    workspace = seeded.workspace
    data = seeded(EXAMPLES[0])
    assert fronts(data) == ["Past of go", "How are you?"]
    assert data["rows"][1]["card_id"] == CARD_A

    data = seeded(EXAMPLES[1])
    assert data["rows"] == [{"card_id": CARD_A}] and data["affectedCount"] == 1
    assert Card.objects.get(pk=CARD_A).back_text == "Updated answer"

    data = seeded(EXAMPLES[2])
    assert data["rows"] == [
        {"tag": "English", "card_count": 3},
        {"tag": "Grammar", "card_count": 3},
        {"tag": "greetings", "card_count": 1},
        {"tag": "Spanish", "card_count": 1},
    ]

    data = seeded(EXAMPLES[3])
    assert data["rows"] == [
        {"rating": 2, "reviews": 2},
        {"rating": 0, "reviews": 1},
        {"rating": 3, "reviews": 1},
    ]

    data = seeded(EXAMPLES[4])
    assert data["rows"] == [
        {"review_grade": "good", "total_reviews": 2},
        {"review_grade": "again", "total_reviews": 1},
        {"review_grade": "easy", "total_reviews": 1},
    ]

    # Example 1 touched CARD_A, so it is now the most recently updated.
    data = seeded(EXAMPLES[5])
    assert fronts(data) == ["How are you?", "Articles", "Past of go"]

    data = seeded(EXAMPLES[6])
    assert data["affectedCount"] == 1
    deck = seeded("SELECT name, effort_levels, tags FROM decks")["rows"]
    assert deck == [
        {"name": "Grammar", "effort_levels": ["medium", "long"], "tags": ["English", "Grammar"]}
    ]

    data = seeded(EXAMPLES[7])
    assert data["rows"] == [{"card_id": CARD_A}]
    updated = Card.objects.get(pk=CARD_A)
    assert (updated.back_text, updated.tags) == ("Updated answer", ["English", "verbs"])

    data = seeded(EXAMPLES[8])
    assert data["affectedCount"] == 2 and data["rows"] == []
    remaining = seeded("SELECT card_id FROM cards")["rows"]
    assert {row["card_id"] for row in remaining} == set(seeded.other)
    assert seeded("SELECT COUNT(*) AS n FROM review_events")["rows"] == [{"n": 4}]
    assert Card.objects.filter(workspace=workspace).count() == 6
