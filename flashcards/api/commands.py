"""The explicit commands of the agent API (domain.md §4) as plain functions: a body checked by its
serializer (flashcards.api.bodies), one service call, the envelope's `data` and `instructions`.
The REST views and the MCP tools both call these, so the two surfaces cannot drift apart."""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import Q

from flashcards import safe_json, services
from flashcards.api import bodies
from flashcards.api.bodies import validated
from flashcards.http.envelope import ApiError, workspace_not_found
from flashcards.models import ApiKey, Membership, Workspace
from flashcards.rows import card_row, review_event_row, workspace_row

WORKSPACE_SELECTOR = "workspace_id"


@dataclass(frozen=True)
class CommandResult:
    data: dict[str, Any]
    instructions: str


# --- reviews -----------------------------------------------------------------------------------


def review_body(body: object) -> dict[str, Any]:
    return validated(bodies.ReviewRequestSerializer, body)


def submit_review(workspace: Workspace, body: dict[str, Any]) -> CommandResult:
    """``body``: as ``review_body`` returns it."""
    result = services.submit_review(
        workspace,
        body["card_id"],
        body["rating"],
        reviewed_at=body.get("reviewed_at"),
        client_event_id=body.get("client_event_id"),
        review_event_id=body.get("review_event_id"),
    )
    data = {"review_event": review_event_row(result.review_event), "card": card_row(result.card)}
    due = data["card"]["due_at"]
    if result.created:
        instructions = (
            f"Review recorded; the card is next due at {due}. "
            "Find due cards with SELECT * FROM cards WHERE due_at <= NOW() ORDER BY due_at LIMIT 20."
        )
    else:
        instructions = (
            "This client_event_id was already recorded, so nothing changed; the first result is "
            "returned. Use a new client_event_id for a new review."
        )
    return CommandResult(data, instructions)


# --- workspace settings and progress ----------------------------------------------------------


def settings_body(body: object) -> dict[str, Any]:
    return validated(bodies.SchedulerSettingsRequestSerializer, body)


def update_scheduler_settings(workspace: Workspace, body: dict[str, Any]) -> CommandResult:
    """``body``: as ``settings_body`` returns it."""
    changes = {k: v for k, v in body.items() if k != WORKSPACE_SELECTOR}
    if not changes:
        # Every key is optional and omitted keys keep their value (domain.md §4): an empty body is
        # a valid request that changes nothing, so it records no change for sync clients either.
        return CommandResult(
            workspace_row(workspace),
            "No setting was given, so nothing changed. Send any of desired_retention, "
            "learning_steps_minutes, relearning_steps_minutes, maximum_interval_days, enable_fuzz, "
            "time_zone, day_starts_at_hour.",
        )
    updated = services.update_scheduler_settings(workspace, changes)
    return CommandResult(
        workspace_row(updated),
        "Scheduler settings saved; they apply to future reviews only. "
        "Read them back with SELECT * FROM workspace.",
    )


def reset_body(body: object) -> dict[str, Any]:
    return validated(bodies.ResetProgressRequestSerializer, body)


def reset_progress(workspace: Workspace, body: dict[str, Any]) -> CommandResult:
    """``body``: as ``reset_body`` returns it."""
    payload = body
    count = services.reset_progress(workspace, payload["confirmation"])
    return CommandResult(
        {"workspace_id": str(workspace.pk), "cardsReset": count},
        f"{count} card(s) are new again; their review events are kept. "
        "Check with SELECT fsrs_card_state, COUNT(*) FROM cards GROUP BY fsrs_card_state.",
    )


# --- account and workspaces --------------------------------------------------------------------


def current_workspace(user: AbstractBaseUser, api_key: ApiKey | None) -> Workspace | None:
    """The principal's self-healed selection, or None when one must be chosen."""
    try:
        if api_key is not None:
            return services.resolve_key_workspace(api_key)
        return services.resolve_user_workspace(user)
    except services.WorkspaceSelectionRequired:
        return None


def select_workspace(
    user: AbstractBaseUser, api_key: ApiKey | None, workspace_id: object
) -> CommandResult:
    try:
        if api_key is not None:
            workspace = services.select_key_workspace(api_key, workspace_id)
        else:
            workspace = services.select_user_workspace(user, workspace_id)
    except services.NotFoundError as exc:
        raise workspace_not_found() from exc
    return CommandResult(
        {"workspace": workspace_row(workspace)},
        f"Workspace '{workspace.name}' is selected; every statement now runs in it. "
        "Start with SHOW TABLES.",
    )


