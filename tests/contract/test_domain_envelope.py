"""domain.md §4 discovery and the dsl.md §2 envelope on every /v1/agent/* route and the sync
routes: success and failure shapes, X-Request-Id, error codes, and no 500 from any body."""

from __future__ import annotations

import json
import uuid

import pytest
from rest_framework.test import APIClient

from tests.contract.domain_support import agent, envelope, fail, insert_card, ok, workspace_row

pytestmark = pytest.mark.django_db

AGENT_GET_ROUTES = ["/v1/agent/me", "/v1/agent/workspaces"]
AGENT_POST_ROUTES = [
    "/v1/agent/sql",
    "/v1/agent/sql/query",
    "/v1/agent/sql/execute",
    "/v1/agent/workspaces",
    "/v1/agent/reviews",
    "/v1/agent/workspace/scheduler-settings",
    "/v1/agent/workspace/reset-progress",
]
SYNC_ROUTES = ["push", "pull", "bootstrap", "review-history/pull"]

NASTY_BODIES = [
    "",
    "null",
    "[]",
    "[1, 2]",
    '"text"',
    "42",
    "true",
    "{",
    '{"a": }',
    "{}",
    '{"sql": 5, "card_id": [], "rating": {}, "name": null, "confirmation": 1}',
    '{"card_id": "00000000-0000-0000-0000-000000000000", "rating": 99999999999999999999999}',
    '{"rating": 1e400, "desired_retention": 1e400, "limit": 1e400}',
    '{"workspace_id": "../../etc", "name": "\\u0000"}',
    '{"name": "\\ud800"}',
    '{"operations": [null, 1, "x", {}], "installation_id": [], "platform": {}}',
    '{"after_change_id": 1e30, "after_sequence": "1", "cursor": [], "limit": true}',
    "[" * 5000 + "]" * 5000,
    '{"reviewed_at": "9999-12-31T23:59:59.999Z", "card_id": "CARD", "rating": 0}',
    '{"learning_steps_minutes": [1e308], "maximum_interval_days": 1e308}',
]


DISCOVERY_ROUTES = {
    "/v1/agent/sql",
    "/v1/agent/sql/query",
    "/v1/agent/sql/execute",
    "/v1/agent/me",
    "/v1/agent/workspaces",
    "/v1/agent/workspaces/{workspace_id}/select",
    "/v1/agent/reviews",
    "/v1/agent/workspace/scheduler-settings",
    "/v1/agent/workspace/reset-progress",
    "/v1/agent/grammar",
}


@pytest.mark.parametrize("path", ["/v1/", "/v1/agent"])
def test_discovery_without_auth_describes_the_service(path):
    response = APIClient().get(path)
    data = ok(response)
    assert data["service"]["name"] and data["service"]["version"]
    text = json.dumps(data)
    for route in DISCOVERY_ROUTES:
        assert f"http://testserver{route}" in text, route
    assert data["mcp"]["url"] == "http://testserver/mcp"
    assert data["grammarUrl"] == "http://testserver/v1/agent/grammar"
    assert "Authorization" in text and "ApiKey" in text and "create_api_key" in text
    instructions = data["instructions"]
    for phrase in ("SHOW TABLES", "DESCRIBE", "/v1/agent/sql", "100", "front_text", "back_text"):
        assert phrase in instructions, phrase
    assert response.json()["instructions"]


def test_discovery_is_the_same_at_both_addresses():
    first = ok(APIClient().get("/v1/"))
    second = ok(APIClient().get("/v1/agent"))
    assert first == second


def test_the_grammar_page_is_public():
    response = APIClient().get("/v1/agent/grammar")
    assert response.status_code == 200
    assert b"SELECT" in response.content


@pytest.mark.parametrize("path", AGENT_GET_ROUTES)
def test_get_routes_answer_in_the_envelope(path):
    ok(agent("getter").get(path))
    fail(APIClient().get(path), 401, "AUTH_UNAUTHORIZED")


@pytest.mark.parametrize("path", AGENT_POST_ROUTES)
def test_post_routes_without_credentials_are_401_envelopes(path):
    fail(APIClient().post(path, {}, format="json"), 401, "AUTH_UNAUTHORIZED")


@pytest.mark.parametrize("path", [*AGENT_POST_ROUTES, "/v1/agent/workspaces/{ws}/select"])
def test_no_body_gives_a_500_and_every_answer_is_an_envelope(path):
    client = agent("fuzzer")
    workspace_id = workspace_row(client)["workspace_id"]
    card_id = insert_card(client)
    for raw in NASTY_BODIES:
        response = client.generic(
            "POST",
            path.replace("{ws}", workspace_id),
            raw.replace("CARD", card_id),
            content_type="application/json",
        )
        body = envelope(response)
        assert response.status_code < 500, (raw, body)
        if not body["ok"]:
            assert response.status_code >= 400, raw
            assert body["error"]["code"] in {
                "REQUEST_INVALID",
                "QUERY_INVALID_SQL",
                "WORKSPACE_NOT_FOUND",
            }, (raw, body)


@pytest.mark.parametrize("route", SYNC_ROUTES)
def test_no_sync_body_gives_a_500(route):
    client = agent("sync-fuzzer")
    workspace_id = workspace_row(client)["workspace_id"]
    for raw in NASTY_BODIES:
        response = client.generic(
            "POST",
            f"/v1/workspaces/{workspace_id}/sync/{route}",
            raw,
            content_type="application/json",
        )
        body = envelope(response)
        assert response.status_code < 500, (raw, body)
        if not body["ok"]:
            assert body["error"]["code"] == "REQUEST_INVALID", (raw, body)


@pytest.mark.parametrize("path", AGENT_POST_ROUTES)
def test_a_body_over_256_kib_is_413(path):
    payload = json.dumps({"name": "x" * (257 * 1024)})
    response = agent("big").generic("POST", path, payload, content_type="application/json")
    fail(response, 413, "REQUEST_TOO_LARGE")


def test_an_unknown_agent_path_is_an_enveloped_404():
    response = agent("lost").get("/v1/agent/nothing-here")
    body = envelope(response)
    assert response.status_code == 404 and body["ok"] is False


def test_request_ids_are_unique_per_request():
    client = agent("ids")
    first = client.get("/v1/agent/me")
    second = client.get("/v1/agent/me")
    assert first["X-Request-Id"] != second["X-Request-Id"]
    uuid.UUID(first["X-Request-Id"])


def test_validation_errors_name_the_field():
    client = agent("fields")
    response = client.post("/v1/agent/reviews", {"card_id": str(uuid.uuid4())}, format="json")
    error = fail(response, 400, "REQUEST_INVALID")
    assert "rating" in error["message"]
    assert response.json()["instructions"]


@pytest.mark.parametrize("path", ["/v1/", *AGENT_GET_ROUTES, *AGENT_POST_ROUTES])
def test_options_answers_in_the_envelope(path):
    data = ok(agent("options").options(path))
    assert data["name"]
