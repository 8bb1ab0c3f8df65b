"""domain.md §5: the sync API of offline-first clients, over HTTP with an API key, and its
agreement with the dialect and the explicit commands."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.contract.domain_support import (
    CARD_COLUMNS,
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

T1 = "2026-03-05T10:00:00.000Z"
T2 = "2026-03-05T11:00:00.000Z"
T3 = "2026-03-05T12:00:00.000Z"


class Device:
    """One installation of a client app syncing one workspace."""

    def __init__(self, client: APIClient, workspace_id: str, installation: str = "phone-1"):
        self.client = client
        self.base = f"/v1/workspaces/{workspace_id}/sync"
        self.installation = installation
        self.counter = 0

    def push_raw(self, operations: list[dict[str, Any]]) -> Any:
        body = {"installation_id": self.installation, "platform": "ios", "operations": operations}
        return self.client.post(f"{self.base}/push", body, format="json")

    def push(self, *operations: dict[str, Any]) -> list[dict[str, Any]]:
        results = ok(self.push_raw(list(operations)))["operations"]
        assert [r["operation_id"] for r in results] == [op["operation_id"] for op in operations]
        return results

    def op(
        self,
        entity_type: str,
        entity_id: str,
        payload: dict[str, Any],
        at: str = T1,
        operation_id: str | None = None,
    ) -> dict[str, Any]:
        self.counter += 1
        return {
            "operation_id": operation_id or f"{self.installation}-op-{self.counter}",
            "entity_type": entity_type,
            "entity_id": entity_id,
            "action": "append" if entity_type == "review_event" else "upsert",
            "client_updated_at": at,
            "payload": payload,
        }

    def pull(self, after: int = 0, limit: int | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"after_change_id": after}
        if limit is not None:
            body["limit"] = limit
        return ok(self.client.post(f"{self.base}/pull", body, format="json"))

    def bootstrap(self, cursor: str | None = None, limit: int | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"cursor": cursor}
        if limit is not None:
            body["limit"] = limit
        return ok(self.client.post(f"{self.base}/bootstrap", body, format="json"))

    def history(self, after: int = 0, limit: int | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"after_sequence": after}
        if limit is not None:
            body["limit"] = limit
        return ok(self.client.post(f"{self.base}/review-history/pull", body, format="json"))


@pytest.fixture
def client() -> APIClient:
    return agent("syncer")


@pytest.fixture
def workspace_id(client) -> str:
    return workspace_row(client)["workspace_id"]


@pytest.fixture
def phone(client, workspace_id) -> Device:
    return Device(client, workspace_id, "phone-1")


@pytest.fixture
def laptop(client, workspace_id) -> Device:
    return Device(client, workspace_id, "laptop-1")


def card(front: str = "Hola", back: str = "Hello", **extra: Any) -> dict[str, Any]:
    return {"front_text": front, "back_text": back, **extra}


def new_id() -> str:
    return str(uuid.uuid4())


def latest(device: Device) -> dict[tuple[str, str], dict[str, Any]]:
    return {(c["entity_type"], c["entity_id"]): c for c in device.pull()["changes"]}


# --- push -----------------------------------------------------------------------------------------


def test_push_creates_a_card_with_the_client_id_visible_to_the_dialect(client, phone):
    card_id = new_id()
    [result] = phone.push(phone.op("card", card_id, card(" Hola ", tags=["Spanish", "spanish "])))
    assert set(result) >= {"operation_id", "status", "resulting_change_id", "error"}
    assert result["status"] == "applied"
    assert isinstance(result["resulting_change_id"], int) and result["error"] is None
    [row] = rows(client, f"SELECT * FROM cards WHERE card_id = '{card_id}'")
    assert (row["front_text"], row["tags"], row["fsrs_card_state"]) == ("Hola", ["Spanish"], "new")


def test_operations_apply_in_order_and_report_one_result_each(phone, client):
    card_id = new_id()
    results = phone.push(
        phone.op("card", card_id, card("v1"), T1),
        phone.op("card", card_id, card("v2"), T2),
        phone.op("card", card_id, card(""), T3),
        phone.op("deck", new_id(), {"name": "Spanish", "tags": ["spanish"]}, T1),
    )
    assert [r["status"] for r in results] == ["applied", "applied", "rejected", "applied"]
    assert results[2]["error"] and results[2]["resulting_change_id"] is None
    assert results[0]["resulting_change_id"] < results[1]["resulting_change_id"]
    assert rows(client, "SELECT front_text FROM cards") == [{"front_text": "v2"}]
    assert rows(client, "SELECT name FROM decks") == [{"name": "Spanish"}]


def test_a_repeated_operation_is_duplicate_with_the_first_change_id(phone, client):
    card_id = new_id()
    operation = phone.op("card", card_id, card("first"), T1, operation_id="op-A")
    [first] = phone.push(operation)
    [again] = phone.push({**operation, "payload": card("changed"), "client_updated_at": T3})
    assert again["status"] == "duplicate"
    assert again["resulting_change_id"] == first["resulting_change_id"]
    assert rows(client, "SELECT front_text FROM cards") == [{"front_text": "first"}]


def test_the_same_operation_id_from_another_installation_is_not_a_duplicate(phone, laptop):
    [a] = phone.push(phone.op("card", new_id(), card("a"), T1, operation_id="op-1"))
    [b] = laptop.push(laptop.op("card", new_id(), card("b"), T1, operation_id="op-1"))
    assert (a["status"], b["status"]) == ("applied", "applied")


def test_last_writer_wins_by_client_time_then_replica_then_operation(phone, laptop, client):
    card_id = new_id()
    phone.push(phone.op("card", card_id, card("phone at T2"), T2, operation_id="op-5"))
    # Older client time loses, whatever the ids.
    [older] = laptop.push(laptop.op("card", card_id, card("laptop at T1"), T1, operation_id="z"))
    assert older["status"] == "ignored" and older["resulting_change_id"] is None
    # Same time, same replica: only a greater operation id wins.
    [lower] = phone.push(phone.op("card", card_id, card("op-4"), T2, operation_id="op-4"))
    [higher] = phone.push(phone.op("card", card_id, card("op-6"), T2, operation_id="op-6"))
    assert (lower["status"], higher["status"]) == ("ignored", "applied")
    # A newer client time wins.
    [newer] = laptop.push(laptop.op("card", card_id, card("laptop at T3"), T3))
    assert newer["status"] == "applied"
    assert rows(client, "SELECT front_text FROM cards") == [{"front_text": "laptop at T3"}]


def test_a_tie_on_client_time_is_broken_by_replica_id(phone, laptop, client):
    card_id = new_id()
    [first] = phone.push(phone.op("card", card_id, card("phone"), T1, operation_id="same"))
    [second] = laptop.push(laptop.op("card", card_id, card("laptop"), T1, operation_id="same"))
    assert first["status"] == "applied"
    # Exactly one of the two replicas compares greater; the stored row is the winner's.
    [row] = rows(client, "SELECT front_text FROM cards")
    assert row["front_text"] == ("laptop" if second["status"] == "applied" else "phone")
    assert second["status"] in {"applied", "ignored"}


def test_a_server_edit_beats_an_older_offline_edit_and_loses_to_a_newer_one(phone, client):
    card_id = new_id()
    phone.push(phone.op("card", card_id, card("offline"), "2020-01-01T00:00:00Z"))
    sql(client, f"UPDATE cards SET back_text = 'server' WHERE card_id = '{card_id}'")
    [stale] = phone.push(
        phone.op("card", card_id, card("offline", "stale"), "2020-01-02T00:00:00Z")
    )
    assert stale["status"] == "ignored"
    [fresh] = phone.push(
        phone.op("card", card_id, card("offline", "fresh"), "2999-01-01T00:00:00Z")
    )
    assert fresh["status"] == "applied"
    assert rows(client, "SELECT back_text FROM cards") == [{"back_text": "fresh"}]


def test_a_delete_is_a_snapshot_with_deleted_at_and_pull_returns_the_tombstone(phone, client):
    card_id = new_id()
    phone.push(phone.op("card", card_id, card(), T1))
    ok(review(client, card_id=card_id, rating=2))
    [deleted] = phone.push(phone.op("card", card_id, {"deleted_at": T3}, "2999-01-01T00:00:00Z"))
    assert deleted["status"] == "applied"
    assert rows(client, "SELECT COUNT(*) AS n FROM cards") == [{"n": 0}]
    # Review events of the deleted card stay.
    assert rows(client, "SELECT COUNT(*) AS n FROM review_events") == [{"n": 1}]
    tombstone = latest(phone)["card", card_id]
    assert tombstone["payload"]["deleted_at"] == T3
    assert tombstone["payload"]["front_text"] == "Hola"


def test_review_events_append_and_deduplicate_by_id_and_by_client_event_id(phone, laptop, client):
    card_id = new_id()
    phone.push(phone.op("card", card_id, card(), T1))
    event_id = new_id()
    payload = {"card_id": card_id, "client_event_id": "ev-1", "rating": 2, "reviewed_at_client": T1}
    [first] = phone.push(phone.op("review_event", event_id, payload, T1))
    [same_id] = phone.push(phone.op("review_event", event_id, {**payload, "client_event_id": "x"}))
    [same_client_event] = phone.push(phone.op("review_event", new_id(), payload))
    assert first["status"] == "applied"
    assert same_id["status"] == same_client_event["status"] == "duplicate"
    assert same_id["resulting_change_id"] == first["resulting_change_id"]
    # The same client_event_id from another installation is another review.
    [other] = laptop.push(laptop.op("review_event", new_id(), payload))
    assert other["status"] == "applied"
    events = rows(client, "SELECT review_event_id, rating, review_grade FROM review_events")
    assert len(events) == 2
    assert {"review_event_id": event_id, "rating": 2, "review_grade": "good"} in events


def test_the_replica_is_never_taken_from_the_client(phone):
    [result] = phone.push(phone.op("card", new_id(), card(replica_id="server"), T1))
    assert result["status"] == "rejected"


def test_an_invalid_card_is_rejected_alone_with_an_error(phone, client):
    results = phone.push(
        phone.op("card", new_id(), card("  "), T1),
        phone.op("card", new_id(), card(effort_level="huge"), T1),
        phone.op("card", "not-a-uuid", card(), T1),
        phone.op("card", new_id(), {**card(), "fsrs_card_state": "review"}, T1),
        phone.op("card", new_id(), card("good"), T1),
    )
    assert [r["status"] for r in results] == ["rejected"] * 4 + ["applied"]
    assert all(r["error"] for r in results[:4])
    assert rows(client, "SELECT front_text FROM cards") == [{"front_text": "good"}]


def test_an_id_of_another_workspace_is_rejected(phone):
    foreign = insert_card(agent("elsewhere"))
    [result] = phone.push(phone.op("card", foreign, card(), T1))
    assert result["status"] == "rejected"
    assert rows(agent("elsewhere"), "SELECT front_text FROM cards") == [{"front_text": "Hola"}]


def test_settings_snapshots_follow_last_writer_wins(phone, workspace_id, client):
    [applied] = phone.push(
        phone.op("workspace_scheduler_settings", workspace_id, {"desired_retention": 0.8}, T2)
    )
    [older] = phone.push(
        phone.op("workspace_scheduler_settings", workspace_id, {"desired_retention": 0.7}, T1)
    )
    [bad] = phone.push(
        phone.op("workspace_scheduler_settings", workspace_id, {"desired_retention": 2}, T3)
    )
    assert [applied["status"], older["status"], bad["status"]] == ["applied", "ignored", "rejected"]
    assert workspace_row(client)["desired_retention"] == 0.8


def test_settings_snapshots_carry_the_learning_day(phone, workspace_id, client):
    """Issue #22: time_zone and day_starts_at_hour sync like every other setting."""
    [bad] = phone.push(
        phone.op("workspace_scheduler_settings", workspace_id, {"time_zone": "Atlantis"}, T1)
    )
    assert bad["status"] == "rejected"
    [applied] = phone.push(
        phone.op(
            "workspace_scheduler_settings",
            workspace_id,
            {"time_zone": "Europe/Madrid", "day_starts_at_hour": 4},
            T2,
        )
    )
    assert applied["status"] == "applied"
    row = workspace_row(client)
    assert (row["time_zone"], row["day_starts_at_hour"]) == ("Europe/Madrid", 4)
    assert workspace_row(agent("elsewhere"))["time_zone"] == "UTC"


