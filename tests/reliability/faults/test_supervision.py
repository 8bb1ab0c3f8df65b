"""``manage.py serve --workers 2`` killed with SIGKILL: its workers exit (PR_SET_PDEATHSIG,
config.asgi) instead of serving on, and a new ``serve`` binds the same port."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.reliability.faults.support import ROOT, free_port, server_env, wait_until_up

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's prctl")


def _children(pid: int) -> list[int]:
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        fields = dict(line.split(":\t", 1) for line in text.splitlines() if ":\t" in line)
        if fields.get("PPid", "").strip() == str(pid):
            found.append(int(status.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in state


def test_workers_exit_when_the_supervisor_is_killed_and_the_port_is_free_again(tmp_path):
    port = free_port()
    env = server_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", CACHE_LOCATION=str(tmp_path / "c")
    )
    command = [sys.executable, "manage.py", "serve", "--host", "127.0.0.1", "--port", str(port)]
    first = subprocess.Popen(
        [*command, "--workers", "2"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL
    )
    second = None
    try:
        wait_until_up(f"http://127.0.0.1:{port}", first)
        deadline = time.monotonic() + 30
        while len(workers := [p for p in _children(first.pid) if _alive(p)]) < 2:
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.1)
        first.send_signal(signal.SIGKILL)
        first.wait()
        deadline = time.monotonic() + 25
        while any(_alive(pid) for pid in workers):
            assert time.monotonic() < deadline, "the workers outlived their supervisor"
            time.sleep(0.1)
        second = subprocess.Popen(
            [*command, "--workers", "1"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL
        )
        wait_until_up(f"http://127.0.0.1:{port}", second)
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(timeout=30)