def create_workspace(user: AbstractBaseUser, api_key: ApiKey | None, body: object) -> CommandResult:
    name = validated(bodies.WorkspaceCreateSerializer, body)["name"]
    workspace = services.create_workspace(user, name)
    selected = select_workspace(user, api_key, workspace.pk)
    return CommandResult(
        selected.data,
        f"Workspace '{workspace.name}' was created and selected; it is empty. "
        "Add cards with INSERT INTO cards (front_text, back_text) VALUES ('…', '…').",
    )


def _encode_cursor(workspace: Workspace) -> str:
    raw = json.dumps([workspace.created_at.isoformat(), str(workspace.pk)])
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[datetime, uuid.UUID]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        created, workspace_id = safe_json.loads(raw)
        created_at = datetime.fromisoformat(created)
        if created_at.tzinfo is None:
            raise ValueError("naive cursor timestamp")
        return created_at, uuid.UUID(workspace_id)
    except (binascii.Error, UnicodeDecodeError, ValueError, TypeError, AttributeError) as exc:
        # A well-formed string that is no cursor of ours: the schema cannot tell, so this is a
        # refusal of its content (details.reason), not of the request's shape.
        raise ApiError(
            "REQUEST_INVALID",
            "cursor is not valid; pass the nextCursor of the previous page unchanged.",
            details={"field": "cursor", "reason": "invalid_cursor"},
        ) from exc


def list_workspaces(
    user: AbstractBaseUser, api_key: ApiKey | None, query: dict[str, Any] | None = None
) -> CommandResult:
    """Keyset pages over (created_at, id): stable while workspaces are created concurrently.
    ``query``: the query string's ``limit`` and ``cursor`` (as text)."""
    params = validated(bodies.WorkspaceListQuerySerializer, query or {})
    page_size = params.get("limit", bodies.MAX_PAGE)
    cursor = params.get("cursor")
    selected = current_workspace(user, api_key)
    queryset = services.member_workspaces(user).order_by("created_at", "id")
    if cursor is not None:
        created_at, last_id = _decode_cursor(cursor)
        queryset = queryset.filter(
            Q(created_at__gt=created_at) | Q(created_at=created_at, id__gt=last_id)
        )
    page = list(queryset[: page_size + 1])
    has_more = len(page) > page_size
    page = page[:page_size]
    roles = dict(
        Membership.objects.filter(user=user, workspace__in=page).values_list("workspace_id", "role")
    )
    rows = [
        {
            **workspace_row(ws),
            "role": roles.get(ws.pk),
            "selected": selected is not None and ws.pk == selected.pk,
        }
        for ws in page
    ]
    data = {
        "workspaces": rows,
        "selectedWorkspaceId": str(selected.pk) if selected else None,
        "limit": page_size,
        "hasMore": has_more,
        "nextCursor": _encode_cursor(page[-1]) if has_more else None,
    }
    if has_more:
        instructions = f"More workspaces exist: repeat with cursor={data['nextCursor']}."
    elif selected is None:
        instructions = (
            "No workspace is selected: POST /v1/agent/workspaces/{workspace_id}/select with one of "
            "these ids."
        )
    else:
        instructions = (
            f"Statements run in the selected workspace '{selected.name}'. Switch with "
            "POST /v1/agent/workspaces/{workspace_id}/select."
        )
    return CommandResult(data, instructions)


def learning_day_row(workspace: Workspace) -> dict[str, Any]:
    """The workspace's day as /v1/agent/me shows it: what CURRENT_DATE and DATE(col) count in."""
    day = workspace.learning_day
    now = services.now_ms()
    today = day.date_of(now)
    return {
        "time_zone": day.time_zone,
        "day_starts_at_hour": day.starts_at_hour,
        "current_learning_day": today.isoformat(),
        "current_learning_day_started_at": services.format_timestamp(day.start(today)),
        "server_time": services.format_timestamp(now),
    }


def me(user: AbstractBaseUser, api_key: ApiKey | None) -> CommandResult:
    workspace = current_workspace(user, api_key)
    data = {
        "user": {
            "user_id": user.pk,
            "username": user.get_username(),
            "email": getattr(user, "email", "") or None,
        },
        "workspace": workspace_row(workspace) if workspace else None,
        "apiKey": None
        if api_key is None
        else {
            "label": api_key.label,
            "key_id": api_key.key_id,
            "created_at": services.format_timestamp(api_key.created_at),
            "last_used_at": services.format_timestamp(api_key.last_used_at),
        },
        "authentication": "api_key" if api_key is not None else "session",
        "learningDay": None if workspace is None else learning_day_row(workspace),
    }
    if workspace is None:
        instructions = (
            "No workspace is selected and this account has several: list them with "
            "GET /v1/agent/workspaces, then POST /v1/agent/workspaces/{workspace_id}/select."
        )
    else:
        instructions = (
            f"Statements run in workspace '{workspace.name}'. Start with SHOW TABLES, then "
            "DESCRIBE cards."
        )
    return CommandResult(data, instructions)
