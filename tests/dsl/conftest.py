"""Helpers for the dialect's HTTP tests: every call goes through the real URLconf, middleware,
authentication and view."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

SQL_URL = "/v1/agent/sql"
QUERY_URL = "/v1/agent/sql/query"
EXECUTE_URL = "/v1/agent/sql/execute"
ENVELOPE_KEYS = ["ok", "data", "instructions", "docs", "requestId"]


def post_sql(
    client: APIClient,
    sql: object,
    *,
    url: str = SQL_URL,
    dry_run: object = None,
    headers: dict[str, str] | None = None,
    **body: Any,
) -> Any:
    payload: dict[str, Any] = {"sql": sql, **body}
    if dry_run is not None:
        payload["dry_run"] = dry_run
    return client.post(url, payload, format="json", headers=headers or {})


def assert_envelope(response: Any) -> dict[str, Any]:
    """The §2 envelope: keys, request id header, docs URLs; returns the body."""
    body = response.json()
    expected = ENVELOPE_KEYS if body["ok"] else [*ENVELOPE_KEYS, "error"]
    assert list(body) == expected, body
    assert response["X-Request-Id"] == body["requestId"]
    assert body["docs"]["discoveryUrl"].startswith("http")
    assert body["docs"]["grammarUrl"].startswith("http")
    assert isinstance(body["instructions"], str) and body["instructions"]
    if not body["ok"]:
        assert body["data"] == {}
        assert set(body["error"]) == {"code", "message", "details"}
    return body


@pytest.fixture
def sql(api: APIClient) -> Callable[..., Any]:
    """POST sql with the workspace's API key; returns the response."""

    def run(statement: object, **kwargs: Any) -> Any:
        return post_sql(api, statement, **kwargs)

    return run


@pytest.fixture
def ok(sql: Callable[..., Any]) -> Callable[..., dict[str, Any]]:
    """Run sql that must succeed; returns ``data``."""

    def run(statement: str, **kwargs: Any) -> dict[str, Any]:
        response = sql(statement, **kwargs)
        body = assert_envelope(response)
        assert response.status_code == 200 and body["ok"], body
        return body["data"]

    return run


@pytest.fixture
def fails(sql: Callable[..., Any]) -> Callable[..., dict[str, Any]]:
    """Run sql that must fail with ``status`` (400 by default); returns ``error``."""

    def run(statement: object, status: int = 400, **kwargs: Any) -> dict[str, Any]:
        response = sql(statement, **kwargs)
        body = assert_envelope(response)
        assert response.status_code == status and not body["ok"], body
        return body["error"]

    return run
