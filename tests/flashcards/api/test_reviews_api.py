from __future__ import annotations

import uuid

import pytest

from flashcards import services
from flashcards.models import Card, ChangeLog, ReviewEvent
from flashcards.rows import CARD_COLUMNS, REVIEW_EVENT_COLUMNS
from tests.factories import make_card
from tests.flashcards.api.helpers import assert_envelope_error, assert_envelope_ok, select_rows

pytestmark = pytest.mark.django_db

URL = "/v1/agent/reviews"


def post(client, body):
    return client.post(URL, body, format="json")


def test_a_review_reschedules_the_card_and_returns_both_rows(api, workspace):
    card = make_card(workspace)
    data = assert_envelope_ok(post(api, {"card_id": str(card.pk), "rating": "good"}))
    assert tuple(data) == ("review_event", "card")
    assert tuple(data["review_event"]) == REVIEW_EVENT_COLUMNS
    assert tuple(data["card"]) == CARD_COLUMNS
    event = ReviewEvent.objects.get()
    assert data["review_event"]["review_event_id"] == str(event.pk)
    assert data["review_event"]["rating"] == 2
    assert data["review_event"]["review_grade"] == "good"
    assert data["review_event"]["reviewed_at_client"].endswith("Z")
    card.refresh_from_db()
    assert card.reps == 1
    assert card.fsrs_card_state != "new"
    assert data["card"]["reps"] == 1
    assert data["card"]["fsrs_card_state"] == card.fsrs_card_state
    assert data["card"]["due_at"] is not None
    assert ChangeLog.objects.filter(workspace=workspace, entity_type="review_event").count() == 1


@pytest.mark.parametrize(
    ("rating", "expected"),
    [(0, 0), (1, 1), (2, 2), (3, 3), ("again", 0), ("Hard", 1), ("EASY", 3), (2.0, 2)],
)
def test_ratings_as_numbers_or_words(api, workspace, rating, expected):
    card = make_card(workspace)
    data = assert_envelope_ok(post(api, {"card_id": str(card.pk), "rating": rating}))
    assert data["review_event"]["rating"] == expected


@pytest.mark.parametrize("rating", [4, -1, "great", True, 1.5, [2], {"r": 2}, ""])
def test_a_bad_rating_is_400_and_writes_nothing(api, workspace, rating):
    card = make_card(workspace)
    response = post(api, {"card_id": str(card.pk), "rating": rating})
    assert_envelope_error(response, 400, "REQUEST_INVALID")
    assert "rating" in response.json()["error"]["message"]
    assert not ReviewEvent.objects.exists()


def test_client_event_id_makes_a_review_idempotent(api, workspace):
    card = make_card(workspace)
    body = {"card_id": str(card.pk), "rating": 3, "client_event_id": "tap-1"}
    first = assert_envelope_ok(post(api, body))
    second = assert_envelope_ok(post(api, {**body, "rating": 0}))
    assert second["review_event"] == first["review_event"]
    assert ReviewEvent.objects.count() == 1
    card.refresh_from_db()
    assert card.reps == 1


def test_explicit_times_and_event_ids_are_kept(api, workspace):
    card = make_card(workspace)
    event_id = uuid.uuid4()
    body = {
        "card_id": str(card.pk),
        "rating": "good",
        "reviewed_at": "2026-03-05T10:00:00.123456+02:00",
        "review_event_id": str(event_id),
    }
    data = assert_envelope_ok(post(api, body))
    assert data["review_event"]["review_event_id"] == str(event_id)
    assert data["review_event"]["reviewed_at_client"] == "2026-03-05T08:00:00.123Z"
    assert data["card"]["fsrs_last_reviewed_at"] == "2026-03-05T08:00:00.123Z"


def test_a_bare_date_means_midnight_utc(api, workspace):
    card = make_card(workspace)
    data = assert_envelope_ok(
        post(api, {"card_id": str(card.pk), "rating": 2, "reviewed_at": "2026-03-05"})
    )
    assert data["review_event"]["reviewed_at_client"] == "2026-03-05T00:00:00.000Z"


