"""Issue #21: every admin action needs more than the view permission — a staff user who may only
view gets 403 for each, and nothing changes; with the permission the action runs."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from flashcards import services
from flashcards.models import ApiKey, Card, Deck, Membership, Workspace
from tests.factories import UserFactory, make_card, make_deck

pytestmark = pytest.mark.django_db


def _staff(*codenames: str) -> tuple[Client, object]:
    user = UserFactory(username="viewer", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client, user


def _changelist(model) -> str:
    return reverse(f"admin:flashcards_{model._meta.model_name}_changelist")


def test_a_view_only_user_cannot_add_themselves_to_a_workspace(workspace):
    client, viewer = _staff("view_workspace")
    assert client.get(_changelist(Workspace)).status_code == 200
    response = client.post(
        _changelist(Workspace),
        {"action": "add_me_as_member", "_selected_action": [str(workspace.pk)]},
    )
    assert response.status_code == 403
    assert not Membership.objects.filter(user=viewer).exists()


def test_with_the_change_permission_the_action_adds_the_member(workspace):
    client, viewer = _staff("view_workspace", "change_workspace")
    response = client.post(
        _changelist(Workspace),
        {"action": "add_me_as_member", "_selected_action": [str(workspace.pk)]},
    )
    assert response.status_code == 302
    assert Membership.objects.filter(user=viewer, workspace=workspace).exists()


def test_a_view_only_user_cannot_revoke_keys(user, workspace):
    key, _ = services.create_api_key(user, "k", workspace=workspace)
    client, _viewer = _staff("view_apikey")
    response = client.post(
        _changelist(ApiKey), {"action": "revoke_keys", "_selected_action": [str(key.pk)]}
    )
    assert response.status_code == 403
    key.refresh_from_db()
    assert key.revoked_at is None


@pytest.mark.parametrize(("model", "make"), [(Card, make_card), (Deck, make_deck)])
def test_a_view_only_user_cannot_bulk_delete(workspace, model, make):
    row = make(workspace)
    client, _viewer = _staff(f"view_{model._meta.model_name}")
    response = client.post(
        _changelist(model),
        {"action": "delete_selected", "_selected_action": [str(row.pk)], "post": "yes"},
    )
    assert response.status_code == 403
    assert model.objects.filter(pk=row.pk, deleted_at__isnull=True).exists()
