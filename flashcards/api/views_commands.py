"""POST /v1/agent/reviews, /v1/agent/workspace/scheduler-settings and
/v1/agent/workspace/reset-progress: the domain verbs that are not UPDATEs (domain.md §4)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from flashcards.api import commands, schemas
from flashcards.api.envelope import success
from flashcards.api.workspace import request_workspace
from flashcards.models import Workspace


def body_and_workspace(request: Request) -> tuple[dict[str, Any], Workspace]:
    """The JSON object body, and the workspace it targets (`workspace_id` or the selection)."""
    body = commands.require_object(request.data)
    return body, request_workspace(request, body.get(commands.WORKSPACE_SELECTOR))


class ReviewsView(APIView):
    @extend_schema(
        operation_id="submit_review",
        summary="Record one review and reschedule the card (server-side FSRS).",
        request=schemas.ReviewRequestSerializer,
        responses={200: schemas.envelope("data: {review_event, card}"), **schemas.ERROR_RESPONSES},
        examples=[schemas.REVIEW_EXAMPLE],
    )
    def post(self, request: Request) -> Response:
        body, workspace = body_and_workspace(request)
        result = commands.submit_review(workspace, body)
        return success(request, result.data, result.instructions)


class SchedulerSettingsView(APIView):
    @extend_schema(
        operation_id="update_scheduler_settings",
        summary="Change the workspace's scheduler settings; omitted keys keep their value.",
        request=schemas.SchedulerSettingsRequestSerializer,
        responses={200: schemas.envelope("data: the workspace row"), **schemas.ERROR_RESPONSES},
        examples=[schemas.SETTINGS_EXAMPLE],
    )
    def post(self, request: Request) -> Response:
        body, workspace = body_and_workspace(request)
        result = commands.update_scheduler_settings(workspace, body)
        return success(request, result.data, result.instructions)


class ResetProgressView(APIView):
    @extend_schema(
        operation_id="reset_progress",
        summary="Put every card back to new; review events are kept.",
        request=schemas.ResetProgressRequestSerializer,
        responses={
            200: schemas.envelope("data: {workspace_id, cardsReset}"),
            **schemas.ERROR_RESPONSES,
        },
        examples=[schemas.RESET_EXAMPLE],
    )
    def post(self, request: Request) -> Response:
        body, workspace = body_and_workspace(request)
        result = commands.reset_progress(workspace, body)
        return success(request, result.data, result.instructions)
