"""Every refusal during a database outage gets its query-log row once the database is back
(dsl.runtime.querylog_writer keeps rows the database could not take): one request refused at each
stage — authentication, rate limit, body limit, statement — while PostgreSQL refuses connections."""

from __future__ import annotations

import time

import pytest

from dsl.models import QueryLog
from flashcards import services
from tests.reliability.faults.support import (
    TcpProxy,
    call,
    database_address,
    database_url,
    serve,
    server_env,
    sql,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("needs_postgres")]


def test_a_refusal_at_every_stage_is_logged_once_the_database_returns(user, workspace):
    _, cold = services.create_api_key(user, "cold", workspace=workspace)
    _, warm = services.create_api_key(user, "warm", workspace=workspace)
    proxy = TcpProxy(database_address())
    env = server_env(
        DATABASE_URL=database_url(proxy.port),
        DB_POOL_MAX_SIZE="4",
        DB_POOL_MIN_SIZE="1",
        AUTH_CACHE_SECONDS="120",
        AGENT_RATE_LIMIT="3",
    )
    try:
        with serve(env, "--workers", "1") as (url, _):
            assert sql(url, warm, "SELECT COUNT(*) AS n FROM cards")[0] == 200
            proxy.refuse()
            stages: dict[str, tuple[int, str]] = {}
            status, _, body, taken = sql(url, cold, "SELECT COUNT(*) AS n FROM cards")
            stages["authentication"] = (status, body["requestId"])
            assert taken < 2, taken
            status, _, body, _ = sql(url, warm, "SELECT COUNT(*) AS n FROM cards")
            stages["statement"] = (status, body["requestId"])
            big = {"sql": "SELECT 1", "pad": "x" * 300_000}
            status, _, body, _ = call(url, "/v1/agent/sql", key=warm, body=big)
            stages["body"] = (status, body["requestId"])
            for _ in range(10):
                status, _, body, _ = sql(url, warm, "SELECT COUNT(*) AS n FROM cards")
                if status == 429:
                    stages["rate limit"] = (status, body["requestId"])
                    break
            assert {stage: status for stage, (status, _) in stages.items()} == {
                "authentication": 503,
                "statement": 503,
                "body": 413,
                "rate limit": 429,
            }
            proxy.accept()
            ids = {request_id for _, request_id in stages.values()}
            deadline = time.monotonic() + 15
            while True:
                logged = dict(
                    QueryLog.objects.filter(request_id__in=ids).values_list(
                        "request_id", "status_code"
                    )
                )
                if set(logged) == ids or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
    finally:
        proxy.close()
    assert logged == {request_id: status for status, request_id in stages.values()}
