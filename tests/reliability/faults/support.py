"""What the fault suite controls: a TCP proxy in front of PostgreSQL that can refuse and drop
connections, a served process (``manage.py serve``) on loopback, and timed HTTP calls."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.db import connection

ROOT = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class TcpProxy:
    """127.0.0.1:<port> → target. ``refuse()`` closes the listening socket (new connections are
    refused by the kernel) and cuts every open one; ``accept()`` listens again on the same port."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self._listener: socket.socket | None = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self.accept()

    def accept(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(128)
        self._listener = listener
        threading.Thread(target=self._serve, args=(listener,), daemon=True).start()

    def refuse(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with self._lock:
            sockets, self._open = self._open, set()
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    close = refuse

    def _serve(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._open |= {client, upstream}
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


def database_url(port: int | None = None) -> str:
    db = connection.settings_dict
    host = "127.0.0.1" if port else db["HOST"] or "127.0.0.1"
    return f"postgres://{db['USER']}@{host}:{port or db['PORT'] or 5432}/{db['NAME']}"


def database_address() -> tuple[str, int]:
    db = connection.settings_dict
    return (db["HOST"] or "127.0.0.1", int(db["PORT"] or 5432))


def server_env(**overrides: str) -> dict[str, str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "faults-" + uuid.uuid4().hex,
        "DEBUG": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
        "AGENT_RATE_LIMIT": "0",
        "SECURE_SSL_REDIRECT": "0",
        "AUTH_CACHE_SECONDS": "5",
        **overrides,
    }
    env.pop("DJANGO_ALLOW_INSECURE_KEY", None)
    return env


@contextlib.contextmanager
def serve(
    env: dict[str, str], *args: str, port: int | None = None, stderr: Any = None
) -> Iterator[tuple[str, subprocess.Popen]]:
    """``manage.py serve`` on 127.0.0.1 until the block ends (SIGTERM, then SIGKILL)."""
    port = port or free_port()
    command = [sys.executable, "manage.py", "serve", "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(
        [*command, *args], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=stderr
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, process)
        yield url, process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_until_up(url: str, process: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(f"{url}/v1/", timeout=2).read()
            return
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"the server at {url} did not start") from None
            time.sleep(0.1)


def call(
    url: str,
    path: str,
    *,
    key: str | None = None,
    body: Any = None,
    timeout: float = 30,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], Any, float]:
    """(status, headers, parsed body, seconds taken)."""
    data = None if body is None else json.dumps(body).encode()
    sent = {"Content-Type": "application/json", **(headers or {})}
    if key:
        sent["Authorization"] = f"ApiKey {key}"
    request = urllib.request.Request(f"{url}{path}", data=data, headers=sent)
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, answer_headers, raw = response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        status, answer_headers, raw = error.code, error.headers, error.read()
    taken = time.monotonic() - started
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = raw
    return status, dict(answer_headers), parsed, taken


def sql(url: str, key: str, statement: str, **kwargs: Any):
    return call(url, "/v1/agent/sql", key=key, body={"sql": statement}, **kwargs)
