"""Access tokens at /mcp (the resource server's side): a Bearer value that is not an `fca_…` API
key is looked up by django-oauth-toolkit (by its SHA-256; the token itself is not stored), which
checks expiry, the `mcp` scope and the audience: the token's RFC 8707 resource must be this
server's /mcp on the host the request names. The answer is the connection's API-key row, so the
caller goes on exactly as with an API key."""

from __future__ import annotations

import re
from typing import Any

from oauth2_provider.oauth2_backends import get_oauthlib_core
from oauth2_provider.www_authenticate import build_bearer_challenge, challenge_status

from flashcards.models import ApiKey
from flashcards.oauth.connections import active_connection, issued_under, mark_used
from flashcards.oauth.resource import resource_metadata_url

MCP_SCOPE = "mcp"


class InvalidAccessToken(Exception):
    """Refused: `error` is the RFC 6750 code (`invalid_token`, `insufficient_scope`)."""

    def __init__(self, description: str, error: str = "invalid_token") -> None:
        super().__init__(description)
        self.error = error
        self.description = description

    @property
    def status(self) -> int:
        return challenge_status({"error": self.error})


def is_api_key(raw: str) -> bool:
    """Whether a Bearer value is meant as an API key (`fca_…`, spelled as parse_key accepts)."""
    return re.sub(r"[\s-]+", "", raw).upper().startswith("FCA_")


def authenticate_access_token(request: Any) -> ApiKey:
    """The connection's key for the request's Bearer access token; raises InvalidAccessToken."""
    valid, oauth_request = get_oauthlib_core().verify_request(request, scopes=[MCP_SCOPE])
    if not valid:
        error = dict(getattr(oauth_request, "oauth2_error", None) or {})
        raise InvalidAccessToken(
            error.get("error_description") or "The access token is invalid.",
            error.get("error", "invalid_token"),
        )
    token = oauth_request.access_token
    if not token.resource or token.user_id is None:
        # Tokens this server issues for /mcp always carry it; others (a client-registration
        # token) are not for this resource.
        raise InvalidAccessToken("The access token is not valid for this resource.")
    connection = active_connection(token.user_id, token.application_id)
    if (
        connection is None
        or not connection.api_key.user.is_active
        or not issued_under(token.created, connection)
    ):
        raise InvalidAccessToken("This connection has been revoked; authorize the client again.")
    mark_used(connection.api_key)
    return connection.api_key


def challenge(request: Any, error: InvalidAccessToken | None = None) -> str:
    """The WWW-Authenticate value of a refusal at /mcp: Bearer, the RFC 6750 error if a token was
    sent, and `resource_metadata` (RFC 9728 §5.1) pointing at the metadata of /mcp."""
    oauth2_error = {"error": error.error, "error_description": error.description} if error else None
    return build_bearer_challenge(
        request, oauth2_error, resource_metadata_url=resource_metadata_url(request)
    )
