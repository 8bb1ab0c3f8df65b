"""The authorization server's routes: metadata at the root well-known paths, the OAuth endpoints
under /o/. Django-oauth-toolkit reverses these names in its own namespace, so they keep it."""

from django.urls import path
from oauth2_provider import views

from flashcards.oauth.consent import ConsentView
from flashcards.oauth.metadata import McpResourceMetadataView
from flashcards.oauth.registration import RegistrationManagementView, RegistrationView

app_name = "oauth2_provider"

urlpatterns = [
    path(
        ".well-known/oauth-authorization-server",
        views.OAuthServerMetadataView.as_view(),
        name="oauth-server-metadata",
    ),
    path(
        ".well-known/oauth-protected-resource/mcp",
        McpResourceMetadataView.as_view(),
        name="oauth-resource-metadata-mcp",
    ),
    path(
        ".well-known/oauth-protected-resource",
        McpResourceMetadataView.as_view(),
        name="oauth-resource-metadata",
    ),
    path("o/authorize/", ConsentView.as_view(), name="authorize"),
    path("o/token/", views.TokenView.as_view(), name="token"),
    path("o/revoke_token/", views.RevokeTokenView.as_view(), name="revoke-token"),
    path("o/register/", RegistrationView.as_view(), name="dcr-register"),
    path(
        "o/register/<str:client_id>/",
        RegistrationManagementView.as_view(),
        name="dcr-register-management",
    ),
]