@pytest.mark.parametrize(
    "body",
    [
        {"platform": "ios", "operations": []},
        {"installation_id": "p", "operations": []},
        {"installation_id": "p", "platform": "ios"},
        {"installation_id": "p", "platform": "ios", "operations": {}},
        {"installation_id": "", "platform": "ios", "operations": []},
        {"installation_id": "p", "platform": "ios", "operations": ["x"]},
        {"installation_id": "p", "platform": "ios", "operations": [{"entity_type": "card"}]},
    ],
)
def test_a_malformed_push_body_is_request_invalid(client, workspace_id, body):
    response = client.post(f"/v1/workspaces/{workspace_id}/sync/push", body, format="json")
    fail(response, 400, "REQUEST_INVALID")


def test_a_push_with_a_bad_operation_id_applies_nothing(phone, client):
    good = phone.op("card", new_id(), card(), T1)
    response = phone.push_raw(
        [good, {**phone.op("card", new_id(), card(), T1), "operation_id": ""}]
    )
    fail(response, 400, "REQUEST_INVALID")
    assert rows(client, "SELECT COUNT(*) AS n FROM cards") == [{"n": 0}]


def test_an_unknown_entity_type_or_wrong_action_is_rejected(phone):
    results = phone.push(
        {**phone.op("card", new_id(), card(), T1), "entity_type": "note"},
        {**phone.op("card", new_id(), card(), T1), "action": "append"},
        {**phone.op("review_event", new_id(), {}, T1), "action": "upsert"},
        {**phone.op("card", new_id(), card(), T1), "client_updated_at": "soon"},
    )
    assert [r["status"] for r in results] == ["rejected"] * 4


