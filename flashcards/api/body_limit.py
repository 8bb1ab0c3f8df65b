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
without this wrapper; only the rest of an oversized upload is never received. Everything else
passes through untouched.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from flashcards.api.middleware import API_PREFIX, MAX_BODY_BYTES


def limit_api_bodies(app: ASGIApp, limit: int = MAX_BODY_BYTES) -> ASGIApp:
    async def limited(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(API_PREFIX):
            await app(scope, receive, send)
            return
        declared = declared_length(scope)
        if declared is not None and declared <= limit:
            await app(scope, receive, send)
            return
        await app(scope, _CappedBody(receive, 0 if declared is not None else limit + 1), send)

    return limited


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
