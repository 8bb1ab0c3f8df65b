"""Django-level error pages: under /v1/ they are envelopes too, so an agent that guesses a wrong
URL still gets JSON that tells it where to look."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

from flashcards.http.envelope import error_body, refusal_of_bad_request
from flashcards.http.middleware import API_PREFIX


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """Django's 400 (a Host not in ALLOWED_HOSTS, too many fields, …): the envelope under /v1/,
    a JSON error elsewhere that asked for JSON, Django's page otherwise."""
    refused = refusal_of_bad_request(exception) if exception is not None else None
    status_code, code, message, reason = refused or (400, "REQUEST_INVALID", "Bad request.", "")
    if request.path.startswith(API_PREFIX):
        details = {"reason": reason} if reason else None
        body = error_body(request, code, message, details=details)
        return JsonResponse(body, status=status_code)
    if "json" in request.META.get("CONTENT_TYPE", "") or "json" in request.META.get(
        "HTTP_ACCEPT", ""
    ):
        return JsonResponse(
            {"error": "invalid_request", "error_description": message}, status=status_code
        )
    return defaults.bad_request(request, exception)


class BadRequestMiddleware:
    """A view that fails on the shape of its input — JSON nested past the recursion limit, too
    many fields — answers 400 (``bad_request``) instead of a 500 with a traceback, on every
    route (the OAuth registration endpoint and the import form included)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if refusal_of_bad_request(exc) is None:
            return None
        return bad_request(request, exc)


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if not request.path.startswith(API_PREFIX):
        return defaults.page_not_found(request, exception)
    body = error_body(
        request,
        "NOT_FOUND",
        f"No route matches {request.method} {request.path}.",
        instructions="Check the URL against the routes listed at docs.discoveryUrl (GET /v1/).",
    )
    return JsonResponse(body, status=404)


def server_error(request: HttpRequest) -> HttpResponse:
    if not request.path.startswith(API_PREFIX):
        return defaults.server_error(request)
    return JsonResponse(error_body(request, "INTERNAL_ERROR", "Internal server error."), status=500)
