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
from flashcards.api.commands import invalid, require_object
from flashcards.api.envelope import success
from flashcards.api.workspace import request_workspace
from flashcards.models import Workspace
from flashcards.services import DomainError
from flashcards.services.common import MAX_NESTING
from flashcards.services.sync import MAX_PUSH_OPERATIONS, PushOperation, push_operations
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


def _body_and_workspace(request: Request, workspace_id: str) -> tuple[dict[str, Any], Workspace]:
    workspace = request_workspace(request, workspace_id)
    try:
        data = request.data
    except RecursionError as exc:
        # The stdlib JSON decoder gives up on very deep nesting with RecursionError, not
        # ValueError, so DRF's parser does not turn it into a ParseError.
        raise invalid("The body is not valid JSON: it is nested too deeply.") from exc
    _check_body(data)
    return require_object(data), workspace


def _whole_number(body: dict[str, Any], field: str, default: int, low: int, high: int) -> int:
    value = body.get(field)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise invalid(f"{field} must be a whole number from {low} to {high}; got {value!r}.", field)
    return value


def _cursor_number(body: dict[str, Any], field: str) -> int:
    """A change or review sequence number: 64-bit in the database, 0 before the first."""
    return _whole_number(body, field, 0, 0, 2**63 - 1)


def _limit(body: dict[str, Any], maximum: int) -> int:
    return _whole_number(body, "limit", maximum, 1, maximum)


class PushRequestSerializer(serializers.Serializer):
    installation_id = serializers.CharField(max_length=200)
    platform = serializers.CharField(max_length=40)
    operations = serializers.ListField(
        child=serializers.DictField(), max_length=MAX_PUSH_OPERATIONS
    )


class PullRequestSerializer(serializers.Serializer):
    after_change_id = serializers.IntegerField(min_value=0, required=False, default=0)
    limit = serializers.IntegerField(min_value=1, max_value=MAX_PULL_LIMIT, required=False)


class BootstrapRequestSerializer(serializers.Serializer):
    cursor = serializers.CharField(required=False, allow_null=True)
    limit = serializers.IntegerField(min_value=1, max_value=MAX_BOOTSTRAP_LIMIT, required=False)


class HistoryRequestSerializer(serializers.Serializer):
    after_sequence = serializers.IntegerField(min_value=0, required=False, default=0)
    limit = serializers.IntegerField(min_value=1, max_value=MAX_HISTORY_LIMIT, required=False)


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
        responses={200: schemas.envelope("data: {operations: [...]}"), **schemas.ERROR_RESPONSES},
        examples=[PUSH_EXAMPLE],
    )
    def post(self, request: Request, workspace_id: str) -> Response:
        body, workspace = _body_and_workspace(request, workspace_id)
        raw_operations = body.get("operations")
        if not isinstance(raw_operations, list):
            raise invalid("operations must be a JSON array of operation objects.", "operations")
        operations = []
        for index, raw in enumerate(raw_operations):
            if not isinstance(raw, dict):
                raise invalid(f"operations[{index}] must be a JSON object.", "operations")
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
            200: schemas.envelope("data: {changes, next_change_id, has_more}"),
            **schemas.ERROR_RESPONSES,
        },
    )
    def post(self, request: Request, workspace_id: str) -> Response:
        body, workspace = _body_and_workspace(request, workspace_id)
        page = pull_changes(
            workspace, _cursor_number(body, "after_change_id"), _limit(body, MAX_PULL_LIMIT)
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
            200: schemas.envelope("data: {entries, next_cursor, has_more, next_change_id}"),
            **schemas.ERROR_RESPONSES,
        },
    )
    def post(self, request: Request, workspace_id: str) -> Response:
        body, workspace = _body_and_workspace(request, workspace_id)
        cursor = body.get("cursor")
        if cursor is not None and (not isinstance(cursor, str) or not cursor):
            raise invalid("cursor must be null (first page) or the next_cursor string.", "cursor")
        limit = _limit(body, MAX_BOOTSTRAP_LIMIT)
        try:
            page = bootstrap_page(workspace, cursor, limit)
        except DomainError as exc:
            raise invalid(exc.message, exc.field) from exc
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
            200: schemas.envelope("data: {review_events, next_sequence, has_more}"),
            **schemas.ERROR_RESPONSES,
        },
    )
    def post(self, request: Request, workspace_id: str) -> Response:
        body, workspace = _body_and_workspace(request, workspace_id)
        page = review_history_page(
            workspace, _cursor_number(body, "after_sequence"), _limit(body, MAX_HISTORY_LIMIT)
        )
        instructions = (
            f"More review events exist: pull again with after_sequence={page.next_sequence}."
            if page.has_more
            else f"Up to date. Next time pull with after_sequence={page.next_sequence}."
        )
        return success(request, asdict(page), instructions)
