"""GET /v1/agent/grammar (no auth): the dialect's reference as the JSON envelope that every
/v1/agent/* route answers with (dsl.md §2), or as an HTML page for a browser (an `Accept` that
names text/html, or `?format=html`). Rendered from dsl.surfaces.reference."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt

from dsl.surfaces.reference import reference
from flashcards.http.envelope import error_body, success_body
from flashcards.http.negotiation import unknown_format

FORMATS = ("html", "json")

JSON_INSTRUCTIONS = (
    "Write statements with these resources, columns and operators, then POST them as "
    '{"sql": "..."} to /v1/agent/sql (see docs.discoveryUrl for every route).'
)


def wants_html(request: HttpRequest) -> bool:
    """Browsers name text/html in Accept; API clients send nothing, */* or application/json."""
    requested = request.GET.get("format")
    if requested in ("json", "html"):
        return requested == "html"
    return "text/html" in request.headers.get("Accept", "")


# Read-only page: exempt so a stray POST gets the JSON 405 envelope instead of the CSRF HTML page.
@csrf_exempt
def grammar(request: HttpRequest) -> HttpResponse:
    if request.method not in ("GET", "HEAD"):
        body = error_body(
            request, "METHOD_NOT_ALLOWED", f"Method {request.method} not allowed; use GET."
        )
        return JsonResponse(body, status=405, headers={"Allow": "GET, HEAD"})
    requested = request.GET.get("format")
    if requested is not None and requested not in FORMATS:
        error = unknown_format(requested, FORMATS)
        body = error_body(
            request,
            error.code,
            error.message,
            details=error.details,
            instructions=error.instructions,
        )
        return JsonResponse(body, status=error.status_code)
    data = reference()
    if wants_html(request):
        return render(request, "dsl/grammar.html", {"ref": data})
    body = success_body(request, data, JSON_INSTRUCTIONS)
    return JsonResponse(body, json_dumps_params={"ensure_ascii": False})
