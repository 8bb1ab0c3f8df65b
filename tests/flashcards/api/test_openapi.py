from __future__ import annotations

import pytest
from django.test import Client

from dsl.schema import get_resource

pytestmark = pytest.mark.django_db

AGENT_ROUTES = {
    "/v1/": "get",
    "/v1/agent/me": "get",
    "/v1/agent/workspaces": "post",
    "/v1/agent/workspaces/{workspace_id}/select": "post",
    "/v1/agent/reviews": "post",
    "/v1/agent/workspace/scheduler-settings": "post",
    "/v1/agent/workspace/reset-progress": "post",
    "/v1/agent/sql": "post",
    "/v1/agent/sql/query": "post",
    "/v1/agent/sql/execute": "post",
}


@pytest.fixture(scope="module")
def schema(django_db_blocker):
    with django_db_blocker.unblock():
        response = Client().get("/v1/openapi.json")
    assert response.status_code == 200
    return response.json()


def test_every_agent_route_is_described(schema):
    assert schema["openapi"].startswith("3.")
    for path, method in AGENT_ROUTES.items():
        assert method in schema["paths"].get(path, {}), path
    operation_ids = [op["operationId"] for item in schema["paths"].values() for op in item.values()]
    assert len(operation_ids) == len(set(operation_ids))


def test_the_api_key_scheme_is_published(schema):
    scheme = schema["components"]["securitySchemes"]["ApiKey"]
    assert scheme == {
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "description": scheme["description"],
    }
    assert {"ApiKey": []} in schema["paths"]["/v1/agent/reviews"]["post"]["security"]


def test_response_examples_carry_the_registry_columns(schema):
    review = schema["paths"]["/v1/agent/reviews"]["post"]["responses"]["200"]["content"]
    example = next(iter(review["application/json"]["examples"].values()))["value"]
    cards = get_resource("cards")
    assert list(example["data"]["card"]) == [c.name for c in cards.readable_columns]
    select = schema["paths"]["/v1/agent/sql/query"]["post"]["responses"]["200"]["content"]
    rows = next(iter(select["application/json"]["examples"].values()))["value"]["data"]["rows"]
    assert list(rows[0]) == [c.name for c in cards.readable_columns]


def test_sql_request_examples_match_each_endpoint(schema):
    def sqls(path):
        content = schema["paths"][path]["post"]["requestBody"]["content"]["application/json"]
        return [e["value"]["sql"] for e in content["examples"].values()]

    assert any(s.startswith("SELECT") for s in sqls("/v1/agent/sql/query"))
    assert all(
        not s.startswith(("INSERT", "UPDATE", "DELETE")) for s in sqls("/v1/agent/sql/query")
    )
    assert all(s.startswith(("INSERT", "UPDATE", "DELETE")) for s in sqls("/v1/agent/sql/execute"))


def test_swagger_ui_is_served():
    response = Client().get("/v1/docs")
    assert response.status_code == 200
    assert b"swagger" in response.content.lower()


# The contract's precision (issue #15): what the schema states, the server enforces.


def test_every_operation_documents_its_error_statuses_and_headers(schema):
    for path, item in schema["paths"].items():
        if not path.startswith("/v1/") or path == "/v1/agent/grammar":
            continue
        for method, operation in item.items():
            responses = operation["responses"]
            for status in ("401", "404", "406", "429", "503"):
                assert status in responses, (method, path, status)
            if method == "post":
                assert {"413", "415"} <= set(responses), (method, path)
            for status, response in responses.items():
                assert response["headers"]["X-Request-Id"]["required"] is True, (path, status)
            for status in ("429", "503"):
                assert "Retry-After" in responses[status]["headers"]
            assert "WWW-Authenticate" in responses["401"]["headers"]
            error = responses["503"]["content"]["application/json"]["schema"]
            assert error == {"$ref": "#/components/schemas/ErrorEnvelope"}