# --- pull -------------------------------------------------------------------------------------------


def test_pull_returns_the_latest_state_of_each_changed_entity_once(phone, client):
    card_id = insert_card(client, "v1")
    sql(client, f"UPDATE cards SET front_text = 'v2' WHERE card_id = '{card_id}'")
    deck = sql(client, "INSERT INTO decks (name) VALUES ('D')")["rows"][0]["deck_id"]
    page = phone.pull()
    assert set(page) == {"changes", "next_change_id", "has_more"}
    assert page["has_more"] is False
    keys = [(c["entity_type"], c["entity_id"]) for c in page["changes"]]
    assert keys == [("card", card_id), ("deck", deck)]
    change = page["changes"][0]
    assert set(change) >= {"change_id", "entity_type", "entity_id", "payload"}
    assert change["payload"]["front_text"] == "v2"
    assert list(change["payload"])[: len(CARD_COLUMNS)] == CARD_COLUMNS
    assert change["payload"]["deleted_at"] is None
    assert page["next_change_id"] == page["changes"][-1]["change_id"]
    # Nothing new: the cursor stays.
    again = phone.pull(page["next_change_id"])
    assert again == {"changes": [], "next_change_id": page["next_change_id"], "has_more": False}


def test_pull_pages_with_limit_and_cursor(phone, client):
    ids = [insert_card(client, f"c{i}") for i in range(5)]
    seen: list[str] = []
    cursor = 0
    while True:
        page = phone.pull(cursor, limit=2)
        assert len(page["changes"]) <= 2
        seen += [c["entity_id"] for c in page["changes"]]
        cursor = page["next_change_id"]
        if not page["has_more"]:
            break
    assert seen == ids


