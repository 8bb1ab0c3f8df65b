"""domain.md §1-§2: entity defaults and invariants, observed through the dialect and the sync feed
whatever the write path (dialect, sync push, commands)."""

from __future__ import annotations

import unicodedata
import uuid
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from rest_framework.test import APIClient

from flashcards.models import Card
from tests.contract.domain_support import (
    agent,
    fail,
    insert_card,
    ok,
    review,
    rows,
    sql,
    workspace_row,
)

pytestmark = pytest.mark.django_db

NEW_STATE = {
    "due_at": None,
    "reps": 0,
    "lapses": 0,
    "fsrs_card_state": "new",
    "fsrs_step_index": None,
    "fsrs_scheduled_days": None,
    "fsrs_stability": None,
    "fsrs_difficulty": None,
    "fsrs_last_reviewed_at": None,
}


@pytest.fixture
def client() -> APIClient:
    return agent("keeper")


def card_row(client: APIClient, card_id: str) -> dict[str, Any]:
    [row] = rows(client, f"SELECT * FROM cards WHERE card_id = '{card_id}'")
    return row


def changes(client: APIClient, after: int = 0) -> list[dict[str, Any]]:
    workspace_id = workspace_row(client)["workspace_id"]
    response = client.post(
        f"/v1/workspaces/{workspace_id}/sync/pull", {"after_change_id": after}, format="json"
    )
    return ok(response)["changes"]


def last_change_id(client: APIClient) -> int:
    workspace_id = workspace_row(client)["workspace_id"]
    page = ok(
        client.post(f"/v1/workspaces/{workspace_id}/sync/bootstrap", {"limit": 1}, format="json")
    )
    return page["next_change_id"]


