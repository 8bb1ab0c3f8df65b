"""POST /v1/agent/sql, /v1/agent/sql/query and /v1/agent/sql/execute (dsl.md §1).

Thin on purpose: parse the body, pick the workspace, call ``dsl.runtime.service.run_sql`` and return its
envelope. Failures that happen before the dialect runs (auth, body, workspace) are logged here."""

from __future__ import annotations

import time
from typing import Any

from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import MethodNotAllowed, ParseError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dsl.runtime.executor import ENDPOINT_ANY, ENDPOINT_READ, ENDPOINT_WRITE
from dsl.runtime.idempotency import fingerprint
from dsl.runtime.querylog import log_failure
from dsl.runtime.service import run_sql
from flashcards.api import bodies, schemas
from flashcards.http.envelope import ApiError, docs_for, request_id_of, success
from flashcards.http.parsers import AnyBodyAsJSONParser, SafeJSONParser
from flashcards.http.throttling import statement_slot
from flashcards.http.workspace import api_key_of, request_workspace

ENDPOINTS = {"any": ENDPOINT_ANY, "read": ENDPOINT_READ, "write": ENDPOINT_WRITE}
BODY_EXAMPLE = '{"sql": "SELECT * FROM cards LIMIT 20", "dry_run": false}'
FORM_PAGE_INSTRUCTIONS = (
    "Type a statement in the form below and press POST; the answer replaces this text. The query "
    "console (/console/) shows results as a table."
)


class SqlFormSerializer(serializers.Serializer):
    """The browsable API's form (a textarea for humans, form-encoded). Agents send JSON, checked
    and published as flashcards.api.bodies.SqlRequestSerializer."""

    sql = serializers.CharField(
        trim_whitespace=False,
        style={"base_template": "textarea.html", "rows": 12},
        help_text="One statement or several separated by ';'.",
    )
    dry_run = serializers.BooleanField(
        required=False, default=False, help_text="Run, report, then roll back."
    )
    workspace_id = serializers.UUIDField(required=False, help_text=bodies.WORKSPACE_ID_HELP)


def _invalid(message: str) -> ApiError:
    return ApiError("REQUEST_INVALID", message, details={"example": BODY_EXAMPLE})


def parse_body(request: Request) -> dict[str, Any]:
    """The body as a dict with a boolean ``dry_run``; JSON is checked strictly, the browsable
    form (form-encoded) goes through the serializer's lenient boolean parsing."""
    try:
        data = request.data
    except ParseError as exc:
        raise _invalid(f"The body is not valid JSON ({exc.detail}); send {BODY_EXAMPLE}.") from exc
    if hasattr(data, "getlist"):  # a form post from the browsable API
        form = SqlFormSerializer(data=data)
        if not form.is_valid():
            raise _invalid(
                "; ".join(f"{k}: {' '.join(map(str, v))}" for k, v in form.errors.items())
            )
        body = {"sql": form.validated_data["sql"], "dry_run": form.validated_data["dry_run"]}
        if "workspace_id" in form.validated_data:
            body["workspace_id"] = str(form.validated_data["workspace_id"])
        return body
    if not isinstance(data, dict):
        raise _invalid(f"The body must be a JSON object, e.g. {BODY_EXAMPLE}.")
    dry_run = data.get("dry_run", False)
    if not isinstance(dry_run, bool):
        raise _invalid("dry_run must be a JSON boolean (true or false).")
    # Checked here, before the dialect: "" or null is not "no workspace_id".
    bodies.workspace_id_of(data)
    return data


def _submitted(request: Request) -> dict[str, Any] | None:
    """The posted form or JSON object, or None when the body cannot be read as one."""
    try:
        data = request.data
    except ParseError:
        return None
    if hasattr(data, "getlist"):
        # A blank optional field was left empty, not sent wrong: the form shows no error under it.
        return {
            key: data.get(key)
            for key in ("sql", "dry_run", "workspace_id")
            if key in data and not (key == "workspace_id" and not data.get(key))
        }
    return data if isinstance(data, dict) else None