def test_every_write_path_is_visible_to_the_next_pull(phone, client, workspace_id):
    cursor = phone.pull()["next_change_id"]
    card_id = insert_card(client)
    ok(review(client, card_id=card_id, rating=2))
    ok(client.post("/v1/agent/workspace/scheduler-settings", {"enable_fuzz": False}, format="json"))
    sql(client, f"DELETE FROM cards WHERE card_id = '{card_id}'")
    changes = latest_after(phone, cursor)
    assert changes["card", card_id]["payload"]["deleted_at"] is not None
    assert changes["card", card_id]["payload"]["reps"] == 1
    assert changes["workspace_scheduler_settings", workspace_id]["payload"]["enable_fuzz"] is False
    assert any(t == "review_event" for t, _ in changes)


def latest_after(device: Device, cursor: int) -> dict[tuple[str, str], dict[str, Any]]:
    return {(c["entity_type"], c["entity_id"]): c for c in device.pull(cursor)["changes"]}


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("pull", {"limit": 501}),
        ("pull", {"limit": 0}),
        ("pull", {"after_change_id": -1}),
        ("pull", {"after_change_id": "x"}),
        ("bootstrap", {"limit": 1001}),
        ("bootstrap", {"limit": 0}),
        ("bootstrap", {"cursor": "garbage"}),
        ("bootstrap", {"cursor": 5}),
        ("review-history/pull", {"limit": 501}),
        ("review-history/pull", {"after_sequence": -5}),
    ],
)
def test_feed_limits_and_cursors_are_validated(client, workspace_id, route, body):
    response = client.post(f"/v1/workspaces/{workspace_id}/sync/{route}", body, format="json")
    fail(response, 400, "REQUEST_INVALID")


@pytest.mark.parametrize(
    ("route", "limit"), [("pull", 500), ("bootstrap", 1000), ("review-history/pull", 500)]
)
def test_feed_limits_at_the_maximum_are_accepted(client, workspace_id, route, limit):
    response = client.post(
        f"/v1/workspaces/{workspace_id}/sync/{route}", {"limit": limit}, format="json"
    )
    ok(response)