def test_error_codes_are_an_enum_of_every_code(schema):
    codes = set(schema["components"]["schemas"]["ErrorCode"]["enum"])
    assert {
        "REQUEST_INVALID",
        "REQUEST_TOO_LARGE",
        "RATE_LIMITED",
        "SERVICE_UNAVAILABLE",
        "QUERY_INVALID_SQL",
        "QUERY_TIMEOUT",
        "QUERY_RESULT_TOO_LARGE",
        "WORKSPACE_SELECTION_REQUIRED",
    } <= codes


def test_request_bodies_are_json_only_and_data_is_typed(schema):
    for path, item in schema["paths"].items():
        for operation in item.values():
            if "requestBody" in operation:
                # JSON everywhere; the import route takes its file as a multipart upload.
                expected = (
                    ["multipart/form-data"] if path.endswith("/imports") else ["application/json"]
                )
                assert list(operation["requestBody"]["content"]) == expected, path
    reviews = schema["paths"]["/v1/agent/reviews"]["post"]["responses"]["200"]
    data = reviews["content"]["application/json"]["schema"]["properties"]["data"]
    assert data["properties"]["card"] == {"$ref": "#/components/schemas/CardRow"}
    card = schema["components"]["schemas"]["CardRow"]
    assert list(card["properties"]) == [c.name for c in get_resource("cards").readable_columns]
    sql = schema["paths"]["/v1/agent/sql"]["post"]["responses"]["200"]["content"]
    assert sql["application/json"]["schema"]["properties"]["data"] == {
        "$ref": "#/components/schemas/SqlData"
    }


def test_mcp_and_the_grammar_page_are_described(schema):
    assert "post" in schema["paths"]["/mcp"]
    grammar = schema["paths"]["/v1/agent/grammar"]["get"]
    assert set(grammar["responses"]["200"]["content"]) == {"application/json", "text/html"}


def test_limits_are_stated(schema):
    bodies = schema["components"]["schemas"]
    steps = bodies["SchedulerSettingsRequest"]["properties"]["learning_steps_minutes"]
    assert steps["items"]["minimum"] == 1 and steps["items"]["maximum"] == 1439
    assert bodies["SchedulerSettingsRequest"]["additionalProperties"] is False
    pull = bodies["PullRequest"]["properties"]["limit"]
    assert (pull["minimum"], pull["maximum"]) == (1, 500)
    sql = schema["paths"]["/v1/agent/sql"]["post"]
    key = next(p for p in sql["parameters"] if p["name"] == "Idempotency-Key")
    assert key["schema"]["pattern"] == "^[ -~]{1,200}$"


@pytest.mark.parametrize(
    ("url", "body"),
    [
        (
            "/v1/agent/workspace/reset-progress",
            {"confirmation": "reset all progress", "workspace_id": ""},
        ),
        (
            "/v1/agent/workspace/reset-progress",
            {"confirmation": "reset all progress", "workspace_id": None},
        ),
        ("/v1/agent/sql", {"sql": "SHOW TABLES", "workspace_id": ""}),
        ("/v1/workspaces/{workspace}/sync/pull", {"limit": None}),
        ("/v1/workspaces/{workspace}/sync/bootstrap", {"limit": None}),
        ("/v1/workspaces/{workspace}/sync/review-history/pull", {"after_sequence": None}),
        ("/v1/agent/reviews", {"card_id": "123e4567-e89b-42d3-a456-426614174000", "rating": "2"}),
        ("/v1/agent/workspaces", {"name": 5}),
    ],
)
def test_bodies_the_schema_calls_invalid_are_refused(api, workspace, url, body):
    from tests.flashcards.api.helpers import assert_envelope_error

    response = api.post(url.format(workspace=workspace.pk), body, format="json")
    error = assert_envelope_error(response, 400, "REQUEST_INVALID")
    assert error["details"]["validationIssues"]


def test_an_empty_limit_in_the_query_is_refused(api):
    from tests.flashcards.api.helpers import assert_envelope_error

    assert_envelope_error(api.get("/v1/agent/workspaces?limit="), 400, "REQUEST_INVALID")
