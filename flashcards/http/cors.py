"""CORS for the API and /mcp, by django-cors-headers, off unless CORS_ALLOWED_ORIGINS is set.

Django routes get ``CorsMiddleware`` (first in MIDDLEWARE, so a preflight is answered before
authentication). /mcp is served by the MCP ASGI app, outside Django's middleware, so
``cors_for_asgi`` wraps it: a preflight is answered by the same middleware, and the answer's
CORS headers are computed by it too — one implementation and one set of settings for both."""

from __future__ import annotations

import io
from typing import Any

from corsheaders.conf import conf
from corsheaders.middleware import CorsMiddleware as _LibraryCorsMiddleware
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CORS_HEADER_PREFIX = "access-control-"


def cors_enabled() -> bool:
    """CORS is on when at least one origin is allowed (CORS_ALLOWED_ORIGINS)."""
    return bool(conf.CORS_ALLOWED_ORIGINS)


class CorsMiddleware(_LibraryCorsMiddleware):
    """django-cors-headers' middleware, inert while no origin is configured: without this, the
    library would still answer every preflight itself (with no CORS headers)."""

    def is_enabled(self, request: HttpRequest) -> bool:
        return cors_enabled() and super().is_enabled(request)


_HEADERS_ONLY = CorsMiddleware(lambda request: HttpResponse())


def _request_of(scope: Scope) -> ASGIRequest:
    """A body-less Django request for the scope: enough for the middleware's header decisions."""
    return ASGIRequest(scope, io.BytesIO())


def _is_preflight(request: HttpRequest) -> bool:
    return request.method == "OPTIONS" and "access-control-request-method" in request.headers


def cors_headers_for(scope: Scope) -> tuple[HttpResponse | None, list[tuple[bytes, bytes]]]:
    """(the preflight answer or None, the CORS headers to add to the app's own answer)."""
    request = _request_of(scope)
    preflight = _HEADERS_ONLY.check_preflight(request)
    response = preflight or HttpResponse()
    _HEADERS_ONLY.add_response_headers(request, response)
    headers = [
        (name.lower().encode("latin-1"), value.encode("latin-1"))
        for name, value in response.items()
        if name.lower().startswith(CORS_HEADER_PREFIX) or name.lower() == "vary"
    ]
    return (response if preflight is not None else None), headers


def cors_for_asgi(app: ASGIApp) -> ASGIApp:
    """Apply the Django CORS settings to a non-Django ASGI app (the MCP server)."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not cors_enabled():
            await app(scope, receive, send)
            return
        preflight, headers = cors_headers_for(scope)
        if preflight is not None:
            await send(
                {
                    "type": "http.response.start",
                    "status": preflight.status_code,
                    "headers": [(b"content-length", b"0"), *headers],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start" and headers:
                message = _with_headers(message, headers)
            await send(message)

        await app(scope, receive, send_with_cors)

    return wrapped


def _with_headers(message: Message, extra: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    names = {name for name, _ in extra}
    kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
    return {**message, "headers": kept + extra}
