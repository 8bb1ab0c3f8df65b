"""The API's 256 KiB body limit, enforced while the body is still arriving (ASGI).

Django's ASGI handler receives a request's whole body (in memory up to 2.5 MB, then in a
temporary file) before it builds the request and runs any middleware, so ``RequestIdMiddleware``
alone would answer a 2 GB upload with its 413 only after receiving all of it. ``limit_api_bodies``
wraps the Django application and, for every request under ``/v1/`` (whatever its method: a
GET's body is never read by a view, but the handler would receive it all the same), hands Django
at most one byte past the limit:

- a declared ``Content-Length`` over the limit: none of the body is received; Django sees an empty
  body and the middleware refuses the request by its declared size;
- a body without ``Content-Length`` (chunked): received until it passes the limit, then cut there;
  the middleware reads past the limit and refuses it (for POST, PUT, PATCH and DELETE; other
  methods' bodies are not read, so the route answers as usual).

Either way the envelope, the request id and the query log entry are the middleware's, exactly as
without this wrapper; only the rest of an oversized upload is never received.

A body within the API's limit is received here before Django runs, and a client that disconnects
before its body is whole gets nothing run and nothing answered: the server would otherwise hand
Django the part that arrived (an empty body, as a rule) and log a request the client never
finished as invalid JSON. Larger routes' uploads (imports) stream as they arrive. Everything else
passes through untouched.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from flashcards.http.middleware import API_PREFIX, MAX_BODY_BYTES, UNDECLARED_META
from flashcards.http.upload_limits import body_limit_for

UNDECLARED_HEADER = UNDECLARED_META[len("HTTP_") :].lower().replace("_", "-").encode()
"""Added (and never taken from the client) when a body came without Content-Length, so the 413 of
RequestIdMiddleware can say so."""


def limit_api_bodies(app: ASGIApp, limit: int = MAX_BODY_BYTES) -> ASGIApp:
    async def limited(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(API_PREFIX):
            await app(scope, receive, send)
            return
        route_limit = body_limit_for(scope["path"], limit)
        headers = [(n, v) for n, v in scope.get("headers") or () if n != UNDECLARED_HEADER]
        scope = {**scope, "headers": headers}
        declared = declared_length(scope)
        if declared is not None and declared <= route_limit:
            if declared > limit:  # an upload route's larger body streams to the view
                await app(scope, receive, send)
                return
            whole = await _read_all(receive)
            if whole is None:
                return
            await app(scope, _Replayed(whole, receive), send)
            return
        if declared is not None:
            await app(scope, _CappedBody(receive, 0), send)
            return
        # No usable Content-Length (chunked): take in at most one byte past the limit and hand
        # the application that much with its length declared (a WSGI application reads exactly
        # Content-Length bytes, so an undeclared body would look empty).
        capped = _CappedBody(receive, route_limit + 1)
        body = await _read_all(capped)
        if body is None:
            return
        headers = [(n, v) for n, v in headers if n != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        if len(body) > route_limit:
            headers.append((UNDECLARED_HEADER, b"1"))
        await app({**scope, "headers": headers}, _Replayed(body, capped), send)

    return limited


async def _read_all(receive: Receive) -> bytes | None:
    """The whole body, or None when the client disconnected before it ended."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


class _Replayed:
    """``receive`` that hands over an already received body, then what follows it."""

    def __init__(self, body: bytes, rest: Receive) -> None:
        self.body: bytes | None = body
        self.rest = rest

    async def __call__(self) -> Message:
        if self.body is not None:
            body, self.body = self.body, None
            return {"type": "http.request", "body": body, "more_body": False}
        return await self.rest()


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
