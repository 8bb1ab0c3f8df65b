"""Who may call the sync routes, and what a malformed body gets: an envelope, never a 500."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from flashcards import services
from flashcards.models import Card
from flashcards.services.sync import PushOperation, push_operations
from tests.factories import make_card
from tests.flashcards.sync.helpers import SyncClient, card_op, new_id, ts

pytestmark = pytest.mark.django_db

ROUTES = {
    "push": {"installation_id": "i", "platform": "web", "operations": []},
    "pull": {"after_change_id": 0},
    "bootstrap": {"cursor": None},
    "review-history/pull": {"after_sequence": 0},
}


def _assert_error(response, status: int, code: str) -> None:
    assert response.status_code == status
    body = response.json()
    assert body["ok"] is False
    assert body["data"] == {}
    assert body["error"]["code"] == code
    assert body["requestId"] == response["X-Request-Id"]


@pytest.mark.parametrize("route", ROUTES)
def test_key_of_another_user_gets_404_for_this_workspace(route, workspace, other_user, client_for):
    card = make_card(workspace)
    _, plaintext = services.create_api_key(other_user, "intruder")
    intruder = SyncClient(client_for(plaintext), workspace.pk)
    body = ROUTES[route]
    if route == "push":
        body = {**body, "operations": [card_op(str(card.pk), at=ts(99999), front_text="pwned")]}
    response = intruder.post(route, body)
    _assert_error(response, 404, "WORKSPACE_NOT_FOUND")
    assert str(card.pk) not in response.content.decode()
    card.refresh_from_db()
    assert card.front_text != "pwned"


@pytest.mark.parametrize("route", ROUTES)
def test_unknown_or_malformed_workspace_id_is_404(route, api):
    for workspace_id in (uuid.uuid4(), "not-a-uuid"):
        _assert_error(
            SyncClient(api, workspace_id).post(route, ROUTES[route]), 404, "WORKSPACE_NOT_FOUND"
        )


@pytest.mark.parametrize("route", ROUTES)
def test_unauthenticated_is_401(route, workspace):
    _assert_error(
        SyncClient(APIClient(), workspace.pk).post(route, ROUTES[route]), 401, "AUTH_UNAUTHORIZED"
    )


def test_a_logged_in_session_may_sync(user, workspace):
    client = APIClient()
    client.force_login(user)
    sync = SyncClient(client, workspace.pk)
    card_id = new_id()
    assert sync.push_one(card_op(card_id, at=ts(1)))["status"] == "applied"
    assert [c["entity_id"] for c in sync.pull()["changes"]] == [card_id]


def test_a_member_syncs_a_workspace_that_is_not_the_key_selection(api, user):
    second = services.create_workspace(user, "Second")
    sync = SyncClient(api, second.pk)
    card_id = new_id()
    sync.push_one(card_op(card_id, at=ts(1)))
    assert Card.objects.get(pk=card_id).workspace_id == second.pk


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("push", []),
        ("push", {"installation_id": "i", "platform": "web"}),
        ("push", {"installation_id": "i", "platform": "web", "operations": {}}),
        ("push", {"installation_id": "i", "platform": "web", "operations": [1]}),
        ("push", {"installation_id": "", "platform": "web", "operations": []}),
        ("push", {"installation_id": "i", "platform": None, "operations": []}),
        ("push", {"installation_id": "i" * 201, "platform": "web", "operations": []}),
        ("push", {"installation_id": "i\x00", "platform": "web", "operations": []}),
        (
            "push",
            {"installation_id": "i", "platform": "web", "operations": [{"entity_type": "card"}]},
        ),
        (
            "push",
            {
                "installation_id": "i",
                "platform": "web",
                "operations": [{"operation_id": 5, "entity_type": "card"}],
            },
        ),
        (
            "push",
            {
                "installation_id": "i",
                "platform": "web",
                "operations": [{"operation_id": "x"}] * 501,
            },
        ),
        ("pull", {"after_change_id": -1}),
        ("pull", {"after_change_id": "3"}),
        ("pull", {"after_change_id": 1.5}),
        ("pull", {"after_change_id": True}),
        ("pull", {"after_change_id": 2**63}),
        ("pull", {"limit": 0}),
        ("pull", {"limit": 501}),
        ("pull", "after"),
        ("bootstrap", {"limit": 1001}),
        ("bootstrap", {"limit": None, "cursor": {}}),
        ("review-history/pull", {"after_sequence": -5}),
        ("review-history/pull", {"limit": 501}),
    ],
)
def test_bad_bodies_are_400_request_invalid(sync, route, body):
    _assert_error(sync.post(route, body), 400, "REQUEST_INVALID")


def test_malformed_json_is_400(api, workspace):
    response = api.post(
        f"/v1/workspaces/{workspace.pk}/sync/pull", "{not json", content_type="application/json"
    )
    _assert_error(response, 400, "REQUEST_INVALID")


@pytest.mark.parametrize(
    "raw",
    [
        '{"installation_id": "\\ud800", "platform": "web", "operations": []}',
        '{"installation_id": "i", "platform": "web", "operations": [{"operation_id": "\\udfff"}]}',
    ],
)
def test_lone_surrogate_escapes_are_400(api, workspace, raw):
    response = api.post(
        f"/v1/workspaces/{workspace.pk}/sync/push", raw, content_type="application/json"
    )
    _assert_error(response, 400, "REQUEST_INVALID")


@pytest.mark.parametrize("route", ROUTES)
def test_absurdly_nested_bodies_are_400(api, workspace, route):
    url = f"/v1/workspaces/{workspace.pk}/sync/{route}"
    for raw in ("[" * 100_000, '{"a": ' + "[" * 50 + "]" * 50 + "}"):
        _assert_error(api.post(url, raw, content_type="application/json"), 400, "REQUEST_INVALID")


def test_deep_payload_through_the_service_is_rejected_not_stored(workspace):
    payload: object = "leaf"
    for _ in range(40):
        payload = [payload]
    op = PushOperation(
        "op-1",
        "card",
        new_id(),
        "upsert",
        ts(1),
        {"front_text": "a", "back_text": "b", "tags": payload},
    )
    [result] = push_operations(workspace, installation_id="i", platform="web", operations=[op])
    assert result.status == "rejected"
    assert "nested more than" in result.error
    assert not Card.objects.filter(workspace=workspace).exists()


def test_invalid_push_body_applies_nothing(sync, workspace):
    ops = [card_op(new_id(), at=ts(1)), {"entity_type": "card"}]
    sync.post("push", {"installation_id": "i", "platform": "web", "operations": ops})
    assert not Card.objects.filter(workspace=workspace).exists()


def test_largest_cursor_is_accepted(sync):
    data = sync.pull(after=2**63 - 1)
    assert (data["changes"], data["next_change_id"]) == ([], 2**63 - 1)
    assert sync.history(after=2**63 - 1)["review_events"] == []


def test_defaults_when_optional_fields_are_absent(sync, workspace):
    make_card(workspace)
    response = sync.post("pull", {})
    assert response.status_code == 200
    assert len(response.json()["data"]["changes"]) == 1
    assert sync.post("bootstrap", {}).json()["data"]["has_more"] is False
    assert sync.post("review-history/pull", {}).json()["data"]["review_events"] == []


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
operation_fields = st.fixed_dictionaries(
    {},
    optional={
        "operation_id": st.text(min_size=1, max_size=10) | json_values,
        "entity_type": st.sampled_from(
            ["card", "deck", "review_event", "workspace_scheduler_settings"]
        )
        | json_values,
        "entity_id": st.uuids().map(str) | json_values,
        "action": st.sampled_from(["upsert", "append"]) | json_values,
        "client_updated_at": st.sampled_from([ts(1), "2026-13-40T00:00:00Z"]) | json_values,
        "payload": st.fixed_dictionaries(
            {},
            optional={
                "front_text": json_values,
                "back_text": json_values,
                "tags": json_values,
                "fsrs_card_state": st.sampled_from(["new", "review", "learning"]) | json_values,
                "fsrs_stability": json_values,
                "due_at": json_values,
                "deleted_at": json_values,
                "card_id": json_values,
                "rating": json_values,
                "name": json_values,
                "desired_retention": json_values,
                "metadata": json_values,
            },
        )
        | json_values,
    },
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=st.lists(operation_fields, max_size=4), extra=json_values)
def test_push_never_500s(sync, operations, extra):
    body = {"installation_id": "fuzz", "platform": "web", "operations": operations, "x": extra}
    response = sync.post("push", body)
    assert response.status_code in (200, 400), response.content
    assert response.json()["ok"] is (response.status_code == 200)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(route=st.sampled_from(["pull", "bootstrap", "review-history/pull"]), body=json_values)
def test_reads_never_500(sync, route, body):
    response = sync.post(route, body)
    assert response.status_code in (200, 400), response.content
