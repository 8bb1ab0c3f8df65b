"""domain.md §4a: the MCP tools through the SDK's own client against the real ASGI application,
each tool with and without its optional workspace_id, results in the REST envelope."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult

from tests.contract.domain_support import (
    CARD_COLUMNS,
    REVIEW_EVENT_COLUMNS,
    WORKSPACE_COLUMNS,
    client_with,
    create_key,
    ok,
    rows,
)
from tests.flashcards.api.conftest import live_server_url  # noqa: F401  (fixture)

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


def session(base_url: str, key: str, scenario: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
        transport = streamable_http_client(f"{base_url}/mcp", http_client=http)
        async with http, Client(transport) as client:
            return await scenario(client)

    return asyncio.run(main())


def envelope(result: CallToolResult) -> dict[str, Any]:
    body = json.loads(result.content[0].text)
    assert result.structured_content == body
    assert result.is_error is (body["ok"] is False)
    assert list(body)[:5] == ["ok", "data", "instructions", "docs", "requestId"]
    assert body["docs"]["discoveryUrl"].endswith("/v1/")
    return body


def test_every_tool_is_listed_with_an_optional_workspace_id(live_server_url):  # noqa: F811
    _, key = create_key("mcp-lister")

    async def scenario(client: Client):
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in session(live_server_url, key, scenario)}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        assert "workspace_id" in tool.input_schema["properties"], name
        required = tool.input_schema.get("required", [])
        assert ("workspace_id" in required) is (name == "select_workspace"), name
        assert tool.description
    assert tools["sql_query"].annotations.read_only_hint is True
    assert tools["sql_execute"].annotations.destructive_hint is True
    # Descriptions come from the same registry as DESCRIBE.
    assert "front_text" in tools["sql"].description
    assert "review_grade" in tools["submit_review"].description


def test_tools_act_on_the_selection_or_on_an_explicit_workspace_id(live_server_url):  # noqa: F811
    _, key = create_key("mcp-user")
    rest = client_with(key)
    personal = ok(rest.get("/v1/agent/me"))["workspace"]["workspace_id"]
    second = ok(rest.post("/v1/agent/workspaces", {"name": "Second"}, format="json"))
    second_id = second["workspace"]["workspace_id"]
    ok(rest.post(f"/v1/agent/workspaces/{personal}/select"))
    _, stranger_key = create_key("mcp-stranger")
    foreign = ok(client_with(stranger_key).get("/v1/agent/me"))["workspace"]["workspace_id"]

    async def scenario(client: Client) -> dict[str, Any]:
        async def call(tool: str, **arguments: Any) -> dict[str, Any]:
            return envelope(await client.call_tool(tool, arguments))

        out: dict[str, Any] = {}
        out["insert_here"] = await call(
            "sql_execute", sql="INSERT INTO cards (front_text, back_text) VALUES ('here', 'a')"
        )
        out["insert_there"] = await call(
            "sql",
            sql="INSERT INTO cards (front_text, back_text) VALUES ('there', 'b') RETURNING card_id",
            workspace_id=second_id,
        )
        out["read_there"] = await call(
            "sql_query", sql="SELECT front_text FROM cards", workspace_id=second_id
        )
        out["read_here"] = await call("sql_query", sql="SELECT front_text FROM cards")
        card_id = out["insert_there"]["data"]["rows"][0]["card_id"]
        out["review_wrong_ws"] = await call("submit_review", card_id=card_id, rating=2)
        out["review"] = await call(
            "submit_review",
            card_id=card_id,
            rating="good",
            reviewed_at="2026-03-05T10:00:00Z",
            client_event_id="mcp-1",
            workspace_id=second_id,
        )
        out["review_again"] = await call(
            "submit_review",
            card_id=card_id,
            rating=0,
            client_event_id="mcp-1",
            workspace_id=second_id,
        )
        out["foreign"] = {
            tool: await call(tool, **args, workspace_id=foreign)
            for tool, args in (
                ("sql", {"sql": "SELECT * FROM cards"}),
                ("sql_query", {"sql": "SELECT * FROM cards"}),
                ("sql_execute", {"sql": "DELETE FROM cards WHERE reps = 0"}),
                ("submit_review", {"card_id": card_id, "rating": 2}),
                ("list_workspaces", {}),
            )
        }
        out["select_foreign"] = await call("select_workspace", workspace_id=foreign)
        out["list"] = await call("list_workspaces", limit=1)
        out["list_rest"] = await call("list_workspaces", cursor=out["list"]["data"]["nextCursor"])
        out["select"] = await call("select_workspace", workspace_id=second_id)
        out["write_read_tool"] = await call("sql_query", sql="DELETE FROM cards WHERE reps = 0")
        return out

    out = session(live_server_url, key, scenario)
    assert out["insert_here"]["ok"] and out["insert_there"]["ok"]
    assert out["read_there"]["data"]["rows"] == [{"front_text": "there"}]
    assert out["read_here"]["data"]["rows"] == [{"front_text": "here"}]
    assert out["review_wrong_ws"]["error"]["code"] == "REQUEST_INVALID"
    data = out["review"]["data"]
    assert list(data) == ["review_event", "card"]
    assert list(data["review_event"]) == REVIEW_EVENT_COLUMNS
    assert list(data["card"]) == CARD_COLUMNS
    assert data["card"]["reps"] == 1 and data["review_event"]["review_grade"] == "good"
    assert out["review_again"]["data"] == data
    for tool, body in out["foreign"].items():
        assert body["ok"] is False and body["error"]["code"] == "WORKSPACE_NOT_FOUND", tool
    assert out["select_foreign"]["error"]["code"] == "WORKSPACE_NOT_FOUND"
    listed = out["list"]["data"]["workspaces"] + out["list_rest"]["data"]["workspaces"]
    assert [w["name"] for w in listed] == ["Personal", "Second"]
    assert out["list"]["data"]["hasMore"] is True
    assert list(out["select"]["data"]["workspace"]) == WORKSPACE_COLUMNS
    assert out["write_read_tool"]["error"]["details"]["reason"] == "wrong_endpoint"
    # The selection made over MCP is the key's selection over REST too.
    assert ok(rest.get("/v1/agent/me"))["workspace"]["workspace_id"] == second_id
    assert rows(rest, "SELECT reps FROM cards") == [{"reps": 1}]
    assert rows(client_with(stranger_key), "SELECT COUNT(*) AS n FROM cards") == [{"n": 0}]


def test_mcp_without_a_valid_key_is_401(live_server_url):  # noqa: F811
    from flashcards import services
    from flashcards.models import ApiKey

    _, revoked = create_key("mcp-revoked")
    services.revoke_api_key(ApiKey.objects.get(user__username="mcp-revoked"))
    ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    for header, code in (
        (None, "AUTH_UNAUTHORIZED"),
        ("Bearer fca_00000000_00000000000000000000000000", "AGENT_API_KEY_INVALID"),
        (f"Bearer {revoked}", "AGENT_API_KEY_INVALID"),
    ):
        headers = {"Accept": "application/json, text/event-stream"}
        if header:
            headers["Authorization"] = header
        response = httpx2.post(f"{live_server_url}/mcp", json=ping, headers=headers)
        assert response.status_code == 401, header
        body = response.json()
        assert body["ok"] is False and body["error"]["code"] == code, header
