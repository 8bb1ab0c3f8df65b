"""Horizontal scale on real components (issue #12): two server processes — ``manage.py serve`` on
two ports — sharing one PostgreSQL database and one Redis cache behave as one service: one rate
budget per key, an idempotent request replayed by the other process, a change of key state seen by
the other process within the documented bound, and no query-log row lost (each process writes its
rows in the background and flushes them when it is stopped).

Needs PostgreSQL (the test database) and Redis at 127.0.0.1:6379; skipped without them unless
REQUIRE_REDIS=1, which CI sets for its PostgreSQL run."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.db import connection

from dsl.models import QueryLog
from flashcards import services
from flashcards.models import Card

ROOT = Path(__file__).resolve().parents[2]
REDIS = ("127.0.0.1", 6379)
RATE_LIMIT = 30


def _redis_up() -> bool:
    try:
        with socket.create_connection(REDIS, timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _skip_reason() -> str | None:
    if connection.vendor != "postgresql":
        return "two processes share PostgreSQL (SQLite is one machine's file)"
    if not _redis_up():
        return "Redis is not running at 127.0.0.1:6379"
    return None


_reason = _skip_reason()
if _reason and os.environ.get("REQUIRE_REDIS") == "1" and connection.vendor == "postgresql":
    raise RuntimeError(f"REQUIRE_REDIS=1 but {_reason}")

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(_reason is not None, reason=_reason or ""),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _database_url() -> str:
    db = connection.settings_dict
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def _shared_cache(prefix: str) -> dict:
    return {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://{REDIS[0]}:{REDIS[1]}/0",
            "KEY_PREFIX": prefix,
        }
    }


@contextlib.contextmanager
def _servers(count: int, prefix: str | None = None) -> Iterator[list[tuple[str, subprocess.Popen]]]:
    prefix = prefix or f"two-processes-{uuid.uuid4().hex[:8]}"  # nothing shared with earlier runs
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "DB_POOL_MAX_SIZE": "10",
        "DB_POOL_MIN_SIZE": "1",
        "CACHE_BACKEND": "django.core.cache.backends.redis.RedisCache",
        "CACHE_LOCATION": f"redis://{REDIS[0]}:{REDIS[1]}/0",
        "CACHE_KEY_PREFIX": prefix,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "two-processes-" + uuid.uuid4().hex,
        "DEBUG": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
        "AGENT_RATE_LIMIT": str(RATE_LIMIT),
        # The tests send one user's requests from many threads: the rate limit is what they test.
        "AGENT_CONCURRENT_STATEMENTS": "0",
        "SECURE_SSL_REDIRECT": "0",
        "QUERY_LOG_ASYNC": "1",
    }
    env.pop("DJANGO_ALLOW_INSECURE_KEY", None)
    started = []
    try:
        for _ in range(count):
            port = _free_port()
            command = [sys.executable, "manage.py", "serve", "--port", str(port), "--workers", "1"]
            process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
            started.append((f"http://127.0.0.1:{port}", process))
        for url, process in started:
            deadline = time.monotonic() + 60
            while True:
                try:
                    urllib.request.urlopen(f"{url}/v1/", timeout=2).read()
                    break
                except OSError:
                    if time.monotonic() > deadline or process.poll() is not None:
                        raise RuntimeError(f"the server at {url} did not start") from None
                    time.sleep(0.2)
        yield started
    finally:
        _stop(started)


def _stop(started: list[tuple[str, subprocess.Popen]]) -> None:
    for _, process in started:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for _, process in started:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _post(url: str, key: str, sql: str, headers: dict[str, str] | None = None):
    request = urllib.request.Request(
        f"{url}/v1/agent/sql",
        data=json.dumps({"sql": sql}).encode(),
        headers={
            "Authorization": f"ApiKey {key}",
            "Content-Type": "application/json",
            **(headers or {}),
        },
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, error.headers, json.loads(error.read())


@pytest.fixture
def two_servers() -> Iterator[list[tuple[str, subprocess.Popen]]]:
    with _servers(2) as started:
        yield started


def test_one_rate_budget_per_key_across_both_processes(two_servers, user, workspace):
    _, key = services.create_api_key(user, "two", workspace=workspace)
    urls = [url for url, _ in two_servers]
    statuses = [_post(urls[n % 2], key, "SHOW TABLES")[0] for n in range(50)]
    assert set(statuses) <= {200, 429}
    # Exactly the budget; one more at most if a minute boundary passes during the burst (the
    # sliding window forgives that much of the previous minute).
    assert RATE_LIMIT <= statuses.count(200) <= RATE_LIMIT + 1, statuses


def test_an_idempotent_request_is_replayed_by_the_other_process(two_servers, user, workspace):
    _, key = services.create_api_key(user, "two", workspace=workspace)
    (first, _), (second, _) = two_servers
    sql = "INSERT INTO cards (front_text, back_text) VALUES ('once', 'only')"
    headers = {"Idempotency-Key": "two-processes-1"}
    status, _, body = _post(first, key, sql, headers)
    assert status == 200, body
    status, replay_headers, replay = _post(second, key, sql, headers)
    assert status == 200 and replay_headers.get("Idempotent-Replayed") == "true", replay
    assert replay["requestId"] == body["requestId"]
    assert Card.objects.filter(workspace=workspace, front_text="once").count() == 1


def test_a_key_change_in_one_process_is_seen_by_the_other(user, workspace, settings):
    prefix = f"two-processes-{uuid.uuid4().hex[:8]}"
    with _servers(2, prefix) as started:
        # This test process acts as a third member of the deployment: same cache, same prefix.
        settings.CACHES = _shared_cache(prefix)
        _key_changes_are_shared(started, user, workspace)


def _key_changes_are_shared(two_servers, user, workspace) -> None:
    other = services.create_workspace(user, "Second")
    api_key, key = services.create_api_key(user, "two", workspace=workspace)
    (first, _), (second, _) = two_servers
    # Both processes have the key cached with its first workspace.
    for url in (first, second):
        status, _, body = _post(url, key, "SELECT name FROM workspace")
        assert status == 200 and body["data"]["rows"] == [{"name": workspace.name}], body
    request = urllib.request.Request(
        f"{first}/v1/agent/workspaces/{other.pk}/select",
        data=b"{}",
        headers={"Authorization": f"ApiKey {key}", "Content-Type": "application/json"},
        method="POST",
    )
    urllib.request.urlopen(request, timeout=30).read()
    time.sleep(0.35)  # AUTH_GENERATION_CHECK_SECONDS (0.25) and then some
    status, _, body = _post(second, key, "SELECT name FROM workspace")
    assert body["data"]["rows"] == [{"name": "Second"}], body
    # Revoked by another member of the deployment (this process): the servers refuse it too.
    services.revoke_api_key(api_key)
    time.sleep(0.35)
    status, _, body = _post(second, key, "SHOW TABLES")
    assert status == 401, body
    status, _, body = _post(first, key, "SHOW TABLES")
    assert status == 401, body


def test_no_query_log_row_is_lost_when_both_processes_stop(user, workspace):
    _, key = services.create_api_key(user, "two", workspace=workspace)
    with _servers(2) as started:
        urls = [url for url, _ in started]
        with ThreadPoolExecutor(max_workers=8) as threads:
            answers = list(
                threads.map(
                    lambda n: _post(
                        urls[n % 2], key, f"SELECT card_id FROM cards LIMIT {n % 5 + 1}"
                    ),
                    range(60),
                )
            )
        ids = {body["requestId"] for _, _, body in answers}
        statuses = [status for status, _, _ in answers]
        assert statuses.count(200) == RATE_LIMIT and statuses.count(429) == 60 - RATE_LIMIT
        # Stopped at once: rows still queued in either process are written at shutdown.
        _stop(started)
    logged = set(QueryLog.objects.filter(request_id__in=ids).values_list("request_id", flat=True))
    assert logged == ids
