"""SIGTERM under keep-alive load (config.asgi.close_connections_once_stopping): ``manage.py serve
--workers 2`` finishes within a few seconds every time, far inside its 20 s grace period, also
with connections accepted while it sweeps its open ones. FAULT_SIGTERM_TRIALS (default 3, 20
under make faults)."""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.reliability.faults.support import ROOT, free_port, server_env, wait_until_up

TRIALS = int(os.environ.get("FAULT_SIGTERM_TRIALS", "3"))
CLIENTS = 8


def _load(port: int, stop: threading.Event, answered: list[int]) -> None:
    """Keep-alive GET /v1/ as fast as possible; reconnect whenever the server closes."""
    while not stop.is_set():
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            while not stop.is_set():
                connection.request("GET", "/v1/")
                response = connection.getresponse()
                response.read()
                answered.append(response.status)
                if response.getheader("Connection", "").lower() == "close":
                    break
            connection.close()
        except OSError:
            time.sleep(0.01)
        except http.client.HTTPException:
            time.sleep(0.01)


@pytest.mark.parametrize("trial", range(TRIALS))
def test_sigterm_under_keep_alive_load_ends_well_inside_the_grace_period(trial, tmp_path):
    port = free_port()
    env = server_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", CACHE_LOCATION=str(tmp_path / "c")
    )
    command = [sys.executable, "manage.py", "serve", "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--workers", "2", "--graceful-timeout", "20"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    stop = threading.Event()
    answered: list[int] = []
    threads = [
        threading.Thread(target=_load, args=(port, stop, answered), daemon=True)
        for _ in range(CLIENTS)
    ]
    try:
        wait_until_up(f"http://127.0.0.1:{port}", process)
        for thread in threads:
            thread.start()
        time.sleep(0.5)
        before = len(answered)
        process.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        process.wait(timeout=30)
        took = time.monotonic() - signalled
    finally:
        stop.set()
        if process.poll() is None:
            process.kill()
            process.wait()
        for thread in threads:
            thread.join(timeout=10)
    assert before > 0
    assert set(answered) == {200}, set(answered)
    assert took < 5, f"shutdown took {took:.1f} s, {len(answered) - before} answered after"
    print(f"\nSIGTERM trial {trial}: {took:.2f} s, {len(answered) - before} answered after it")