def push_card(client: APIClient, card_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    workspace_id = workspace_row(client)["workspace_id"]
    body = {
        "installation_id": "device",
        "platform": "web",
        "operations": [
            {
                "operation_id": str(uuid.uuid4()),
                "entity_type": "card",
                "entity_id": card_id,
                "action": "upsert",
                "client_updated_at": "2030-01-01T00:00:00Z",
                "payload": payload,
            }
        ],
    }
    response = client.post(f"/v1/workspaces/{workspace_id}/sync/push", body, format="json")
    return ok(response)["operations"][0]


def test_a_new_card_has_the_documented_defaults(client):
    card_id = insert_card(client, "Front", "Back")
    row = card_row(client, card_id)
    assert uuid.UUID(row["card_id"]).version == 4
    assert row["card_type"] == "basic"
    assert row["tags"] == []
    assert row["effort_level"] == "fast"
    assert row["metadata"]["version"] == 1 and isinstance(row["metadata"]["source"], dict)
    assert {k: row[k] for k in NEW_STATE} == NEW_STATE
    assert row["created_at"] == row["updated_at"]
    assert row["created_at"].endswith("Z") and len(row["created_at"]) == 24


def test_text_is_trimmed_front_must_not_be_empty_back_may_be(client):
    card_id = insert_card(client, "  \n front \t", "  back  ", card_type="   ")
    row = card_row(client, card_id)
    assert (row["front_text"], row["back_text"], row["card_type"]) == ("front", "back", "basic")
    empty_back = insert_card(client, "f", "   ")
    assert card_row(client, empty_back)["back_text"] == ""
    response = client.post(
        "/v1/agent/sql",
        {"sql": "INSERT INTO cards (front_text, back_text) VALUES ('   ', 'b')"},
        format="json",
    )
    error = fail(response, 400, "QUERY_INVALID_SQL")
    assert error["details"]["reason"] == "invalid_value"
    assert [r["card_id"] for r in rows(client, "SELECT card_id FROM cards")] != []
    assert len(rows(client, "SELECT card_id FROM cards")) == 2


def test_tags_are_normalised_and_their_first_spelling_is_kept(client):
    decomposed = unicodedata.normalize("NFD", "café")
    card_id = insert_card(client)
    sql(
        client,
        f"UPDATE cards SET tags = (' English ', '', 'english', '{decomposed}', 'CAFÉ', 'Verbs') "
        f"WHERE card_id = '{card_id}'",
    )
    assert card_row(client, card_id)["tags"] == [
        "English",
        unicodedata.normalize("NFC", "café"),
        "Verbs",
    ]
    # The workspace's first spelling wins for later writes, also for decks and sync pushes.
    other = insert_card(client, "other")
    sql(client, f"UPDATE cards SET tags = ('ENGLISH', 'verbs') WHERE card_id = '{other}'")
    assert card_row(client, other)["tags"] == ["English", "Verbs"]
    deck = sql(client, "INSERT INTO decks (name, tags) VALUES ('d', ('english'))")["rows"][0]
    assert rows(client, f"SELECT tags FROM decks WHERE deck_id = '{deck['deck_id']}'") == [
        {"tags": ["English"]}
    ]
    pushed = str(uuid.uuid4())
    assert (
        push_card(client, pushed, {"front_text": "p", "back_text": "", "tags": ["eNgLiSh"]})[
            "status"
        ]
        == "applied"
    )
    assert card_row(client, pushed)["tags"] == ["English"]
    # Comparisons ignore case.
    found = rows(
        client, "SELECT front_text FROM cards WHERE tags OVERLAP ('ENGLISH') ORDER BY front_text"
    )
    assert [r["front_text"] for r in found] == ["Hola", "other", "p"]


def test_deleted_rows_are_invisible_except_to_sync_and_their_reviews_stay(client):
    card_id = insert_card(client)
    ok(review(client, card_id=card_id, rating=2))
    sql(client, f"DELETE FROM cards WHERE card_id = '{card_id}'")
    assert rows(client, f"SELECT * FROM cards WHERE card_id = '{card_id}'") == []
    assert rows(client, "SELECT COUNT(*) AS n FROM cards") == [{"n": 0}]
    assert (
        sql(client, f"UPDATE cards SET back_text = 'x' WHERE card_id = '{card_id}'")[
            "affectedCount"
        ]
        == 0
    )
    [event] = rows(client, "SELECT card_id FROM review_events")
    assert event["card_id"] == card_id
    [tombstone] = [c for c in changes(client) if c["entity_id"] == card_id]
    assert tombstone["payload"]["deleted_at"] is not None


def test_every_accepted_write_stamps_updated_at_and_records_one_change(client):
    start = last_change_id(client)
    card_id = insert_card(client)
    created = card_row(client, card_id)
    after_insert = last_change_id(client)
    assert after_insert == start + 1
    sql(client, f"UPDATE cards SET back_text = 'changed' WHERE card_id = '{card_id}'")
    updated = card_row(client, card_id)
    assert updated["updated_at"] >= created["updated_at"]
    assert updated["created_at"] == created["created_at"]
    assert last_change_id(client) == after_insert + 1
    ok(client.post("/v1/agent/workspace/scheduler-settings", {"enable_fuzz": False}, format="json"))
    assert last_change_id(client) == after_insert + 2
    # A review changes the card and appends an event: two entries.
    ok(review(client, card_id=card_id, rating=2))
    assert last_change_id(client) == after_insert + 4
    # A rejected write records nothing.
    client.post(
        "/v1/agent/sql",
        {"sql": f"UPDATE cards SET front_text = '' WHERE card_id = '{card_id}'"},
        format="json",
    )
    client.post("/v1/agent/reviews", {"card_id": card_id, "rating": 9}, format="json")
    assert last_change_id(client) == after_insert + 4
    numbers = [c["change_id"] for c in changes(client)]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)


def test_change_numbers_are_per_workspace(client):
    other = agent("other-keeper")
    insert_card(other)
    insert_card(other)
    assert last_change_id(client) == 0
    insert_card(client)
    assert last_change_id(client) == 1


def test_a_dry_run_records_no_change(client):
    start = last_change_id(client)
    response = client.post(
        "/v1/agent/sql",
        {"sql": "INSERT INTO cards (front_text, back_text) VALUES ('a', 'b')", "dry_run": True},
        format="json",
    )
    assert ok(response)["dryRun"] is True
    assert last_change_id(client) == start
    assert rows(client, "SELECT COUNT(*) AS n FROM cards") == [{"n": 0}]


@pytest.mark.parametrize(
    "payload",
    [
        {"fsrs_card_state": "review"},
        {"due_at": "2026-01-01T00:00:00Z"},
        {
            "fsrs_card_state": "learning",
            "due_at": "2026-01-01T00:00:00Z",
            "fsrs_stability": 1.0,
            "fsrs_difficulty": 5.0,
            "fsrs_last_reviewed_at": "2026-01-01T00:00:00Z",
            "fsrs_scheduled_days": 0,
        },
        {
            "fsrs_card_state": "review",
            "due_at": "2026-01-01T00:00:00Z",
            "fsrs_step_index": 0,
            "fsrs_stability": 1.0,
            "fsrs_difficulty": 5.0,
            "fsrs_last_reviewed_at": "2026-01-01T00:00:00Z",
            "fsrs_scheduled_days": 1,
        },
        {"reps": -1},
        {"lapses": -1},
    ],
)
def test_inconsistent_fsrs_state_is_refused(client, payload):
    card_id = str(uuid.uuid4())
    result = push_card(client, card_id, {"front_text": "f", "back_text": "b", **payload})
    assert result["status"] == "rejected" and result["error"]
    assert rows(client, "SELECT COUNT(*) AS n FROM cards") == [{"n": 0}]


