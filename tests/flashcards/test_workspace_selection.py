"""Which workspace a key or a session acts on: the self-healing rules of domain.md §6."""

from __future__ import annotations

import uuid

import pytest

from flashcards import services
from flashcards.models import ApiKey, Membership, UserProfile
from flashcards.services import NotFoundError, WorkspaceSelectionRequired
from tests.factories import UserFactory


def stored_selection(api_key: ApiKey):
    return ApiKey.objects.get(pk=api_key.pk).selected_workspace_id


def leave(user, workspace) -> None:
    Membership.objects.filter(user=user, workspace=workspace).delete()


def test_an_accessible_selection_is_kept_among_several(user, workspace):
    services.create_workspace(user, "Work")
    key, _ = services.create_api_key(user, "k", workspace=workspace)
    assert services.resolve_key_workspace(key) == workspace
    assert stored_selection(key) == workspace.pk


def test_no_selection_and_exactly_one_workspace_selects_it(user, workspace):
    key, _ = services.create_api_key(user, "k")
    assert key.selected_workspace is None
    assert services.resolve_key_workspace(key) == workspace
    assert stored_selection(key) == workspace.pk


def test_a_lost_selection_heals_to_the_only_remaining_workspace(user, workspace):
    work = services.create_workspace(user, "Work")
    key, _ = services.create_api_key(user, "k", workspace=work)
    leave(user, work)
    assert services.resolve_key_workspace(key) == workspace
    assert stored_selection(key) == workspace.pk


def test_a_soft_deleted_selection_is_not_accessible(user, workspace):
    work = services.create_workspace(user, "Work")
    key, _ = services.create_api_key(user, "k", workspace=work)
    work.deleted_at = services.now_ms()
    work.save(update_fields=["deleted_at"])
    assert services.resolve_key_workspace(key) == workspace


def test_no_workspace_at_all_creates_a_personal_one(db):
    user = UserFactory()
    key, _ = services.create_api_key(user, "k")
    workspace = services.resolve_key_workspace(key)
    assert workspace.name == "Personal"
    assert Membership.objects.get(user=user, workspace=workspace).role == "owner"
    assert stored_selection(key) == workspace.pk
    assert services.resolve_key_workspace(key) == workspace  # not a second one
    assert services.member_workspaces(user).count() == 1


def test_several_workspaces_and_no_selection_require_a_choice(user, workspace):
    services.create_workspace(user, "Work")
    key, _ = services.create_api_key(user, "k")
    with pytest.raises(WorkspaceSelectionRequired) as exc:
        services.resolve_key_workspace(key)
    assert exc.value.code == "workspace_selection_required"
    assert stored_selection(key) is None


def test_a_lost_selection_among_several_is_cleared(user, workspace):
    services.create_workspace(user, "Work")
    gone = services.create_workspace(user, "Old")
    key, _ = services.create_api_key(user, "k", workspace=gone)
    leave(user, gone)
    with pytest.raises(WorkspaceSelectionRequired):
        services.resolve_key_workspace(key)
    assert stored_selection(key) is None


def test_selecting_requires_membership(user, workspace, other_workspace):
    work = services.create_workspace(user, "Work")
    key, _ = services.create_api_key(user, "k")
    assert services.select_key_workspace(key, str(work.pk)) == work
    assert stored_selection(key) == work.pk
    for bad in (other_workspace.pk, uuid.uuid4(), "nope", None):
        with pytest.raises(NotFoundError):
            services.select_key_workspace(key, bad)
    assert stored_selection(key) == work.pk


def test_keys_heal_independently(user, workspace):
    work = services.create_workspace(user, "Work")
    a, _ = services.create_api_key(user, "a", workspace=workspace)
    b, _ = services.create_api_key(user, "b", workspace=work)
    services.select_key_workspace(a, work.pk)
    assert stored_selection(b) == work.pk
    assert services.resolve_key_workspace(b) == work


def test_sessions_follow_the_same_rules(user, workspace):
    assert services.resolve_user_workspace(user) == workspace
    work = services.create_workspace(user, "Work")
    assert services.resolve_user_workspace(user) == workspace  # kept
    services.select_user_workspace(user, work.pk)
    assert UserProfile.objects.get(user=user).selected_workspace == work
    leave(user, work)
    assert services.resolve_user_workspace(user) == workspace  # healed to the only one
    services.create_workspace(user, "Third")
    UserProfile.objects.filter(user=user).update(selected_workspace=None)
    with pytest.raises(WorkspaceSelectionRequired):
        services.resolve_user_workspace(user)


def test_a_session_without_workspaces_gets_a_personal_one(db):
    user = UserFactory()
    assert services.resolve_user_workspace(user).name == "Personal"
