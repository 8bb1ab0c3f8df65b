"""Every request body, on every route, received before the application takes a worker thread,
within its route's limit (ASGI): ``limit_api_bodies`` wraps the Django application.

Django runs on a fixed pool of threads (config.asgi): a body the application read as it arrived
would hold a thread for as long as its client took to send it, and four slow clients froze the
server. So the body is received here first — in memory up to 1 MiB, then in a temporary file —
and handed over whole; a body that stalls (no byte for ``REQUEST_BODY_IDLE_SECONDS``, default 10)
is answered 408 and its connection closed, and a client that disconnects before its body is whole
gets nothing run and nothing answered.

The limits (docs/deployment.md, "Limits"): 256 KiB under ``/v1/``; the import uploads
(flashcards.http.upload_limits: the API's, the console's and the admin's) up to the import limit;
``REQUEST_BODY_MAX_BYTES`` (default 1 MiB) elsewhere. Over its limit, a body is never received:

- a declared ``Content-Length`` over the limit: none of the body is received. Under ``/v1/``,
  Django sees an empty body and ``RequestIdMiddleware`` refuses the request by its declared size
  (the envelope, the request id and the query-log entry are the middleware's); elsewhere the 413
  is answered here;
- a body without ``Content-Length`` (chunked): received until it passes the limit, then cut there
  and handed over with its length declared (a WSGI application reads exactly Content-Length
  bytes); for POST, PUT, PATCH and DELETE that is a 413 (the middleware's under ``/v1/``); other
  methods' bodies are not read, so the route answers as usual.
"""

from __future__ import annotations

import asyncio
import tempfile
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from flashcards.http.middleware import API_PREFIX, MAX_BODY_BYTES, UNDECLARED_META
from flashcards.http.upload_limits import body_limit_for

UNDECLARED_HEADER = UNDECLARED_META[len("HTTP_") :].lower().replace("_", "-").encode()
"""Added (and never taken from the client) when a body came without Content-Length, so the 413 of
RequestIdMiddleware can say so."""


def limit_api_bodies(app: ASGIApp, limit: int = MAX_BODY_BYTES) -> ASGIApp:
    async def limited(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        path = scope["path"]
        api = path.startswith(API_PREFIX)
        route_limit = body_limit_for(path, limit if api else other_route_limit())
        headers = [(n, v) for n, v in scope.get("headers") or () if n != UNDECLARED_HEADER]
        scope = {**scope, "headers": headers}
        declared = declared_length(scope)
        if declared is not None and declared > route_limit:
            if not api:
                await _refuse_too_large(send, route_limit)
                return
            await app(scope, _CappedBody(receive, 0), send)
            return
        # Received whole (or one byte past the limit when undeclared) before the application
        # takes a worker thread, in memory up to SPOOL_BYTES and in a temporary file beyond.
        capped = _CappedBody(receive, route_limit + 1) if declared is None else receive
        with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as spool:
            size = await _receive_into(spool, capped, body_idle_seconds())
            if size is None:  # the client left before its body was whole: nothing to answer
                return
            if size == _STALLED:
                await _refuse_stalled(send)
                return
            spool.seek(0)
            if declared is None:
                # A WSGI application reads exactly Content-Length bytes, so an undeclared body
                # is handed over with its length declared.
                headers = [(n, v) for n, v in headers if n != b"content-length"]
                headers.append((b"content-length", str(size).encode()))
                if size > route_limit:
                    if not api and scope.get("method") in _BODY_METHODS:
                        await _refuse_too_large(send, route_limit)
                        return
                    headers.append((UNDECLARED_HEADER, b"1"))
                scope = {**scope, "headers": headers}
            await app(scope, _Spooled(spool, capped), send)

    return limited


SPOOL_BYTES = 1024 * 1024
READ_CHUNK = 64 * 1024
_STALLED = -1
_BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


def other_route_limit() -> int:
    """Bodies of routes outside /v1/ that take no upload (forms, the OAuth endpoints)."""
    from django.conf import settings

    return int(getattr(settings, "REQUEST_BODY_MAX_BYTES", 1024 * 1024))


def body_idle_seconds() -> float:
    """Seconds a body may stall (no byte arriving) before the request is answered 408 and its
    connection closed (docs/deployment.md, "Limits")."""
    from django.conf import settings

    return float(getattr(settings, "REQUEST_BODY_IDLE_SECONDS", 10))


async def _receive_into(spool: Any, receive: Receive, idle: float) -> int | None:
    """The body's size once whole, None when the client disconnected first, _STALLED when no byte
    arrived for ``idle`` seconds."""
    size = 0
    while True:
        try:
            message = await asyncio.wait_for(receive(), timeout=idle)
        except TimeoutError:
            return _STALLED
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        spool.write(chunk)
        size += len(chunk)
        if not message.get("more_body", False):
            return size


async def _refuse_too_large(send: Send, limit: int) -> None:
    await _plain(send, 413, f"Request body too large: the limit of this route is {limit} bytes.")


async def _refuse_stalled(send: Send) -> None:
    await _plain(send, 408, "The request body stopped arriving; the connection is closed.")


async def _plain(send: Send, status: int, text: str) -> None:
    body = (text + "\n").encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class _Spooled:
    """``receive`` that hands over a received body from its spool, in chunks, then what follows
    it (the client's disconnect)."""

    def __init__(self, spool: Any, rest: Receive) -> None:
        self.spool = spool
        self.rest = rest
        self.done = False

    async def __call__(self) -> Message:
        if self.done:
            return await self.rest()
        chunk = self.spool.read(READ_CHUNK)
        more = len(chunk) == READ_CHUNK and self.spool.read(1) != b""
        if more:
            self.spool.seek(-1, 1)
        else:
            self.done = True
        return {"type": "http.request", "body": chunk, "more_body": more}


class _CappedBody:
    """``receive`` for Django's handler that ends the body after ``cap`` bytes. Later calls (Django
    listens for the client's disconnect once it has the body) skip the rest of the upload and
    pass on only what is not body."""

    def __init__(self, receive: Receive, cap: int) -> None:
        self.receive = receive
        self.remaining = cap
        self.ended = False

    async def __call__(self) -> Message:
        if self.ended:
            return await self._after_body()
        if self.remaining <= 0:
            self.ended = True
            return {"type": "http.request", "body": b"", "more_body": False}
        message = await self.receive()
        if message["type"] != "http.request":
            return message
        body: bytes = message.get("body", b"")
        if len(body) >= self.remaining or not message.get("more_body", False):
            self.ended = True
            return {"type": "http.request", "body": body[: self.remaining], "more_body": False}
        self.remaining -= len(body)
        return message

    async def _after_body(self) -> Message:
        while True:
            message = await self.receive()
            if message["type"] != "http.request":
                return message


def declared_length(scope: Scope) -> int | None:
    """The Content-Length as Django's ASGIRequest and then RequestIdMiddleware read it: repeated
    headers joined with ","; absent, empty, not a number or negative is None (no usable length)."""
    values = [
        value.decode("latin1")
        for name, value in scope.get("headers") or ()
        if name == b"content-length"
    ]
    if not values:
        return None
    try:
        length = int(",".join(values))
    except ValueError:
        return None
    return length if length >= 0 else None
