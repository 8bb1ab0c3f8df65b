"""The admin through the real URLconf: every page loads, and every write goes through services
(visible as change-log entries, normalised values and soft deletes)."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import reverse

from flashcards import services
from flashcards.models import (
    ApiKey,
    Card,
    CardTag,
    ChangeLog,
    Deck,
    Membership,
    ReviewEvent,
    Tag,
    Workspace,
)
from tests.factories import UserFactory, make_card, make_deck


@pytest.fixture
def staff(db) -> Client:
    client = Client()
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    return client


@pytest.fixture
def content(workspace):
    card = make_card(workspace, tags=["Spanish", "verbs"])
    gone = make_card(workspace, front_text="Gone")
    services.submit_review(workspace, card.id, 2)
    services.delete_cards(workspace, [gone.id])
    deck = make_deck(workspace, tags=["spanish"])
    key, _ = services.create_api_key(workspace.memberships.get().user, "k", workspace=workspace)
    return {"workspace": workspace, "card": card, "gone": gone, "deck": deck, "key": key}


def url(model, view: str, *args) -> str:
    return reverse(f"admin:flashcards_{model._meta.model_name}_{view}", args=args)


def changes(workspace) -> list[tuple[str, str, str]]:
    return list(
        ChangeLog.objects.filter(workspace=workspace)
        .order_by("change_id")
        .values_list("entity_type", "entity_id", "action")
    )


FLASHCARDS_MODELS = [m for m in admin.site._registry if m._meta.app_label == "flashcards"]


@pytest.mark.parametrize("model", FLASHCARDS_MODELS, ids=lambda m: m.__name__)
def test_every_changelist_add_and_change_page_loads(staff, content, model):
    assert staff.get(url(model, "changelist")).status_code == 200
    assert staff.get(url(model, "changelist"), {"q": "a"}).status_code == 200
    model_admin = admin.site._registry[model]
    add = staff.get(url(model, "add"))
    assert add.status_code == (200 if model_admin.has_add_permission(add.wsgi_request) else 403)
    obj = model._default_manager.first()
    assert obj is not None, model
    assert staff.get(url(model, "change", obj.pk)).status_code == 200


def test_changelist_filters_load_and_filter(staff, content):
    workspace, card, gone = content["workspace"], content["card"], content["gone"]
    page = staff.get(url(Card, "changelist"))
    assert card.front_text in page.content.decode()
    assert "Gone" not in page.content.decode()  # live cards only by default
    deleted = staff.get(url(Card, "changelist"), {"deleted": "yes"}).content.decode()
    assert "Gone" in deleted and card.front_text not in deleted
    both = staff.get(url(Card, "changelist"), {"deleted": "all"}).content.decode()
    assert "Gone" in both and card.front_text in both
    for params in (
        {"tag": "spanish"},
        {"fsrs_card_state__exact": "learning"},
        {"effort_level__exact": "fast"},
        {"workspace__id__exact": str(workspace.pk)},
    ):
        response = staff.get(url(Card, "changelist"), params)
        assert response.status_code == 200
        assert response.context["cl"].result_count == 1, params
    assert staff.get(url(Card, "changelist"), {"tag": "nope"}).context["cl"].result_count == 0
    assert staff.get(url(Deck, "changelist"), {"tag": "SPANISH"}).context["cl"].result_count == 1
    assert staff.get(url(Card, "change", gone.pk)).status_code == 200


def test_non_staff_users_are_sent_to_the_login_page(user):
    client = Client()
    client.force_login(user)
    response = client.get(url(Card, "changelist"))
    assert response.status_code == 302
    assert "/login/" in response["Location"]


# ---------------------------------------------------------------- cards through services


def test_adding_a_card_goes_through_create_cards(staff, workspace):
    response = staff.post(
        url(Card, "add"),
        {
            "workspace": str(workspace.pk),
            "front_text": "  ¿Qué tal?  ",
            "back_text": " How are you? ",
            "card_type": "",
            "tags_text": "Spanish, spanish , greetings,,",
            "effort_level": "medium",
        },
    )
    assert response.status_code == 302
    card = Card.objects.get(workspace=workspace)
    assert (card.front_text, card.back_text, card.card_type) == (
        "¿Qué tal?",
        "How are you?",
        "basic",
    )
    assert card.tags == ["Spanish", "greetings"]
    assert list(CardTag.objects.filter(card=card).values_list("tag__name", flat=True)) == [
        "Spanish",
        "greetings",
    ]
    assert changes(workspace) == [("card", str(card.id), "upsert")]
    assert card.metadata["version"] == 1


def test_an_invalid_card_is_a_form_error_and_nothing_is_written(staff, workspace):
    response = staff.post(
        url(Card, "add"),
        {
            "workspace": str(workspace.pk),
            "front_text": "   ",
            "back_text": "",
            "tags_text": "",
            "effort_level": "fast",
        },
    )
    assert response.status_code == 200
    assert response.context["adminform"].form.errors
    assert not Card.objects.exists()
    assert not ChangeLog.objects.exists()


def test_changing_a_card_goes_through_update_cards(staff, content):
    workspace, card = content["workspace"], content["card"]
    before = len(changes(workspace))
    form = {
        "front_text": " New front ",
        "back_text": card.back_text,
        "card_type": card.card_type,
        "tags_text": "SPANISH, Idioms",
        "effort_level": "long",
    }
    assert staff.post(url(Card, "change", card.pk), form).status_code == 302
    card.refresh_from_db()
    assert (card.front_text, card.effort_level) == ("New front", "long")
    assert card.tags == ["Spanish", "Idioms"]  # the workspace's first spelling wins
    assert card.fsrs_card_state == "learning"  # scheduling untouched
    assert changes(workspace)[before:] == [("card", str(card.id), "upsert")]
    # Saving again without a change records nothing.
    form["front_text"] = "New front"
    assert staff.post(url(Card, "change", card.pk), form).status_code == 302
    assert len(changes(workspace)) == before + 1


def test_deleting_a_card_is_a_soft_delete_through_delete_cards(staff, content):
    workspace, card = content["workspace"], content["card"]
    confirm = staff.get(url(Card, "delete", card.pk))
    assert confirm.status_code == 200
    # Nothing else goes with it: no review events or tag rows listed for deletion.
    assert len(confirm.context["deleted_objects"]) == 1
    assert dict(confirm.context["model_count"]) == {"cards": 1}
    assert staff.post(url(Card, "delete", card.pk), {"post": "yes"}).status_code == 302
    card.refresh_from_db()
    assert card.deleted_at is not None
    assert ReviewEvent.objects.filter(card=card).count() == 1
    assert changes(workspace)[-1] == ("card", str(card.id), "delete")
    assert staff.get(url(Card, "delete", card.pk)).status_code == 403  # already deleted


def test_the_bulk_delete_action_soft_deletes_per_workspace(staff, content, other_workspace):
    workspace = content["workspace"]
    theirs = make_card(other_workspace)
    ids = [str(content["card"].pk), str(theirs.pk), str(content["gone"].pk)]
    response = staff.post(
        url(Card, "changelist") + "?deleted=all",
        {"action": "delete_selected", "_selected_action": ids, "post": "yes"},
    )
    assert response.status_code == 302
    assert Card.objects.filter(deleted_at__isnull=True).count() == 0
    assert Card.objects.count() == 3
    assert changes(workspace)[-1] == ("card", str(content["card"].pk), "delete")
    assert changes(other_workspace)[-1] == ("card", str(theirs.pk), "delete")


def test_decks_are_written_through_services(staff, workspace):
    response = staff.post(
        url(Deck, "add"),
        {
            "workspace": str(workspace.pk),
            "name": " Travel ",
            "effort_levels_choice": ["long", "fast"],
            "tags_text": "spanish, Phrases",
        },
    )
    assert response.status_code == 302
    deck = Deck.objects.get(workspace=workspace)
    assert (deck.name, deck.effort_levels, deck.tags) == (
        "Travel",
        ["fast", "long"],
        ["spanish", "Phrases"],
    )
    edit = {"name": "Travel", "effort_levels_choice": [], "tags_text": ""}
    assert staff.post(url(Deck, "change", deck.pk), edit).status_code == 302
    deck.refresh_from_db()
    assert (deck.effort_levels, deck.tags) == ([], [])
    assert staff.post(url(Deck, "delete", deck.pk), {"post": "yes"}).status_code == 302
    deck.refresh_from_db()
    assert deck.deleted_at is not None
    assert [c[2] for c in changes(workspace)] == ["upsert", "upsert", "delete"]


# ---------------------------------------------------------------- workspaces


def test_adding_a_workspace_makes_the_admin_its_owner(staff):
    assert staff.post(url(Workspace, "add"), {"name": "  Team  "}).status_code == 302
    workspace = Workspace.objects.get(name="Team")
    membership = Membership.objects.get(workspace=workspace)
    assert (membership.user.username, membership.role) == ("root", "owner")
    assert workspace.learning_steps_minutes == [1, 10]


def test_scheduler_settings_change_through_the_service(staff, workspace):
    form = {
        "desired_retention": "0.8",
        "learning_steps_text": "2, 20",
        "relearning_steps_text": "15",
        "maximum_interval_days": "365",
        "enable_fuzz": "",
    }
    assert staff.post(url(Workspace, "change", workspace.pk), form).status_code == 302
    workspace.refresh_from_db()
    assert workspace.desired_retention == 0.8
    assert workspace.learning_steps_minutes == [2, 20]
    assert workspace.relearning_steps_minutes == [15]
    assert (workspace.maximum_interval_days, workspace.enable_fuzz) == (365, False)
    assert changes(workspace) == [("workspace_scheduler_settings", str(workspace.pk), "upsert")]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("desired_retention", "1.2"),
        ("learning_steps_text", "10, 1"),
        ("learning_steps_text", "1, ten"),
        ("relearning_steps_text", "1440"),
        ("maximum_interval_days", "0"),
    ],
)
def test_invalid_settings_are_form_errors(staff, workspace, field, value):
    form = {
        "desired_retention": "0.9",
        "learning_steps_text": "1, 10",
        "relearning_steps_text": "10",
        "maximum_interval_days": "36500",
        "enable_fuzz": "on",
    } | {field: value}
    response = staff.post(url(Workspace, "change", workspace.pk), form)
    assert response.status_code == 200
    assert field in response.context["adminform"].form.errors
    workspace.refresh_from_db()
    assert workspace.desired_retention == 0.9
    assert not ChangeLog.objects.exists()


def test_workspaces_cannot_be_deleted_from_the_admin(staff, workspace):
    assert staff.get(url(Workspace, "delete", workspace.pk)).status_code == 403


# ---------------------------------------------------------------- read-only models


@pytest.mark.parametrize(
    "model", [ReviewEvent, ChangeLog, Tag, Membership], ids=lambda m: m.__name__
)
def test_logs_tags_and_memberships_are_read_only(staff, content, model):
    obj = model._default_manager.first()
    before = model._default_manager.count()
    assert staff.get(url(model, "add")).status_code == 403
    assert staff.post(url(model, "add"), {}).status_code == 403
    assert staff.post(url(model, "change", obj.pk), {}).status_code == 403
    assert staff.post(url(model, "delete", obj.pk), {"post": "yes"}).status_code == 403
    page = staff.get(url(model, "change", obj.pk)).content.decode()
    assert 'type="submit" value="Save"' not in page
    assert model._default_manager.count() == before


# ---------------------------------------------------------------- API keys


def test_creating_a_key_shows_the_plaintext_once(staff, user, workspace):
    response = staff.post(
        url(ApiKey, "add"),
        {"user": str(user.pk), "label": " Claude ", "workspace": str(workspace.pk)},
        follow=True,
    )
    assert response.status_code == 200
    api_key = ApiKey.objects.get(user=user)
    assert api_key.label == "Claude"
    assert api_key.selected_workspace == workspace
    shown = [str(m) for m in response.context["messages"] if "<code>" in str(m)]
    assert len(shown) == 1
    plaintext = shown[0].split("<code>")[1].split("</code>")[0]
    assert services.authenticate_api_key(plaintext) == api_key
    assert response.content.decode().count(plaintext) == 1
    later = staff.get(url(ApiKey, "change", api_key.pk)).content.decode()
    assert plaintext not in later
    assert api_key.secret_hash not in later
    assert plaintext not in staff.get(url(ApiKey, "changelist")).content.decode()


def test_a_key_for_a_workspace_the_user_is_not_in_is_refused(staff, user, other_workspace):
    response = staff.post(
        url(ApiKey, "add"),
        {"user": str(user.pk), "label": "x", "workspace": str(other_workspace.pk)},
    )
    assert response.status_code == 200
    assert "workspace" in response.context["adminform"].form.errors
    assert not ApiKey.objects.exists()


def test_keys_are_revoked_by_the_action_and_never_edited(staff, content):
    api_key = content["key"]
    page = staff.get(url(ApiKey, "change", api_key.pk)).content.decode()
    assert api_key.secret_hash not in page
    assert staff.post(url(ApiKey, "change", api_key.pk), {"label": "new"}).status_code == 403
    assert staff.post(url(ApiKey, "delete", api_key.pk), {"post": "yes"}).status_code == 403
    response = staff.post(
        url(ApiKey, "changelist"),
        {"action": "revoke_keys", "_selected_action": [str(api_key.pk)]},
    )
    assert response.status_code == 302
    api_key.refresh_from_db()
    assert api_key.revoked_at is not None
    assert api_key.label == "k"
