"""The served application for the HTTP benchmarks: ``manage.py serve`` — the production command
of docs/deployment.md — on a free loopback port under bench.settings, with the rate limiter and the
query log on as in production, stopped (by its process group) on exit."""

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
# On, as in production, and high enough that a benchmark's own load is never refused: the limiter
# does all its work (the key's slots, the shared cache) on every request.
PRODUCTION_LIKE_RATE_LIMIT = 1_000_000


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
def serve(
    *, workers: int = 1, rate_limit: int = PRODUCTION_LIKE_RATE_LIMIT, env: dict | None = None
) -> Iterator[int]:
    """Yields the port of a running server (``workers`` processes, the production command)."""
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "bench.settings",
        "BENCH_RATE_LIMIT": str(rate_limit),
        "PYTHONPATH": str(ROOT),
        "SECRET_KEY": os.environ.get("SECRET_KEY") or "bench-" + os.urandom(16).hex(),
        **(env or {}),
    }
    command = [
        sys.executable, "manage.py", "serve",
        "--host", "127.0.0.1",
        "--port", str(port),
        "--workers", str(workers),
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