def test_a_review_before_the_last_one_is_rejected(api, workspace):
    card = make_card(workspace)
    assert_envelope_ok(
        post(api, {"card_id": str(card.pk), "rating": 2, "reviewed_at": "2026-03-05T10:00:00Z"})
    )
    response = post(
        api, {"card_id": str(card.pk), "rating": 2, "reviewed_at": "2026-03-04T10:00:00Z"}
    )
    error = assert_envelope_error(response, 400, "REQUEST_INVALID")
    assert "earlier than the card's last review" in error["message"]
    assert ReviewEvent.objects.count() == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"rating": 2}, "card_id"),
        ({"card_id": "", "rating": 2}, "card_id"),
        ({"card_id": 12, "rating": 2}, "card_id"),
        ({"card_id": "not-a-uuid", "rating": 2}, "card_id"),
        ({"card_id": "CARD", "rating": None}, "rating"),
        ({"card_id": "CARD", "rating": 2, "reviewed_at": "yesterday"}, "reviewed_at"),
        ({"card_id": "CARD", "rating": 2, "reviewed_at": 1700000000}, "reviewed_at"),
        ({"card_id": "CARD", "rating": 3, "reviewed_at": "9999-12-31T00:00:00Z"}, "reviewed_at"),
        ({"card_id": "CARD", "rating": 3, "reviewed_at": "1969-12-31T23:59:59Z"}, "reviewed_at"),
        ({"card_id": "CARD", "rating": 2, "reviewed_at": "2026-02-30"}, "reviewed_at"),
        ({"card_id": "CARD", "rating": 2, "reviewed_at": "2026-03-05T25:00:00Z"}, "reviewed_at"),
        ({"card_id": "CARD", "rating": 2, "client_event_id": 7}, "client_event_id"),
        ({"card_id": "CARD", "rating": 2, "review_event_id": "nope"}, "review_event_id"),
    ],
)
def test_missing_fields_and_wrong_types_are_400(api, workspace, body, field):
    card = make_card(workspace)
    body = {k: (str(card.pk) if v == "CARD" else v) for k, v in body.items()}
    error = assert_envelope_error(post(api, body), 400, "REQUEST_INVALID")
    assert error["details"]["field"] == field
    assert not ReviewEvent.objects.exists()


@pytest.mark.parametrize("raw", ["{", "[1, 2]", '"text"', "null"])
def test_a_body_that_is_not_a_json_object_is_400(api, raw):
    response = api.post(URL, raw, content_type="application/json")
    assert_envelope_error(response, 400, "REQUEST_INVALID")


def test_an_unknown_or_deleted_card_is_400(api, workspace):
    card = make_card(workspace)
    services.delete_cards(workspace, [card.pk])
    for card_id in (str(uuid.uuid4()), str(card.pk)):
        response = post(api, {"card_id": card_id, "rating": 2})
        error = assert_envelope_error(response, 400, "REQUEST_INVALID")
        assert error["details"]["field"] == "card_id"
    assert not ReviewEvent.objects.exists()


def test_a_card_of_another_workspace_is_never_reviewed(api, other_workspace):
    foreign = make_card(other_workspace)
    response = post(api, {"card_id": str(foreign.pk), "rating": 2})
    error = assert_envelope_error(response, 400, "REQUEST_INVALID")
    assert foreign.front_text not in str(response.json())
    assert error["details"]["field"] == "card_id"
    foreign.refresh_from_db()
    assert foreign.reps == 0
    assert not ReviewEvent.objects.exists()


def test_workspace_id_must_be_a_membership(api, other_workspace):
    foreign = make_card(other_workspace)
    body = {"card_id": str(foreign.pk), "rating": 2, "workspace_id": str(other_workspace.pk)}
    assert_envelope_error(post(api, body), 404, "WORKSPACE_NOT_FOUND")
    assert Card.objects.get(pk=foreign.pk).reps == 0


def test_workspace_id_targets_another_own_workspace(api, user):
    second = services.create_workspace(user, "Second")
    card = make_card(second)
    body = {"card_id": str(card.pk), "rating": 1, "workspace_id": str(second.pk)}
    assert_envelope_ok(post(api, body))
    assert ReviewEvent.objects.get().workspace_id == second.pk


def test_a_revoked_key_cannot_review(api, api_key, workspace):
    card = make_card(workspace)
    services.revoke_api_key(api_key)
    assert_envelope_error(
        post(api, {"card_id": str(card.pk), "rating": 2}), 401, "AGENT_API_KEY_INVALID"
    )
    assert not ReviewEvent.objects.exists()


def test_the_review_is_visible_to_the_dialect_at_once(api, workspace):
    card = make_card(workspace)
    data = assert_envelope_ok(post(api, {"card_id": str(card.pk), "rating": "easy"}))
    rows = select_rows(api, f"SELECT * FROM cards WHERE card_id = '{card.pk}'")
    assert rows == [data["card"]]
    events = select_rows(api, "SELECT * FROM review_events")
    assert events == [data["review_event"]]
