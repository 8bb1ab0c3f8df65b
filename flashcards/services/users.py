"""Users created by management commands (create_api_key, import_workspace, seed_demo), and the
demo login's password."""

from __future__ import annotations

import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import ValidationError

from flashcards.services.common import DomainError


def get_or_create_user(username: str) -> tuple[AbstractBaseUser, bool]:
    """The user with this username, created without a usable password if missing (they sign in
    with an API key, or an admin sets a password). Returns (user, created)."""
    user_model = get_user_model()
    username = username.strip()
    existing = user_model._default_manager.filter(**{user_model.USERNAME_FIELD: username}).first()
    if existing is not None:
        return existing, False
    try:
        user_model._meta.get_field(user_model.USERNAME_FIELD).clean(username, None)
    except ValidationError as exc:
        raise DomainError(
            f"Invalid username {username!r}: {' '.join(exc.messages)}", field="username"
        ) from exc
    return user_model._default_manager.create_user(username), True


def set_random_password(user: AbstractBaseUser) -> str:
    """Give ``user`` a fresh random password (any previous one stops working) and return it."""
    password = secrets.token_urlsafe(12)
    user.set_password(password)
    user.save(update_fields=["password"])
    return password
