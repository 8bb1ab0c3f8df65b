"""The opt-in PostgreSQL connection pool (DB_POOL_MAX_SIZE, config/settings.py): the served app
answers concurrent requests from at most that many database connections, and the per-request
time limit of a lone read (``SET LOCAL statement_timeout``, dsl.runtime.backends) does not stay on the
pooled sessions."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from flashcards import services
from tests.factories import make_cards

ROOT = Path(__file__).resolve().parents[2]
POOL_SIZE = 3

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the pool is PostgreSQL's"),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _database_url() -> str:
    db = connection.settings_dict
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def _server_connections() -> list[tuple[str, str]]:
    """(state, statement_timeout-relevant query) of every session on the test database but ours."""
    with connection.cursor() as cursor:
        # Inside a transaction PostgreSQL answers from the snapshot of the statistics it took at
        # the first read: clear it, or a session that started waiting since is never seen.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT state, query FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        )
        return cursor.fetchall()


@contextlib.contextmanager
def _serve(pool_size: int, pool_timeout: float = 10) -> Iterator[str]:
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "DB_POOL_MAX_SIZE": str(pool_size),
        "DB_POOL_MIN_SIZE": "1",
        "DB_POOL_TIMEOUT": str(pool_timeout),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "pool-test-" + os.urandom(16).hex(),
        "DEBUG": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
        "AGENT_RATE_LIMIT": "0",
        # Many statements of one user at once is what this test needs: no per-user bound.
        "AGENT_CONCURRENT_STATEMENTS": "0",
        "SECURE_SSL_REDIRECT": "0",
    }
    command = [sys.executable, "-m", "uvicorn", "config.asgi:application", "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--host", "127.0.0.1", "--log-level", "warning"], cwd=ROOT, env=env
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{url}/v1/", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("uvicorn did not start") from None
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.fixture
def pooled_server() -> Iterator[str]:
    with _serve(POOL_SIZE) as url:
        yield url


def _post(url: str, key: str, sql: str) -> tuple[int, dict]:
    status, _, body = _post_with_headers(url, key, sql)
    return status, body


def test_concurrent_requests_share_at_most_the_pools_connections(pooled_server, user, workspace):
    make_cards(workspace, 5, tags=["pool"])
    _, key = services.create_api_key(user, "pool", workspace=workspace)
    reads = [
        "SELECT card_id, front_text FROM cards WHERE tags OVERLAP ('pool') ORDER BY updated_at DESC LIMIT 3",
        "SELECT COUNT(*) AS n FROM cards",
        "SELECT card_id FROM cards WHERE due_at <= NOW() OR due_at IS NULL LIMIT 2",
    ]
    writes = [
        f"INSERT INTO cards (front_text, back_text) VALUES ('pooled {i}', 'x')" for i in range(6)
    ]
    statements = reads * 8 + writes
    with ThreadPoolExecutor(max_workers=8) as threads:
        results = list(threads.map(lambda sql: _post(pooled_server, key, sql), statements))
    assert [status for status, _ in results] == [200] * len(statements), results
    assert results[1][1]["data"]["rows"] in ([{"n": 5 + k}] for k in range(7))
    # Pooled sessions are not left inside a transaction (SET LOCAL ended with its SELECT). The
    # query-log writer may be storing the requests' rows on its pooled connection meanwhile (its
    # BEGIN, INSERT or COMMIT seen mid-batch), so the sessions get a moment to settle; a
    # transaction left open by a request never does.
    deadline = time.monotonic() + 5
    while True:
        sessions = _server_connections()
        settled = all(state == "idle" for state, _ in sessions)
        if settled or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert 1 <= len(sessions) <= POOL_SIZE, sessions
    assert settled, sessions
    status, body = _post(pooled_server, key, "SELECT COUNT(*) AS n FROM cards")
    assert (status, body["data"]["rows"]) == (200, [{"n": 11}])


def test_a_request_that_waits_too_long_for_a_pooled_connection_gets_503(user, workspace):
    """With every pooled connection busy for longer than DB_POOL_TIMEOUT, the next request is the
    503 SERVICE_UNAVAILABLE envelope with Retry-After (psycopg-pool's PoolTimeout is an
    OperationalError), not a 500; once the connection is free again, requests succeed."""
    make_cards(workspace, 2)
    _, key = services.create_api_key(user, "pool", workspace=workspace)
    with _serve(pool_size=1, pool_timeout=1) as url:
        assert _post(url, key, "SELECT COUNT(*) AS n FROM cards")[0] == 200
        with connection.cursor() as cursor, ThreadPoolExecutor(max_workers=1) as threads:
            # The one pooled connection blocks on a lock held here, inside its read.
            cursor.execute("BEGIN")
            cursor.execute("LOCK TABLE flashcards_card IN ACCESS EXCLUSIVE MODE")
            try:
                blocked = threads.submit(_post, url, key, "SELECT COUNT(*) AS n FROM cards")
                deadline = time.monotonic() + 10
                while not any("COUNT" in query for _, query in _server_connections()):
                    assert time.monotonic() < deadline, "the read never reached the database"
                    time.sleep(0.05)
                started = time.monotonic()
                # A read of another table: it needs a connection (SHOW TABLES may need none).
                status, headers, body = _post_with_headers(url, key, "SELECT COUNT(*) FROM decks")
                waited = time.monotonic() - started
            finally:
                cursor.execute("ROLLBACK")
            assert blocked.result(timeout=30)[0] == 200
        assert status == 503, body
        assert body["error"]["code"] == "SERVICE_UNAVAILABLE"
        assert body["ok"] is False and body["requestId"] == headers["X-Request-Id"]
        assert int(headers["Retry-After"]) > 0
        assert 0.9 <= waited < 8, waited
        status, body = _post(url, key, "SELECT COUNT(*) AS n FROM cards")
        assert status == 200, body
        assert body["data"]["rows"] == [{"n": 2}]


def _headers(message: Any) -> dict[str, str]:
    """Header names in their canonical spelling: uvicorn sends them lower-cased."""
    return {
        "-".join(part.capitalize() for part in name.split("-")): v for name, v in message.items()
    }


def _post_with_headers(url: str, key: str, sql: str) -> tuple[int, dict, dict]:
    request = urllib.request.Request(
        f"{url}/v1/agent/sql",
        data=json.dumps({"sql": sql}).encode(),
        headers={"Authorization": f"ApiKey {key}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, _headers(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, _headers(error.headers), json.loads(error.read())
