"""The explicit commands of the agent API (domain.md §4) as plain functions: validate a JSON body,
call one service, return the envelope's `data` and `instructions`. The REST views and the MCP tools
both call these, so the two surfaces cannot drift apart."""

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

from flashcards import services
from flashcards.api.envelope import ApiError, workspace_not_found
from flashcards.models import ApiKey, Membership, Workspace
from flashcards.serializers import card_row, review_event_row, workspace_row
from flashcards.services import timestamps
from flashcards.services.timestamps import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP

MAX_PAGE = 100
WORKSPACE_SELECTOR = "workspace_id"


@dataclass(frozen=True)
class CommandResult:
    data: dict[str, Any]
    instructions: str


def invalid(message: str, field: str | None = None) -> ApiError:
    """400 REQUEST_INVALID naming the offending field, in the same issue shape as the dialect."""
    path = field or "body"
    return ApiError(
        "REQUEST_INVALID",
        message,
        details={
            "field": field,
            "validationIssues": [{"path": path, "code": "invalid_value", "message": message}],
        },
    )


def require_object(body: object) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise invalid(
            "The request body must be a JSON object; see docs.discoveryUrl for each route's fields."
        )
    return body


def optional_string(body: dict[str, Any], field: str) -> str | None:
    value = body.get(field)
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid(f"{field} must be a string.", field)
    return value


def parse_timestamp(value: object, field: str) -> datetime:
    """ISO-8601 as in the dialect (flashcards.services.timestamps): a bare date is midnight UTC,
    a naive time is UTC; within the years the scheduler can work with."""
    parsed = timestamps.parse_timestamp(value)
    if parsed is None:
        raise invalid(
            f"{field} is not a valid ISO-8601 timestamp: {value!r}; e.g. '2026-03-05T10:00:00Z'.",
            field,
        )
    # The scheduler adds up to a century of interval to this time; keep the result a valid date.
    if not EARLIEST_TIMESTAMP <= parsed < LATEST_TIMESTAMP:
        raise invalid(f"{field} must be between 1970-01-01 and 8999-12-31 (UTC).", field)
    return parsed


# --- reviews -----------------------------------------------------------------------------------


def submit_review(workspace: Workspace, body: object) -> CommandResult:
    payload = require_object(body)
    card_id = payload.get("card_id")
    if card_id is None or card_id == "":
        raise invalid("card_id is required: the card_id of the card that was reviewed.", "card_id")
    if not isinstance(card_id, str):
        raise invalid("card_id must be a UUID string.", "card_id")
    if "rating" not in payload or payload["rating"] is None:
        raise invalid("rating is required: 0..3 or again / hard / good / easy.", "rating")
    reviewed_at = payload.get("reviewed_at")
    result = services.submit_review(
        workspace,
        card_id,
        payload["rating"],
        reviewed_at=None if reviewed_at is None else parse_timestamp(reviewed_at, "reviewed_at"),
        client_event_id=optional_string(payload, "client_event_id"),
        review_event_id=optional_string(payload, "review_event_id"),
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


def update_scheduler_settings(workspace: Workspace, body: object) -> CommandResult:
    changes = {k: v for k, v in require_object(body).items() if k != WORKSPACE_SELECTOR}
    if not changes:
        # Every key is optional and omitted keys keep their value (domain.md §4): an empty body is
        # a valid request that changes nothing, so it records no change for sync clients either.
        return CommandResult(
            workspace_row(workspace),
            "No setting was given, so nothing changed. Send any of desired_retention, "
            "learning_steps_minutes, relearning_steps_minutes, maximum_interval_days, enable_fuzz.",
        )
    updated = services.update_scheduler_settings(workspace, changes)
    return CommandResult(
        workspace_row(updated),
        "Scheduler settings saved; they apply to future reviews only. "
        "Read them back with SELECT * FROM workspace.",
    )


def reset_progress(workspace: Workspace, body: object) -> CommandResult:
    payload = require_object(body)
    if payload.get("confirmation") != services.RESET_CONFIRMATION:
        raise invalid(
            f'confirmation must be exactly "{services.RESET_CONFIRMATION}"; '
            "this puts every card back to new (review events are kept).",
            "confirmation",
        )
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
    payload = require_object(body)
    name = payload.get("name")
    if not isinstance(name, str) or not name.strip():
        raise invalid('name is required: a non-empty string, e.g. {"name": "Spanish"}.', "name")
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
        created, workspace_id = json.loads(raw)
        created_at = datetime.fromisoformat(created)
        if created_at.tzinfo is None:
            raise ValueError("naive cursor timestamp")
        return created_at, uuid.UUID(workspace_id)
    except (binascii.Error, UnicodeDecodeError, ValueError, TypeError, AttributeError) as exc:
        raise invalid(
            "cursor is not valid; pass the nextCursor of the previous page unchanged.", "cursor"
        ) from exc


def parse_limit(value: object) -> int:
    if value is None or value == "":
        return MAX_PAGE
    try:
        limit = int(str(value))
    except ValueError:
        limit = 0
    if not 1 <= limit <= MAX_PAGE:
        raise invalid(f"limit must be a whole number from 1 to {MAX_PAGE}.", "limit")
    return limit


def list_workspaces(
    user: AbstractBaseUser, api_key: ApiKey | None, *, limit: object = None, cursor: object = None
) -> CommandResult:
    """Keyset pages over (created_at, id): stable while workspaces are created concurrently."""
    page_size = parse_limit(limit)
    selected = current_workspace(user, api_key)
    queryset = services.member_workspaces(user).order_by("created_at", "id")
    if cursor not in (None, ""):
        if not isinstance(cursor, str):
            raise invalid("cursor must be a string.", "cursor")
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
