"""The MCP server through the SDK's own streamable-HTTP client against the real ASGI application
(uvicorn on a loopback port), as a desktop agent would use it."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
import pytest
from django.core.cache import cache
from django.test import override_settings
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult

from dsl.models import QueryLog
from dsl.schema import RESOURCES
from dsl.surfaces.mcp import server as mcp
from flashcards import services
from flashcards.models import Card, ReviewEvent
from tests.factories import make_card

TOOLS = {
    "sql",
    "sql_query",
    "sql_execute",
    "submit_review",
    "update_scheduler_settings",
    "list_workspaces",
    "select_workspace",
    "import_cards",
    "export_cards",
}
assert set(mcp.TOOL_NAMES) == TOOLS


def run_client(
    base_url: str, key: str, scenario: Callable[[Client], Awaitable[Any]], mode: str = "legacy"
) -> Any:
    async def main() -> Any:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
        async with http:
            transport = streamable_http_client(f"{base_url}/mcp", http_client=http)
            async with Client(transport, mode=mode) as client:
                return await scenario(client)

    return asyncio.run(main())


def envelope(result: CallToolResult) -> dict[str, Any]:
    """The tool result's envelope, checking the text and structured copies agree."""
    body = json.loads(result.content[0].text)
    assert result.structured_content == body
    assert result.is_error is (not body["ok"])
    assert set(body) >= {"ok", "data", "instructions", "docs", "requestId"}
    return body


