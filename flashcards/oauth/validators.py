"""django-oauth-toolkit's request validator, with the consent recorded as a connection and every
grant of a revoked connection refused (the code exchange and each refresh).

Authorization codes are stored as their SHA-256 (the `Grant.code` column never holds a code a
reader of the database could redeem): every method that receives a code hashes it before the
library looks it up. A code presented a second time (RFC 6749 §4.1.2) revokes the tokens issued
from it: the exchange is remembered, by the code's hash, in the shared cache for a day.
Refresh tokens are bound to the connection row they were issued under."""

from __future__ import annotations

import hashlib
import time
from datetime import UTC, datetime
from typing import Any

from django.core.cache import cache
from oauth2_provider.models import get_access_token_model, get_refresh_token_model
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.oauth2.rfc6749 import errors

from flashcards.oauth.connections import active_connection, connect, default_label, issued_under

USED_CODE_SECONDS = 24 * 3600


def hash_code(code: str) -> str:
    return "sha256:" + hashlib.sha256(code.encode()).hexdigest()


def _used_key(hashed: str) -> str:
    return f"oauth-used-code:{hashed}"


def revoke_tokens_since(user_id: Any, application_id: Any, since: float) -> None:
    moment = datetime.fromtimestamp(since - 1, tz=UTC)
    get_refresh_token_model().objects.filter(
        user_id=user_id, application_id=application_id, created__gte=moment
    ).update(revoked=datetime.now(tz=UTC))
    get_access_token_model().objects.filter(
        user_id=user_id, application_id=application_id, created__gte=moment
    ).delete()


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
        connect(request.user, request.client, workspace, label, request.redirect_uri or "")
        # The response carries `code` as given; only its hash is stored.
        stored = {**code, "code": hash_code(code["code"])}
        super().save_authorization_code(client_id, stored, request, *args, **kwargs)

    def validate_code(
        self, client_id: str, code: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        hashed = hash_code(code)
        if not super().validate_code(client_id, hashed, client, request, *args, **kwargs):
            used = cache.get(_used_key(hashed))
            if used is not None and used["application"] == client.pk:
                revoke_tokens_since(used["user"], used["application"], used["at"])
                cache.delete(_used_key(hashed))
            return False
        return active_connection(request.user.pk, client.pk) is not None

    def invalidate_authorization_code(
        self, client_id: str, code: str, request: Any, *args: Any, **kwargs: Any
    ) -> None:
        hashed = hash_code(code)
        super().invalidate_authorization_code(client_id, hashed, request, *args, **kwargs)
        cache.set(
            _used_key(hashed),
            {"user": request.user.pk, "application": request.client.pk, "at": time.time() - 5},
            USED_CODE_SECONDS,
        )

    def confirm_redirect_uri(
        self, client_id: str, code: str, redirect_uri: str, client: Any, *args: Any, **kw: Any
    ) -> bool:
        return super().confirm_redirect_uri(
            client_id, hash_code(code), redirect_uri, client, *args, **kw
        )

    def get_code_challenge(self, code: str, request: Any) -> Any:
        return super().get_code_challenge(hash_code(code), request)

    def get_code_challenge_method(self, code: str, request: Any) -> Any:
        return super().get_code_challenge_method(hash_code(code), request)

    def get_authorization_code_scopes(
        self, client_id: str, code: str, redirect_uri: str, request: Any
    ) -> Any:
        return super().get_authorization_code_scopes(
            client_id, hash_code(code), redirect_uri, request
        )

    def get_authorization_code_nonce(
        self, client_id: str, code: str, redirect_uri: str, request: Any
    ) -> Any:
        return super().get_authorization_code_nonce(
            client_id, hash_code(code), redirect_uri, request
        )

    def save_bearer_token(self, token: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        code = getattr(request, "code", None)
        if code:
            request.code = hash_code(code)
        try:
            return super().save_bearer_token(token, request, *args, **kwargs)
        finally:
            if code:
                request.code = code

    def validate_refresh_token(
        self, refresh_token: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        if not super().validate_refresh_token(refresh_token, client, request, *args, **kwargs):
            return False
        connection = active_connection(request.user.pk, client.pk)
        instance = getattr(request, "refresh_token_instance", None)
        return connection is not None and (
            instance is None or issued_under(instance.created, connection)
        )
