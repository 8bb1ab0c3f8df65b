"""The agent tools over the Model Context Protocol (domain.md §4a): Streamable HTTP at /mcp,
stateless, JSON responses, on the official `mcp` SDK's MCPServer.

Each tool is a thin adapter over the same code the REST routes run — `dsl.runtime.service.run_sql` for
the three SQL tools, `flashcards.api.commands` for the others — and returns the REST envelope as
JSON text plus structured content, with `isError` when `ok` is false. Authentication is a Bearer
API key or OAuth access token (flashcards.oauth), checked by `ApiKeyMiddleware` before the SDK
sees the request; the tools find the key on the HTTP request the SDK hands them.

ORM work runs on a bounded pool of threads of its own (``ToolThreads``, ``SERVER_THREADS`` of
them), not on asgiref's one process-wide thread-sensitive thread: one user's slow tool call never
delays another user's. Each call closes its thread's unusable or expired connections before and
after it, as Django's request_started/request_finished do.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any, Literal

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.core.handlers.asgi import ASGIRequest
from django.db import close_old_connections, connections
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError
from rest_framework.response import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dsl.runtime.querylog import log_failure
from dsl.schema import get_resource
from dsl.surfaces.mcp.files import register_import_tools
from dsl.surfaces.mcp.resources import add_prompts, add_resources
from dsl.surfaces.reference import schema_summary
from dsl.surfaces.wording import for_mcp
from flashcards.api import commands
from flashcards.api.discovery import MCP_TOOL_NAMES
from flashcards.http import db_errors
from flashcards.http.authentication import key_from_header
from flashcards.http.body_limit import declared_length
from flashcards.http.envelope import (
    docs_for,
    error_body,
    error_response_for,
    request_id_of,
    success_body,
)
from flashcards.http.middleware import MAX_BODY_BYTES
from flashcards.http.request_id import request_id_context, request_id_for
from flashcards.http.throttling import check_rate, statement_slot
from flashcards.http.workspace import request_workspace
from flashcards.oauth.tokens import (
    InvalidAccessToken,
    authenticate_access_token,
    challenge,
    is_api_key,
)
from flashcards.security.mcp_json import json_rpc_errors
from flashcards.services import InvalidApiKey, authenticate_api_key

logger = logging.getLogger(__name__)

MCP_PATH = "/mcp"
SCOPE_REQUEST = "flashcards.request"
"""Scope key under which ApiKeyMiddleware leaves the authenticated Django request for the tools."""

WorkspaceId = Annotated[
    str | None,
    Field(
        description=(
            "Optional workspace_id to act on instead of the key's selected workspace "
            "(see list_workspaces)."
        )
    ),
]

SERVER_INSTRUCTIONS = (
    "Flashcards stored behind one SQL-shaped language. Start with sql_query 'SHOW TABLES', then "
    "'DESCRIBE cards'. Reads return at most 100 rows (page with OFFSET while data.hasMore). "
    "front_text is the prompt only, back_text the answer. A write statement affects at most 100 "
    "rows. Record reviews with submit_review and change scheduler settings (including the "
    "learner's time_zone and day_starts_at_hour) with update_scheduler_settings; progress resets "
    "are REST commands (see docs.discoveryUrl). Every result is an envelope: read ok, data, "
    "instructions and error, and follow instructions. The resources flashcards://grammar and "
    "flashcards://tables/<name> hold the whole dialect and each table's DESCRIBE."
)


# --- the threads that run tool calls ------------------------------------------------------------


class ToolThreads:
    """The MCP surface's own bounded pool of threads for ORM work. Thread-sensitive mode would
    send every call of every user to one thread (there is no thread-sensitive context around an
    MCP request); a pool of ``SERVER_THREADS`` threads lets calls run side by side, each thread
    keeping its own connection (``CONN_MAX_AGE``) like the server's own threads (config.asgi)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._size = 0

    def executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._size = max(1, int(settings.SERVER_THREADS))
                self._executor = ThreadPoolExecutor(self._size, thread_name_prefix="mcp-tool")
            return self._executor

    def run(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """``function`` as an awaitable run on one of the pool's threads (context variables
        copied, as sync_to_async does)."""
        return sync_to_async(function, thread_sensitive=False, executor=self.executor())

    def close(self) -> None:
        """Close every thread's database connections and stop the threads (server shutdown, the
        end of a live-server test: PostgreSQL cannot drop a database with connections open)."""
        with self._lock:
            executor, size = self._executor, self._size
            self._executor = None
        if executor is None:
            return
        # One task per thread, each held at the barrier until all have run, so every thread
        # closes its own connections (a connection belongs to the thread that opened it).
        barrier = threading.Barrier(size)

        def close_here() -> None:
            connections.close_all()
            with contextlib.suppress(threading.BrokenBarrierError):
                barrier.wait(timeout=10)

        for future in [executor.submit(close_here) for _ in range(size)]:
            future.result(timeout=30)
        executor.shutdown(wait=True)


tool_threads = ToolThreads()


# --- authentication ----------------------------------------------------------------------------


def _authenticate(scope: Scope) -> ASGIRequest:
    """A Django request for this HTTP call (absolute URLs, request id, user and key); raises
    _Refused with the 401 envelope when the credentials are missing or invalid.

    The Bearer value is an API key (`fca_…`) or an OAuth access token issued by this server for
    /mcp (flashcards.oauth); either way `request.auth` ends up an ApiKey row — for a token, its
    connection's — so rate limit, query log and workspace selection do not tell them apart."""
    close_old_connections()
    request = ASGIRequest(scope, io.BytesIO())
    request.get_host()  # raises DisallowedHost outside ALLOWED_HOSTS, as for every Django view
    request.request_id = request_id_for(request)  # type: ignore[attr-defined]
    header = request.headers.get("Authorization", "")
    raw = key_from_header(header) if header else None
    if not header:
        raise _Refused(
            401,
            error_body(
                request,
                "AUTH_UNAUTHORIZED",
                "Send an API key as 'Authorization: Bearer fca_…', or connect with OAuth: the "
                "resource_metadata URL in the WWW-Authenticate header names the authorization "
                "server.",
            ),
            challenge(request),
        )
    if raw is None:
        raise _Refused(
            401,
            error_body(
                request,
                "AGENT_API_KEY_INVALID",
                "Unsupported Authorization scheme; use 'Bearer fca_…' or 'Bearer <access token>'.",
            ),
            challenge(request),
        )
    if not is_api_key(raw):
        try:
            api_key = authenticate_access_token(request)
        except InvalidAccessToken as exc:
            raise _Refused(
                exc.status,
                error_body(
                    request,
                    "AUTH_UNAUTHORIZED",
                    f"The OAuth access token was refused: {exc.description}",
                    details={"oauthError": exc.error},
                    instructions=(
                        "Refresh the access token, or authorize this client again (its "
                        "connection may have been revoked on the API-key page)."
                    ),
                ),
                challenge(request, exc),
            ) from exc
    else:
        try:
            api_key = authenticate_api_key(raw)
        except InvalidApiKey as exc:
            raise _Refused(
                401,
                error_body(request, "AGENT_API_KEY_INVALID", str(exc)),
                challenge(request, InvalidAccessToken(str(exc))),
            ) from exc
    request.user = api_key.user
    request.auth = api_key  # type: ignore[attr-defined]
    return request


def _too_large(scope: Scope, declared: int | None) -> _Refused:
    """The REST 413 envelope (flashcards.http.middleware), in MCP terms."""
    request = ASGIRequest(scope, io.BytesIO())
    request.get_host()
    request.request_id = request_id_for(request)  # type: ignore[attr-defined]
    size = f"is {declared} bytes" if declared is not None else "is more than the limit"
    body = error_body(
        request,
        "REQUEST_TOO_LARGE",
        f"The MCP request {size}; the limit is {MAX_BODY_BYTES} bytes (256 KiB).",
        details={"limitBytes": MAX_BODY_BYTES, "receivedBytes": declared},
    )
    return _Refused(413, for_mcp(body), None)


class _Refused(Exception):
    def __init__(self, status: int, body: dict[str, Any], www_authenticate: str | None) -> None:
        super().__init__(body["error"]["message"])
        self.status = status
        self.body = body
        self.www_authenticate = www_authenticate


class ApiKeyMiddleware:
    """Before the SDK parses anything: refuse a body over the 256 KiB limit (413 envelope), hosts
    outside ALLOWED_HOSTS (400) and calls without a valid API key or access token (401 envelope
    with the RFC 9728 `WWW-Authenticate` challenge)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            body, declared = await _receive_body(scope, receive)
            if body is None:
                raise _too_large(scope, declared)
            request = await tool_threads.run(_authenticate)(scope)
        except _Refused as refused:
            headers = {"x-request-id": refused.body["requestId"]}
            if refused.www_authenticate:
                headers["www-authenticate"] = refused.www_authenticate
            await _send_json(send, refused.status, refused.body, headers)
            return
        except DisallowedHost as exc:
            await _send_json(send, 400, {"error": str(exc)}, {})
            return
        await self.app({**scope, SCOPE_REQUEST: request}, _replay(body, receive), send)


async def _receive_body(scope: Scope, receive: Receive) -> tuple[bytes | None, int | None]:
    """The whole body, or None once it is over the limit (a declared Content-Length over it is
    refused unread), with the declared length. MCP messages are small, so holding one in memory
    costs little; the SDK then reads it from `_replay`."""
    declared = declared_length(scope)
    if declared is not None and declared > MAX_BODY_BYTES:
        return None, declared
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None, declared
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks), declared


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _send_json(
    send: Send, status: int, body: dict[str, Any], headers: dict[str, str]
) -> None:
    payload = json.dumps(body, ensure_ascii=False).encode()
    raw_headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
    ]
    raw_headers += [(k.encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": payload})


# --- running one tool call ---------------------------------------------------------------------


def _call_request(ctx: Context) -> ASGIRequest:
    """The authenticated request of this call, with its own request id (a trusted proxy's, else a
    fresh one per tool call)."""
    http_request = ctx.request_context.request
    scope = getattr(http_request, "scope", None) or {}
    request = scope.get(SCOPE_REQUEST)
    if request is None:
        raise RuntimeError("MCP tool called without ApiKeyMiddleware in front of it")
    request.request_id = request_id_for(request)
    return request


def _result(body: dict[str, Any]) -> CallToolResult:
    body = for_mcp(body)
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
        structured_content=body,
        is_error=not body.get("ok", False),
    )


def _run(
    request: ASGIRequest,
    work: Callable[[ASGIRequest], dict[str, Any]],
    sql: str | None = None,
) -> dict[str, Any]:
    """Rate-limit, run `work`, and turn any failure into the same envelope REST would send. A SQL
    tool call (``sql`` given) refused before the dialect ran still gets its query-log row."""
    close_old_connections()
    started = time.perf_counter()
    try:
        with request_id_context(request_id_of(request)):
            return _run_logged(request, work, sql, started)
    finally:
        close_old_connections()


def _run_logged(
    request: ASGIRequest,
    work: Callable[[ASGIRequest], dict[str, Any]],
    sql: str | None,
    started: float,
) -> dict[str, Any]:
    try:
        # The same budget as the user's REST requests and console runs (flashcards.http.throttling).
        check_rate(request)
        with statement_slot(request):
            return work(request)
    except Exception as exc:  # every failure becomes an envelope; unexpected ones are logged there
        response = _error_response(exc, request)
        if sql is not None:
            log_failure(
                request,
                surface="mcp",
                body=response.data,
                status_code=response.status_code,
                duration_ms=(time.perf_counter() - started) * 1000,
                sql=sql,
            )
        return response.data


def _error_response(exc: Exception, request: ASGIRequest) -> Response:
    """The response REST would send for ``exc``: a database outage is the same retryable 503
    SERVICE_UNAVAILABLE with its specific reason (flashcards.http.db_errors), not a 500."""
    if db_errors.is_database_unavailable(exc):
        logger.warning("Database unavailable in MCP call: %s", type(exc).__name__)
        return Response(db_errors.unavailable_body(request, exc), status=503)
    return error_response_for(exc, request)


async def _tool(
    ctx: Context, work: Callable[[ASGIRequest], dict[str, Any]], sql: str | None = None
) -> CallToolResult:
    request = _call_request(ctx)
    body = await tool_threads.run(_run)(request, work, sql)
    return _result(body)


def _command(result: commands.CommandResult, request: ASGIRequest) -> dict[str, Any]:
    return success_body(request, result.data, result.instructions)


def _sql_work(
    sql: str, mode: Literal["any", "read", "write"], dry_run: bool, workspace_id: str | None
) -> Callable[[ASGIRequest], dict[str, Any]]:
    def work(request: ASGIRequest) -> dict[str, Any]:
        from dsl.runtime.service import run_sql

        started = time.perf_counter()
        api_key = request.auth  # type: ignore[attr-defined]
        try:
            workspace = request_workspace(request, workspace_id)
        except Exception as exc:
            response = _error_response(exc, request)
            log_failure(
                request,
                surface="mcp",
                body=response.data,
                status_code=response.status_code,
                duration_ms=(time.perf_counter() - started) * 1000,
                sql=sql,
            )
            return response.data
        outcome = run_sql(
            sql=sql,
            workspace=workspace,
            user=request.user,
            api_key=api_key,
            surface="mcp",
            mode=mode,
            dry_run=dry_run,
            request_id=request_id_of(request),
            docs=docs_for(request),
        )
        return outcome.body

    return work


# --- tool descriptions, generated from the resource registry ------------------------------------


def _columns(resource_name: str) -> str:
    resource = get_resource(resource_name)
    return ", ".join(c.name for c in resource.readable_columns) if resource else ""


def sql_description() -> str:
    return (
        "Run one or more statements of the flashcards SQL dialect (reads and writes; a batch with a "
        "write is atomic). Statements: SHOW TABLES, DESCRIBE <resource>, SELECT, INSERT, UPDATE, "
        "DELETE — one resource per statement, no JOINs. LIMIT defaults to and caps at 100; UPDATE "
        "and DELETE need a WHERE matching at most 100 rows. front_text is the prompt only, "
        "back_text the answer. Resources:\n" + schema_summary()
    )


def sql_query_description() -> str:
    return (
        "Read-only: SHOW TABLES, DESCRIBE <resource> and SELECT in the flashcards SQL dialect "
        "(writes are refused with reason wrong_endpoint). LIMIT defaults to and caps at 100; page "
        "with OFFSET while data.hasMore. Resources:\n" + schema_summary()
    )


def sql_execute_description() -> str:
    return (
        "Writes only: INSERT, UPDATE and DELETE on the writable resources (reads are refused with "
        "reason wrong_endpoint). INSERT needs a column list and at most 100 rows; UPDATE and DELETE "
        "need a WHERE matching at most 100 rows; DELETE is a soft delete. Writable columns:\n"
        + schema_summary(writable_only=True)
    )


def submit_review_description() -> str:
    return (
        "Record that the learner answered a card and reschedule it with FSRS on the server. "
        "rating: 0/again, 1/hard, 2/good, 3/easy. reviewed_at: ISO-8601, default now, not before the "
        "card's last review. client_event_id makes it idempotent (a repeat returns the first "
        f"result). Returns data.review_event ({_columns('review_events')}) and data.card "
        f"({_columns('cards')})."
    )


def update_scheduler_settings_description() -> str:
    return (
        "Change the workspace's scheduler settings; omitted arguments keep their value. "
        "time_zone (IANA, e.g. Europe/Madrid) and day_starts_at_hour (0-23) define the learning "
        "day that DATE(col) and CURRENT_DATE count in. Returns the workspace row "
        f"({_columns('workspace')})."
    )


def list_workspaces_description() -> str:
    return (
        "List the workspaces this key's user belongs to (oldest first, at most `limit` per page, "
        "continue with `cursor` = data.nextCursor). Each row has "
        f"{_columns('workspace')}, plus role and selected."
    )


def select_workspace_description() -> str:
    return (
        "Select the workspace every later statement of this key runs in (until changed). "
        "Returns data.workspace with " + _columns("workspace") + "."
    )


class _EnvelopeServer(MCPServer):
    """The SDK's server, except that a call it refuses before the tool runs — arguments that do
    not fit the tool's input schema, an unknown tool — is answered with the REST error envelope
    (REQUEST_INVALID, ``isError``) like every other failure, instead of the SDK's bare text."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as exc:
            if context is None:
                raise
            return _result(_refused_call(_call_request(context), name, exc))


def _refused_call(request: ASGIRequest, name: str, exc: ToolError) -> dict[str, Any]:
    tools = ", ".join(TOOL_NAMES)
    cause = exc.__cause__
    if not isinstance(cause, ValidationError):
        if name not in TOOL_NAMES:
            message = f"Unknown tool {name!r}. The tools are {tools}."
            return error_body(request, "REQUEST_INVALID", message, details={"tool": name})
        return error_body(request, "REQUEST_INVALID", str(exc), details={"tool": name})
    # Field names and pydantic's messages only: the rejected values are the caller's data.
    problems = [
        {"field": ".".join(str(part) for part in error["loc"]), "message": error["msg"]}
        for error in cause.errors()
    ]
    listed = "; ".join(f"{p['field']}: {p['message']}" for p in problems)
    return error_body(
        request,
        "REQUEST_INVALID",
        f"Invalid arguments for tool {name}: {listed}.",
        details={"tool": name, "fields": problems},
        instructions=(
            f"Call {name} again with arguments that match its input schema (tools/list shows "
            "each argument's type); e.g. sql takes the statement text as a string."
        ),
    )


TOOL_NAMES = MCP_TOOL_NAMES  # also listed by the discovery document

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def build_server() -> MCPServer:
    server: MCPServer = _EnvelopeServer(
        name=settings.SERVICE_NAME,
        version=settings.SERVICE_VERSION,
        instructions=SERVER_INSTRUCTIONS,
    )

    async def sql(
        ctx: Context,
        sql: Annotated[str, Field(description="Statements separated by ';'.")],
        dry_run: Annotated[bool, Field(description="Run, report, then roll back.")] = False,
        workspace_id: WorkspaceId = None,
    ) -> CallToolResult:
        return await _tool(ctx, _sql_work(sql, "any", dry_run, workspace_id), sql)

    async def sql_query(
        ctx: Context,
        sql: Annotated[str, Field(description="SHOW TABLES, DESCRIBE or SELECT statements.")],
        workspace_id: WorkspaceId = None,
    ) -> CallToolResult:
        return await _tool(ctx, _sql_work(sql, "read", False, workspace_id), sql)

    async def sql_execute(
        ctx: Context,
        sql: Annotated[str, Field(description="INSERT, UPDATE or DELETE statements.")],
        dry_run: Annotated[bool, Field(description="Run, report, then roll back.")] = False,
        workspace_id: WorkspaceId = None,
    ) -> CallToolResult:
        return await _tool(ctx, _sql_work(sql, "write", dry_run, workspace_id), sql)

    async def submit_review(
        ctx: Context,
        card_id: Annotated[str, Field(description="card_id of the reviewed card.")],
        rating: Annotated[int | str, Field(description="0..3 or again / hard / good / easy.")],
        reviewed_at: Annotated[
            str | None, Field(description="ISO-8601 time of the answer; default now.")
        ] = None,
        client_event_id: Annotated[
            str | None, Field(description="Idempotency key for this review.")
        ] = None,
        review_event_id: Annotated[
            str | None, Field(description="Optional UUID for the new review event.")
        ] = None,
        workspace_id: WorkspaceId = None,
    ) -> CallToolResult:
        given = {
            "card_id": card_id,
            "rating": rating,
            "reviewed_at": reviewed_at,
            "client_event_id": client_event_id,
            "review_event_id": review_event_id,
        }

        def work(request: ASGIRequest) -> dict[str, Any]:
            # The REST body's serializer: an argument left out (None) is absent, as in JSON.
            body = commands.review_body({k: v for k, v in given.items() if v is not None})
            workspace = request_workspace(request, workspace_id)
            return _command(commands.submit_review(workspace, body), request)

        return await _tool(ctx, work)

    async def update_scheduler_settings(
        ctx: Context,
        desired_retention: Annotated[
            float | None, Field(description="Strictly between 0 and 1, e.g. 0.9.")
        ] = None,
        learning_steps_minutes: Annotated[
            list[int] | None, Field(description="Whole minutes, strictly increasing.")
        ] = None,
        relearning_steps_minutes: Annotated[
            list[int] | None, Field(description="Whole minutes, strictly increasing.")
        ] = None,
        maximum_interval_days: Annotated[int | None, Field(description="1..36500.")] = None,
        enable_fuzz: Annotated[bool | None, Field(description="Spread due dates a little.")] = None,
        time_zone: Annotated[
            str | None,
            Field(description="IANA time zone of the learner's day, e.g. Europe/Madrid."),
        ] = None,
        day_starts_at_hour: Annotated[
            int | None, Field(description="Local hour 0-23 at which a learning day starts.")
        ] = None,
        workspace_id: WorkspaceId = None,
    ) -> CallToolResult:
        given = {
            "desired_retention": desired_retention,
            "learning_steps_minutes": learning_steps_minutes,
            "relearning_steps_minutes": relearning_steps_minutes,
            "maximum_interval_days": maximum_interval_days,
            "enable_fuzz": enable_fuzz,
            "time_zone": time_zone,
            "day_starts_at_hour": day_starts_at_hour,
        }

        def work(request: ASGIRequest) -> dict[str, Any]:
            body = commands.settings_body({k: v for k, v in given.items() if v is not None})
            workspace = request_workspace(request, workspace_id)
            return _command(commands.update_scheduler_settings(workspace, body), request)

        return await _tool(ctx, work)

    async def list_workspaces(
        ctx: Context,
        limit: Annotated[int | None, Field(description="1..100, default 100.")] = None,
        cursor: Annotated[
            str | None, Field(description="data.nextCursor of the last page.")
        ] = None,
        workspace_id: WorkspaceId = None,
    ) -> CallToolResult:
        def work(request: ASGIRequest) -> dict[str, Any]:
            if workspace_id:
                # Listing is not scoped to one workspace; the id is still checked so a foreign
                # id answers WORKSPACE_NOT_FOUND like every other tool.
                request_workspace(request, workspace_id)
            query = {"limit": None if limit is None else str(limit), "cursor": cursor}
            result = commands.list_workspaces(
                request.user, request.auth, {k: v for k, v in query.items() if v is not None}
            )
            return _command(result, request)

        return await _tool(ctx, work)

    async def select_workspace(
        ctx: Context,
        workspace_id: Annotated[str, Field(description="workspace_id to select.")],
    ) -> CallToolResult:
        def work(request: ASGIRequest) -> dict[str, Any]:
            result = commands.select_workspace(request.user, request.auth, workspace_id)
            return _command(result, request)

        return await _tool(ctx, work)

    server.add_tool(
        sql,
        description=sql_description(),
        annotations=ToolAnnotations(
            title="Run SQL (read and write)",
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    )
    server.add_tool(
        sql_query,
        description=sql_query_description(),
        annotations=READ_ONLY.model_copy(update={"title": "Run a read-only query"}),
    )
    server.add_tool(
        sql_execute,
        description=sql_execute_description(),
        annotations=ToolAnnotations(
            title="Run SQL writes",
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    )
    server.add_tool(
        submit_review,
        description=submit_review_description(),
        annotations=ToolAnnotations(
            title="Submit a review",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    )
    server.add_tool(
        update_scheduler_settings,
        description=update_scheduler_settings_description(),
        annotations=ToolAnnotations(
            title="Change scheduler settings",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )
    server.add_tool(
        list_workspaces,
        description=list_workspaces_description(),
        annotations=READ_ONLY.model_copy(update={"title": "List workspaces"}),
    )
    server.add_tool(
        select_workspace,
        description=select_workspace_description(),
        annotations=ToolAnnotations(
            title="Select a workspace",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )
    register_import_tools(server, _tool)
    add_resources(server)
    add_prompts(server)
    return server


def build_app() -> ASGIApp:
    """A fresh ASGI app serving /mcp. Its lifespan runs the SDK's session manager, which can only
    run once, hence a factory rather than a module-level app."""
    server = build_server()
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=True,
        stateless_http=True,
        max_request_body_size=MAX_BODY_BYTES,
        # Host checks are Django's ALLOWED_HOSTS (in ApiKeyMiddleware); the SDK's own defaults
        # would only admit localhost.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    # GET opens no stream and every refusal is JSON-RPC (flashcards.security.mcp_json).
    return ApiKeyMiddleware(json_rpc_errors(app))
