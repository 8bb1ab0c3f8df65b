"""What every reliability test checks about a response: the dsl.md §2 envelope, a status the
contract allows, and no row of another workspace."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

SQL_URL = "/v1/agent/sql"
# dsl.md §9, plus the 503 of flashcards.http.db_errors.
ERROR_CODES = {
    "QUERY_INVALID_SQL",
    "QUERY_RESULT_TOO_LARGE",
    "QUERY_TIMEOUT",
    "REQUEST_INVALID",
    "REQUEST_TOO_LARGE",
    "AUTH_UNAUTHORIZED",
    "AGENT_API_KEY_INVALID",
    "FORBIDDEN",
    "WORKSPACE_NOT_FOUND",
    "WORKSPACE_SELECTION_REQUIRED",
    "IDEMPOTENCY_KEY_REUSED",
    "RATE_LIMITED",
    "SERVICE_UNAVAILABLE",
}


def post_body(client: Any, body: bytes | str, *, url: str = SQL_URL, **extra: Any) -> Any:
    """POST a body exactly as given (the test client would re-encode a dict)."""
    data = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
    return client.generic("POST", url, data, content_type="application/json", **extra)


def post_sql(client: Any, sql: str, *, headers: dict[str, str] | None = None, **body: Any) -> Any:
    return post_body(client, json.dumps({"sql": sql, **body}), headers=headers or {})


def envelope(response: Any) -> dict[str, Any]:
    """The body, checked against §2 whatever the outcome."""
    assert response.status_code != 500, response.content[:2000]
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    body = json.loads(response.content)
    expected = {"ok", "data", "instructions", "docs", "requestId"}
    assert set(body) == (expected if body["ok"] else expected | {"error"}), body
    assert response["X-Request-Id"] == body["requestId"]
    assert isinstance(body["instructions"], str) and body["instructions"]
    assert (response.status_code == 200) == body["ok"], (response.status_code, body)
    if not body["ok"]:
        assert body["data"] == {}
        assert body["error"]["code"] in ERROR_CODES, body["error"]
        assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body


def refused(response: Any, status: int, code: str, reason: str | None = None) -> dict[str, Any]:
    body = envelope(response)
    assert response.status_code == status, body
    assert body["error"]["code"] == code, body["error"]
    if reason is not None:
        assert body["error"]["details"]["reason"] == reason, body["error"]
    return body["error"]


def returned_rows(body: dict[str, Any]) -> list[dict[str, Any]]:
    data = body.get("data") or {}
    rows = list(data.get("rows") or [])
    for statement in data.get("statements") or []:
        rows += statement.get("rows") or []
    return rows


def assert_no_foreign_rows(body: dict[str, Any], foreign: Iterable[str]) -> None:
    """No returned value names a row, id or text of the other workspace."""
    text = json.dumps(returned_rows(body), ensure_ascii=False).lower()
    leaked = [marker for marker in foreign if marker.lower() in text]
    assert not leaked, f"rows of another workspace leaked: {leaked}"
