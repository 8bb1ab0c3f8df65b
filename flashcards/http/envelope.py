"""The one response envelope of every /v1/agent/* route (dsl.md §2), and the exception handler
that guarantees failures use it too."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import DisallowedHost, RequestDataTooBig, SuspiciousOperation
from django.http import HttpRequest
from django.urls import NoReverseMatch, get_script_prefix, get_urlconf, reverse
from rest_framework import exceptions as drf_exceptions
from rest_framework import status
from rest_framework.response import Response

from flashcards.services import DomainError, NotFoundError

logger = logging.getLogger(__name__)

DEFAULT_INSTRUCTIONS = {
    "REQUEST_INVALID": "Fix the request body using error.message, then retry the same endpoint.",
    "REQUEST_TOO_LARGE": "Send a smaller request body (at most 256 KiB), e.g. split the batch.",
    "AUTH_UNAUTHORIZED": (
        "Authenticate with the header 'Authorization: ApiKey fca_…' (or 'Bearer fca_…'); "
        "see docs.discoveryUrl."
    ),
    "AGENT_API_KEY_INVALID": (
        "The API key is malformed, unknown or revoked. Ask the operator for a new key "
        "(manage.py create_api_key) and retry."
    ),
    "FORBIDDEN": "This principal may not do that. Use a key whose user is a member of the workspace.",
    "WORKSPACE_NOT_FOUND": "List your workspaces with GET /v1/agent/workspaces and use one of their ids.",
    "WORKSPACE_SELECTION_REQUIRED": (
        "Several workspaces are available and none is selected: list them with "
        "GET /v1/agent/workspaces, then POST /v1/agent/workspaces/{workspace_id}/select, "
        "and retry."
    ),
    "NOT_FOUND": "Check the URL against the routes listed at docs.discoveryUrl.",
    "METHOD_NOT_ALLOWED": "Use the HTTP method listed for this route at docs.discoveryUrl.",
    "IDEMPOTENCY_KEY_REUSED": (
        "This Idempotency-Key was already used with a different body; use a new key for a new request."
    ),
    "RATE_LIMITED": "Too many requests for this user: wait Retry-After seconds, then retry.",
    "SERVICE_UNAVAILABLE": "The database is unavailable: wait Retry-After seconds, then retry.",
    "INTERNAL_ERROR": "An unexpected server error occurred; retry later or report the requestId.",
}


def request_id_of(request: HttpRequest | Any) -> str:
    """The request's id, created on first use (the middleware normally sets it)."""
    raw = getattr(request, "_request", request)
    request_id = getattr(raw, "request_id", None)
    if request_id is None:
        request_id = str(uuid.uuid4())
        raw.request_id = request_id
    return request_id


def _path(name: str, fallback: str) -> str:
    try:
        return reverse(name)
    except NoReverseMatch:
        return fallback


_docs_by_origin: dict[tuple[str, ...], dict[str, str]] = {}
_MAX_ORIGINS = 64


def docs_for(request: HttpRequest | Any) -> dict[str, str]:
    """The absolute documentation links of every envelope, for the origin the request used.
    Built once per origin and URL prefix (a handful per deployment) instead of on every request."""
    raw = getattr(request, "_request", request)
    urlconf = str(get_urlconf() or settings.ROOT_URLCONF)
    try:
        host = raw.get_host()
    except DisallowedHost:
        # A Host this server does not answer for is refused (400); its links stay relative
        # rather than name that host.
        return {
            "discoveryUrl": _path("discovery", "/v1/"),
            "grammarUrl": _path("grammar", "/v1/agent/grammar"),
        }
    origin = (raw.scheme, host, get_script_prefix(), urlconf)
    docs = _docs_by_origin.get(origin)
    if docs is None:
        docs = {
            "discoveryUrl": raw.build_absolute_uri(_path("discovery", "/v1/")),
            "grammarUrl": raw.build_absolute_uri(_path("grammar", "/v1/agent/grammar")),
        }
        if len(_docs_by_origin) >= _MAX_ORIGINS:
            _docs_by_origin.clear()
        _docs_by_origin[origin] = docs
    # A copy: callers may add to their envelope's docs.
    return dict(docs)


@dataclass(frozen=True)
class Envelope:
    """The one builder of the §2 envelope: every success and failure body of every surface (REST,
    MCP, the console, the dialect's run_sql) is made here."""

    request_id: str
    docs: dict[str, str]

    @classmethod
    def for_request(cls, request: Any) -> Envelope:
        return cls(request_id_of(request), docs_for(request))

    def success(self, data: dict[str, Any], instructions: str) -> dict[str, Any]:
        return {
            "ok": True,
            "data": data,
            "instructions": instructions,
            "docs": self.docs,
            "requestId": self.request_id,
        }

    def failure(
        self,
        code: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        instructions: str | None = None,
    ) -> dict[str, Any]:
        """Without ``instructions``, the code's default (REQUEST_INVALID's for unknown codes)."""
        return {
            "ok": False,
            "data": {},
            "instructions": instructions
            or DEFAULT_INSTRUCTIONS.get(code, DEFAULT_INSTRUCTIONS["REQUEST_INVALID"]),
            "docs": self.docs,
            "requestId": self.request_id,
            "error": {"code": code, "message": message, "details": details or {}},
        }


def success_body(request: Any, data: dict[str, Any], instructions: str) -> dict[str, Any]:
    return Envelope.for_request(request).success(data, instructions)


