"""The root URLconf: the admin, the dialect's routes (dsl.urls), the product's (flashcards.urls)
and the OAuth authorization server (flashcards.oauth.urls)."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("dsl.urls")),
    path("", include("flashcards.urls")),
    # The MCP authorization server: /.well-known/oauth-* and /o/ (flashcards.oauth).
    path("", include("flashcards.oauth.urls")),
]

handler400 = "flashcards.http.handlers.bad_request"
handler404 = "flashcards.http.handlers.not_found"
handler500 = "flashcards.http.handlers.server_error"
