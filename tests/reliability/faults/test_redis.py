"""Redis with bounds (flashcards.cache.BoundedRedisCache): a paused Redis costs a request at most
the socket timeout and is then remembered as down, logged once per interval; a served process
keeps one connection pool, not one connection per request. The test runs its own redis-server on a
free loopback port (it pauses and kills it), never the shared one."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator

import pytest

from flashcards import services
from tests.reliability.faults.support import (
    call,
    database_url,
    free_port,
    serve,
    server_env,
    sql,
)

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("needs_postgres"),
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server"),
]


@contextlib.contextmanager
def _own_redis() -> Iterator[tuple[int, subprocess.Popen]]:
    port = free_port()
    with tempfile.TemporaryDirectory() as directory:
        process = subprocess.Popen(
            [
                *("redis-server", "--port", str(port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--dir", directory),
            ],
            stdout=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 10
            while _redis(port, b"PING") != b"+PONG":
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)
            yield port, process
        finally:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGCONT)
            process.terminate()
            process.wait(timeout=10)


def _redis(port: int, command: bytes) -> bytes:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(command + b"\r\n")
            answer = b""
            while not answer.endswith(b"\r\n") or (
                answer.startswith(b"$") and answer.count(b"\r\n") < 2
            ):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
            return answer.strip()
    except OSError:
        return b""


def _clients(port: int) -> int:
    listing = _redis(port, b"CLIENT LIST")
    return listing.count(b"addr=") - 1  # not this connection


def _env(port: int, **extra: str) -> dict[str, str]:
    return server_env(
        DATABASE_URL=database_url(),
        DB_POOL_MAX_SIZE="4",
        DB_POOL_MIN_SIZE="1",
        CACHE_BACKEND="django.core.cache.backends.redis.RedisCache",
        CACHE_LOCATION=f"redis://127.0.0.1:{port}/5",
        AGENT_RATE_LIMIT="100000",
        AUTH_GENERATION_CHECK_SECONDS="0",  # every request reads the cache
        **extra,
    )


def test_one_pool_per_process_not_one_connection_per_request(user, workspace):
    _, key = services.create_api_key(user, "redis", workspace=workspace)
    with _own_redis() as (port, _), serve(_env(port), "--workers", "1") as (url, _):
        for _ in range(100):
            assert sql(url, key, "SELECT COUNT(*) AS n FROM cards")[0] == 200
        # A pool grows to the number of threads that used it at once, at most.
        assert 1 <= _clients(port) <= 6, _redis(port, b"CLIENT LIST")


def test_a_paused_redis_costs_each_request_little_and_is_logged_once_per_interval(user, workspace):
    _, key = services.create_api_key(user, "redis", workspace=workspace)
    with tempfile.TemporaryFile() as log, _own_redis() as (port, redis_process):
        env = _env(port, CACHE_RETRY_SECONDS="2", CACHE_TIMEOUT_SECONDS="0.25")
        with serve(env, "--workers", "1", stderr=log) as (url, _):
            assert sql(url, key, "SELECT COUNT(*) AS n FROM cards")[0] == 200
            log.seek(0, os.SEEK_END)
            before = log.tell()
            redis_process.send_signal(signal.SIGSTOP)
            paused_at = time.monotonic()
            times = []
            while time.monotonic() - paused_at < 5:
                status, _, body, taken = sql(url, key, "SELECT COUNT(*) AS n FROM cards")
                assert status == 200, body
                times.append(taken)
                assert call(url, "/v1/")[0] == 200
            paused_for = time.monotonic() - paused_at
            redis_process.send_signal(signal.SIGCONT)
            time.sleep(2.5)
            assert sql(url, key, "SELECT COUNT(*) AS n FROM cards")[0] == 200
        log.seek(before)
        lines = [line for line in log.read().decode().splitlines() if line.strip()]
    intervals = paused_for / 2 + 1
    assert max(times) < 0.6, max(times)  # one socket timeout (0.25 s) and the request itself
    assert statistics.mean(times) < 0.3, statistics.mean(times)
    assert len(lines) <= 3 * intervals, lines
    print(
        f"\npaused Redis {paused_for:.1f}s: {len(times)} requests, mean "
        f"{statistics.mean(times) * 1000:.1f} ms, max {max(times) * 1000:.0f} ms; "
        f"{len(lines)} log lines"
    )
