"""A black-box suite written from dsl.md alone: every request goes over HTTP through the real
URLconf, middleware, authentication and views with an API key, and every assertion is on the
returned envelope and rows. Fixture data is created through the product's own services, the way
an agent or a client would have written it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

SQL_URL = "/v1/agent/sql"
QUERY_URL = "/v1/agent/sql/query"
EXECUTE_URL = "/v1/agent/sql/execute"

Run = Callable[..., Any]


def post(
    client: APIClient,
    sql: object,
    *,
    url: str = SQL_URL,
    headers: dict[str, str] | None = None,
    **body: Any,
) -> Any:
    return client.post(url, {"sql": sql, **body}, format="json", headers=headers or {})


def check_envelope(response: Any) -> dict[str, Any]:
    """dsl.md §2: the shape every /v1/agent/* response has; returns the body."""
    body = response.json()
    keys = ["ok", "data", "instructions", "docs", "requestId"]
    assert list(body) == ([*keys, "error"] if body["ok"] is False else keys), body
    assert response["X-Request-Id"] == body["requestId"]
    assert body["docs"]["discoveryUrl"].startswith("http")
    assert body["docs"]["grammarUrl"].startswith("http")
    assert isinstance(body["instructions"], str) and body["instructions"].strip()
    if not body["ok"]:
        assert body["data"] == {}
        assert list(body["error"]) == ["code", "message", "details"]
    return body


@pytest.fixture
def sql(api: APIClient) -> Run:
    """POST to /v1/agent/sql (or ``url=``) with the workspace's key; returns the response."""

    def run(statement: object, **kwargs: Any) -> Any:
        return post(api, statement, **kwargs)

    return run


@pytest.fixture
def ok(sql: Run) -> Callable[..., dict[str, Any]]:
    """Run sql that must succeed with 200; returns ``data``."""

    def run(statement: str, **kwargs: Any) -> dict[str, Any]:
        response = sql(statement, **kwargs)
        body = check_envelope(response)
        assert response.status_code == 200 and body["ok"] is True, body.get("error")
        return body["data"]

    return run


@pytest.fixture
def rows(ok: Callable[..., dict[str, Any]]) -> Callable[..., list[dict[str, Any]]]:
    """Run a read and return its rows."""

    def run(statement: str, **kwargs: Any) -> list[dict[str, Any]]:
        return ok(statement, **kwargs)["rows"]

    return run


@pytest.fixture
def fails(sql: Run) -> Callable[..., dict[str, Any]]:
    """Run sql that must fail with ``status`` (400 by default); returns ``error``."""

    def run(statement: object, status: int = 400, **kwargs: Any) -> dict[str, Any]:
        response = sql(statement, **kwargs)
        body = check_envelope(response)
        assert response.status_code == status and body["ok"] is False, body
        return body["error"]

    return run


@pytest.fixture
def reason(fails: Callable[..., dict[str, Any]]) -> Callable[..., str]:
    """The §9 reason of a QUERY_INVALID_SQL failure."""

    def run(statement: str, **kwargs: Any) -> str:
        error = fails(statement, **kwargs)
        assert error["code"] == "QUERY_INVALID_SQL", error
        details = error["details"]
        assert details["validationIssues"] == [
            {"path": "sql", "code": details["reason"], "message": error["message"]}
        ]
        return details["reason"]

    return run
