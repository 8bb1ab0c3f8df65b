"""Resources and prompts over MCP, the 413 envelope at /mcp, and errors in tool terms: through the
SDK's client against the live server."""

from __future__ import annotations

import json

import httpx2
import pytest
from mcp.client import Client

from dsl.schema import RESOURCES
from dsl.surfaces.mcp.resources import DUE_CARDS_SQL, NEW_CARDS_SQL, PROGRESS_SQL
from dsl.surfaces.reference import reference
from flashcards.http.middleware import MAX_BODY_BYTES
from tests.flashcards.api.test_mcp import call, run_client

MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def test_one_resource_per_table_and_the_grammar_and_examples(live_server_url, api_key):
    async def scenario(client: Client):
        listed = (await client.list_resources()).resources
        contents = {}
        for resource in listed:
            read = await client.read_resource(str(resource.uri))
            contents[str(resource.uri)] = json.loads(read.contents[0].text)
        return listed, contents

    listed, contents = run_client(live_server_url, api_key.plaintext, scenario)
    uris = {str(r.uri) for r in listed}
    assert uris == {f"flashcards://tables/{r.name}" for r in RESOURCES} | {
        "flashcards://grammar",
        "flashcards://examples",
    }
    assert all(r.mime_type == "application/json" for r in listed)
    cards = contents["flashcards://tables/cards"]
    assert cards["table_name"] == "cards"
    assert {c["column_name"] for c in cards["columns"]} == {c.name for c in RESOURCES[1].columns}
    assert contents["flashcards://grammar"] == json.loads(json.dumps(reference()))
    assert "INSERT INTO decks" in " ".join(contents["flashcards://examples"])


def test_every_statement_the_examples_resource_lists_runs(live_server_url, api_key):
    async def scenario(client: Client):
        read = await client.read_resource("flashcards://examples")
        return json.loads(read.contents[0].text)

    for sql in run_client(live_server_url, api_key.plaintext, scenario):
        body = call(live_server_url, api_key.plaintext, "sql", {"sql": sql, "dry_run": True})
        # Writes naming ids that do not exist match no row; nothing else may fail.
        assert body["ok"] is True, (sql, body["error"])


def test_three_prompts_a_user_would_pick(live_server_url, api_key):
    async def scenario(client: Client):
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        made = await client.get_prompt(
            "make_cards_from_text", {"text": "Lima is the capital of Peru.", "tags": "geo, peru"}
        )
        due = await client.get_prompt("review_due_cards", {"limit": "5"})
        progress = await client.get_prompt("summarise_progress", {})
        return prompts, made, due, progress

    prompts, made, due, progress = run_client(live_server_url, api_key.plaintext, scenario)
    assert set(prompts) == {"make_cards_from_text", "review_due_cards", "summarise_progress"}
    assert [a.name for a in prompts["make_cards_from_text"].arguments] == ["text", "tags"]
    made_text = made.messages[0].content.text
    assert "Lima is the capital of Peru." in made_text and "('geo', 'peru')" in made_text
    assert "sql_execute" in made_text and "front_text is the prompt only" in made_text
    due_text = due.messages[0].content.text
    assert DUE_CARDS_SQL.format(limit=5) in due_text and "submit_review" in due_text
    assert "sql_query" in progress.messages[0].content.text


@pytest.mark.parametrize(
    "sql",
    [DUE_CARDS_SQL.format(limit=10), NEW_CARDS_SQL, *(s.format(days=7) for s in PROGRESS_SQL)],
)
def test_the_statements_the_prompts_quote_run(live_server_url, api_key, sql):
    body = call(live_server_url, api_key.plaintext, "sql_query", {"sql": sql})
    assert body["ok"] is True, body["error"]


def test_an_oversized_request_gets_the_413_envelope(live_server_url, api_key):
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {api_key.plaintext}"}
    big = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "sql", "arguments": {"sql": "SELECT 1 " + "x" * MAX_BODY_BYTES}},
    }
    declared = httpx2.post(f"{live_server_url}/mcp", json=big, headers=headers)

    def chunks():
        data = json.dumps(big).encode()
        for start in range(0, len(data), 65536):
            yield data[start : start + 65536]

    chunked = httpx2.post(
        f"{live_server_url}/mcp",
        content=chunks(),
        headers={**headers, "Content-Type": "application/json"},
    )
    for response in (declared, chunked):
        assert response.status_code == 413
        body = response.json()
        assert body["ok"] is False and body["error"]["code"] == "REQUEST_TOO_LARGE"
        assert body["error"]["details"]["limitBytes"] == MAX_BODY_BYTES
        assert response.headers["x-request-id"] == body["requestId"]
        assert body["instructions"].startswith("Send a smaller MCP request (at most 256 KiB)")
    assert declared.json()["error"]["details"]["receivedBytes"] > MAX_BODY_BYTES
    assert chunked.json()["error"]["details"]["receivedBytes"] is None


def test_a_request_within_the_limit_still_reaches_the_tools(live_server_url, api_key):
    sql = "SELECT front_text FROM cards WHERE front_text = '" + "y" * 20_000 + "'"
    body = call(live_server_url, api_key.plaintext, "sql_query", {"sql": sql})
    assert body["ok"] is True


def test_workspace_errors_over_mcp_name_the_tools(live_server_url, user, api_key, workspace):
    from flashcards import services

    services.create_workspace(user, "Second")
    api_key.selected_workspace = None
    api_key.save()
    body = call(live_server_url, api_key.plaintext, "sql_query", {"sql": "SELECT * FROM cards"})
    assert body["error"]["code"] == "WORKSPACE_SELECTION_REQUIRED"
    text = json.dumps([body["error"], body["instructions"]])
    assert "/v1/agent" not in text, text
    assert "list_workspaces" in body["instructions"] and "select_workspace" in body["instructions"]
