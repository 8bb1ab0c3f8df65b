from __future__ import annotations

import uuid

import pytest
from rest_framework.test import APIClient

from flashcards import services
from flashcards.models import ApiKey, Membership, UserProfile, Workspace
from flashcards.rows import WORKSPACE_COLUMNS
from tests.flashcards.api.helpers import assert_envelope_error, assert_envelope_ok

pytestmark = pytest.mark.django_db


def select_url(workspace_id: object) -> str:
    return f"/v1/agent/workspaces/{workspace_id}/select"


# --- /me -----------------------------------------------------------------------------------------


def test_me_names_the_user_the_selected_workspace_and_the_key(api, user, workspace, api_key):
    data = assert_envelope_ok(api.get("/v1/agent/me"))
    assert data["user"]["username"] == "alice"
    assert data["workspace"]["workspace_id"] == str(workspace.pk)
    assert tuple(data["workspace"]) == WORKSPACE_COLUMNS
    assert data["apiKey"]["label"] == "test"
    assert data["apiKey"]["key_id"] == api_key.key_id
    assert data["authentication"] == "api_key"
    assert api_key.plaintext not in str(data)


def test_me_without_credentials_is_401():
    assert_envelope_error(APIClient().get("/v1/agent/me"), 401, "AUTH_UNAUTHORIZED")


def test_me_with_a_revoked_key_is_401(api, api_key):
    services.revoke_api_key(api_key)
    assert_envelope_error(api.get("/v1/agent/me"), 401, "AGENT_API_KEY_INVALID")


def test_me_with_a_malformed_key_is_401(client_for):
    response = client_for("fca_nope").get("/v1/agent/me")
    assert_envelope_error(response, 401, "AGENT_API_KEY_INVALID")


def test_me_reports_no_workspace_when_a_choice_is_needed(user, client_for):
    services.create_workspace(user, "One")
    services.create_workspace(user, "Two")
    _, plaintext = services.create_api_key(user, "unselected")
    response = client_for(plaintext).get("/v1/agent/me")
    body = response.json()
    assert response.status_code == 200
    assert body["data"]["workspace"] is None
    assert "/select" in body["instructions"]


def test_session_user_sees_me_without_a_key(user, workspace):
    client = APIClient()
    client.force_login(user)
    data = assert_envelope_ok(client.get("/v1/agent/me"))
    assert data["apiKey"] is None
    assert data["authentication"] == "session"
    assert data["workspace"]["workspace_id"] == str(workspace.pk)


# --- self-healing selection ------------------------------------------------------------------------


def test_a_lost_selection_heals_to_the_only_workspace(api, user, workspace, api_key):
    spare = services.create_workspace(user, "Spare")
    Membership.objects.filter(user=user, workspace=workspace).delete()
    data = assert_envelope_ok(api.get("/v1/agent/me"))
    assert data["workspace"]["workspace_id"] == str(spare.pk)
    api_key.refresh_from_db()
    assert api_key.selected_workspace_id == spare.pk


def test_a_user_with_no_workspace_gets_a_personal_one(api, user, workspace):
    Membership.objects.filter(user=user).delete()
    data = assert_envelope_ok(api.get("/v1/agent/me"))
    assert data["workspace"]["name"] == "Personal"
    assert data["workspace"]["workspace_id"] != str(workspace.pk)


def test_several_workspaces_and_no_selection_is_409_on_commands(user, client_for):
    services.create_workspace(user, "One")
    services.create_workspace(user, "Two")
    _, plaintext = services.create_api_key(user, "unselected")
    response = client_for(plaintext).post(
        "/v1/agent/workspace/scheduler-settings", {"enable_fuzz": False}, format="json"
    )
    error = assert_envelope_error(response, 409, "WORKSPACE_SELECTION_REQUIRED")
    assert "select" in response.json()["instructions"]
    assert error["details"]["selectWorkspace"].endswith("/select")


# --- listing ---------------------------------------------------------------------------------------


def test_list_shows_only_own_workspaces_and_marks_the_selected_one(
    api, user, workspace, other_workspace
):
    second = services.create_workspace(user, "Second")
    data = assert_envelope_ok(api.get("/v1/agent/workspaces"))
    ids = [row["workspace_id"] for row in data["workspaces"]]
    assert ids == [str(workspace.pk), str(second.pk)]
    assert str(other_workspace.pk) not in str(data)
    assert [row["selected"] for row in data["workspaces"]] == [True, False]
    assert {row["role"] for row in data["workspaces"]} == {"owner"}
    assert data["selectedWorkspaceId"] == str(workspace.pk)
    assert data["hasMore"] is False
    assert data["nextCursor"] is None


