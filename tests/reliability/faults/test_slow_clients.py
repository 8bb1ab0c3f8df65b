"""Slow clients hold no worker thread (flashcards.http.body_limit): with a dozen half-sent bodies
open — anonymous ``POST /o/token/`` forms and 1 MB uploads to the console's import — other
requests are answered at once; the stalled bodies are answered 408 and closed after
REQUEST_BODY_IDLE_SECONDS; an upload declared over its limit is refused before it is sent."""

from __future__ import annotations

import contextlib
import socket
import time

import pytest

from tests.reliability.faults.support import call, serve, server_env

IDLE_SECONDS = 2


@pytest.fixture
def server(tmp_path):
    env = server_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        CACHE_LOCATION=str(tmp_path / "cache"),
        REQUEST_BODY_IDLE_SECONDS=str(IDLE_SECONDS),
    )
    with serve(env, "--workers", "1") as (url, _):
        yield url


def _half_sent(port: int, path: str, declared: int, content_type: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {declared}\r\n\r\n"
    )
    sock.sendall(head.encode() + b"x" * min(declared // 2, 512 * 1024))
    return sock


def _status_of(sock: socket.socket) -> int | None:
    with contextlib.suppress(OSError):
        answer = sock.recv(4096)
        if answer.startswith(b"HTTP/1.1 "):
            return int(answer.split()[1])
    return None


def test_stalled_bodies_delay_no_one_and_are_closed_after_the_idle_timeout(server):
    port = int(server.rsplit(":", 1)[1])
    stalled = [
        _half_sent(port, "/o/token/", 1000, "application/x-www-form-urlencoded") for _ in range(6)
    ] + [
        _half_sent(port, "/console/import", 1_000_000, "multipart/form-data; boundary=b")
        for _ in range(6)
    ]
    try:
        started = time.monotonic()
        times = []
        for _ in range(20):
            status, _, _, taken = call(server, "/v1/")
            assert status == 200
            times.append(taken)
        assert max(times) < 0.5, times
        assert time.monotonic() - started < IDLE_SECONDS
        statuses = [_status_of(sock) for sock in stalled]
        waited = time.monotonic() - started
    finally:
        for sock in stalled:
            sock.close()
    assert statuses == [408] * len(stalled), statuses
    assert waited < IDLE_SECONDS + 3, waited


def test_an_upload_declared_over_its_limit_is_refused_before_it_is_sent(server):
    port = int(server.rsplit(":", 1)[1])
    sock = _half_sent(port, "/console/import", 10 * 1024**3, "multipart/form-data; boundary=b")
    try:
        sock.settimeout(5)
        assert _status_of(sock) == 413
    finally:
        sock.close()