class SqlView(APIView):
    mode = "any"
    # The form parsers serve the browsable API's HTML form (multipart); agents send JSON.
    parser_classes = [SafeJSONParser, FormParser, MultiPartParser, AnyBodyAsJSONParser]
    renderer_classes = [JSONRenderer, BrowsableAPIRenderer]

    def get_serializer(self, *args: Any, **kwargs: Any) -> SqlFormSerializer:
        # The browsable API builds its form with get_serializer() (under a method it overrides
        # to POST, hence the wrapped request's own method): after a submit, the form keeps the
        # statement that was sent, so a typo is one edit away.
        if not args and not kwargs and self.request._request.method == "POST":
            submitted = _submitted(self.request)
            if submitted is not None:
                form = SqlFormSerializer(data=submitted)
                form.is_valid()
                return form
        return SqlFormSerializer(*args, **kwargs)

    @extend_schema(exclude=True)
    def get(self, request: Request) -> Response:
        """Only the browsable API's page (a browser asking for HTML): its form, under a 200 that
        says what to do. Agents still get the 405 envelope: this route runs statements on POST."""
        if getattr(request.accepted_renderer, "format", None) != "api":
            raise MethodNotAllowed("GET")
        data = {"method": "POST", "body": BODY_EXAMPLE, "endpoint": request.path}
        return success(request, data, FORM_PAGE_INSTRUCTIONS)

    @property
    def allowed_methods(self) -> list[str]:
        """POST and OPTIONS: the GET serves only the browsable API's form page, and is neither
        published nor advertised in ``Allow``."""
        return [method for method in super().allowed_methods if method != "GET"]

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        self._started = time.perf_counter()
        super().initial(request, *args, **kwargs)

    def _surface(self, request: Request) -> str:
        return "rest" if api_key_of(request) is not None else "browsable"

    def _refused_surface(self, request: Request) -> str:
        """The surface of a refused request without authenticating it again (DRF would, and
        during an outage that raises again): when authentication itself failed with an error,
        a key sent means the REST surface."""
        if "_user" in request.__dict__:
            return self._surface(request)
        return "rest" if request.META.get("HTTP_AUTHORIZATION") else "browsable"

    @extend_schema(
        request=bodies.SqlRequestSerializer,
        responses={
            200: schemas.envelope(
                "The statement's (or batch's) result, dsl.md §2.1-§2.3.", schemas.SQL_DATA
            )
        },
        parameters=[
            OpenApiParameter(
                "Idempotency-Key",
                location=OpenApiParameter.HEADER,
                required=False,
                description="1-200 printable characters; a repeat within 24 h replays the response.",
            )
        ],
        examples=[OpenApiExample("Select", value={"sql": "SELECT * FROM cards LIMIT 20"})],
    )
    def post(self, request: Request) -> Response:
        body = parse_body(request)
        self._sql = body.get("sql")
        workspace = request_workspace(request, body.get("workspace_id"))
        idempotency_key = request.headers.get("Idempotency-Key")
        with statement_slot(request):
            outcome = self._run_sql(request, body, workspace, idempotency_key)
        response = Response(outcome.body, status=outcome.status_code, headers=outcome.headers)
        if "Idempotent-Replayed" in outcome.headers:
            response.replayed_request_id = outcome.body.get("requestId")  # type: ignore[attr-defined]
        return response

    def _run_sql(
        self, request: Request, body: dict[str, Any], workspace: Any, idempotency_key: str | None
    ) -> Any:
        return run_sql(
            sql=body.get("sql"),
            workspace=workspace,
            user=request.user,
            api_key=api_key_of(request),
            surface=self._surface(request),
            mode=self.mode,
            dry_run=body.get("dry_run", False),
            request_id=request_id_of(request),
            docs=docs_for(request),
            idempotency_key=idempotency_key,
            request_fingerprint=(
                fingerprint({"endpoint": ENDPOINTS[self.mode], "body": body})
                if idempotency_key is not None
                else None
            ),
        )

    def handle_exception(self, exc: Exception) -> Response:
        response = super().handle_exception(exc)
        # A refused POST (auth, body, workspace) is still a dialect request: log it. Other methods
        # (a browser's GET of the form page) are not.
        if self.request.method == "POST" and isinstance(response.data, dict):
            started = getattr(self, "_started", None)
            log_failure(
                self.request,
                surface=self._refused_surface(self.request),
                body=response.data,
                status_code=response.status_code,
                duration_ms=(time.perf_counter() - started) * 1000 if started else 0.0,
                sql=getattr(self, "_sql", ""),
            )
        return response


class SqlQueryView(SqlView):
    mode = "read"


class SqlExecuteView(SqlView):
    mode = "write"
