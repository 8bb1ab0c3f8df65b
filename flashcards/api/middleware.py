"""Request ids on every response, and the 256 KiB body limit of the API (dsl.md §1)."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse

from flashcards.api.envelope import error_body
from flashcards.api.signals import request_refused

MAX_BODY_BYTES = 256 * 1024
API_PREFIX = "/v1/"


class RequestIdMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.request_id = str(uuid.uuid4())  # type: ignore[attr-defined]
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

    @staticmethod
    def _too_large(request: HttpRequest) -> HttpResponse | None:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length <= MAX_BODY_BYTES:
            return None
        body = error_body(
            request,
            "REQUEST_TOO_LARGE",
            f"The request body is {length} bytes; the limit is {MAX_BODY_BYTES} bytes (256 KiB).",
            details={"limitBytes": MAX_BODY_BYTES, "receivedBytes": length},
        )
        request_refused.send(RequestIdMiddleware, request=request, body=body, status_code=413)
        response = JsonResponse(body, status=413, json_dumps_params={"ensure_ascii": False})
        response["X-Request-Id"] = request.request_id  # type: ignore[attr-defined]
        return response