# --- bootstrap and review history -------------------------------------------------------------------


def test_bootstrap_returns_every_live_and_tombstoned_entity_then_pull_continues(
    phone, client, workspace_id
):
    live = insert_card(client, "live")
    gone = insert_card(client, "gone")
    sql(client, f"DELETE FROM cards WHERE card_id = '{gone}'")
    deck = sql(client, "INSERT INTO decks (name) VALUES ('D')")["rows"][0]["deck_id"]
    entries: list[dict[str, Any]] = []
    page = phone.bootstrap(limit=2)
    entries += page["entries"]
    start_change = page["next_change_id"]
    while page["has_more"]:
        page = phone.bootstrap(page["next_cursor"], limit=2)
        assert page["next_change_id"] == start_change
        entries += page["entries"]
    assert page["next_cursor"] is None
    keys = {(e["entity_type"], e["entity_id"]) for e in entries}
    assert keys == {
        ("workspace_scheduler_settings", workspace_id),
        ("card", live),
        ("card", gone),
        ("deck", deck),
    }
    payloads = {e["entity_id"]: e["payload"] for e in entries}
    assert payloads[gone]["deleted_at"] is not None and payloads[live]["deleted_at"] is None
    # Anything written after the bootstrap started arrives through pull from next_change_id.
    later = insert_card(client, "later")
    assert [c["entity_id"] for c in phone.pull(start_change)["changes"]] == [later]


def test_review_history_returns_events_of_every_path_in_sequence(phone, client):
    card_id = insert_card(client)
    ok(review(client, card_id=card_id, rating=2, reviewed_at=T1))
    phone.push(
        phone.op(
            "review_event",
            new_id(),
            {
                "card_id": card_id,
                "client_event_id": "p-1",
                "rating": "easy",
                "reviewed_at_client": T2,
            },
        )
    )
    sql(client, f"DELETE FROM cards WHERE card_id = '{card_id}'")
    page = phone.history()
    assert [e["rating"] for e in page["review_events"]] == [2, 3]
    assert [e["review_grade"] for e in page["review_events"]] == ["good", "easy"]
    sequences = [e["sequence"] for e in page["review_events"]]
    assert sequences == sorted(sequences) and len(set(sequences)) == 2
    assert page["next_sequence"] == sequences[-1] and page["has_more"] is False
    first = phone.history(limit=1)
    assert len(first["review_events"]) == 1 and first["has_more"] is True
    rest = phone.history(first["next_sequence"])
    assert [e["rating"] for e in rest["review_events"]] == [3]


# --- access -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("route", ["push", "pull", "bootstrap", "review-history/pull"])
def test_sync_of_a_foreign_or_unknown_workspace_is_404(route):
    foreign = workspace_row(agent("owner"))["workspace_id"]
    intruder = agent("intruder")
    for workspace_id in (foreign, new_id(), "nope"):
        response = intruder.post(
            f"/v1/workspaces/{workspace_id}/sync/{route}",
            {"installation_id": "x", "platform": "ios", "operations": []},
            format="json",
        )
        fail(response, 404, "WORKSPACE_NOT_FOUND")


@pytest.mark.parametrize("route", ["push", "pull", "bootstrap", "review-history/pull"])
def test_sync_without_credentials_is_401(workspace_id, route):
    response = APIClient().post(f"/v1/workspaces/{workspace_id}/sync/{route}", {}, format="json")
    fail(response, 401, "AUTH_UNAUTHORIZED")


def test_sync_uses_the_workspace_in_the_url_not_the_selection(client, workspace_id, phone):
    ok(client.post("/v1/agent/workspaces", {"name": "Elsewhere"}, format="json"))
    card_id = new_id()
    phone.push(phone.op("card", card_id, card(), T1))
    assert rows(client, "SELECT COUNT(*) AS n FROM cards") == [{"n": 0}]
    ok(client.post(f"/v1/agent/workspaces/{workspace_id}/select"))
    assert rows(client, "SELECT card_id FROM cards") == [{"card_id": card_id}]


def test_sync_works_with_a_logged_in_session(workspace_id, phone):
    from django.contrib.auth import get_user_model

    session = APIClient()
    session.force_login(get_user_model().objects.get(username="syncer"))
    device = Device(session, workspace_id, "browser")
    [result] = device.push(device.op("card", new_id(), card(), T1))
    assert result["status"] == "applied"
