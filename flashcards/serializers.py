"""Rows in the dialect's `SELECT *` shape (dsl.md §5 column names in DESCRIBE order, §2.4 value
formats). Everything that publishes a row outside the SQL executor — explicit commands, export —
uses these, so a card looks the same whichever route returned it."""

from __future__ import annotations

from typing import Any

from flashcards.models import REVIEW_GRADES, Card, Deck, ReviewEvent, Workspace
from flashcards.services.timestamps import format_timestamp

CARD_COLUMNS = (
    "card_id",
    "front_text",
    "back_text",
    "card_type",
    "tags",
    "effort_level",
    "metadata",
    "due_at",
    "created_at",
    "updated_at",
    "reps",
    "lapses",
    "fsrs_card_state",
    "fsrs_step_index",
    "fsrs_scheduled_days",
    "fsrs_stability",
    "fsrs_difficulty",
    "fsrs_last_reviewed_at",
)
DECK_COLUMNS = ("deck_id", "name", "effort_levels", "tags", "created_at", "updated_at")
REVIEW_EVENT_COLUMNS = (
    "review_event_id",
    "card_id",
    "client_event_id",
    "rating",
    "review_grade",
    "reviewed_at_client",
    "reviewed_at_server",
)
WORKSPACE_COLUMNS = (
    "workspace_id",
    "name",
    "created_at",
    "algorithm",
    "desired_retention",
    "learning_steps_minutes",
    "relearning_steps_minutes",
    "maximum_interval_days",
    "enable_fuzz",
)


def card_row(card: Card) -> dict[str, Any]:
    return {
        "card_id": str(card.id),
        "front_text": card.front_text,
        "back_text": card.back_text,
        "card_type": card.card_type,
        "tags": list(card.tags),
        "effort_level": card.effort_level,
        "metadata": card.metadata,
        "due_at": format_timestamp(card.due_at),
        "created_at": format_timestamp(card.created_at),
        "updated_at": format_timestamp(card.updated_at),
        "reps": card.reps,
        "lapses": card.lapses,
        "fsrs_card_state": card.fsrs_card_state,
        "fsrs_step_index": card.fsrs_step_index,
        "fsrs_scheduled_days": card.fsrs_scheduled_days,
        "fsrs_stability": card.fsrs_stability,
        "fsrs_difficulty": card.fsrs_difficulty,
        "fsrs_last_reviewed_at": format_timestamp(card.fsrs_last_reviewed_at),
    }


def deck_row(deck: Deck) -> dict[str, Any]:
    return {
        "deck_id": str(deck.id),
        "name": deck.name,
        "effort_levels": list(deck.effort_levels),
        "tags": list(deck.tags),
        "created_at": format_timestamp(deck.created_at),
        "updated_at": format_timestamp(deck.updated_at),
    }


def review_event_row(event: ReviewEvent) -> dict[str, Any]:
    return {
        "review_event_id": str(event.id),
        "card_id": str(event.card_id),
        "client_event_id": event.client_event_id,
        "rating": event.rating,
        "review_grade": REVIEW_GRADES[event.rating],
        "reviewed_at_client": format_timestamp(event.reviewed_at_client),
        "reviewed_at_server": format_timestamp(event.reviewed_at_server),
    }


def workspace_row(workspace: Workspace) -> dict[str, Any]:
    return {
        "workspace_id": str(workspace.id),
        "name": workspace.name,
        "created_at": format_timestamp(workspace.created_at),
        "algorithm": workspace.algorithm,
        "desired_retention": workspace.desired_retention,
        "learning_steps_minutes": list(workspace.learning_steps_minutes),
        "relearning_steps_minutes": list(workspace.relearning_steps_minutes),
        "maximum_interval_days": workspace.maximum_interval_days,
        "enable_fuzz": workspace.enable_fuzz,
    }
