"""``manage.py serve`` (flashcards/management/commands/serve.py): the socket it binds gives every
accepted connection IPPROTO_TCP and TCP_NODELAY — what asyncio needs to turn Nagle's algorithm off,
and what uvicorn's own ``--workers`` socket lacks (~40 ms per keep-alive response) — and several
workers answer keep-alive requests on one port."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from flashcards.management.commands.serve import listening_socket

ROOT = Path(__file__).resolve().parents[2]


def test_accepted_connections_report_tcp_and_have_nagle_off():
    listener = listening_socket("127.0.0.1", 0)
    try:
        client = socket.create_connection(listener.getsockname(), timeout=5)
        accepted, _ = listener.accept()
        try:
            # asyncio's transports set TCP_NODELAY only on sockets that report IPPROTO_TCP.
            assert accepted.proto == socket.IPPROTO_TCP
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        finally:
            accepted.close()
            client.close()
    finally:
        listener.close()


def test_a_port_in_use_is_a_clear_error():
    taken = listening_socket("127.0.0.1", 0)
    try:
        with pytest.raises(CommandError, match=r"Cannot listen on 127\.0\.0\.1"):
            listening_socket("127.0.0.1", taken.getsockname()[1])
    finally:
        taken.close()


def test_serving_with_debug_off_needs_a_secret_key(settings, monkeypatch):
    settings.DEBUG = False
    monkeypatch.delenv("SECRET_KEY", raising=False)
    with pytest.raises(CommandError, match="SECRET_KEY"):
        call_command("serve", "--port", "0")


def test_workers_must_be_positive():
    with pytest.raises(CommandError, match="--workers"):
        call_command("serve", "--workers", "0")


@pytest.mark.slow
def test_two_workers_answer_keep_alive_requests_on_one_port(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "serve-test-" + os.urandom(8).hex(),
        "DEBUG": "0",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'serve.sqlite3'}",
        "CACHE_LOCATION": str(tmp_path / "cache"),
        "SECURE_SSL_REDIRECT": "0",
    }
    env.pop("DJANGO_ALLOW_INSECURE_KEY", None)
    command = [sys.executable, "manage.py", "serve", "--workers", "2", "--port", str(port)]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                conn.request("GET", "/v1/")
                assert conn.getresponse().read()
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, "serve did not start"
                time.sleep(0.2)
        statuses = []
        for _ in range(20):  # one keep-alive connection
            conn.request("GET", "/v1/")
            response = conn.getresponse()
            response.read()
            statuses.append(response.status)
            assert response.getheader("X-Request-Id")
        conn.close()
        assert statuses == [200] * 20
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
