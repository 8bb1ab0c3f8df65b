"""domain.md §3-§4: the explicit commands (reviews, scheduler settings, reset progress) over HTTP,
their effect seen at once through the dialect, and their failures."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from rest_framework.test import APIClient

from tests.contract.domain_support import (
    CARD_COLUMNS,
    DEFAULT_SETTINGS,
    REVIEW_EVENT_COLUMNS,
    WORKSPACE_COLUMNS,
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

SETTINGS_URL = "/v1/agent/workspace/scheduler-settings"
RESET_URL = "/v1/agent/workspace/reset-progress"


@pytest.fixture
def client() -> APIClient:
    return agent("learner")


def card_by_sql(client: APIClient, card_id: str) -> dict:
    [row] = rows(client, f"SELECT * FROM cards WHERE card_id = '{card_id}'")
    return row


def pull_changes(client: APIClient) -> list[dict]:
    workspace_id = workspace_row(client)["workspace_id"]
    response = client.post(
        f"/v1/workspaces/{workspace_id}/sync/pull", {"after_change_id": 0}, format="json"
    )
    return ok(response)["changes"]


# --- reviews ------------------------------------------------------------------------------------


def test_a_review_returns_the_event_and_card_in_select_star_shape(client):
    card_id = insert_card(client)
    data = ok(review(client, card_id=card_id, rating=2, reviewed_at="2026-03-05T10:00:00Z"))
    assert list(data) == ["review_event", "card"]
    event, card = data["review_event"], data["card"]
    assert list(event) == REVIEW_EVENT_COLUMNS
    assert list(card) == CARD_COLUMNS
    assert event["card_id"] == card_id
    assert (event["rating"], event["review_grade"]) == (2, "good")
    assert event["reviewed_at_client"] == "2026-03-05T10:00:00.000Z"
    assert uuid.UUID(event["review_event_id"]).version == 4
    assert card["card_id"] == card_id
    assert card["reps"] == 1 and card["lapses"] == 0
    assert card["fsrs_card_state"] == "learning"
    assert card["fsrs_last_reviewed_at"] == "2026-03-05T10:00:00.000Z"
    assert card["due_at"] > "2026-03-05T10:00:00.000Z"
    # Exactly what the dialect shows for the same rows, at once.
    assert card_by_sql(client, card_id) == card
    [listed] = rows(client, f"SELECT * FROM review_events WHERE card_id = '{card_id}'")
    assert listed == event


@pytest.mark.parametrize(
    ("rating", "number", "grade"),
    [
        (0, 0, "again"),
        (1, 1, "hard"),
        (2, 2, "good"),
        (3, 3, "easy"),
        ("again", 0, "again"),
        ("hard", 1, "hard"),
        ("good", 2, "good"),
        ("easy", 3, "easy"),
        ("Easy", 3, "easy"),
    ],
)
def test_rating_is_a_number_0_to_3_or_a_grade_word(client, rating, number, grade):
    card_id = insert_card(client)
    event = ok(review(client, card_id=card_id, rating=rating))["review_event"]
    assert (event["rating"], event["review_grade"]) == (number, grade)
    [row] = rows(
        client, f"SELECT rating, review_grade FROM review_events WHERE card_id = '{card_id}'"
    )
    assert row == {"rating": number, "review_grade": grade}


def test_the_review_time_defaults_to_now(client):
    card_id = insert_card(client)
    before = datetime.now(UTC) - timedelta(seconds=1)
    event = ok(review(client, card_id=card_id, rating="good"))["review_event"]
    after = datetime.now(UTC) + timedelta(seconds=1)
    at = datetime.fromisoformat(event["reviewed_at_client"].replace("Z", "+00:00"))
    assert before <= at <= after
    assert event["reviewed_at_client"].endswith("Z") and len(event["reviewed_at_client"]) == 24


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("2026-03-05T12:30:00+02:00", "2026-03-05T10:30:00.000Z"),
        ("2026-03-05T10:30:00.123456Z", "2026-03-05T10:30:00.123Z"),
        ("2026-03-05T10:30:00", "2026-03-05T10:30:00.000Z"),
        ("2026-03-05", "2026-03-05T00:00:00.000Z"),
    ],
)
def test_reviewed_at_is_any_iso_8601_stored_in_utc_to_the_millisecond(client, given, stored):
    card_id = insert_card(client)
    event = ok(review(client, card_id=card_id, rating=2, reviewed_at=given))["review_event"]
    assert event["reviewed_at_client"] == stored


def test_scheduling_follows_fsrs_through_the_api(client):
    """A new card rated Good twice with the default steps [1, 10] graduates to review; Again from
    review counts a lapse; reps count every review."""
    card_id = insert_card(client)
    first = ok(review(client, card_id=card_id, rating=2, reviewed_at="2026-03-05T10:00:00Z"))
    assert first["card"]["fsrs_card_state"] == "learning"
    assert first["card"]["fsrs_step_index"] == 1
    assert first["card"]["due_at"] == "2026-03-05T10:10:00.000Z"
    second = ok(review(client, card_id=card_id, rating=2, reviewed_at="2026-03-05T10:10:00Z"))
    card = second["card"]
    assert card["fsrs_card_state"] == "review"
    assert card["fsrs_step_index"] is None
    assert card["fsrs_scheduled_days"] >= 1
    assert card["reps"] == 2 and card["lapses"] == 0
    lapse = ok(review(client, card_id=card_id, rating=0, reviewed_at="2026-03-20T10:00:00Z"))
    assert lapse["card"]["fsrs_card_state"] == "relearning"
    assert lapse["card"]["lapses"] == 1 and lapse["card"]["reps"] == 3


def test_an_easy_first_review_goes_straight_to_review(client):
    card_id = insert_card(client)
    card = ok(review(client, card_id=card_id, rating=3, reviewed_at="2026-03-05T10:00:00Z"))["card"]
    assert card["fsrs_card_state"] == "review"
    assert card["fsrs_step_index"] is None
    assert card["fsrs_stability"] > 0 and 1 <= card["fsrs_difficulty"] <= 10


def test_a_repeated_client_event_id_returns_the_first_result_and_changes_nothing(client):
    card_id = insert_card(client)
    body = {"card_id": card_id, "rating": 2, "client_event_id": "phone-1"}
    first = ok(review(client, **body))
    changes_before = len(pull_changes(client))
    repeat = ok(review(client, **body))
    assert repeat == first
    # Even a different rating under the same client_event_id is the first review.
    assert ok(review(client, **{**body, "rating": 0})) == first
    assert card_by_sql(client, card_id) == first["card"]
    assert rows(client, "SELECT COUNT(*) AS n FROM review_events") == [{"n": 1}]
    assert len(pull_changes(client)) == changes_before
    assert first["review_event"]["client_event_id"] == "phone-1"


def test_a_given_review_event_id_is_used(client):
    card_id = insert_card(client)
    event_id = str(uuid.uuid4())
    event = ok(review(client, card_id=card_id, rating=1, review_event_id=event_id))
    assert event["review_event"]["review_event_id"] == event_id


def test_a_review_earlier_than_the_last_review_is_400_with_a_clear_message(client):
    card_id = insert_card(client)
    ok(review(client, card_id=card_id, rating=2, reviewed_at="2026-03-05T10:00:00Z"))
    card = card_by_sql(client, card_id)
    error = fail(
        review(client, card_id=card_id, rating=2, reviewed_at="2026-03-04T10:00:00Z"),
        400,
        "REQUEST_INVALID",
    )
    assert "earlier" in error["message"] and "last review" in error["message"]
    assert card_by_sql(client, card_id) == card
    assert rows(client, "SELECT COUNT(*) AS n FROM review_events") == [{"n": 1}]


def test_a_review_at_the_same_time_as_the_last_one_is_accepted(client):
    card_id = insert_card(client)
    ok(review(client, card_id=card_id, rating=2, reviewed_at="2026-03-05T10:00:00Z"))
    ok(review(client, card_id=card_id, rating=2, reviewed_at="2026-03-05T10:00:00Z"))


def test_unknown_deleted_and_foreign_cards_are_400(client):
    deleted = insert_card(client, "gone")
    sql(client, f"DELETE FROM cards WHERE card_id = '{deleted}'")
    foreign = insert_card(agent("stranger"), "theirs")
    for card_id in (str(uuid.uuid4()), deleted, foreign, "not-a-uuid"):
        error = fail(review(client, card_id=card_id, rating=2), 400, "REQUEST_INVALID")
        assert "card" in error["message"].lower()
    assert rows(client, "SELECT COUNT(*) AS n FROM review_events") == [{"n": 0}]


@pytest.mark.parametrize(
    "rating", [4, -1, 1.5, "great", "", True, None, [2], {"value": 2}, "again please"]
)
def test_a_bad_rating_is_400(client, rating):
    card_id = insert_card(client)
    error = fail(review(client, card_id=card_id, rating=rating), 400, "REQUEST_INVALID")
    assert "rating" in error["message"]
    assert card_by_sql(client, card_id)["fsrs_card_state"] == "new"


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"rating": 2},
        {"card_id": None, "rating": 2},
        {"card_id": 5, "rating": 2},
        {"card_id": "CARD", "rating": 2, "reviewed_at": "yesterday"},
        {"card_id": "CARD", "rating": 2, "reviewed_at": 12},
        {"card_id": "CARD", "rating": 2, "reviewed_at": "10000-01-01T00:00:00Z"},
        {"card_id": "CARD", "rating": 2, "client_event_id": 7},
        {"card_id": "CARD", "rating": 2, "client_event_id": ""},
        {"card_id": "CARD", "rating": 2, "client_event_id": "x" * 201},
        {"card_id": "CARD", "rating": 2, "review_event_id": "nope"},
    ],
)
def test_bad_review_bodies_are_request_invalid(client, body):
    card_id = insert_card(client)
    body = {k: (card_id if v == "CARD" else v) for k, v in body.items()}
    fail(review(client, **body), 400, "REQUEST_INVALID")
    assert card_by_sql(client, card_id)["reps"] == 0


@pytest.mark.parametrize("raw", ["[]", '"x"', "12", "null", "{", "not json"])
def test_a_review_body_that_is_not_a_json_object_is_400(client, raw):
    response = client.generic("POST", "/v1/agent/reviews", raw, content_type="application/json")
    fail(response, 400, "REQUEST_INVALID")


def test_a_review_is_visible_to_the_next_pull(client):
    card_id = insert_card(client)
    event = ok(review(client, card_id=card_id, rating=2))["review_event"]
    latest = {(c["entity_type"], c["entity_id"]): c for c in pull_changes(client)}
    assert latest["review_event", event["review_event_id"]]["payload"]["rating"] == 2
    assert latest["card", card_id]["payload"]["reps"] == 1


def test_reviews_use_the_workspace_settings(client):
    ok(client.post(SETTINGS_URL, {"learning_steps_minutes": [5, 30]}, format="json"))
    card_id = insert_card(client)
    card = ok(review(client, card_id=card_id, rating=0, reviewed_at="2026-03-05T10:00:00Z"))["card"]
    assert card["due_at"] == "2026-03-05T10:05:00.000Z"


def test_a_review_can_target_another_workspace_by_id(client):
    other = ok(client.post("/v1/agent/workspaces", {"name": "Other"}, format="json"))
    card_id = insert_card(client, "in other")
    personal = next(
        w for w in ok(client.get("/v1/agent/workspaces"))["workspaces"] if w["name"] == "Personal"
    )
    ok(client.post(f"/v1/agent/workspaces/{personal['workspace_id']}/select"))
    fail(review(client, card_id=card_id, rating=2), 400, "REQUEST_INVALID")
    data = ok(
        review(client, card_id=card_id, rating=2, workspace_id=other["workspace"]["workspace_id"])
    )
    assert data["card"]["reps"] == 1


# --- scheduler settings -------------------------------------------------------------------------


def test_settings_omitted_keys_keep_their_value_and_the_workspace_row_comes_back(client):
    data = ok(client.post(SETTINGS_URL, {"desired_retention": 0.85}, format="json"))
    assert list(data) == WORKSPACE_COLUMNS
    assert data["desired_retention"] == 0.85
    assert {k: data[k] for k in DEFAULT_SETTINGS if k != "desired_retention"} == {
        k: v for k, v in DEFAULT_SETTINGS.items() if k != "desired_retention"
    }
    assert workspace_row(client) == data
    data = ok(
        client.post(
            SETTINGS_URL,
            {
                "learning_steps_minutes": [2, 20, 60],
                "relearning_steps_minutes": [5, 15],
                "maximum_interval_days": 365,
                "enable_fuzz": False,
            },
            format="json",
        )
    )
    assert data["desired_retention"] == 0.85
    assert data["learning_steps_minutes"] == [2, 20, 60]
    assert data["relearning_steps_minutes"] == [5, 15]
    assert data["maximum_interval_days"] == 365
    assert data["enable_fuzz"] is False
    assert workspace_row(client) == data


def test_an_empty_settings_body_changes_nothing(client):
    before = workspace_row(client)
    changes = pull_changes(client)
    data = ok(client.post(SETTINGS_URL, {}, format="json"))
    assert data == before
    assert workspace_row(client) == before
    assert pull_changes(client) == changes


@pytest.mark.parametrize(
    "body",
    [
        {"desired_retention": 0},
        {"desired_retention": 1},
        {"desired_retention": 1.5},
        {"desired_retention": -0.1},
        {"desired_retention": "0.9"},
        {"desired_retention": None},
        {"desired_retention": True},
        {"learning_steps_minutes": []},
        {"learning_steps_minutes": [10, 1]},
        {"learning_steps_minutes": [1, 1]},
        {"learning_steps_minutes": [0, 10]},
        {"learning_steps_minutes": [1, 1440]},
        {"learning_steps_minutes": [1.5]},
        {"learning_steps_minutes": ["1"]},
        {"learning_steps_minutes": 10},
        {"learning_steps_minutes": None},
        {"relearning_steps_minutes": []},
        {"relearning_steps_minutes": [-5]},
        {"relearning_steps_minutes": [10, 5]},
        {"maximum_interval_days": 0},
        {"maximum_interval_days": -1},
        {"maximum_interval_days": 1.5},
        {"maximum_interval_days": "100"},
        {"maximum_interval_days": None},
        {"enable_fuzz": "yes"},
        {"enable_fuzz": 1},
        {"enable_fuzz": None},
        {"desired_retention": 0.8, "enable_fuzz": "no"},
    ],
)
def test_invalid_settings_are_400_and_nothing_changes(client, body):
    before = workspace_row(client)
    error = fail(client.post(SETTINGS_URL, body, format="json"), 400, "REQUEST_INVALID")
    assert any(key in error["message"] for key in body)
    assert workspace_row(client) == before


@pytest.mark.parametrize(
    "body",
    [
        {"desired_retention": 0.01},
        {"desired_retention": 0.99},
        {"learning_steps_minutes": [1]},
        {"learning_steps_minutes": [1439]},
        {"relearning_steps_minutes": [1, 2, 3, 1439]},
        {"maximum_interval_days": 1},
        {"maximum_interval_days": 36500},
    ],
)
def test_settings_at_the_edges_are_accepted(client, body):
    data = ok(client.post(SETTINGS_URL, body, format="json"))
    for key, value in body.items():
        assert data[key] == value


def test_a_settings_change_is_recorded_for_sync(client):
    ok(client.post(SETTINGS_URL, {"enable_fuzz": False}, format="json"))
    [change] = [
        c for c in pull_changes(client) if c["entity_type"] == "workspace_scheduler_settings"
    ]
    assert change["payload"]["enable_fuzz"] is False


def test_settings_apply_forward_only(client):
    card_id = insert_card(client)
    scheduled = ok(review(client, card_id=card_id, rating=2, reviewed_at="2026-03-05T10:00:00Z"))
    ok(client.post(SETTINGS_URL, {"learning_steps_minutes": [3, 30]}, format="json"))
    assert card_by_sql(client, card_id) == scheduled["card"]


def test_settings_cannot_be_changed_through_update(client):
    response = client.post(
        "/v1/agent/sql",
        {"sql": "UPDATE workspace SET enable_fuzz = FALSE WHERE 1 = 1"},
        format="json",
    )
    assert response.status_code == 400
    assert workspace_row(client)["enable_fuzz"] is True


# --- reset progress -----------------------------------------------------------------------------


def test_reset_progress_puts_every_card_back_to_new_and_keeps_review_events(client):
    first, second = insert_card(client, "one"), insert_card(client, "two")
    untouched = insert_card(client, "three")
    ok(review(client, card_id=first, rating=2, reviewed_at="2026-03-05T10:00:00Z"))
    ok(review(client, card_id=first, rating=3, reviewed_at="2026-03-05T10:10:00Z"))
    ok(review(client, card_id=second, rating=0, reviewed_at="2026-03-05T10:00:00Z"))
    after_reviews = max(c["change_id"] for c in pull_changes(client))
    ok(client.post(RESET_URL, {"confirmation": "reset all progress"}, format="json"))
    cards = rows(client, "SELECT * FROM cards")
    assert {c["card_id"] for c in cards} == {first, second, untouched}
    for card in cards:
        assert card["fsrs_card_state"] == "new"
        assert card["due_at"] is None
        assert (card["reps"], card["lapses"]) == (0, 0)
        for column in (
            "fsrs_step_index",
            "fsrs_stability",
            "fsrs_difficulty",
            "fsrs_last_reviewed_at",
            "fsrs_scheduled_days",
        ):
            assert card[column] is None
    assert rows(client, "SELECT COUNT(*) AS n FROM review_events") == [{"n": 3}]
    changed = {c["entity_id"] for c in pull_changes(client) if c["change_id"] > after_reviews}
    assert {first, second} <= changed
    # A reset card schedules like a new card again.
    card = ok(review(client, card_id=first, rating=2, reviewed_at="2026-03-06T10:00:00Z"))["card"]
    assert card["reps"] == 1 and card["fsrs_card_state"] == "learning"


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"confirmation": "yes"},
        {"confirmation": "Reset All Progress"},
        {"confirmation": "reset all progress "},
        {"confirmation": True},
        {"confirmation": None},
    ],
)
def test_reset_progress_requires_the_exact_confirmation(client, body):
    card_id = insert_card(client)
    ok(review(client, card_id=card_id, rating=2))
    error = fail(client.post(RESET_URL, body, format="json"), 400, "REQUEST_INVALID")
    assert "reset all progress" in error["message"]
    assert card_by_sql(client, card_id)["reps"] == 1


def test_reset_progress_touches_only_the_selected_workspace(client):
    other = agent("neighbour")
    theirs = insert_card(other)
    ok(review(other, card_id=theirs, rating=2))
    ok(client.post(RESET_URL, {"confirmation": "reset all progress"}, format="json"))
    assert card_by_sql(other, theirs)["reps"] == 1


def test_reset_progress_on_an_empty_workspace_succeeds(client):
    ok(client.post(RESET_URL, {"confirmation": "reset all progress"}, format="json"))


# --- wrong methods ------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["/v1/agent/reviews", SETTINGS_URL, RESET_URL])
def test_get_on_a_command_route_is_an_enveloped_405(client, url):
    response = client.get(url)
    assert response.status_code == 405
    assert response.json()["ok"] is False
    assert response["X-Request-Id"] == response.json()["requestId"]
