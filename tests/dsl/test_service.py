"""run_sql, the function every surface calls (the MCP tools call it directly, without HTTP)."""

from __future__ import annotations

import uuid

import pytest

from dsl.models import QueryLog
from dsl.service import run_sql

pytestmark = pytest.mark.django_db

DOCS = {"discoveryUrl": "http://testserver/v1/", "grammarUrl": "http://testserver/v1/agent/grammar"}


def call(workspace, user, sql, **kwargs):
    options = {
        "api_key": None,
        "surface": "mcp",
        "mode": "any",
        "dry_run": False,
        "request_id": str(uuid.uuid4()),
        "docs": DOCS,
    }
    options.update(kwargs)
    return run_sql(sql=sql, workspace=workspace, user=user, **options)


def test_success_envelope_and_log(workspace, user):
    outcome = call(workspace, user, "SHOW TABLES", request_id="req-1")
    assert outcome.status_code == 200 and outcome.headers == {}
    assert list(outcome.body) == ["ok", "data", "instructions", "docs", "requestId"]
    assert outcome.body["requestId"] == "req-1" and outcome.body["docs"] == DOCS
    log = QueryLog.objects.get()
    assert (log.surface, log.request_id, log.outcome, log.user) == ("mcp", "req-1", "ok", user)


@pytest.mark.parametrize("sql", [None, 5, ["SHOW TABLES"], "", "  \n ", "SHOW TABLES \ud800"])
def test_bad_sql_arguments_are_request_invalid(workspace, user, sql):
    outcome = call(workspace, user, sql)
    assert outcome.status_code == 400
    assert outcome.body["error"]["code"] == "REQUEST_INVALID"
    assert QueryLog.objects.get().outcome == "REQUEST_INVALID"


def test_modes(workspace, user):
    outcome = call(workspace, user, "SELECT * FROM cards", mode="write")
    assert outcome.body["error"]["details"]["reason"] == "wrong_endpoint"
    assert "/v1/agent/sql/query" in outcome.body["error"]["message"]
    outcome = call(workspace, user, "INSERT INTO decks (name) VALUES ('d')", mode="read")
    assert "/v1/agent/sql/execute" in outcome.body["error"]["message"]


def test_idempotency_without_a_request_fingerprint(workspace, user, api_key):
    sql = "INSERT INTO decks (name) VALUES ('d')"
    first = call(workspace, user, sql, api_key=api_key, idempotency_key="k")
    again = call(workspace, user, sql, api_key=api_key, idempotency_key="k")
    assert again.headers == {"Idempotent-Replayed": "true"} and again.body == first.body
    other = call(workspace, user, "SHOW TABLES", api_key=api_key, idempotency_key="k")
    assert other.status_code == 409
    assert other.body["error"]["code"] == "IDEMPOTENCY_KEY_REUSED"


def test_unknown_surface_or_mode_is_a_programming_error(workspace, user):
    with pytest.raises(ValueError):
        call(workspace, user, "SHOW TABLES", surface="cli")