def test_consistent_fsrs_state_from_a_client_is_kept(client):
    card_id = str(uuid.uuid4())
    state = {
        "fsrs_card_state": "review",
        "due_at": "2026-01-10T00:00:00.000Z",
        "reps": 3,
        "lapses": 1,
        "fsrs_step_index": None,
        "fsrs_stability": 4.5,
        "fsrs_difficulty": 5.25,
        "fsrs_last_reviewed_at": "2026-01-01T00:00:00.000Z",
        "fsrs_scheduled_days": 9,
    }
    result = push_card(client, card_id, {"front_text": "f", "back_text": "b", **state})
    assert result["status"] == "applied"
    row = card_row(client, card_id)
    assert {k: row[k] for k in state} == state


def test_the_database_refuses_an_inconsistent_state_too(client):
    card_id = insert_card(client)
    with pytest.raises(IntegrityError), transaction.atomic():
        Card.objects.filter(pk=card_id).update(fsrs_card_state="review")
    with pytest.raises(IntegrityError), transaction.atomic():
        Card.objects.filter(pk=card_id).update(reps=-1)
    assert card_row(client, card_id)["fsrs_card_state"] == "new"


def test_a_card_id_is_global(client):
    card_id = insert_card(client)
    stranger = agent("stranger")
    result = push_card(stranger, card_id, {"front_text": "steal", "back_text": ""})
    assert result["status"] == "rejected"
    assert card_row(client, card_id)["front_text"] == "Hola"
    assert rows(stranger, "SELECT COUNT(*) AS n FROM cards") == [{"n": 0}]


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO cards (front_text, back_text, effort_level) VALUES ('a', 'b', 'huge')",
        "INSERT INTO decks (name) VALUES ('   ')",
        "INSERT INTO decks (name, effort_levels) VALUES ('d', ('fast', 'slow'))",
        "INSERT INTO review_events (card_id, rating) VALUES ('00000000-0000-4000-8000-000000000000', 1)",
        "UPDATE workspace SET name = 'x' WHERE name = 'Personal'",
    ],
)
def test_invalid_writes_through_the_dialect_change_nothing(client, statement):
    start = last_change_id(client)
    response = client.post("/v1/agent/sql", {"sql": statement}, format="json")
    fail(response, 400, "QUERY_INVALID_SQL")
    assert last_change_id(client) == start


def test_workspace_defaults_hold_for_every_creator():
    from flashcards.models import Workspace
    from flashcards.services import now_ms

    at = now_ms()
    workspace = Workspace.objects.create(name="raw", created_at=at, updated_at=at)
    workspace.refresh_from_db()
    assert (
        workspace.algorithm,
        workspace.desired_retention,
        workspace.learning_steps_minutes,
        workspace.relearning_steps_minutes,
        workspace.maximum_interval_days,
        workspace.enable_fuzz,
    ) == ("fsrs-6", 0.9, [1, 10], [10], 36500, True)


def test_an_admin_edit_is_visible_to_the_next_pull(client):
    from django.contrib.auth import get_user_model
    from django.test import Client

    workspace_id = workspace_row(client)["workspace_id"]
    start = last_change_id(client)
    staff = Client()
    staff.force_login(
        get_user_model().objects.create_superuser("root", "root@example.com", "x-secret-pass")
    )
    response = staff.post(
        "/admin/flashcards/card/add/",
        {
            "workspace": workspace_id,
            "front_text": " from the admin ",
            "back_text": "b",
            "card_type": "",
            "tags_text": "Admin, admin",
            "effort_level": "long",
        },
    )
    assert response.status_code == 302, response.content[:2000]
    [change] = changes(client, start)
    assert change["entity_type"] == "card"
    payload = change["payload"]
    assert (
        payload["front_text"],
        payload["card_type"],
        payload["tags"],
        payload["effort_level"],
    ) == (
        "from the admin",
        "basic",
        ["Admin"],
        "long",
    )
    assert card_row(client, change["entity_id"])["front_text"] == "from the admin"
