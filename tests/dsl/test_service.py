"""run_sql, the function every surface calls (the MCP tools call it directly, without HTTP)."""

from __future__ import annotations

import socket
import uuid

import pytest
from django.db import connection

from dsl.models import QueryLog
from dsl.runtime.service import run_sql

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


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs a PostgreSQL server to lose")
def test_database_outage_is_the_same_503_as_rest(workspace, user, api):
    """The MCP tools call run_sql directly: an outage must answer exactly what REST answers."""
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
    settings = connection.settings_dict
    real = settings["HOST"], settings["PORT"]
    try:
        connection.close()
        settings["HOST"], settings["PORT"] = "127.0.0.1", blocker.getsockname()[1]
        outcome = call(workspace, user, "SELECT COUNT(*) AS n FROM cards")
        rest = api.get("/v1/agent/me")
    finally:
        connection.close()
        settings["HOST"], settings["PORT"] = real
        blocker.close()
    assert rest.status_code == 503 and outcome.status_code == 503
    assert outcome.headers == {"Retry-After": rest["Retry-After"]}
    error, rest_error = outcome.body["error"], rest.json()["error"]
    assert error["code"] == rest_error["code"] == "SERVICE_UNAVAILABLE"
    assert error["message"] == rest_error["message"]
    assert error["details"] == rest_error["details"]
    assert error["details"]["reason"] == "database_unavailable"
