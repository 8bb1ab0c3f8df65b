"""Routes of the flashcards app (commands, discovery, sync, the API-key page). The dialect's routes
live in dsl.urls."""

from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularSwaggerSplitView

from flashcards.api.account import MeView, SelectWorkspaceView, WorkspacesView
from flashcards.api.command_views import ResetProgressView, ReviewsView, SchedulerSettingsView
from flashcards.api.discovery import AgentDiscoveryView, DiscoveryView
from flashcards.api.imports import ExportView, ImportView
from flashcards.api.sync import (
    SyncBootstrapView,
    SyncPullView,
    SyncPushView,
    SyncReviewHistoryPullView,
)
from flashcards.web.api_keys import api_keys, revoke_key
from flashcards.web.landing import landing

urlpatterns = [
    path("", landing, name="landing"),
    path("v1/", DiscoveryView.as_view(), name="discovery"),
    re_path(r"^v1/agent/?$", AgentDiscoveryView.as_view(), name="agent-discovery"),
    path("v1/agent/me", MeView.as_view(), name="agent-me"),
    path("v1/agent/workspaces", WorkspacesView.as_view(), name="agent-workspaces"),
    path(
        "v1/agent/workspaces/<str:workspace_id>/select",
        SelectWorkspaceView.as_view(),
        name="agent-select-workspace",
    ),
    path("v1/agent/reviews", ReviewsView.as_view(), name="agent-reviews"),
    path(
        "v1/agent/workspace/scheduler-settings",
        SchedulerSettingsView.as_view(),
        name="agent-scheduler-settings",
    ),
    path(
        "v1/agent/workspace/reset-progress",
        ResetProgressView.as_view(),
        name="agent-reset-progress",
    ),
    path("v1/workspaces/<str:workspace_id>/sync/push", SyncPushView.as_view(), name="sync-push"),
    path("v1/workspaces/<str:workspace_id>/sync/pull", SyncPullView.as_view(), name="sync-pull"),
    path(
        "v1/workspaces/<str:workspace_id>/sync/bootstrap",
        SyncBootstrapView.as_view(),
        name="sync-bootstrap",
    ),
    path(
        "v1/workspaces/<str:workspace_id>/sync/review-history/pull",
        SyncReviewHistoryPullView.as_view(),
        name="sync-review-history-pull",
    ),
    path("v1/workspaces/<str:workspace_id>/imports", ImportView.as_view(), name="imports"),
    re_path(
        r"^v1/workspaces/(?P<workspace_id>[^/]+)/exports/(?P<what>[^/.]+)\.(?P<fmt>[^/.]+)$",
        ExportView.as_view(),
        name="exports",
    ),
    path("v1/openapi.json", SpectacularJSONAPIView.as_view(), name="openapi-schema"),
    path(
        "v1/docs",
        SpectacularSwaggerSplitView.as_view(url_name="openapi-schema"),
        name="openapi-docs",
    ),
    # Human-facing: sign in (also the browsable API's login link) and manage your own API keys.
    path("api-auth/", include("rest_framework.urls")),
    path("account/api-keys/", api_keys, name="account-api-keys"),
    path("account/api-keys/<str:key_id>/revoke", revoke_key, name="account-api-key-revoke"),
]
