"""Which workspace an authenticated API request acts on."""

from __future__ import annotations

from typing import Any

from rest_framework import status

from flashcards.http.envelope import ApiError, workspace_not_found
from flashcards.models import ApiKey, Workspace
from flashcards.services import (
    NotFoundError,
    WorkspaceSelectionRequired,
    get_member_workspace,
    member_workspaces,
    resolve_key_workspace,
    resolve_user_workspace,
)

SELECTION_CANDIDATES = 20


def api_key_of(request: Any) -> ApiKey | None:
    return request.auth if isinstance(request.auth, ApiKey) else None


def request_workspace(request: Any, workspace_id: object = None) -> Workspace:
    """The explicit `workspace_id` if given (membership required), else the key's (or session's)
    self-healed selection; 409 WORKSPACE_SELECTION_REQUIRED when it cannot be decided."""
    user = request.user
    if workspace_id not in (None, ""):
        try:
            return get_member_workspace(user, workspace_id)
        except NotFoundError as exc:
            raise workspace_not_found() from exc
    try:
        api_key = api_key_of(request)
        if api_key is not None:
            return resolve_key_workspace(api_key)
        return resolve_user_workspace(user)
    except WorkspaceSelectionRequired as exc:
        raise ApiError(
            "WORKSPACE_SELECTION_REQUIRED",
            "No workspace is selected and this account has several.",
            status_code=status.HTTP_409_CONFLICT,
            details={
                "listWorkspaces": "GET /v1/agent/workspaces",
                "selectWorkspace": "POST /v1/agent/workspaces/{workspace_id}/select",
                # The first few candidates, so an agent can usually select without listing first.
                "workspaces": [
                    {"workspace_id": str(pk), "name": name}
                    for pk, name in member_workspaces(user)
                    .order_by("created_at", "id")
                    .values_list("pk", "name")[:SELECTION_CANDIDATES]
                ],
            },
        ) from exc
