"""Dynamic client registration (RFC 7591) for connectors: django-oauth-toolkit's endpoint, open to
anyone (a connector registers before any user is known), behind three rules of this server's:

- only the authorization-code grant (with refresh tokens) and the `code` response type;
- redirect URIs over https, or plain http on a loopback host for native clients (RFC 8252 §7.3:
  `127.0.0.1`, `[::1]`, `localhost`; any port); anything else is `invalid_redirect_uri`;
- at most `OAUTH_MAX_REGISTRATIONS` registrations that no user has consented to yet. At the cap,
  such registrations older than a day are deleted; if that frees nothing, 429
  `temporarily_unavailable`. Registrations a user approved never count and are never deleted here.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from oauth2_provider.models import get_application_model
from oauth2_provider.views import DynamicClientRegistrationView

from flashcards.oauth.models import Connection

ALLOWED_GRANT_TYPES = {"authorization_code", "refresh_token"}
LOOPBACK_HOSTS = {"127.0.0.1", "::1", "localhost"}
UNUSED_REGISTRATION_TTL = timedelta(days=1)


def _error(error: str, description: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": error, "error_description": description}, status=status)


def redirect_uri_problem(uri: object) -> str | None:
    """Why a redirect URI is refused, or None when it is acceptable."""
    if not isinstance(uri, str):
        return "each redirect URI must be a string"
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018  (raises ValueError on a malformed port)
    except ValueError:
        return f"{uri!r} is not a valid URL"
    if parts.fragment or not parts.hostname:
        return f"{uri!r} must be an absolute URL without a fragment"
    if parts.scheme == "https":
        return None
    if parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS:
        return None
    return f"{uri!r} must use https, or http on a loopback host (127.0.0.1, [::1], localhost)"


def _metadata_problem(data: dict[str, Any]) -> JsonResponse | None:
    grant_types = data.get("grant_types", ["authorization_code"])
    if isinstance(grant_types, list) and not set(grant_types) <= ALLOWED_GRANT_TYPES:
        return _error(
            "invalid_client_metadata",
            "Only the authorization_code and refresh_token grant types are supported.",
        )
    response_types = data.get("response_types", ["code"])
    if isinstance(response_types, list) and set(response_types) - {"code"}:
        return _error("invalid_client_metadata", "Only the 'code' response type is supported.")
    redirect_uris = data.get("redirect_uris")
    if not isinstance(redirect_uris, list) or not redirect_uris:
        return _error("invalid_redirect_uri", "redirect_uris must list at least one URI.")
    for uri in redirect_uris:
        problem = redirect_uri_problem(uri)
        if problem is not None:
            return _error("invalid_redirect_uri", f"Refused redirect URI: {problem}.")
    return None


def _unused_registrations() -> Any:
    Application = get_application_model()
    return Application.objects.filter(
        registration_source=Application.RegistrationSource.DCR
    ).exclude(pk__in=Connection.objects.values("application_id"))


def _room_for_one_more() -> bool:
    cap = settings.OAUTH_MAX_REGISTRATIONS
    if _unused_registrations().count() < cap:
        return True
    stale = _unused_registrations().filter(created__lt=timezone.now() - UNUSED_REGISTRATION_TTL)
    stale.delete()
    return _unused_registrations().count() < cap


class RegistrationView(DynamicClientRegistrationView):
    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            data = json.loads(request.body)
        except ValueError:
            data = None
        if isinstance(data, dict):
            problem = _metadata_problem(data)
            if problem is not None:
                return problem
        # A body that is not a JSON object is refused by the library with its own message.
        if not _room_for_one_more():
            response = _error(
                "temporarily_unavailable",
                "Too many client registrations are waiting for a user's approval; retry later.",
                status=429,
            )
            response["Retry-After"] = "3600"
            return response
        return super().post(request, *args, **kwargs)
