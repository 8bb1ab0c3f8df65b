"""Django-level error pages: under /v1/ they are envelopes too, so an agent that guesses a wrong
URL still gets JSON that tells it where to look."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

from flashcards.http.envelope import error_body
from flashcards.http.middleware import API_PREFIX


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