def test_list_pages_with_a_cursor_without_overlap(api, user, workspace):
    created = [services.create_workspace(user, f"W{i}") for i in range(4)]
    # Oldest first; workspaces created in the same millisecond are ordered by id.
    expected = [
        str(w.pk) for w in sorted([workspace, *created], key=lambda w: (w.created_at, w.pk))
    ]
    seen: list[str] = []
    cursor = None
    for _ in range(5):
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        data = assert_envelope_ok(api.get("/v1/agent/workspaces", params))
        seen += [row["workspace_id"] for row in data["workspaces"]]
        if not data["hasMore"]:
            break
        cursor = data["nextCursor"]
        assert cursor
    assert seen == expected


@pytest.mark.parametrize("limit", ["0", "101", "abc", "-1", "1.5"])
def test_list_rejects_a_bad_limit(api, limit):
    response = api.get("/v1/agent/workspaces", {"limit": limit})
    assert assert_envelope_error(response, 400, "REQUEST_INVALID")["details"]["field"] == "limit"


@pytest.mark.parametrize("cursor", ["garbage", "W10=", "bnVsbA", "WyJ4IiwgInkiXQ"])
def test_list_rejects_a_bad_cursor(api, cursor):
    response = api.get("/v1/agent/workspaces", {"cursor": cursor})
    assert assert_envelope_error(response, 400, "REQUEST_INVALID")["details"]["field"] == "cursor"


# --- creating and selecting ---------------------------------------------------------------------------


def test_create_makes_an_owned_workspace_and_selects_it(api, user, api_key):
    response = api.post("/v1/agent/workspaces", {"name": "  Spanish "}, format="json")
    data = assert_envelope_ok(response)
    created = Workspace.objects.get(pk=data["workspace"]["workspace_id"])
    assert created.name == "Spanish"
    assert Membership.objects.get(workspace=created).user == user
    api_key.refresh_from_db()
    assert api_key.selected_workspace_id == created.pk
    me = assert_envelope_ok(api.get("/v1/agent/me"))
    assert me["workspace"]["workspace_id"] == str(created.pk)


@pytest.mark.parametrize("body", [{}, {"name": ""}, {"name": "   "}, {"name": 5}, ["Spanish"]])
def test_create_needs_a_name(api, body):
    response = api.post("/v1/agent/workspaces", body, format="json")
    assert_envelope_error(response, 400, "REQUEST_INVALID")
    assert Workspace.objects.count() == 1


def test_create_rejects_bad_json(api):
    response = api.post("/v1/agent/workspaces", "{name:", content_type="application/json")
    assert_envelope_error(response, 400, "REQUEST_INVALID")


def test_select_switches_the_key_only(api, user, workspace, api_key):
    second = services.create_workspace(user, "Second")
    services.create_api_key(user, "other", workspace=workspace)
    data = assert_envelope_ok(api.post(select_url(second.pk)))
    assert data["workspace"]["workspace_id"] == str(second.pk)
    api_key.refresh_from_db()
    assert api_key.selected_workspace_id == second.pk
    assert ApiKey.objects.get(label="other").selected_workspace_id == workspace.pk


def test_select_by_session_sets_the_profile(user, workspace):
    second = services.create_workspace(user, "Second")
    client = APIClient()
    client.force_login(user)
    assert_envelope_ok(client.post(select_url(second.pk)))
    assert UserProfile.objects.get(user=user).selected_workspace_id == second.pk


@pytest.mark.parametrize("target", ["foreign", "unknown", "garbage"])
def test_select_never_reaches_a_workspace_outside_membership(
    api, api_key, workspace, other_workspace, target
):
    workspace_id = {
        "foreign": other_workspace.pk,
        "unknown": uuid.uuid4(),
        "garbage": "not-a-uuid",
    }[target]
    response = api.post(select_url(workspace_id))
    error = assert_envelope_error(response, 404, "WORKSPACE_NOT_FOUND")
    assert str(other_workspace.pk) not in error["message"]
    api_key.refresh_from_db()
    assert api_key.selected_workspace_id == workspace.pk


def test_foreign_and_unknown_workspaces_answer_identically(api, other_workspace):
    foreign = api.post(select_url(other_workspace.pk)).json()
    unknown = api.post(select_url(uuid.uuid4())).json()
    assert foreign["error"] == unknown["error"]
