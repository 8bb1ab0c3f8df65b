"""The one ASGI application: /mcp goes to the MCP server (dsl.surfaces.mcp.server), everything else to Django.

Serve it with ``manage.py serve`` (docs/deployment.md; ``make run`` runs uvicorn directly).
Lifespan events go to the MCP app, whose session manager must run while the server is up, and
flush the query log at shutdown.

Django runs as a WSGI application on a fixed pool of ``SERVER_THREADS`` threads per process
(a2wsgi's WSGIMiddleware), not through Django's ASGI handler. That handler runs every request's
synchronous code on a thread of its own, created for the request (asgiref's ThreadSensitiveContext),
so no database connection can outlive a request: each one opened a new connection (~1 ms on SQLite,
which re-reads the schema; more on PostgreSQL without a pool) and hopped between threads three times.
On a fixed pool each thread keeps its connection (``CONN_MAX_AGE``) and runs the request start to
end (docs/benchmarks.md §4: the paged read went from ~170 to ~250 requests per second on one
process before any other change).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from typing import Any

from django.core.wsgi import get_wsgi_application

from config.keys import refuse_development_key

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_wsgi_application = get_wsgi_application()

from a2wsgi import WSGIMiddleware  # noqa: E402
from django.conf import settings  # noqa: E402
from starlette.types import ASGIApp, Message, Receive, Scope, Send  # noqa: E402

from dsl.runtime.querylog_writer import writer as query_log_writer  # noqa: E402
from dsl.surfaces.mcp.server import MCP_PATH, build_app, tool_threads  # noqa: E402  (needs Django set up first)
from flashcards.http.body_limit import limit_api_bodies  # noqa: E402
from flashcards.http.cors import cors_for_asgi  # noqa: E402
from flashcards.http.request_id import remember_peer  # noqa: E402
from flashcards.security.forwarded import TrustedProxyHeadersMiddleware  # noqa: E402

refuse_development_key(settings)


def exit_with_the_supervisor() -> None:
    """A worker process of ``manage.py serve --workers N`` ends when its supervisor dies, even by
    SIGKILL: Linux sends it SIGTERM then (PR_SET_PDEATHSIG), so it shuts down gracefully and
    releases the listening socket for the next ``serve``. Elsewhere (or not under ``serve``)
    nothing changes."""
    supervisor = os.environ.get("SERVE_SUPERVISOR_PID")
    if not supervisor or not sys.platform.startswith("linux") or int(supervisor) == os.getpid():
        return
    import ctypes
    import signal

    pr_set_pdeathsig = 1
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != int(supervisor):  # it died before the line above ran
        os.kill(os.getpid(), signal.SIGTERM)


exit_with_the_supervisor()

# The API's 256 KiB body limit is applied while the body arrives (flashcards.http.body_limit), so an
# oversized upload is never received whole, and a body sent without Content-Length reaches Django
# with its length declared, as WSGI requires.
# Header names as HTTP/1.1 servers conventionally write them; a2wsgi lower-cases every name.
_HEADER_SPELLINGS = {b"www-authenticate": b"WWW-Authenticate", b"etag": b"ETag"}


def _spelled(name: bytes) -> bytes:
    return _HEADER_SPELLINGS.get(name) or b"-".join(part.capitalize() for part in name.split(b"-"))


def conventional_header_case(app: ASGIApp) -> ASGIApp:
    """Response header names as Django writes them (``X-Request-Id``, ``Retry-After``) rather than
    lower case: names are case-insensitive, but clients that read headers into a plain dict (and
    tests written that way) see what the handler set, as under Django's own ASGI handler."""

    async def spelled(scope: Scope, receive: Receive, send: Send) -> None:
        async def send_spelled(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {
                    **message,
                    "headers": [(_spelled(name), value) for name, value in message["headers"]],
                }
            await send(message)

        await app(scope, receive, send_spelled)

    return spelled


django_application = limit_api_bodies(
    conventional_header_case(
        WSGIMiddleware(django_wsgi_application, workers=settings.SERVER_THREADS)  # type: ignore[arg-type]
    )
)


def flushing_query_log_on_shutdown(receive: Receive) -> Receive:
    """The lifespan's receive, writing the queued query-log rows (dsl.runtime.querylog_writer) and
    closing the MCP tool threads' connections when the server announces its shutdown, before the
    MCP app is told; at startup it starts watching for the shutdown signal
    (``close_connections_once_stopping``)."""

    async def wrapped() -> Message:
        message = await receive()
        if message.get("type") == "lifespan.startup":
            watch_for_shutdown()
        if message.get("type") == "lifespan.shutdown":
            await asyncio.to_thread(query_log_writer.flush)
            await asyncio.to_thread(tool_threads.close)
        return message

    return wrapped


stopping = threading.Event()
"""Set when the process has been told to stop (SIGTERM, SIGINT)."""


def watch_for_shutdown() -> None:
    """Chain a handler before uvicorn's own for SIGTERM and SIGINT (it installed them before the
    lifespan started): it marks the process as stopping, then lets uvicorn shut down as usual."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGTERM, signal.SIGINT):
        previous = signal.getsignal(signum)
        if not callable(previous) or getattr(previous, "marks_stopping", False):
            continue

        def handler(sig: int, frame: Any, previous: Any = previous) -> None:
            stopping.set()
            previous(sig, frame)

        handler.marks_stopping = True  # type: ignore[attr-defined]
        signal.signal(signum, handler)


def close_connections_once_stopping(app: ASGIApp) -> ASGIApp:
    """Once the process is stopping, every response says ``Connection: close``, so a keep-alive
    connection ends after its current request. uvicorn tells the connections it knows of when the
    signal arrives, but a connection accepted during that sweep was never told and went on serving
    its client's requests until the 20 s grace period ran out."""

    async def closing(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return

        async def send_closing(message: Message) -> None:
            if message["type"] == "http.response.start" and stopping.is_set():
                headers = [
                    (n, v) for n, v in message.get("headers", []) if n.lower() != b"connection"
                ]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        await app(scope, receive, send_closing)

    return closing


def make_application() -> ASGIApp:
    """A fresh application; tests build one per live server because the MCP session manager
    can only be started once."""
    # CORS_ALLOWED_ORIGINS applies to /mcp as to /v1/: its preflights are answered before the
    # MCP app's API-key check (flashcards.http.cors).
    mcp_app = cors_for_asgi(build_app())

    async def application(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await mcp_app(scope, flushing_query_log_on_shutdown(receive), send)
            return
        if scope["type"] == "http" and scope["path"].rstrip("/") == MCP_PATH:
            await mcp_app(scope, receive, send)
            return
        await django_application(scope, receive, send)

    # The connection's own peer is recorded before X-Forwarded-For replaces it (a trusted proxy's
    # X-Request-Id is kept, flashcards.http.request_id); the forwarded headers of the proxies in
    # FORWARDED_ALLOW_IPS are applied here, so `manage.py serve` turns uvicorn's own handling off;
    # from any other peer they are removed, so Django never reads a client's X-Forwarded-Proto.
    trusted = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
    return close_connections_once_stopping(
        remember_peer(TrustedProxyHeadersMiddleware(application, trusted_hosts=trusted))
    )


application = make_application()
