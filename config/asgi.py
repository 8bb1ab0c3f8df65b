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

from django.core.wsgi import get_wsgi_application

from config.keys import refuse_development_key

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_wsgi_application = get_wsgi_application()

from a2wsgi import WSGIMiddleware  # noqa: E402
from django.conf import settings  # noqa: E402
from starlette.types import ASGIApp, Receive, Scope, Send  # noqa: E402
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware  # noqa: E402

from dsl.runtime.querylog_writer import writer as query_log_writer  # noqa: E402
from dsl.surfaces.mcp.server import MCP_PATH, build_app, tool_threads  # noqa: E402  (needs Django set up first)
from flashcards.http.body_limit import limit_api_bodies  # noqa: E402
from flashcards.http.cors import cors_for_asgi  # noqa: E402
from flashcards.http.request_id import remember_peer  # noqa: E402

refuse_development_key(settings)

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
        async def send_spelled(message: dict) -> None:
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
        WSGIMiddleware(django_wsgi_application, workers=settings.SERVER_THREADS)
    )
)


def flushing_query_log_on_shutdown(receive: Receive) -> Receive:
    """The lifespan's receive, writing the queued query-log rows (dsl.runtime.querylog_writer) and
    closing the MCP tool threads' connections when the server announces its shutdown, before the
    MCP app is told."""

    async def wrapped() -> dict:
        message = await receive()
        if message.get("type") == "lifespan.shutdown":
            await asyncio.to_thread(query_log_writer.flush)
            await asyncio.to_thread(tool_threads.close)
        return message

    return wrapped


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
    # FORWARDED_ALLOW_IPS are applied here, so `manage.py serve` turns uvicorn's own handling off.
    trusted = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
    return remember_peer(ProxyHeadersMiddleware(application, trusted_hosts=trusted))


application = make_application()
