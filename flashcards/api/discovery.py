"""GET /v1/ and GET /v1/agent: everything a model needs to start with no other documentation."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from flashcards.api import schemas
from flashcards.http.envelope import success

# The MCP server's tools (dsl.surfaces.mcp.server registers exactly these; tests check both lists agree).
MCP_TOOL_NAMES = (
    "sql",
    "sql_query",
    "sql_execute",
    "submit_review",
    "update_scheduler_settings",
    "list_workspaces",
    "select_workspace",
    "import_cards",
    "export_cards",
)

MCP_PATH = "/mcp"

INSTRUCTIONS = (
    "This service stores flashcards and exposes them through one SQL-shaped language. "
    "Authenticate every call with 'Authorization: ApiKey fca_…' (or 'Bearer fca_…'). "
    'Start with POST /v1/agent/sql {"sql": "SHOW TABLES"}, then DESCRIBE cards (also decks, '
    "review_events, workspace) to learn the columns; then SELECT, INSERT, UPDATE and DELETE one "
    "resource at a time (no JOINs). Reads return at most 100 rows (LIMIT defaults to 100); page "
    "with OFFSET as data.hasMore and instructions say. A card's front_text is the prompt only and "
    "its back_text is the answer, so never put the answer on the front. Each write statement may "
    "affect at most 100 rows: narrow the WHERE or page by card_id. Record reviews with POST "
    "/v1/agent/reviews, change scheduler settings with POST /v1/agent/workspace/scheduler-settings "
    "and reset progress with POST /v1/agent/workspace/reset-progress; those are not UPDATEs "
    "(data.routes lists every absolute URL). Every response is an envelope: read ok, data, "
    "instructions and, on failure, error.code / error.message / error.details, then follow "
    "instructions."
)

# (key, method, URL name, what it does): URLs come from reverse(), so a renamed route fails the
# discovery tests instead of publishing a stale path.
ROUTES: tuple[tuple[str, str, str, str], ...] = (
    ("discovery", "GET", "discovery", "This document (no auth)."),
    ("agent_discovery", "GET", "agent-discovery", "This document (no auth)."),
    ("grammar", "GET", "grammar", "The dialect's reference (no auth)."),
    ("sql", "POST", "agent-sql", 'Reads and writes: {"sql": "...", "dry_run": false}.'),
    (
        "sql_query",
        "POST",
        "agent-sql-query",
        "Reads only (SELECT, SHOW, DESCRIBE).",
    ),
    (
        "sql_execute",
        "POST",
        "agent-sql-execute",
        "Writes only (INSERT, UPDATE, DELETE).",
    ),
    ("me", "GET", "agent-me", "The key's user, selected workspace and label."),
    (
        "list_workspaces",
        "GET",
        "agent-workspaces",
        "Your workspaces; ?limit=1..100&cursor=.",
    ),
    (
        "create_workspace",
        "POST",
        "agent-workspaces",
        'Create and select a workspace: {"name": "..."}.',
    ),
    (
        "submit_review",
        "POST",
        "agent-reviews",
        '{"card_id", "rating": 0..3 or again/hard/good/easy, "reviewed_at"?, "client_event_id"?}.',
    ),
    (
        "scheduler_settings",
        "POST",
        "agent-scheduler-settings",
        "{desired_retention?, learning_steps_minutes?, relearning_steps_minutes?, "
        "maximum_interval_days?, enable_fuzz?, time_zone?, day_starts_at_hour?}; omitted keys "
        "keep their value.",
    ),
    (
        "reset_progress",
        "POST",
        "agent-reset-progress",
        '{"confirmation": "reset all progress"}: every card back to new.',
    ),
    (
        "openapi",
        "GET",
        "openapi-schema",
        "OpenAPI 3 description of the REST routes.",
    ),
    ("openapi_ui", "GET", "openapi-docs", "Swagger UI over the OpenAPI description."),
)


# Routes whose URL holds a workspace id: shown as templates with `{workspace_id}`.
TEMPLATED_ROUTES: tuple[tuple[str, str, str, str], ...] = (
    (
        "select_workspace",
        "POST",
        "agent-select-workspace",
        "Select the workspace every statement of this key runs in.",
    ),
    (
        "sync_push",
        "POST",
        "sync-push",
        "Offline clients: push operations (not for agents).",
    ),
    (
        "sync_pull",
        "POST",
        "sync-pull",
        "Offline clients: pull changes after a cursor (not for agents).",
    ),
    (
        "sync_bootstrap",
        "POST",
        "sync-bootstrap",
        "Offline clients: every entity, keyset-paged (not for agents).",
    ),
    (
        "sync_review_history_pull",
        "POST",
        "sync-review-history-pull",
        "Offline clients: review events after a cursor (not for agents).",
    ),
    (
        "imports",
        "POST",
        "imports",
        "Multipart upload (field `file`: .apkg, .colpkg, .csv, .tsv; `dry_run`, `format`, "
        "`field_mapping`) imported as cards and review history; exports are GET "
        "/v1/workspaces/{workspace_id}/exports/cards.csv (.tsv, review_events.csv).",
    ),
)
PLACEHOLDER_ID = "00000000-0000-4000-8000-000000000000"


def absolute_url(request: Request, name: str, *, templated: bool = False) -> str:
    """The route's absolute URL. Templated routes are reversed with a stand-in id that is then
    shown as `{workspace_id}`, because reverse() would percent-encode braces."""
    path = reverse(name, kwargs={"workspace_id": PLACEHOLDER_ID} if templated else None)
    return request.build_absolute_uri(path).replace(PLACEHOLDER_ID, "{workspace_id}")


def discovery_document(request: Request) -> dict[str, Any]:
    routes = {
        key: {
            "method": method,
            "url": absolute_url(request, url_name, templated=templated),
            "description": description,
        }
        for templated, table in ((False, ROUTES), (True, TEMPLATED_ROUTES))
        for key, method, url_name, description in table
    }
    mcp_url = request.build_absolute_uri(MCP_PATH)
    return {
        "service": {"name": settings.SERVICE_NAME, "version": settings.SERVICE_VERSION},
        "authentication": {
            "header": "Authorization",
            "format": "ApiKey fca_<8 chars>_<26 chars>",
            "alsoAccepted": "Bearer fca_<8 chars>_<26 chars>",
            "obtain": (
                "An operator creates a key with `manage.py create_api_key --user USERNAME` or in "
                "the admin; it is shown once."
            ),
            "session": "A logged-in browser session also works (the browsable API).",
        },
        "routes": routes,
        "mcp": {
            "url": mcp_url,
            "transport": "streamable-http (stateless, JSON responses)",
            "authentication": "Authorization: Bearer fca_…",
            "tools": list(MCP_TOOL_NAMES),
        },
        "grammarUrl": routes["grammar"]["url"],
        "openapiUrl": routes["openapi"]["url"],
        "instructions": INSTRUCTIONS,
    }


DISCOVERY_RESPONSES = {
    200: schemas.envelope("Service, authentication, routes, MCP, instructions.", schemas.DISCOVERY)
}


class DiscoveryView(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="discovery",
        summary="Service description for agents (no auth).",
        responses=DISCOVERY_RESPONSES,
    )
    def get(self, request: Request) -> Response:
        return success(request, discovery_document(request), INSTRUCTIONS)


class AgentDiscoveryView(DiscoveryView):
    """The same document at /v1/agent (its own class only so OpenAPI operation ids differ)."""

    @extend_schema(
        operation_id="agent_discovery",
        summary="Same as GET /v1/ (no auth).",
        responses=DISCOVERY_RESPONSES,
    )
    def get(self, request: Request) -> Response:
        return super().get(request)
