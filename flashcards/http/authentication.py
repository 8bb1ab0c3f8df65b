"""`Authorization: ApiKey fca_…` (or `Bearer fca_…`) for DRF views."""

from __future__ import annotations

from typing import Any

from rest_framework import authentication, exceptions

from flashcards.models import ApiKey
from flashcards.services import InvalidApiKey, authenticate_api_key

SCHEMES = ("apikey", "bearer")


def key_from_header(header: str) -> str | None:
    """The raw key of an Authorization header, or None when it uses another scheme."""
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() not in SCHEMES:
        return None
    return value.strip()


class ApiKeyAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request: Any) -> tuple[Any, ApiKey] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header:
            return None
        raw = key_from_header(header)
        if raw is None:
            raise exceptions.AuthenticationFailed(
                "Unsupported Authorization scheme; use 'ApiKey fca_…' or 'Bearer fca_…'."
            )
        try:
            api_key = authenticate_api_key(raw)
        except InvalidApiKey as exc:
            raise exceptions.AuthenticationFailed(str(exc)) from exc
        return api_key.user, api_key

    def authenticate_header(self, request: Any) -> str:
        return "ApiKey"