def call(base_url: str, key: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async def scenario(client: Client) -> CallToolResult:
        return await client.call_tool(tool, arguments)

    return envelope(run_client(base_url, key, scenario))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_tools_are_listed_with_registry_descriptions_and_hints(live_server_url, api_key, mode):
    async def scenario(client: Client):
        return (await client.list_tools()).tools

    tools = {t.name: t for t in run_client(live_server_url, api_key.plaintext, scenario, mode)}
    assert set(tools) == TOOLS
    for resource in RESOURCES:
        for column in resource.columns:
            assert column.name in tools["sql"].description
            assert column.name in tools["sql_query"].description
    assert "back_text (string, writable)" in tools["sql_execute"].description
    assert "review_grade" in tools["submit_review"].description
    hints = {
        name: (
            t.annotations.read_only_hint,
            t.annotations.destructive_hint,
            t.annotations.idempotent_hint,
        )
        for name, t in tools.items()
    }
    assert hints["sql_query"] == (True, False, True)
    assert hints["list_workspaces"] == (True, False, True)
    assert hints["sql_execute"] == (False, True, False)
    assert hints["sql"] == (False, True, False)
    assert hints["submit_review"][0] is False
    assert hints["select_workspace"] == (False, False, True)
    for tool in tools.values():
        assert "workspace_id" in tool.input_schema["properties"]


def test_select_returns_rows_of_the_selected_workspace_only(
    live_server_url, api_key, workspace, other_workspace
):
    make_card(workspace, front_text="mine")
    make_card(other_workspace, front_text="theirs")
    body = call(
        live_server_url, api_key.plaintext, "sql_query", {"sql": "SELECT front_text FROM cards"}
    )
    assert body["ok"] is True
    assert body["data"]["rows"] == [{"front_text": "mine"}]
    assert body["docs"]["discoveryUrl"] == f"{live_server_url}/v1/"
    log = QueryLog.objects.get(request_id=body["requestId"])
    assert (log.surface, log.workspace_id, log.api_key_id) == ("mcp", workspace.pk, api_key.pk)


def test_insert_writes_through_the_services(live_server_url, api_key, workspace):
    body = call(
        live_server_url,
        api_key.plaintext,
        "sql",
        {
            "sql": "INSERT INTO cards (front_text, back_text, tags) VALUES (' hola ', 'hello', ('es'))"
        },
    )
    assert body["ok"] is True
    card = Card.objects.get(workspace=workspace)
    assert body["data"]["rows"] == [{"card_id": str(card.pk)}]
    assert (card.front_text, card.tags) == ("hola", ["es"])
    assert QueryLog.objects.get(request_id=body["requestId"]).surface == "mcp"


def test_dry_run_writes_nothing(live_server_url, api_key, workspace):
    sql = "INSERT INTO cards (front_text, back_text) VALUES ('a', 'b')"
    body = call(live_server_url, api_key.plaintext, "sql_execute", {"sql": sql, "dry_run": True})
    assert body["ok"] is True
    assert body["data"]["dryRun"] is True
    assert not Card.objects.exists()


def test_a_bad_query_is_an_error_result_with_the_envelope(live_server_url, api_key):
    body = call(live_server_url, api_key.plaintext, "sql", {"sql": "SELECT * FROM flashcards"})
    assert body["ok"] is False
    assert body["error"]["code"] == "QUERY_INVALID_SQL"
    assert body["error"]["details"]["reason"] == "unknown_resource"
    log = QueryLog.objects.get(request_id=body["requestId"])
    assert (log.surface, log.outcome) == ("mcp", "QUERY_INVALID_SQL")


@pytest.mark.parametrize(
    ("tool", "arguments", "field", "message"),
    [
        ("sql", {"sql": 123}, "sql", "valid string"),
        ("sql", {}, "sql", "Field required"),
        ("sql_query", {"sql": "SELECT * FROM cards", "workspace_id": 7}, "workspace_id", "string"),
        (
            "sql_execute",
            {"sql": "DELETE FROM cards WHERE reps = 0", "dry_run": "maybe"},
            "dry_run",
            "boolean",
        ),
        ("submit_review", {"card_id": "x", "rating": [2]}, "rating", ""),
        ("list_workspaces", {"limit": "many"}, "limit", "integer"),
    ],
)
def test_arguments_that_miss_the_input_schema_get_the_envelope(
    live_server_url, api_key, tool, arguments, field, message
):
    body = call(live_server_url, api_key.plaintext, tool, arguments)
    assert body["ok"] is False
    assert body["error"]["code"] == "REQUEST_INVALID"
    fields = body["error"]["details"]["fields"]
    assert field in {problem["field"].split(".")[0] for problem in fields}
    assert message in body["error"]["message"]
    assert body["error"]["message"].startswith(f"Invalid arguments for tool {tool}: ")
    assert tool in body["instructions"]
    assert not QueryLog.objects.exists()  # nothing ran


def test_an_unknown_tool_gets_the_envelope(live_server_url, api_key):
    body = call(live_server_url, api_key.plaintext, "run_sql", {"sql": "SHOW TABLES"})
    assert body["ok"] is False
    assert body["error"]["code"] == "REQUEST_INVALID"
    assert "sql_query" in body["error"]["message"]
    assert body["error"]["details"] == {"tool": "run_sql"}


def test_the_read_tool_refuses_writes(live_server_url, api_key):
    sql = "DELETE FROM cards WHERE reps = 0"
    body = call(live_server_url, api_key.plaintext, "sql_query", {"sql": sql})
    assert body["error"]["details"]["reason"] == "wrong_endpoint"


def test_submit_review_schedules_the_card(live_server_url, api_key, workspace):
    card = make_card(workspace)
    arguments = {"card_id": str(card.pk), "rating": "good", "client_event_id": "mcp-1"}
    first = call(live_server_url, api_key.plaintext, "submit_review", arguments)
    repeat = call(live_server_url, api_key.plaintext, "submit_review", arguments)
    assert first["ok"] is True
    assert first["data"]["review_event"]["review_grade"] == "good"
    assert first["data"]["card"]["reps"] == 1
    assert repeat["data"]["review_event"] == first["data"]["review_event"]
    assert ReviewEvent.objects.count() == 1
    seen = call(
        live_server_url,
        api_key.plaintext,
        "sql_query",
        {"sql": "SELECT card_id, rating FROM review_events"},
    )
    assert seen["data"]["rows"] == [{"card_id": str(card.pk), "rating": 2}]


def test_submit_review_errors_are_envelopes(live_server_url, api_key, workspace):
    card = make_card(workspace)
    body = call(
        live_server_url, api_key.plaintext, "submit_review", {"card_id": str(card.pk), "rating": 9}
    )
    assert body["error"]["code"] == "REQUEST_INVALID"
    assert not ReviewEvent.objects.exists()


def test_workspaces_can_be_listed_and_selected(live_server_url, api_key, user, workspace):
    second = services.create_workspace(user, "Second")
    listed = call(live_server_url, api_key.plaintext, "list_workspaces", {})
    assert [w["workspace_id"] for w in listed["data"]["workspaces"]] == sorted(
        [str(workspace.pk), str(second.pk)],
        key=lambda i: (
            str(workspace.created_at) if i == str(workspace.pk) else str(second.created_at),
            i,
        ),
    )
    selected = call(
        live_server_url, api_key.plaintext, "select_workspace", {"workspace_id": str(second.pk)}
    )
    assert selected["data"]["workspace"]["workspace_id"] == str(second.pk)
    api_key.refresh_from_db()
    assert api_key.selected_workspace_id == second.pk


def test_foreign_workspaces_are_never_reachable(
    live_server_url, api_key, workspace, other_workspace
):
    make_card(other_workspace, front_text="secret")
    foreign = str(other_workspace.pk)
    for tool, arguments in [
        ("sql_query", {"sql": "SELECT * FROM cards", "workspace_id": foreign}),
        ("sql", {"sql": "DELETE FROM cards WHERE reps = 0", "workspace_id": foreign}),
        ("submit_review", {"card_id": str(uuid.uuid4()), "rating": 2, "workspace_id": foreign}),
        ("select_workspace", {"workspace_id": foreign}),
        ("list_workspaces", {"workspace_id": foreign}),
    ]:
        body = call(live_server_url, api_key.plaintext, tool, arguments)
        assert body["error"]["code"] == "WORKSPACE_NOT_FOUND", tool
        assert "secret" not in json.dumps(body)
    assert Card.objects.get(workspace=other_workspace).deleted_at is None
    api_key.refresh_from_db()
    assert api_key.selected_workspace_id == workspace.pk


@pytest.mark.parametrize("header", [None, "Bearer fca_bad", "Basic abc", "REVOKED"])
def test_requests_without_a_valid_key_are_401(live_server_url, api_key, header):
    if header == "REVOKED":
        services.revoke_api_key(api_key)
        header = f"Bearer {api_key.plaintext}"
    headers = {"Accept": "application/json, text/event-stream"}
    if header:
        headers["Authorization"] = header
    ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = httpx2.post(f"{live_server_url}/mcp", json=ping, headers=headers)
    assert response.status_code == 401
    body = response.json()
    assert body["ok"] is False
    assert body["error"]["code"] in {"AUTH_UNAUTHORIZED", "AGENT_API_KEY_INVALID"}


def test_a_plain_json_rpc_post_works_without_the_sdk(live_server_url, api_key, workspace):
    make_card(workspace, front_text="plain")
    headers = {
        "Authorization": f"Bearer {api_key.plaintext}",
        "Accept": "application/json, text/event-stream",
    }
    message = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "sql_query", "arguments": {"sql": "SELECT front_text FROM cards"}},
    }
    response = httpx2.post(f"{live_server_url}/mcp", json=message, headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    result = response.json()["result"]
    assert result["isError"] is False
    assert result["structuredContent"]["data"]["rows"] == [{"front_text": "plain"}]


def test_a_host_outside_allowed_hosts_is_refused(live_server_url, api_key):
    headers = {"Authorization": f"Bearer {api_key.plaintext}", "Host": "evil.example"}
    response = httpx2.post(f"{live_server_url}/mcp", json={}, headers=headers)
    assert response.status_code == 400


def test_django_routes_are_served_by_the_same_application(live_server_url):
    response = httpx2.get(f"{live_server_url}/v1/")
    assert response.status_code == 200
    assert response.json()["data"]["mcp"]["url"] == f"{live_server_url}/mcp"


@override_settings(AGENT_RATE_LIMIT=2)
def test_tool_calls_share_the_keys_rate_limit(live_server_url, api_key):
    cache.clear()
    try:

        async def scenario(client: Client) -> list[CallToolResult]:
            return [await client.call_tool("list_workspaces", {}) for _ in range(3)]

        results = run_client(live_server_url, api_key.plaintext, scenario)
        bodies = [envelope(r) for r in results]
        assert [b["ok"] for b in bodies] == [True, True, False]
        assert bodies[2]["error"]["code"] == "RATE_LIMITED"
        assert bodies[2]["error"]["details"]["retryAfterSeconds"] >= 1
    finally:
        cache.clear()


# dsl.md §9.1 "Speak to the surface": over MCP, hints and instructions name tools.


@pytest.mark.parametrize(
    ("tool", "sql", "tool_named"),
    [
        ("sql_query", "DELETE FROM cards WHERE reps = 0", "sql_execute"),
        ("sql_execute", "SELECT * FROM cards", "sql_query"),
        ("sql", "UPDATE review_events SET rating = 3 WHERE rating = 0", "submit_review"),
        ("sql", "UPDATE cards SET due_at = NOW() WHERE reps = 0", "submit_review"),
    ],
)
def test_errors_over_mcp_name_tools_not_routes(live_server_url, api_key, tool, sql, tool_named):
    body = call(live_server_url, api_key.plaintext, tool, {"sql": sql})
    assert body["ok"] is False
    error = body["error"]
    prose = " ".join([body["instructions"], error["message"], error["details"]["hint"]])
    assert tool_named in prose, prose
    assert "/v1/agent/sql" not in prose and "/v1/agent/reviews" not in prose, prose
    assert "request body" not in prose, prose


def test_the_same_error_over_rest_names_the_route(api):
    response = api.post(
        "/v1/agent/sql/query", {"sql": "DELETE FROM cards WHERE reps = 0"}, format="json"
    )
    body = response.json()
    assert "/v1/agent/sql/execute" in body["error"]["message"] + body["error"]["details"]["hint"]


@override_settings(AGENT_RATE_LIMIT=2)
def test_rest_and_mcp_spend_one_budget_named_after_the_keys_user(live_server_url, api_key, api):
    """Both surfaces count under the key's user (``user:<pk>.<joined>``): two REST requests leave
    nothing for a tool call, and no counter is named after a row number alone (which a fresh
    database reuses)."""
    cache.clear()
    try:
        for _ in range(2):
            assert api.get("/v1/agent/me").status_code == 200
        body = call(live_server_url, api_key.plaintext, "list_workspaces", {})
        assert body["error"]["code"] == "RATE_LIMITED"
        keys = list(cache._cache)  # LocMemCache (config/test_settings.py)
        user = api_key.user
        stamp = int(user.date_joined.timestamp() * 1_000_000)
        assert any(f"user:{user.pk}.{stamp}:" in key for key in keys), keys
        assert not any(f"key:{api_key.pk}:" in key for key in keys), keys
    finally:
        cache.clear()


@override_settings(AGENT_RATE_LIMIT=1)
def test_a_rate_limited_sql_tool_call_is_in_the_query_log(live_server_url, api_key):
    cache.clear()
    try:
        assert call(live_server_url, api_key.plaintext, "sql", {"sql": "SHOW TABLES"})["ok"]
        refused = call(live_server_url, api_key.plaintext, "sql", {"sql": "SELECT 1 FROM cards"})
        assert refused["error"]["code"] == "RATE_LIMITED"
        row = QueryLog.objects.get(request_id=refused["requestId"])
        assert (row.surface, row.status_code, row.outcome) == ("mcp", 429, "RATE_LIMITED")
        assert row.sql == "SELECT 1 FROM cards"
        assert row.api_key_id == api_key.pk
    finally:
        cache.clear()
