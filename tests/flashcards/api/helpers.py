"""Assertions shared by the agent API tests: every response is the dsl.md §2 envelope."""

from __future__ import annotations

from typing import Any


def assert_envelope_ok(response: Any, status: int = 200) -> dict[str, Any]:
    body = response.json()
    assert response.status_code == status, body
    assert body["ok"] is True
    assert set(body) == {"ok", "data", "instructions", "docs", "requestId"}
    assert body["instructions"]
    assert body["docs"]["discoveryUrl"].endswith("/v1/")
    assert body["docs"]["grammarUrl"].endswith("/v1/agent/grammar")
    assert response["X-Request-Id"] == body["requestId"]
    return body["data"]


def assert_envelope_error(response: Any, status: int, code: str) -> dict[str, Any]:
    body = response.json()
    assert response.status_code == status, body
    assert body["ok"] is False
    assert body["data"] == {}
    assert body["error"]["code"] == code, body
    assert body["error"]["message"]
    assert body["instructions"]
    assert response["X-Request-Id"] == body["requestId"]
    return body["error"]


def select_rows(client: Any, sql: str) -> list[dict[str, Any]]:
    """Rows of one read through the dialect, to check a command is visible there at once."""
    response = client.post("/v1/agent/sql/query", {"sql": sql}, format="json")
    return assert_envelope_ok(response)["rows"]
