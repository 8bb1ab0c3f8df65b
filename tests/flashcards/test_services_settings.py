"""Scheduler settings (domain.md §1) and reset_progress."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from flashcards import services
from flashcards.models import Card, ChangeLog, ReviewEvent, Workspace
from flashcards.services import RESET_CONFIRMATION, DomainError, WriteContext
from flashcards.services.scheduling import card_schedule
from tests.factories import make_card, make_cards

T0 = datetime(2026, 3, 5, 10, 0, tzinfo=UTC)


def settings_of(workspace: Workspace) -> dict[str, object]:
    workspace.refresh_from_db()
    return {
        "algorithm": workspace.algorithm,
        "desired_retention": workspace.desired_retention,
        "learning_steps_minutes": workspace.learning_steps_minutes,
        "relearning_steps_minutes": workspace.relearning_steps_minutes,
        "maximum_interval_days": workspace.maximum_interval_days,
        "enable_fuzz": workspace.enable_fuzz,
    }


def test_new_workspaces_have_the_documented_defaults(workspace):
    assert settings_of(workspace) == {
        "algorithm": "fsrs-6",
        "desired_retention": 0.9,
        "learning_steps_minutes": [1, 10],
        "relearning_steps_minutes": [10],
        "maximum_interval_days": 36500,
        "enable_fuzz": True,
    }


def test_omitted_keys_keep_their_value(workspace):
    services.update_scheduler_settings(workspace, {"desired_retention": 0.8})
    services.update_scheduler_settings(workspace, {"learning_steps_minutes": [2, 20, 60]})
    assert settings_of(workspace) == {
        "algorithm": "fsrs-6",
        "desired_retention": 0.8,
        "learning_steps_minutes": [2, 20, 60],
        "relearning_steps_minutes": [10],
        "maximum_interval_days": 36500,
        "enable_fuzz": True,
    }


def test_every_setting_can_change_and_is_recorded_for_sync(workspace):
    context = WriteContext(
        replica_id="web", operation_id="op-s", client_updated_at=datetime(2026, 1, 1, tzinfo=UTC)
    )
    result = services.update_scheduler_settings(
        workspace,
        {
            "desired_retention": 0.95,
            "learning_steps_minutes": [1.0, 1439],
            "relearning_steps_minutes": [5],
            "maximum_interval_days": 1.0,
            "enable_fuzz": False,
        },
        context=context,
    )
    assert settings_of(workspace) == {
        "algorithm": "fsrs-6",
        "desired_retention": 0.95,
        "learning_steps_minutes": [1, 1439],
        "relearning_steps_minutes": [5],
        "maximum_interval_days": 1,
        "enable_fuzz": False,
    }
    assert result.settings_replica_id == "web"
    assert result.settings_operation_id == "op-s"
    assert result.settings_client_updated_at == datetime(2026, 1, 1, tzinfo=UTC)
    entry = ChangeLog.objects.get(workspace=workspace)
    assert (entry.entity_type, entry.entity_id, entry.action) == (
        "workspace_scheduler_settings",
        str(workspace.pk),
        "upsert",
    )


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"desired_retention": 0}, "desired_retention"),
        ({"desired_retention": 1}, "desired_retention"),
        ({"desired_retention": 1.5}, "desired_retention"),
        ({"desired_retention": -0.1}, "desired_retention"),
        ({"desired_retention": "0.9"}, "desired_retention"),
        ({"desired_retention": True}, "desired_retention"),
        ({"desired_retention": math.nan}, "desired_retention"),
        ({"desired_retention": math.inf}, "desired_retention"),
        ({"desired_retention": None}, "desired_retention"),
        ({"learning_steps_minutes": []}, "learning_steps_minutes"),
        ({"learning_steps_minutes": [0]}, "learning_steps_minutes"),
        ({"learning_steps_minutes": [1440]}, "learning_steps_minutes"),
        ({"learning_steps_minutes": [10, 5]}, "learning_steps_minutes"),
        ({"learning_steps_minutes": [5, 5]}, "learning_steps_minutes"),
        ({"learning_steps_minutes": [1.5]}, "learning_steps_minutes"),
        ({"learning_steps_minutes": ["1"]}, "learning_steps_minutes"),
        ({"learning_steps_minutes": [True]}, "learning_steps_minutes"),
        ({"learning_steps_minutes": "1,10"}, "learning_steps_minutes"),
        ({"relearning_steps_minutes": [-1]}, "relearning_steps_minutes"),
        ({"relearning_steps_minutes": None}, "relearning_steps_minutes"),
        ({"maximum_interval_days": 0}, "maximum_interval_days"),
        ({"maximum_interval_days": 1.5}, "maximum_interval_days"),
        ({"maximum_interval_days": True}, "maximum_interval_days"),
        ({"maximum_interval_days": "10"}, "maximum_interval_days"),
        ({"enable_fuzz": "yes"}, "enable_fuzz"),
        ({"enable_fuzz": 1}, "enable_fuzz"),
        ({"algorithm": "sm2"}, "algorithm"),
        ({"bogus": 1}, "bogus"),
    ],
)
def test_invalid_settings_are_refused_and_nothing_changes(workspace, changes, field):
    before = settings_of(workspace)
    with pytest.raises(DomainError) as exc:
        services.update_scheduler_settings(workspace, {"desired_retention": 0.8, **changes})
    assert exc.value.field == field
    assert settings_of(workspace) == before
    assert not ChangeLog.objects.filter(workspace=workspace).exists()


def test_settings_apply_forward_only(workspace):
    card = make_card(workspace)
    services.submit_review(workspace, card.id, 2, reviewed_at=T0)
    card.refresh_from_db()
    before = card_schedule(card)
    services.update_scheduler_settings(workspace, {"learning_steps_minutes": [30, 60]})
    card.refresh_from_db()
    assert card_schedule(card) == before


# ---------------------------------------------------------------- reset_progress


def test_reset_progress_needs_the_exact_confirmation(workspace):
    card = make_card(workspace)
    services.submit_review(workspace, card.id, 2, reviewed_at=T0)
    for wrong in ("Reset all progress", "reset all progress ", "", None, "yes"):
        with pytest.raises(DomainError) as exc:
            services.reset_progress(workspace, wrong)
        assert exc.value.field == "confirmation"
    card.refresh_from_db()
    assert card.fsrs_card_state == "learning"


def test_reset_progress_returns_live_cards_to_new_and_keeps_events(workspace):
    live = make_cards(workspace, 3)
    gone = make_card(workspace)
    for card in (*live, gone):
        services.submit_review(workspace, card.id, 3, reviewed_at=T0)
    services.delete_cards(workspace, [gone.id])
    changes_before = ChangeLog.objects.filter(workspace=workspace).count()

    assert services.reset_progress(workspace, RESET_CONFIRMATION) == 3

    for card in Card.objects.filter(id__in=[c.id for c in live]):
        assert card.fsrs_card_state == "new"
        assert (card.reps, card.lapses) == (0, 0)
        assert card.due_at is None
        assert card.fsrs_stability is None and card.fsrs_difficulty is None
        assert card.fsrs_step_index is None and card.fsrs_scheduled_days is None
        assert card.fsrs_last_reviewed_at is None
    gone.refresh_from_db()
    assert gone.fsrs_card_state == "review"
    assert ReviewEvent.objects.filter(workspace=workspace).count() == 4
    new_changes = ChangeLog.objects.filter(workspace=workspace).order_by("change_id")[
        changes_before:
    ]
    assert sorted(c.entity_id for c in new_changes) == sorted(str(c.id) for c in live)
    assert {c.action for c in new_changes} == {"upsert"}


def test_reviews_after_a_reset_start_from_a_new_card(workspace):
    card = make_card(workspace)
    services.submit_review(workspace, card.id, 3, reviewed_at=T0)
    services.reset_progress(workspace, RESET_CONFIRMATION)
    result = services.submit_review(workspace, card.id, 2, reviewed_at=T0)
    assert result.card.reps == 1
    assert result.card.fsrs_card_state == "learning"
    assert result.review_event.sequence == 2
