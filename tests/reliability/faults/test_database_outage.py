"""A PostgreSQL that refuses connections is noticed once (flashcards.http.db_errors's circuit
breaker): requests that need it are 503 with Retry-After within milliseconds, GET /v1/ (no
database) keeps answering, and service is back within a second of the database. Figures:
docs/reliability.md ("Database outage"); FAULT_OUTAGE_SECONDS (default 3, 10 under make faults)."""

from __future__ import annotations

import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

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
OUTAGE_SECONDS = float(os.environ.get("FAULT_OUTAGE_SECONDS", "3"))


def _env(proxy: TcpProxy) -> dict[str, str]:
    return server_env(
        DATABASE_URL=database_url(proxy.port),
        DB_POOL_MAX_SIZE="4",
        DB_POOL_MIN_SIZE="2",
        DB_POOL_TIMEOUT="10",
        AUTH_CACHE_SECONDS="0",  # every request needs the database for its key
    )


def test_a_refusing_database_is_answered_in_milliseconds_and_noticed_back_within_a_second(
    user, workspace
):
    _, key = services.create_api_key(user, "outage", workspace=workspace)
    proxy = TcpProxy(database_address())
    try:
        with serve(_env(proxy), "--workers", "1") as (url, _):
            assert sql(url, key, "SELECT COUNT(*) AS n FROM cards")[0] == 200
            proxy.refuse()
            refused_at = time.monotonic()
            sql_times: list[float] = []
            index_times: list[float] = []

            def one_sql(_: int) -> tuple[int, dict, float]:
                status, headers, _body, taken = sql(url, key, "SELECT COUNT(*) AS n FROM cards")
                return status, headers, taken

            with ThreadPoolExecutor(max_workers=4) as threads:
                while time.monotonic() - refused_at < OUTAGE_SECONDS:
                    for status, headers, taken in threads.map(one_sql, range(4)):
                        assert status == 503, status
                        assert int(headers["Retry-After"]) > 0
                        sql_times.append(taken)
                    status, _, body, taken = call(url, "/v1/")
                    assert status == 200, body
                    index_times.append(taken)
            proxy.accept()
            back_at = time.monotonic()
            while True:
                status, _, _, _ = sql(url, key, "SELECT COUNT(*) AS n FROM cards")
                if status == 200:
                    break
                assert time.monotonic() - back_at < 5, "service did not come back"
                time.sleep(0.02)
            recovered = time.monotonic() - back_at
    finally:
        proxy.close()
    # The first refused request may pay for noticing the outage; none waits the pool timeout.
    assert max(sql_times) < 2, max(sql_times)
    later = sorted(sql_times[4:])
    p99 = later[int(len(later) * 0.99) - 1]
    assert p99 < 0.1, p99
    assert max(index_times) < 0.5, max(index_times)
    assert recovered < 1.0, recovered
    print(
        f"\noutage {OUTAGE_SECONDS:.0f}s: {len(sql_times)} 503s, median "
        f"{statistics.median(sql_times) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, max "
        f"{max(sql_times) * 1000:.0f} ms; GET /v1/ max {max(index_times) * 1000:.1f} ms; "
        f"back {recovered * 1000:.0f} ms after the database"
    )


def test_pooled_connections_killed_by_the_server_are_replaced_unseen(user, workspace):
    """Idle pooled connections cut by the database (pg_terminate_backend, a restart, a proxy
    timing out) are checked when handed out: no client sees a 503 for them."""
    _, key = services.create_api_key(user, "outage", workspace=workspace)
    proxy = TcpProxy(database_address())
    try:
        with serve(_env(proxy), "--workers", "1") as (url, _):
            for _ in range(4):
                assert sql(url, key, "SELECT COUNT(*) AS n FROM cards")[0] == 200
            proxy.refuse()
            proxy.accept()  # every pooled connection is dead; the database is back at once
            statuses = [sql(url, key, "SELECT COUNT(*) AS n FROM cards")[0] for _ in range(20)]
    finally:
        proxy.close()
    assert statuses.count(503) <= 1, statuses
