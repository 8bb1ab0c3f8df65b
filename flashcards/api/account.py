"""GET /v1/agent/me, GET/POST /v1/agent/workspaces, POST /v1/agent/workspaces/{id}/select."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from flashcards.api import bodies, commands, schemas
from flashcards.http.envelope import success
from flashcards.http.workspace import api_key_of


class MeView(APIView):
    @extend_schema(
        operation_id="me",
        summary="The key's user, its selected workspace and the key's label.",
        responses={
            200: schemas.envelope("The user, the selected workspace and the key.", schemas.ME),
        },
    )
    def get(self, request: Request) -> Response:
        result = commands.me(request.user, api_key_of(request))
        return success(request, result.data, result.instructions)


class WorkspacesView(APIView):
    @extend_schema(
        operation_id="list_workspaces",
        summary="The workspaces this user is a member of, oldest first, keyset-paged.",
        parameters=[bodies.WorkspaceListQuerySerializer],
        responses={
            200: schemas.envelope("One page of workspaces.", schemas.WORKSPACES),
        },
    )
    def get(self, request: Request) -> Response:
        result = commands.list_workspaces(
            request.user, api_key_of(request), request.query_params.dict()
        )
        return success(request, result.data, result.instructions)

    @extend_schema(
        operation_id="create_workspace",
        summary="Create a workspace and select it for this key.",
        request=bodies.WorkspaceCreateSerializer,
        responses={200: schemas.envelope("The selected workspace.", schemas.SELECTED_WORKSPACE)},
    )
    def post(self, request: Request) -> Response:
        result = commands.create_workspace(request.user, api_key_of(request), request.data)
        return success(request, result.data, result.instructions)


class SelectWorkspaceView(APIView):
    @extend_schema(
        operation_id="select_workspace",
        summary="Select the workspace this key's statements run in.",
        request=None,
        responses={200: schemas.envelope("The selected workspace.", schemas.SELECTED_WORKSPACE)},
    )
    def post(self, request: Request, workspace_id: str) -> Response:
        result = commands.select_workspace(request.user, api_key_of(request), workspace_id)
        return success(request, result.data, result.instructions)
