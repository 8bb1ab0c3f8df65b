"""Connections: a user's consent to an OAuth client, written and looked up here only.

A connection is an `ApiKey` row, so the key page lists it, revoking it there ends it, and its
`last_used_at`, rate-limit budget and query-log attribution are an API key's. Its `secret_hash`
is a value no SHA-256 hex digest equals: no `fca_…` key authenticates as a connection.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from oauth2_provider.models import (
    AbstractApplication,
    get_access_token_model,
    get_refresh_token_model,
)

from flashcards.models import ApiKey, Workspace
from flashcards.oauth.models import Connection
from flashcards.services import create_api_key, get_member_workspace, now_ms
from flashcards.services.api_keys import LAST_USED_REFRESH, clean_label

UNUSABLE_SECRET_HASH = "!oauth"
# Both timestamps come from this server's clock; the slack only absorbs sub-second rounding.
TOKEN_CLOCK_SLACK = timedelta(seconds=1)


def default_label(application: AbstractApplication) -> str:
    return (application.name or "OAuth client").strip()[:120] or "OAuth client"


def active_connection(user_id: object, application_id: object) -> Connection | None:
    """The user's live connection to the client, with its key and the key's user."""
    return (
        Connection.objects.select_related("api_key__user", "api_key__selected_workspace")
        .filter(
            application_id=application_id,
            api_key__user_id=user_id,
            api_key__revoked_at__isnull=True,
        )
        .order_by("-id")
        .first()
    )


@transaction.atomic
def connect(
    user: AbstractBaseUser,
    application: AbstractApplication,
    workspace: Workspace,
    label: str,
    redirect_uri: str = "",
) -> Connection:
    """Record the user's consent: the live connection to this client now selects `workspace`
    and carries `label`; without one, a new connection (a new row on the key page)."""
    label = clean_label(label)
    workspace = get_member_workspace(user, workspace.pk)
    connection = active_connection(user.pk, application.pk)
    if connection is not None:
        api_key = connection.api_key
        api_key.label = label
        api_key.selected_workspace = workspace
        api_key.save(update_fields=["label", "selected_workspace"])
        host = _host(redirect_uri)
        if host and host != connection.approved_host:
            connection.approved_host = host
            connection.save(update_fields=["approved_host"])
        return connection
    # The key service makes the row (key id, label, workspace); its secret is dropped unseen and
    # its hash replaced, in the same transaction.
    api_key, _secret = create_api_key(user, label, workspace=workspace)
    api_key.secret_hash = UNUSABLE_SECRET_HASH
    api_key.save(update_fields=["secret_hash"])
    return Connection.objects.create(
        api_key=api_key, application=application, approved_host=_host(redirect_uri)
    )


def _host(uri: str) -> str:
    try:
        return (urlsplit(uri).netloc or "")[:255]
    except ValueError:
        return ""


def revoke_connection_tokens(connection: Connection) -> None:
    """Every access and refresh token of the connection's user and client, at once: a revoked
    connection's tokens never answer again, whatever the user approves later."""
    user_id, application_id = connection.api_key.user_id, connection.application_id
    AccessToken, RefreshToken = get_access_token_model(), get_refresh_token_model()
    RefreshToken.objects.filter(
        user_id=user_id, application_id=application_id, revoked__isnull=True
    ).update(revoked=timezone.now())
    AccessToken.objects.filter(user_id=user_id, application_id=application_id).delete()


def issued_under(token_created: datetime, connection: Connection) -> bool:
    """Whether a token was issued under this connection row (not under an earlier, revoked one
    of the same user and client): tokens are only ever issued after the row exists."""
    return token_created >= connection.created_at - TOKEN_CLOCK_SLACK


def revoke_on_key_revocation(sender: Any, instance: ApiKey, **_: Any) -> None:
    """post_save of ApiKey: revoking a connection's key (the key page, the admin) revokes its
    tokens in the same transaction."""
    if instance.revoked_at is None:
        return
    connection = Connection.objects.filter(api_key=instance).first()
    if connection is not None:
        revoke_connection_tokens(connection)


def mark_used(api_key: ApiKey) -> None:
    """`last_used_at`, refreshed at most every few minutes, as for an API key."""
    now = now_ms()
    if api_key.last_used_at is None or now - api_key.last_used_at >= LAST_USED_REFRESH:
        api_key.last_used_at = now
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