def error_body(
    request: Any,
    code: str,
    message: str,
    *,
    details: dict[str, Any] | None = None,
    instructions: str | None = None,
) -> dict[str, Any]:
    return Envelope.for_request(request).failure(
        code, message, details=details, instructions=instructions
    )


def success(
    request: Any, data: dict[str, Any], instructions: str, *, status_code: int = 200
) -> Response:
    return Response(success_body(request, data, instructions), status=status_code)


class ApiError(drf_exceptions.APIException):
    """An error with an explicit envelope code; raise it from views."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        status_code: int = status.HTTP_400_BAD_REQUEST,
        details: dict[str, Any] | None = None,
        instructions: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail=message)
        self.code = code
        self.message = message
        self.status_code = status_code
        self.details = details or {}
        self.instructions = instructions
        self.headers = headers or {}


def workspace_not_found() -> ApiError:
    return ApiError(
        "WORKSPACE_NOT_FOUND",
        "Workspace not found (or you are not a member of it).",
        status_code=status.HTTP_404_NOT_FOUND,
    )


def _flatten(detail: Any) -> str:
    if isinstance(detail, dict):
        return "; ".join(f"{k}: {_flatten(v)}" for k, v in detail.items())
    if isinstance(detail, list):
        return "; ".join(_flatten(v) for v in detail)
    return str(detail)


def refusal_of_bad_request(exc: BaseException) -> tuple[int, str, str, str] | None:
    """(status, code, message, reason) for a request Django or the JSON parser refuses by its
    shape — too many fields, a body over Django's limits, a Host not allowed, JSON nested past
    the interpreter's recursion limit — or None for any other error."""
    if isinstance(exc, RecursionError):
        return 400, "REQUEST_INVALID", "The body is nested too deeply to parse.", "too_deep"
    if isinstance(exc, RequestDataTooBig):
        return 413, "REQUEST_TOO_LARGE", str(exc) or "The body is too large.", "body_too_large"
    if isinstance(exc, DisallowedHost):
        return (
            400,
            "REQUEST_INVALID",
            "The Host header names a host this server does not serve.",
            "disallowed_host",
        )
    if isinstance(exc, SuspiciousOperation):
        reason = "too_many_fields" if type(exc).__name__ == "TooManyFieldsSent" else "bad_request"
        return 400, "REQUEST_INVALID", str(exc) or "Bad request.", reason
    return None


def error_response_for(exc: Exception, request: Any) -> Response:
    """Map any exception to an envelope response. Never raises."""
    headers: dict[str, str] = {}
    if isinstance(exc, ApiError):
        body = error_body(
            request, exc.code, exc.message, details=exc.details, instructions=exc.instructions
        )
        return Response(body, status=exc.status_code, headers=exc.headers)
    if isinstance(exc, NotFoundError):
        code, status_code, message = "REQUEST_INVALID", 400, exc.message
        details = {"field": exc.field, "reason": exc.code} if exc.field else {"reason": exc.code}
        return Response(error_body(request, code, message, details=details), status=status_code)
    if isinstance(exc, DomainError):
        details = {"reason": exc.code}
        if exc.field:
            details["field"] = exc.field
        return Response(
            error_body(request, "REQUEST_INVALID", exc.message, details=details), status=400
        )
    if isinstance(exc, drf_exceptions.Throttled):
        wait = int(exc.wait or 1) if exc.wait is not None else 60
        headers["Retry-After"] = str(max(wait, 1))
        body = error_body(
            request,
            "RATE_LIMITED",
            f"Rate limit exceeded; retry in {headers['Retry-After']} seconds.",
            details={"retryAfterSeconds": max(wait, 1)},
        )
        return Response(body, status=429, headers=headers)
    if isinstance(exc, drf_exceptions.AuthenticationFailed):
        return Response(
            error_body(request, "AGENT_API_KEY_INVALID", _flatten(exc.detail)),
            status=401,
            headers={"WWW-Authenticate": "ApiKey"},
        )
    if isinstance(exc, drf_exceptions.NotAuthenticated):
        return Response(
            error_body(
                request, "AUTH_UNAUTHORIZED", "Authentication credentials were not provided."
            ),
            status=401,
            headers={"WWW-Authenticate": "ApiKey"},
        )
    if isinstance(exc, drf_exceptions.PermissionDenied):
        return Response(error_body(request, "FORBIDDEN", _flatten(exc.detail)), status=403)
    if isinstance(exc, drf_exceptions.NotFound):
        return Response(error_body(request, "NOT_FOUND", _flatten(exc.detail)), status=404)
    if isinstance(exc, drf_exceptions.MethodNotAllowed):
        return Response(error_body(request, "METHOD_NOT_ALLOWED", _flatten(exc.detail)), status=405)
    if isinstance(exc, drf_exceptions.UnsupportedMediaType):
        return Response(
            error_body(
                request,
                "REQUEST_INVALID",
                "Send the body as JSON with 'Content-Type: application/json'.",
            ),
            status=415,
        )
    if isinstance(exc, drf_exceptions.APIException):
        return Response(
            error_body(request, "REQUEST_INVALID", _flatten(exc.detail)), status=exc.status_code
        )
    refused = refusal_of_bad_request(exc)
    if refused is not None:
        status_code, code, message, reason = refused
        body = error_body(request, code, message, details={"reason": reason})
        return Response(body, status=status_code)
    logger.exception("Unhandled error in API view", exc_info=exc)
    return Response(error_body(request, "INTERNAL_ERROR", "Internal server error."), status=500)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """DRF EXCEPTION_HANDLER: every failure of every API view becomes an envelope."""
    request = context.get("request")
    return error_response_for(exc, request)
