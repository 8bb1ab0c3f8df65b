"""The published contract of every /v1/ operation, beyond its success: a drf-spectacular
postprocessing hook (settings.SPECTACULAR_SETTINGS) that adds what the API layer answers on every
route — the error statuses with the one error envelope and ``error.code`` as an enum, the headers
(``X-Request-Id`` always, ``Retry-After`` on 429 and 503, ``WWW-Authenticate`` on 401, ``Allow``
on 405) — publishes request bodies as JSON only (the lenient parsers for other content types and
the browsable API's forms stay unpublished), closes the bodies that refuse unknown keys, and
states the ``Idempotency-Key`` header's form. It works on whatever operations the URLconf has, so
a new route is described the moment it exists; tests/flashcards/api/test_schemathesis.py holds
the server to it."""

from __future__ import annotations

from typing import Any

from flashcards.api.bodies import CLOSED_BODIES, IDEMPOTENCY_KEY_PATTERN
from flashcards.api.schemas import ROW_COMPONENTS, obj, ref
from flashcards.http.envelope import DEFAULT_INSTRUCTIONS
from flashcards.http.middleware import MAX_BODY_BYTES

API_PREFIX = "/v1/"
JSON = "application/json"
BODY_METHODS = frozenset({"post", "put", "patch"})
# Every status the API layer answers with the error envelope, and when.
ERRORS: dict[int, str] = {
    400: "REQUEST_INVALID: a body or parameter that breaks this schema (details.validationIssues) "
    "or a rule the schema cannot state (details.reason); QUERY_* for the dialect's refusals.",
    401: "AUTH_UNAUTHORIZED (no credentials) / AGENT_API_KEY_INVALID.",
    403: "FORBIDDEN: a browser session without its CSRF token, or a principal without access.",
    404: "NOT_FOUND / WORKSPACE_NOT_FOUND (not a member, or an unknown ?format=).",
    405: "METHOD_NOT_ALLOWED: Allow lists this route's methods.",
    406: "REQUEST_INVALID (reason not_acceptable): no representation matches Accept.",
    409: "WORKSPACE_SELECTION_REQUIRED: several workspaces and none selected.",
    413: f"REQUEST_TOO_LARGE: the body is over {MAX_BODY_BYTES} bytes (256 KiB).",
    415: "REQUEST_INVALID: the body is not sent as application/json.",
    429: "RATE_LIMITED: wait Retry-After seconds.",
    503: "SERVICE_UNAVAILABLE: the database is unavailable; wait Retry-After seconds.",
}
PUBLIC_ERRORS = (400, 401, 403, 404, 405, 406, 429, 503)
BODY_ERRORS = (413, 415)
HEADERS: dict[str, dict[str, Any]] = {
    "X-Request-Id": {
        "description": "The request's id, equal to the envelope's requestId.",
        "required": True,
        "schema": ref("RequestId"),
    },
    "Retry-After": {
        "description": "Seconds to wait before retrying.",
        "required": True,
        "schema": {"type": "integer", "minimum": 1},
    },
    "WWW-Authenticate": {
        "description": "The scheme to authenticate with.",
        "required": True,
        "schema": {"type": "string"},
    },
    "Allow": {
        "description": "The methods of this route.",
        "required": True,
        "schema": {"type": "string"},
    },
}
STATUS_HEADERS = {429: ("Retry-After",), 503: ("Retry-After",), 401: ("WWW-Authenticate",)}
STATUS_HEADERS[405] = ("Allow",)


def error_codes() -> list[str]:
    """The codes of the API layer; the dialect's hook (dsl.surfaces.openapi) adds its own."""
    return sorted(DEFAULT_INSTRUCTIONS)


def components() -> dict[str, Any]:
    return {
        "RequestId": {"type": "string", "minLength": 1, "maxLength": 64},
        "Docs": obj(
            {
                "discoveryUrl": {"type": "string", "format": "uri"},
                "grammarUrl": {"type": "string", "format": "uri"},
            }
        ),
        "ErrorCode": {"type": "string", "enum": error_codes()},
        "Error": obj(
            {
                "code": ref("ErrorCode"),
                "message": {"type": "string"},
                "details": {"type": "object", "additionalProperties": True},
            }
        ),
        "ErrorEnvelope": obj(
            {
                "ok": {"type": "boolean", "enum": [False]},
                "data": {"type": "object", "maxProperties": 0},
                "instructions": {"type": "string"},
                "docs": ref("Docs"),
                "requestId": ref("RequestId"),
                "error": ref("Error"),
            }
        ),
    }


def _headers(status: int) -> dict[str, Any]:
    names = ("X-Request-Id", *STATUS_HEADERS.get(status, ()))
    return {name: HEADERS[name] for name in names}


def _error_response(status: int) -> dict[str, Any]:
    return {
        "description": ERRORS[status],
        "headers": _headers(status),
        "content": {JSON: {"schema": ref("ErrorEnvelope")}},
    }


MULTIPART = "multipart/form-data"


def _json_only(operation: dict[str, Any]) -> None:
    """Bodies are JSON (DRF would advertise every parser it has); an upload route, which states
    only a multipart body (the imports), keeps it."""
    body = operation.get("requestBody")
    if body is None:
        return
    content = body.get("content", {})
    if JSON in content:
        body["content"] = {JSON: content[JSON]}
    elif MULTIPART in content:
        body["content"] = {MULTIPART: content[MULTIPART]}
    else:
        body["content"] = {}


def _describe(path: str, method: str, operation: dict[str, Any]) -> None:
    _json_only(operation)
    for parameter in operation.get("parameters", []):
        if parameter.get("in") == "header" and parameter.get("name") == "Idempotency-Key":
            parameter["schema"] = {"type": "string", "pattern": IDEMPOTENCY_KEY_PATTERN}
    responses = operation.setdefault("responses", {})
    for status, response in responses.items():
        if str(status).startswith("2"):
            response.setdefault("headers", {}).update(_headers(int(status)))
    statuses = list(PUBLIC_ERRORS)
    if operation.get("security") != [{}] and {} not in operation.get("security", []):
        statuses.append(409)
    if method in BODY_METHODS:
        statuses += BODY_ERRORS
    for status in statuses:
        responses[str(status)] = _error_response(status)


def add_contract(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """POSTPROCESSING_HOOKS entry."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.update(components())
    for component in ROW_COMPONENTS.values():
        schemas.setdefault(component, {"type": "object"})
    schemas.setdefault("SqlData", {"type": "object"})
    for name in CLOSED_BODIES:
        if name in schemas:
            schemas[name]["additionalProperties"] = False
    for path, item in result.get("paths", {}).items():
        if not path.startswith(API_PREFIX):
            continue
        for method, operation in item.items():
            if isinstance(operation, dict) and "responses" in operation:
                _describe(path, method, operation)
    return result
