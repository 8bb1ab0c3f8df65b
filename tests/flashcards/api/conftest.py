from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
import uvicorn
from asgiref.sync import SyncToAsync
from django.db import connections

from tests.support.polling import wait_until


@pytest.fixture
def live_server_url(transactional_db) -> Iterator[str]:
    """The real ASGI application (Django + /mcp) under uvicorn on a free loopback port, in a thread
    of this process: it reads and writes the same test database, committed (transactional_db)."""
    yield from _live_server(proxy_headers=True)


@pytest.fixture
def served_url(transactional_db) -> Iterator[str]:
    """The live server configured as ``manage.py serve`` configures uvicorn (its proxy-header
    handling off: config.asgi applies X-Forwarded-* itself)."""
    from flashcards.management.commands.serve import uvicorn_options

    options = uvicorn_options(
        {
            "workers": 1,
            "forwarded_allow_ips": "127.0.0.1",
            "access_log": False,
            "log_level": "warning",
            "keep_alive": 5,
            "graceful_timeout": 5,
            "limit_concurrency": None,
            "backlog": 64,
        }
    )
    yield from _live_server(proxy_headers=options["proxy_headers"])


def _live_server(*, proxy_headers: bool) -> Iterator[str]:
    from config.asgi import make_application

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(
            make_application(),
            lifespan="on",
            log_level="warning",
            access_log=False,
            proxy_headers=proxy_headers,
        )
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_until(lambda: server.started or not thread.is_alive(), timeout=10, what="uvicorn")
    if not server.started:
        raise RuntimeError("uvicorn did not start")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        # The server's ORM calls ran on asgiref's shared sync thread; close the connection it
        # opened there, or PostgreSQL cannot drop the test database at the end of the run.
        SyncToAsync.single_thread_executor.submit(connections.close_all).result(timeout=10)
        from dsl.surfaces.mcp.server import tool_threads

        tool_threads.close()  # the MCP tool calls' own threads and their connections
