"""Request ids on every response (flashcards.http.request_id decides them), and the 256 KiB body
limit of the API (dsl.md §1)."""

from __future__ import annotations

from collections.abc import Callable
from io import BytesIO

from django.http import HttpRequest, HttpResponse, JsonResponse

from flashcards.http.envelope import error_body
from flashcards.http.request_id import enter_request, request_id_for
from flashcards.http.signals import request_refused
from flashcards.http.upload_limits import body_limit_for, describe_bytes

MAX_BODY_BYTES = 256 * 1024
API_PREFIX = "/v1/"
# Methods whose body a view may read. A GET's body is never parsed, so it is never read here.
BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Set by the server's body limit (flashcards.http.body_limit) on a body that came without
# Content-Length and ran past the limit: the length it declares is the limit plus one byte.
UNDECLARED_META = "HTTP_X_FLASHCARDS_UNDECLARED_LENGTH"


class RequestIdMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.request_id = request_id_for(request)  # type: ignore[attr-defined]
        # Until the request finishes (flashcards.http.request_id): Django logs the response's
        # status after the middleware returns.
        enter_request(request.request_id)  # type: ignore[attr-defined]
        if request.path.startswith(API_PREFIX):
            too_large = self._too_large(request)
            if too_large is not None:
                return too_large
        response = self.get_response(request)
        if request.path.startswith(API_PREFIX):
            response["X-Request-Id"] = self._response_request_id(request, response)
        return response

    @staticmethod
    def _response_request_id(request: HttpRequest, response: HttpResponse) -> str:
        # A replayed idempotent response carries its original requestId; the header must match.
        replayed = getattr(response, "replayed_request_id", None)
        return replayed or request.request_id  # type: ignore[attr-defined]

    @classmethod
    def _too_large(cls, request: HttpRequest) -> HttpResponse | None:
        limit = body_limit_for(request.path, MAX_BODY_BYTES)
        length = _declared_length(request)
        if length is None:
            if request.method not in BODY_METHODS:
                return None
            return cls._undeclared_too_large(request, limit)
        if length <= limit:
            # Declared and within the limit: the body is left in the stream for the view to read.
            return None
        if request.META.get(UNDECLARED_META):
            # Sent without Content-Length; the server (flashcards.http.body_limit) read one byte
            # past the limit and declared that much. As for any undeclared body, only a method
            # whose body a view reads is refused.
            return (
                cls._refuse_undeclared(request, limit) if request.method in BODY_METHODS else None
            )
        return cls._refuse(
            request,
            f"The request body is {length} bytes; the limit is {limit} bytes "
            f"({describe_bytes(limit)}).",
            received=length,
            limit=limit,
        )

    @classmethod
    def _undeclared_too_large(cls, request: HttpRequest, limit: int) -> HttpResponse | None:
        """A body sent without Content-Length (`Transfer-Encoding: chunked`, which uvicorn passes
        through ASGI with no content-length header). Django reads it, but DRF's Request treats a
        missing CONTENT_LENGTH as an empty body, so a valid chunked POST would be answered "missing
        sql". Read at most one byte past the limit: over it, refuse; within it, keep the body as
        Django's `HttpRequest.body` does and declare its length, so Django and DRF read it as if
        it had been sent with Content-Length."""
        body = _read_at_most(request, limit + 1)
        if len(body) > limit:
            return cls._refuse_undeclared(request, limit)
        # The same state `HttpRequest.body` leaves behind after reading the stream itself.
        request._body = body  # type: ignore[attr-defined]
        request._stream = BytesIO(body)  # type: ignore[attr-defined]
        request.META["CONTENT_LENGTH"] = str(len(body))
        return None

    @classmethod
    def _refuse_undeclared(cls, request: HttpRequest, limit: int) -> HttpResponse:
        # Reading stopped at the limit, so the real size is unknown: receivedBytes is null rather
        # than a made-up number.
        return cls._refuse(
            request,
            f"The request body (sent without Content-Length) is more than {limit} "
            f"bytes; the limit is {limit} bytes ({describe_bytes(limit)}).",
            received=None,
            limit=limit,
        )

    @staticmethod
    def _refuse(
        request: HttpRequest, message: str, received: int | None, limit: int = MAX_BODY_BYTES
    ) -> HttpResponse:
        body = error_body(
            request,
            "REQUEST_TOO_LARGE",
            message,
            details={"limitBytes": limit, "receivedBytes": received},
            instructions=None
            if limit == MAX_BODY_BYTES
            else f"Send a smaller file (at most {describe_bytes(limit)}), e.g. split the deck.",
        )
        request_refused.send(RequestIdMiddleware, request=request, body=body, status_code=413)
        response = JsonResponse(body, status=413, json_dumps_params={"ensure_ascii": False})
        response["X-Request-Id"] = request.request_id  # type: ignore[attr-defined]
        return response


def _declared_length(request: HttpRequest) -> int | None:
    """The Content-Length the request declares, or None when it declares none usable (absent,
    empty, not a number, negative): then the body is whatever the stream holds."""
    raw = request.META.get("CONTENT_LENGTH")
    if raw in (None, ""):
        return None
    try:
        length = int(raw)
    except ValueError:
        return None
    return length if length >= 0 else None


def _read_at_most(request: HttpRequest, limit: int) -> bytes:
    """Up to `limit` bytes of the body. A stream's read(n) may return fewer than n bytes before
    its end, so read until the end or the limit."""
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = request.read(remaining)
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
