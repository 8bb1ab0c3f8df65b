"""django-oauth-toolkit's request validator, with the consent recorded as a connection and every
grant of a revoked connection refused (the code exchange and each refresh)."""

from __future__ import annotations

from typing import Any

from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.oauth2.rfc6749 import errors

from flashcards.oauth.connections import active_connection, connect, default_label


class ConnectionValidator(OAuth2Validator):
    def save_authorization_code(
        self, client_id: str, code: dict[str, Any], request: Any, *args: Any, **kwargs: Any
    ) -> None:
        # `workspace` and `connection_label` are credentials the consent view adds to the
        # approved request (flashcards.oauth.consent); oauthlib sets them on `request`.
        workspace = getattr(request, "workspace", None)
        if workspace is None:
            raise errors.AccessDeniedError(state=request.state)
        label = getattr(request, "connection_label", "") or default_label(request.client)
        connect(request.user, request.client, workspace, label)
        super().save_authorization_code(client_id, code, request, *args, **kwargs)

    def validate_code(
        self, client_id: str, code: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        if not super().validate_code(client_id, code, client, request, *args, **kwargs):
            return False
        return active_connection(request.user.pk, client.pk) is not None

    def validate_refresh_token(
        self, refresh_token: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        if not super().validate_refresh_token(refresh_token, client, request, *args, **kwargs):
            return False
        return active_connection(request.user.pk, client.pk) is not None
