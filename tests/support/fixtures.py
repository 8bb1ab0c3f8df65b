"""The one family of statement fixtures (a pytest plugin, loaded by tests/conftest.py): ``sql``
posts with the workspace's key, ``ok`` / ``rows`` must succeed, ``fails`` / ``reason`` must fail."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.support.envelope import data_of, error_of, post_sql

Run = Callable[..., Any]


@pytest.fixture
def sql(api: Any) -> Run:
    """POST to /v1/agent/sql (or ``url=``) with the workspace's key; returns the response."""

    def run(statement: object, **kwargs: Any) -> Any:
        return post_sql(api, statement, **kwargs)

    return run


@pytest.fixture
def ok(sql: Run) -> Callable[..., dict[str, Any]]:
    """Run sql that must succeed with 200; returns ``data``."""

    def run(statement: str, **kwargs: Any) -> dict[str, Any]:
        return data_of(sql(statement, **kwargs))

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
        return error_of(sql(statement, **kwargs), status)

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
