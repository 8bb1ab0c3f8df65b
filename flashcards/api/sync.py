"""POST /v1/workspaces/{workspace_id}/sync/{push,pull,bootstrap,review-history/pull}: the sync API
of offline-first clients (domain.md §5, docs/sync.md). Thin views: check the body's shape, call
one sync service, answer in the agent envelope. Membership of the workspace in the URL is
required; a workspace the principal cannot see is 404 WORKSPACE_NOT_FOUND."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from typing import Any

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from flashcards.api import schemas
from flashcards.api.bodies import (
    BootstrapRequestSerializer,
    HistoryRequestSerializer,
    PullRequestSerializer,
    PushRequestSerializer,
    invalid,
    validated,
)
from flashcards.http.envelope import success
from flashcards.http.workspace import request_workspace
from flashcards.models import Workspace
from flashcards.services import DomainError
from flashcards.services.common import MAX_NESTING
from flashcards.services.sync import PushOperation, push_operations
from flashcards.services.sync_feed import (
    MAX_BOOTSTRAP_LIMIT,
    MAX_HISTORY_LIMIT,
    MAX_PULL_LIMIT,
    bootstrap_page,
    pull_changes,
    review_history_page,
)

# The body's own levels (body, operations, operation) above a payload's allowed nesting.
MAX_BODY_NESTING = MAX_NESTING + 3


def _check_body(body: object) -> None:
    """Refuse, before anything reads it, a body that could not be rendered back: a string with a
    lone surrogate escape (valid JSON, invalid Unicode) or absurd nesting. Iterative on purpose."""
    pending: list[tuple[object, int]] = [(body, 0)]
    while pending:
        item, depth = pending.pop()
        if depth > MAX_BODY_NESTING:
            raise invalid(f"The body is nested more than {MAX_BODY_NESTING} levels deep.")
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise invalid("The body holds a string that is not valid Unicode.") from exc
        elif isinstance(item, dict):
            pending.extend((key, depth + 1) for key in item)
            pending.extend((value, depth + 1) for value in item.values())
        elif isinstance(item, list):
            pending.extend((value, depth + 1) for value in item)


def _body_and_workspace(
    request: Request, workspace_id: str, serializer: type[serializers.Serializer]
) -> tuple[dict[str, Any], Workspace]:
    """The workspace of the URL, and the body checked by ``serializer`` (bodies.py)."""
    workspace = request_workspace(request, workspace_id)
    try:
        data = request.data
    except RecursionError as exc:
        # The stdlib JSON decoder gives up on very deep nesting with RecursionError, not
        # ValueError, so DRF's parser does not turn it into a ParseError.
        raise invalid("The body is not valid JSON: it is nested too deeply.") from exc
    _check_body(data)
    return validated(serializer, data), workspace


PUSH_EXAMPLE = OpenApiExample(
    "Create a card offline",
    value={
        "installation_id": "web-3f9c",
        "platform": "web",
        "operations": [
            {
                "operation_id": "op-1",
                "entity_type": "card",
                "entity_id": "123e4567-e89b-42d3-a456-426614174000",
                "action": "upsert",
                "client_updated_at": "2026-03-05T10:00:00.000Z",
                "payload": {"front_text": "Hola", "back_text": "Hello", "tags": ["spanish"]},
            }
        ],
    },
    request_only=True,
)


class SyncPushView(APIView):
    @extend_schema(
        operation_id="sync_push",
        summary="Apply queued client operations (last-writer-wins snapshots, appended reviews).",
        request=PushRequestSerializer,
        responses={200: schemas.envelope("One result per operation.", schemas.PUSH)},
        examples=[PUSH_EXAMPLE],
    )
    def post(self, request: Request, workspace_id: str) -> Response:
        body, workspace = _body_and_workspace(request, workspace_id, PushRequestSerializer)
        operations = []
        for raw in body["operations"]:
            operations.append(
                PushOperation(
                    operation_id=raw.get("operation_id"),
                    entity_type=raw.get("entity_type"),
                    entity_id=raw.get("entity_id"),
                    action=raw.get("action"),
                    client_updated_at=raw.get("client_updated_at"),
                    payload=raw.get("payload"),
                )
            )
        try:
            results = push_operations(
                workspace,
                installation_id=body.get("installation_id"),
                platform=body.get("platform"),
                operations=operations,
            )
        except DomainError as exc:
            raise invalid(exc.message, exc.field) from exc
        counts = Counter(result.status for result in results)
        summary = ", ".join(
            f"{counts[s]} {s}" for s in ("applied", "ignored", "duplicate", "rejected")
        )
        instructions = (
            f"Push done: {summary}. Rejected operations carry an error: fix their payload and push "
            "them again (the same operation_id may be reused). Then pull to receive other changes."
        )
        return success(request, {"operations": [asdict(r) for r in results]}, instructions)


class SyncPullView(APIView):
    @extend_schema(
        operation_id="sync_pull",
        summary="The latest state of each entity changed after a change number.",
        request=PullRequestSerializer,
        responses={
            200: schemas.envelope("Changes after after_change_id.", schemas.PULL),
        },
    )
    def post(self, request: Request, workspace_id: str) -> Response:
        body, workspace = _body_and_workspace(request, workspace_id, PullRequestSerializer)
        page = pull_changes(
            workspace, body.get("after_change_id", 0), body.get("limit", MAX_PULL_LIMIT)
        )
        instructions = (
            f"More changes exist: pull again with after_change_id={page.next_change_id}."
            if page.has_more
            else f"Up to date. Next time pull with after_change_id={page.next_change_id}."
        )
        return success(request, asdict(page), instructions)


class SyncBootstrapView(APIView):
    @extend_schema(
        operation_id="sync_bootstrap",
        summary="Every live and tombstoned entity, paged, and the change number to pull from.",
        request=BootstrapRequestSerializer,
        responses={
            200: schemas.envelope("One page of entities.", schemas.BOOTSTRAP),
        },
    )
    def post(self, request: Request, workspace_id: str) -> Response:
        body, workspace = _body_and_workspace(request, workspace_id, BootstrapRequestSerializer)
        cursor = body.get("cursor")
        limit = body.get("limit", MAX_BOOTSTRAP_LIMIT)
        # A cursor that is no cursor of ours is refused by the service (a DomainError, answered
        # as 400 with details.reason): the schema can only say it is a string.
        page = bootstrap_page(workspace, cursor, limit)
        instructions = (
            "More entities exist: call bootstrap again with cursor=next_cursor."
            if page.has_more
            else f"Bootstrap complete: now pull with after_change_id={page.next_change_id}."
        )
        return success(request, asdict(page), instructions)


class SyncReviewHistoryPullView(APIView):
    @extend_schema(
        operation_id="sync_review_history_pull",
        summary="Review events after a review sequence number.",
        request=HistoryRequestSerializer,
        responses={
            200: schemas.envelope("Review events after after_sequence.", schemas.HISTORY),
        },
    )
    def post(self, request: Request, workspace_id: str) -> Response:
        body, workspace = _body_and_workspace(request, workspace_id, HistoryRequestSerializer)
        page = review_history_page(
            workspace, body.get("after_sequence", 0), body.get("limit", MAX_HISTORY_LIMIT)
        )
        instructions = (
            f"More review events exist: pull again with after_sequence={page.next_sequence}."
            if page.has_more
            else f"Up to date. Next time pull with after_sequence={page.next_sequence}."
        )
        return success(request, asdict(page), instructions)
