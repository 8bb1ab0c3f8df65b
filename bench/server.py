"""The served application for the HTTP benchmarks: ``uvicorn config.asgi:application`` with two
worker processes on a free loopback port, under bench.settings, stopped (by its own pid) on exit."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UVICORN = Path(sys.executable).with_name("uvicorn")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _ready(port: int) -> bool:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        conn.request("GET", "/v1/")
        ok = conn.getresponse().status == 200
        conn.close()
        return ok
    except OSError:
        return False


@contextmanager
def serve(*, workers: int = 2, rate_limit: int = 0) -> Iterator[int]:
    """Yields the port of a running server.

    Persistent database connections are off (DB_CONN_MAX_AGE=0, unless the caller's environment
    sets it): Django keeps one connection per thread, and under ASGI each request runs on a
    thread of its own, so CONN_MAX_AGE > 0 leaves a PostgreSQL connection open per request until
    garbage collection; at concurrency 16 that reached 97 connections in seconds and requests
    failed with "too many clients" (docs/benchmarks.md)."""
    port = free_port()
    env = {
        "DB_CONN_MAX_AGE": "0",
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "bench.settings",
        "BENCH_RATE_LIMIT": str(rate_limit),
        "PYTHONPATH": str(ROOT),
    }
    command = [
        str(UVICORN),
        "config.asgi:application",
        "--host", "127.0.0.1",
        "--port", str(port),
        "--workers", str(workers),
        "--no-access-log",
        "--log-level", "warning",
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not _ready(port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the benchmark server did not start")
            time.sleep(0.2)
        yield port
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
