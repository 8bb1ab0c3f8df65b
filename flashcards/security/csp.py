"""The Content-Security-Policy of every HTML page this server renders: scripts only from this
server's own static files (no inline script, no eval; the Swagger page loads its start-up script
from a URL, drf-spectacular's split view), styles from this server (inline styles allowed: the
admin's, the browsable API's and Swagger UI's templates carry style attributes, and a style
cannot run code), no plugins, no framing, no foreign <base>."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "frame-ancestors 'none'",
    )
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.get("Content-Type", "").startswith("text/html"):
            response.headers.setdefault("Content-Security-Policy", POLICY)
        return response
