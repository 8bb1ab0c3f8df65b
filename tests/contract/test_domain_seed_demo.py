"""`manage.py seed_demo`, one of the documented commands: a demo workspace holding every kind of
row, reachable with a key from `--print-key` or `create_api_key`, on which the dialect's headline
examples (dsl.md §10) run."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from tests.contract.domain_support import client_with, create_key, ok, rows, sql

pytestmark = pytest.mark.django_db

HEADLINE_EXAMPLES = [
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


def seed(*options: str) -> str:
    out = io.StringIO()
    call_command("seed_demo", *options, stdout=out)
    return out.getvalue()


def test_seed_demo_prints_a_working_key_and_is_idempotent():
    output = seed("--print-key")
    key = output.rstrip("\n").splitlines()[-1]
    client = client_with(key)
    me = ok(client.get("/v1/agent/me"))
    assert me["user"]["username"] == "demo"
    counts = rows(
        client, "SELECT fsrs_card_state, COUNT(*) AS n FROM cards GROUP BY fsrs_card_state"
    )
    states = {row["fsrs_card_state"] for row in counts}
    assert states == {"new", "learning", "review", "relearning"}
    total = sum(row["n"] for row in counts)
    assert rows(client, "SELECT COUNT(*) AS n FROM decks")[0]["n"] > 0
    assert rows(client, "SELECT COUNT(*) AS n FROM review_events")[0]["n"] > 0
    assert rows(client, "SELECT COUNT(*) AS n FROM cards WHERE due_at <= NOW()")[0]["n"] > 0
    seed()
    assert rows(client, "SELECT COUNT(*) AS n FROM cards") == [{"n": total}]
    # create_api_key for the demo user selects its only workspace: the demo one.
    _, second = create_key("demo")
    assert ok(client_with(second).get("/v1/agent/me"))["workspace"] == me["workspace"]


def test_the_headline_examples_run_on_the_demo_workspace():
    key = seed("--print-key").rstrip("\n").splitlines()[-1]
    client = client_with(key)
    results = [sql(client, statement) for statement in HEADLINE_EXAMPLES]
    assert results[0]["rows"], "the demo holds english cards"
    assert all("english" in [t.lower() for t in row["tags"]] for row in results[0]["rows"])
    assert results[2]["rows"][0]["card_count"] >= results[2]["rows"][-1]["card_count"]
    assert {row["rating"] for row in results[3]["rows"]} <= {0, 1, 2, 3}
    assert results[6]["affectedCount"] == 1
    assert results[1]["affectedCount"] == results[8]["affectedCount"] == 0


def test_demo_cards_are_created_before_their_history():
    """Issue #22: each card's created_at is before its first review, and spread over time."""
    from flashcards.models import Card, ReviewEvent

    client = client_with(seed("--print-key").rstrip("\n").splitlines()[-1])
    created = rows(client, "SELECT DATE(created_at) AS day, COUNT(*) AS n FROM cards GROUP BY day")
    assert len(created) > 3
    for card in Card.objects.all():
        first = ReviewEvent.objects.filter(card=card).order_by("reviewed_at_client").first()
        if first is not None:
            assert card.created_at < first.reviewed_at_client
        assert card.created_at <= card.updated_at
