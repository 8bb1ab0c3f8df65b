"""Every answer under /v1/ is JSON: what Django itself answers outside the API's views (the
redirect of /v1 to /v1/, a 405 of an HTML page such as /v1/docs, any error page) is replaced by
the envelope, its status and headers kept. The browsable API's HTML, which a person asks for with
Accept: text/html, is left as it is."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from rest_framework.renderers import BrowsableAPIRenderer

from flashcards.http.envelope import error_body

CODES = {
    400: "REQUEST_INVALID",
    401: "AUTH_UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    406: "NOT_ACCEPTABLE",
    413: "REQUEST_TOO_LARGE",
    415: "REQUEST_INVALID",
    429: "RATE_LIMITED",
    503: "SERVICE_UNAVAILABLE",
}
KEPT_HEADERS = ("Location", "Allow", "Retry-After", "WWW-Authenticate", "X-Request-Id")


def _under_api(path: str) -> bool:
    return path == "/v1" or path.startswith("/v1/")


class ApiJsonMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            not _under_api(request.path)
            or response.status_code < 300
            or response.status_code == 304
            or response.streaming
            or response.get("Content-Type", "").startswith("application/json")
            # The browsable API: a person asked for HTML (Accept: text/html) and gets its form.
            or isinstance(getattr(response, "accepted_renderer", None), BrowsableAPIRenderer)
        ):
            return response
        status = response.status_code
        if 300 <= status < 400:
            code = "NOT_FOUND"
            message = f"The route is at {response.get('Location', '')}; follow Location."
        else:
            code = CODES.get(status, "INTERNAL_ERROR" if status >= 500 else "REQUEST_INVALID")
            message = f"{request.method} {request.path} is refused ({status})."
        replaced = JsonResponse(
            error_body(
                request,
                code,
                message,
                instructions="Check the URL and method against docs.discoveryUrl (GET /v1/).",
            ),
            status=status,
        )
        for name in KEPT_HEADERS:
            if name in response:
                replaced[name] = response[name]
        return replaced
