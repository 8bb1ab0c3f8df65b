"""The dsl.md §2 envelope as every test checks it, and posting a statement to the SQL endpoints."""

from __future__ import annotations

from typing import Any

SQL_URL = "/v1/agent/sql"
QUERY_URL = "/v1/agent/sql/query"
EXECUTE_URL = "/v1/agent/sql/execute"
ENVELOPE_KEYS = ["ok", "data", "instructions", "docs", "requestId"]


def post_sql(
    client: Any,
    sql: object,
    *,
    url: str = SQL_URL,
    dry_run: object = None,
    headers: dict[str, str] | None = None,
    **body: Any,
) -> Any:
    """POST ``{"sql": sql, ...}`` as JSON through the real URLconf; returns the response."""
    payload: dict[str, Any] = {"sql": sql, **body}
    if dry_run is not None:
        payload["dry_run"] = dry_run
    return client.post(url, payload, format="json", headers=headers or {})


def check_envelope(response: Any) -> dict[str, Any]:
    """The §2 shape every /v1/agent/* response has (keys in order, the request id header, docs
    URLs, instructions; a failure's empty data and its error's keys); returns the body."""
    body = response.json()
    expected = [*ENVELOPE_KEYS, "error"] if body.get("ok") is False else ENVELOPE_KEYS
    assert list(body) == expected, body
    assert response["X-Request-Id"] == body["requestId"]
    assert body["docs"]["discoveryUrl"].startswith("http")
    assert body["docs"]["grammarUrl"].startswith("http")
    assert isinstance(body["instructions"], str) and body["instructions"].strip()
    if body["ok"] is False:
        assert body["data"] == {}
        assert list(body["error"]) == ["code", "message", "details"]
    else:
        assert body["ok"] is True
    return body


def data_of(response: Any, status: int = 200) -> dict[str, Any]:
    """The ``data`` of a response that must succeed with ``status``."""
    body = check_envelope(response)
    assert response.status_code == status and body["ok"] is True, body
    return body["data"]


def error_of(response: Any, status: int = 400, code: str | None = None) -> dict[str, Any]:
    """The ``error`` of a response that must fail with ``status`` (and ``code``, if given)."""
    body = check_envelope(response)
    assert response.status_code == status and body["ok"] is False, body
    if code is not None:
        assert body["error"]["code"] == code, body
    assert body["error"]["message"].strip()
    return body["error"]
