"""Dynamic client registration (RFC 7591) for connectors: django-oauth-toolkit's endpoint, open to
anyone (a connector registers before any user is known), behind three rules of this server's:

- only the authorization-code grant (with refresh tokens) and the `code` response type;
- redirect URIs over https, or plain http on a loopback host for native clients (RFC 8252 §7.3:
  `127.0.0.1`, `[::1]`, `localhost`; any port); anything else is `invalid_redirect_uri`;
- at most `OAUTH_MAX_REGISTRATIONS` registrations that no user has consented to yet. Every
  registration first deletes those older than `OAUTH_UNAPPROVED_REGISTRATION_SECONDS` (15 minutes:
  a connector registers just before its user approves); if the cap is still reached, 429
  `temporarily_unavailable`. Registrations a user approved never count and are never deleted here;
- at most `OAUTH_REGISTRATIONS_PER_ADDRESS` registrations per client address per hour (429), so
  one client cannot fill the cap, which in turn empties within the purge period;
- redirect URIs holding whitespace are refused (the library joins them with spaces, so a space
  would smuggle a second URI past these rules);
- a public client (`token_endpoint_auth_method: none`) gets no secret, so none is hashed.

RFC 7592 management (`/o/register/<client_id>/`, with the registration access token, which
expires after `DCR_REGISTRATION_TOKEN_EXPIRE_SECONDS`): PUT is held to the same rules as the
registration; GET and DELETE are the library's.
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
from oauth2_provider.views import (
    DynamicClientRegistrationManagementView,
    DynamicClientRegistrationView,
)

from flashcards.oauth.models import Connection
from flashcards.security import counters

ALLOWED_GRANT_TYPES = {"authorization_code", "refresh_token"}
LOOPBACK_HOSTS = {"127.0.0.1", "::1", "localhost"}
REGISTRATION_WINDOW_SECONDS = 3600


def unused_registration_ttl() -> timedelta:
    return timedelta(seconds=settings.OAUTH_UNAPPROVED_REGISTRATION_SECONDS)


def _error(error: str, description: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": error, "error_description": description}, status=status)


def redirect_uri_problem(uri: object) -> str | None:
    """Why a redirect URI is refused, or None when it is acceptable."""
    if not isinstance(uri, str):
        return "each redirect URI must be a string"
    if not uri or any(char.isspace() for char in uri):
        return f"{uri[:200]!r} is empty or holds whitespace"
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


def purge_unapproved_registrations() -> int:
    """Delete the registrations nobody approved within the purge period; how many."""
    stale = _unused_registrations().filter(created__lt=timezone.now() - unused_registration_ttl())
    return stale.delete()[0]


def _room_for_one_more() -> bool:
    purge_unapproved_registrations()
    return _unused_registrations().count() < settings.OAUTH_MAX_REGISTRATIONS


def _too_many(description: str, retry_after: int) -> JsonResponse:
    response = _error("temporarily_unavailable", description, status=429)
    response["Retry-After"] = str(retry_after)
    return response


def _parsed(request: HttpRequest) -> Any:
    try:
        return json.loads(request.body)
    except ValueError:
        return None


def keep_public_clients_secretless(sender: Any, instance: Any, **_: Any) -> None:
    """pre_save of Application: a public client authenticates with no secret, so it gets none
    (and no PBKDF2 work is spent hashing one)."""
    if instance.client_type == "public":
        instance.client_secret = ""
        instance.hash_client_secret = False


class RegistrationView(DynamicClientRegistrationView):
    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        per_address = settings.OAUTH_REGISTRATIONS_PER_ADDRESS
        if per_address > 0:
            name = f"dcr-address:{counters.client_address(request)}"
            if counters.hit(name, REGISTRATION_WINDOW_SECONDS) > per_address:
                return _too_many(
                    "Too many client registrations from this address; retry later.",
                    counters.seconds_left(REGISTRATION_WINDOW_SECONDS),
                )
        data = _parsed(request)
        if isinstance(data, dict):
            problem = _metadata_problem(data)
            if problem is not None:
                return problem
        # A body that is not a JSON object is refused by the library with its own message.
        if not _room_for_one_more():
            return _too_many(
                "Too many client registrations are waiting for a user's approval; retry later.",
                int(unused_registration_ttl().total_seconds()),
            )
        return super().post(request, *args, **kwargs)


class RegistrationManagementView(DynamicClientRegistrationManagementView):
    """RFC 7592: a PUT replaces the client's metadata, so it passes the registration's rules."""

    def put(self, request: HttpRequest, client_id: str, *args: Any, **kwargs: Any) -> HttpResponse:
        data = _parsed(request)
        if isinstance(data, dict):
            problem = _metadata_problem(data)
            if problem is not None:
                return problem
        return super().put(request, client_id, *args, **kwargs)
