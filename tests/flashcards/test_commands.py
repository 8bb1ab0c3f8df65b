"""create_api_key and seed_demo, run the way an operator runs them."""

from __future__ import annotations

import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from flashcards import services
from flashcards.models import ApiKey, Card, ChangeLog, Deck, ReviewEvent, Workspace
from flashcards.services.demo import DEMO_WORKSPACE_NAME
from tests.factories import UserFactory

KEY_RE = re.compile(r"^fca_[0-9A-HJKMNP-TV-Z]{8}_[0-9A-HJKMNP-TV-Z]{26}$")


def run(*args: str) -> list[str]:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().splitlines()


def key_from(lines: list[str]) -> ApiKey:
    """The last line is the key, alone, and it authenticates."""
    assert KEY_RE.match(lines[-1]), lines
    return services.authenticate_api_key(lines[-1])


# ---------------------------------------------------------------- create_api_key


def test_create_api_key_for_a_new_user_creates_user_and_personal_workspace(db):
    lines = run("create_api_key", "--user", "newbie")
    api_key = key_from(lines)
    user = get_user_model().objects.get(username="newbie")
    assert api_key.user == user
    assert not user.has_usable_password()
    workspace = services.member_workspaces(user).get()
    assert workspace.name == "Personal"
    assert api_key.selected_workspace == workspace
    assert services.resolve_key_workspace(api_key) == workspace
    assert api_key.label == "cli"
    assert sum(KEY_RE.match(line) is not None for line in lines) == 1


def test_create_api_key_for_an_existing_user_selects_the_only_workspace(user, workspace):
    api_key = key_from(run("create_api_key", "--user", "alice", "--label", "Claude Desktop"))
    assert api_key.user == user
    assert api_key.label == "Claude Desktop"
    assert api_key.selected_workspace == workspace
    assert services.member_workspaces(user).count() == 1


def test_an_existing_user_without_workspaces_gets_a_personal_one(db):
    user = UserFactory(username="lonely")
    api_key = key_from(run("create_api_key", "--user", "lonely"))
    assert api_key.selected_workspace.name == "Personal"
    assert services.member_workspaces(user).count() == 1


def test_create_api_key_selects_the_given_workspace(user, workspace):
    work = services.create_workspace(user, "Work")
    api_key = key_from(run("create_api_key", "--user", "alice", "--workspace", str(work.pk)))
    assert api_key.selected_workspace == work


def test_several_workspaces_without_a_choice_leave_the_key_unselected(user, workspace):
    services.create_workspace(user, "Work")
    lines = run("create_api_key", "--user", "alice")
    api_key = key_from(lines)
    assert api_key.selected_workspace is None
    assert any("select" in line for line in lines[:-1])


@pytest.mark.parametrize("workspace_id", ["not-a-uuid", "00000000-0000-0000-0000-000000000000"])
def test_unknown_workspace_is_a_command_error(user, workspace, workspace_id):
    with pytest.raises(CommandError):
        run("create_api_key", "--user", "alice", "--workspace", workspace_id)
    assert not ApiKey.objects.exists()


def test_a_workspace_of_another_user_is_a_command_error(user, workspace, other_workspace):
    with pytest.raises(CommandError) as exc:
        run("create_api_key", "--user", "alice", "--workspace", str(other_workspace.pk))
    assert "not a member" in str(exc.value)
    assert not ApiKey.objects.exists()


@pytest.mark.parametrize(("option", "value"), [("--label", "x" * 121), ("--user", "bad name!")])
def test_invalid_label_or_username_is_a_command_error(db, option, value):
    args = {"--user": "bob", "--label": "ok"} | {option: value}
    with pytest.raises(CommandError):
        run("create_api_key", *[item for pair in args.items() for item in pair])
    assert not ApiKey.objects.exists()
    assert not get_user_model().objects.filter(username="bad name!").exists()


# ---------------------------------------------------------------- seed_demo


def demo_state(username: str = "demo") -> dict[str, int]:
    workspace = Workspace.objects.get(memberships__user__username=username, name="Demo")
    return {
        "workspaces": Workspace.objects.count(),
        "cards": Card.objects.filter(workspace=workspace).count(),
        "decks": Deck.objects.filter(workspace=workspace).count(),
        "reviews": ReviewEvent.objects.filter(workspace=workspace).count(),
        "changes": ChangeLog.objects.filter(workspace=workspace).count(),
    }


def test_seed_demo_is_realistic(db):
    lines = run("seed_demo")
    assert "61 cards, 4 decks" in lines[-1]
    workspace = Workspace.objects.get(name=DEMO_WORKSPACE_NAME)
    cards = Card.objects.filter(workspace=workspace)
    assert 55 <= cards.count() <= 70
    tags = {tag for card in cards for tag in card.tags}
    assert {"english", "grammar", "verbs", "spanish", "python", "geography"} <= tags
    assert {c.effort_level for c in cards} == {"fast", "medium", "long"}
    assert {c.fsrs_card_state for c in cards} == {"new", "learning", "review", "relearning"}
    now = services.now_ms()
    assert cards.filter(due_at__lte=now).exists()
    assert cards.filter(due_at__gt=now).exists()
    assert Deck.objects.filter(workspace=workspace).count() == 4
    events = list(ReviewEvent.objects.filter(workspace=workspace).order_by("sequence"))
    assert len(events) > 60
    assert all(e.reviewed_at_client < now for e in events)
    # Submitted in chronological order: sequence numbers follow review time.
    times = [e.reviewed_at_client for e in events]
    assert times == sorted(times)
    assert {e.rating for e in events} == {0, 1, 2, 3}


def test_seed_demo_twice_changes_nothing(db):
    run("seed_demo")
    first = demo_state()
    lines = run("seed_demo")
    assert "already seeded" in lines[-1]
    assert demo_state() == first
    assert get_user_model().objects.filter(username="demo").count() == 1


def test_seed_demo_print_key_selects_the_demo_workspace(db):
    api_key = key_from(run("seed_demo", "--print-key"))
    assert api_key.user.username == "demo"
    assert api_key.selected_workspace.name == DEMO_WORKSPACE_NAME
    first = demo_state()
    second_key = key_from(run("seed_demo", "--print-key"))
    assert second_key != api_key  # a new key each time: a plaintext cannot be shown twice
    assert demo_state() == first


def test_seed_demo_for_another_user_adds_a_separate_workspace(user, workspace):
    run("seed_demo", "--user", "alice")
    assert services.member_workspaces(user).count() == 2
    assert demo_state("alice")["cards"] == 61
