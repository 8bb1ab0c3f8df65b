"""Principals and their workspaces (domain.md §6): users made by management commands, workspaces,
memberships, and which workspace a principal acts on."""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Sequence

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from flashcards.models import ApiKey, Membership, UserProfile, Workspace
from flashcards.services import key_cache
from flashcards.services.common import DomainError, NotFoundError, check_storable
from flashcards.services.timestamps import now_ms

DEFAULT_WORKSPACE_NAME = "Personal"


class WorkspaceSelectionRequired(DomainError):
    def __init__(self) -> None:
        super().__init__(
            "This key has access to several workspaces and none is selected.",
            code="workspace_selection_required",
        )


def clean_workspace_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip():
        raise DomainError("Workspace name must be a non-empty string.", field="name")
    name = name.strip()
    if len(name) > 200:
        raise DomainError("Workspace name may be at most 200 characters.", field="name")
    check_storable(name, "name")
    return name


@transaction.atomic
def create_workspace(
    user: AbstractBaseUser, name: str, *, workspace_id: uuid.UUID | None = None
) -> Workspace:
    at = now_ms()
    workspace = Workspace.objects.create(
        id=workspace_id or uuid.uuid4(),
        name=clean_workspace_name(name),
        created_at=at,
        updated_at=at,
    )
    Membership.objects.create(user=user, workspace=workspace, role=Membership.ROLE_OWNER)
    return workspace


@transaction.atomic
def rename_workspace(user: AbstractBaseUser, workspace: Workspace, name: str) -> Workspace:
    workspace = get_member_workspace(user, workspace.pk)
    workspace.name = clean_workspace_name(name)
    workspace.updated_at = now_ms()
    workspace.save(update_fields=["name", "updated_at"])
    return workspace


@transaction.atomic
def add_member(
    user: AbstractBaseUser, workspace: Workspace, role: str | None = None
) -> tuple[Membership, bool]:
    """Give ``user`` access to ``workspace``: a new membership gets ``role`` (default member); an
    existing one keeps its role unless ``role`` names another. Returns (membership, created)."""
    if role is not None and role not in dict(Membership.ROLES):
        raise DomainError(
            f"Unknown role {role!r}; use one of {', '.join(dict(Membership.ROLES))}.", field="role"
        )
    if workspace.deleted_at is not None:
        raise NotFoundError("Workspace not found.", field="workspace_id")
    membership, created = Membership.objects.get_or_create(
        user=user, workspace=workspace, defaults={"role": role or Membership.ROLE_MEMBER}
    )
    if not created and role is not None and membership.role != role:
        membership.role = role
        membership.save(update_fields=["role"])
    return membership, created


def member_workspaces(user: AbstractBaseUser):
    return Workspace.objects.filter(memberships__user=user, deleted_at__isnull=True)


def get_member_workspace(user: AbstractBaseUser, workspace_id: object) -> Workspace:
    """The workspace if `user` is a member; otherwise not-found (never says it exists)."""
    try:
        ws_uuid = uuid.UUID(str(workspace_id))
    except ValueError as exc:
        raise NotFoundError("Workspace not found.", field="workspace_id") from exc
    workspace = member_workspaces(user).filter(pk=ws_uuid).first()
    if workspace is None:
        raise NotFoundError("Workspace not found.", field="workspace_id")
    return workspace


def ensure_personal_workspace(user: AbstractBaseUser) -> Workspace:
    """A user always has at least one workspace: a new one gets `Personal`."""
    existing = member_workspaces(user).order_by("created_at", "id").first()
    return existing or create_workspace(user, DEFAULT_WORKSPACE_NAME)


def _self_heal(
    user: AbstractBaseUser, current_id: uuid.UUID | None
) -> tuple[Workspace | None, bool]:
    """Domain.md §6 rules: keep an accessible selection; else the only workspace; else a new
    Personal one when there are none; else nothing. Returns (workspace, changed)."""
    workspaces = member_workspaces(user)
    if current_id is not None:
        current = workspaces.filter(pk=current_id).first()
        if current is not None:
            return current, False
    candidates: Sequence[Workspace] = list(workspaces.order_by("created_at", "id")[:2])
    if len(candidates) == 1:
        return candidates[0], True
    if not candidates:
        return create_workspace(user, DEFAULT_WORKSPACE_NAME), True
    return None, current_id is not None


def resolve_key_workspace(api_key: ApiKey) -> Workspace:
    """The workspace a request with this key acts on, after self-healing the selection. A key
    from ``authenticate_api_key`` arrives with its selection loaded and checked
    (``selection_is_member``): then no query is needed."""
    if getattr(api_key, "selection_is_member", False) and api_key.selected_workspace_id:
        return api_key.selected_workspace
    workspace, changed = _self_heal(api_key.user, api_key.selected_workspace_id)
    if changed:
        api_key.selected_workspace = workspace
        ApiKey.objects.filter(pk=api_key.pk).update(selected_workspace=workspace)
        key_cache.invalidate()
    if workspace is None:
        raise WorkspaceSelectionRequired()
    return workspace


def select_key_workspace(api_key: ApiKey, workspace_id: object) -> Workspace:
    workspace = get_member_workspace(api_key.user, workspace_id)
    ApiKey.objects.filter(pk=api_key.pk).update(selected_workspace=workspace)
    key_cache.invalidate()
    api_key.selected_workspace = workspace
    return workspace


def resolve_user_workspace(user: AbstractBaseUser) -> Workspace:
    """The workspace a logged-in session acts on (same self-healing rules as a key)."""
    profile, _ = UserProfile.objects.get_or_create(user=user)
    workspace, changed = _self_heal(user, profile.selected_workspace_id)
    if changed:
        profile.selected_workspace = workspace
        profile.save(update_fields=["selected_workspace"])
    if workspace is None:
        raise WorkspaceSelectionRequired()
    return workspace


def select_user_workspace(user: AbstractBaseUser, workspace_id: object) -> Workspace:
    workspace = get_member_workspace(user, workspace_id)
    profile, _ = UserProfile.objects.get_or_create(user=user)
    profile.selected_workspace = workspace
    profile.save(update_fields=["selected_workspace"])
    return workspace


# Users created by management commands (create_api_key, import_workspace, seed_demo), and the
# demo login's password.
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
