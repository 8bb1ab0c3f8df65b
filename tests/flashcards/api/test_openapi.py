from __future__ import annotations

import pytest
from django.test import Client

from dsl.resources import get_resource

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
