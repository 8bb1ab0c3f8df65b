"""POST /v1/agent/reviews, /v1/agent/workspace/scheduler-settings and
/v1/agent/workspace/reset-progress: the domain verbs that are not UPDATEs (domain.md §4)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from flashcards.api import bodies, commands, schemas
from flashcards.http.envelope import success
from flashcards.http.workspace import request_workspace
from flashcards.models import Workspace


def body_and_workspace(
    request: Request, parse: Callable[[object], dict[str, Any]]
) -> tuple[dict[str, Any], Workspace]:
    """The body checked by its serializer, and the workspace it targets (`workspace_id` or the
    selection)."""
    workspace = request_workspace(request, bodies.workspace_id_of(request.data))
    return parse(request.data), workspace


class ReviewsView(APIView):
    @extend_schema(
        operation_id="submit_review",
        summary="Record one review and reschedule the card (server-side FSRS).",
        request=bodies.ReviewRequestSerializer,
        responses={
            200: schemas.envelope("The review event and the rescheduled card.", schemas.REVIEW)
        },
        examples=[schemas.REVIEW_EXAMPLE],
    )
    def post(self, request: Request) -> Response:
        body, workspace = body_and_workspace(request, commands.review_body)
        result = commands.submit_review(workspace, body)
        return success(request, result.data, result.instructions)


class SchedulerSettingsView(APIView):
    @extend_schema(
        operation_id="update_scheduler_settings",
        summary="Change the workspace's scheduler settings; omitted keys keep their value.",
        request=bodies.SchedulerSettingsRequestSerializer,
        responses={200: schemas.envelope("The workspace row.", schemas.WORKSPACE_ROW)},
        examples=[schemas.SETTINGS_EXAMPLE],
    )
    def post(self, request: Request) -> Response:
        body, workspace = body_and_workspace(request, commands.settings_body)
        result = commands.update_scheduler_settings(workspace, body)
        return success(request, result.data, result.instructions)


class ResetProgressView(APIView):
    @extend_schema(
        operation_id="reset_progress",
        summary="Put every card back to new; review events are kept.",
        request=bodies.ResetProgressRequestSerializer,
        responses={
            200: schemas.envelope("How many cards are new again.", schemas.RESET),
        },
        examples=[schemas.RESET_EXAMPLE],
    )
    def post(self, request: Request) -> Response:
        body, workspace = body_and_workspace(request, commands.reset_body)
        result = commands.reset_progress(workspace, body)
        return success(request, result.data, result.instructions)
