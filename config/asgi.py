"""The one ASGI application: /mcp goes to the MCP server (dsl.mcp), everything else to Django.

Serve it with uvicorn (`make run`) or gunicorn with uvicorn workers; see docs/deployment.md.
Lifespan events go to the MCP app, whose session manager must run while the server is up
(Django itself has no lifespan handling)."""

from __future__ import annotations

import asyncio
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_application = get_asgi_application()

from starlette.types import ASGIApp, Receive, Scope, Send  # noqa: E402

from dsl.mcp import MCP_PATH, build_app  # noqa: E402  (needs Django set up first)
from dsl.querylog_writer import writer as query_log_writer  # noqa: E402
from flashcards.api.body_limit import limit_api_bodies  # noqa: E402
from flashcards.api.cors import cors_for_asgi  # noqa: E402

# Django's ASGI handler receives a request's whole body before any middleware runs; this wrapper
# stops receiving API bodies past the 256 KiB limit, so RequestIdMiddleware's 413 comes early.
django_api_application = limit_api_bodies(django_application)


def flushing_query_log_on_shutdown(receive: Receive) -> Receive:
    """The lifespan's receive, writing the queued query-log rows (dsl.querylog_writer) when the
    server announces its shutdown, before the MCP app is told."""

    async def wrapped() -> dict:
        message = await receive()
        if message.get("type") == "lifespan.shutdown":
            await asyncio.to_thread(query_log_writer.flush)
        return message

    return wrapped


def make_application() -> ASGIApp:
    """A fresh application; tests build one per live server because the MCP session manager
    can only be started once."""
    # CORS_ALLOWED_ORIGINS applies to /mcp as to /v1/: its preflights are answered before the
    # MCP app's API-key check (flashcards.api.cors).
    mcp_app = cors_for_asgi(build_app())

    async def application(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await mcp_app(scope, flushing_query_log_on_shutdown(receive), send)
            return
        if scope["type"] == "http" and scope["path"].rstrip("/") == MCP_PATH:
            await mcp_app(scope, receive, send)
            return
        await django_api_application(scope, receive, send)

    return application


application = make_application()
