"""Reviews, scheduler settings and progress reset: the verbs that stay explicit commands."""

from __future__ import annotations

import itertools
import math
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction

from flashcards.models import REVIEW_GRADES, Card, ReviewEvent, Workspace
from flashcards.scheduling import (
    CardSchedule,
    ReviewBeforeLastReviewError,
    SchedulerSettings,
    review_card,
)
from flashcards.scheduling.day import valid_time_zone
from flashcards.services.common import (
    DomainError,
    WriteContext,
    check_storable,
    lock_workspace,
    record_changes,
)
from flashcards.services.timestamps import format_timestamp, now_ms, truncate_ms

RESET_CONFIRMATION = "reset all progress"
SETTINGS_FIELDS = (
    "desired_retention",
    "learning_steps_minutes",
    "relearning_steps_minutes",
    "maximum_interval_days",
    "enable_fuzz",
    "time_zone",
    "day_starts_at_hour",
)
LEARNING_DAY_FIELDS = ("time_zone", "day_starts_at_hour")
SCHEDULE_FIELDS = (
    "fsrs_card_state",
    "due_at",
    "reps",
    "lapses",
    "fsrs_step_index",
    "fsrs_stability",
    "fsrs_difficulty",
    "fsrs_last_reviewed_at",
    "fsrs_scheduled_days",
)


def parse_rating(value: object) -> int:
    """0..3 or again / hard / good / easy (case-insensitive)."""
    if isinstance(value, bool):
        raise DomainError("rating must be 0..3 or again/hard/good/easy.", field="rating")
    if isinstance(value, int) and 0 <= value <= 3:
        return value
    if isinstance(value, float) and value.is_integer() and 0 <= value <= 3:
        return int(value)
    if isinstance(value, str) and value.strip().lower() in REVIEW_GRADES:
        return REVIEW_GRADES.index(value.strip().lower())
    raise DomainError(
        f"rating must be 0..3 or one of again, hard, good, easy; got {value!r}.", field="rating"
    )


def workspace_scheduler_settings(workspace: Workspace) -> SchedulerSettings:
    return SchedulerSettings(
        desired_retention=workspace.desired_retention,
        learning_steps_minutes=tuple(workspace.learning_steps_minutes),
        relearning_steps_minutes=tuple(workspace.relearning_steps_minutes),
        maximum_interval_days=workspace.maximum_interval_days,
        enable_fuzz=workspace.enable_fuzz,
    )


def card_schedule(card: Card) -> CardSchedule:
    return CardSchedule(
        state=card.fsrs_card_state,
        due_at=card.due_at,
        reps=card.reps,
        lapses=card.lapses,
        step_index=card.fsrs_step_index,
        stability=card.fsrs_stability,
        difficulty=card.fsrs_difficulty,
        last_reviewed_at=card.fsrs_last_reviewed_at,
        scheduled_days=card.fsrs_scheduled_days,
    )


def apply_schedule(card: Card, schedule: CardSchedule) -> None:
    card.fsrs_card_state = schedule.state
    card.due_at = schedule.due_at
    card.reps = schedule.reps
    card.lapses = schedule.lapses
    card.fsrs_step_index = schedule.step_index
    card.fsrs_stability = schedule.stability
    card.fsrs_difficulty = schedule.difficulty
    card.fsrs_last_reviewed_at = schedule.last_reviewed_at
    card.fsrs_scheduled_days = schedule.scheduled_days


@dataclass(frozen=True)
class ReviewResult:
    review_event: ReviewEvent
    card: Card
    created: bool


def _clean_client_event_id(value: object) -> str:
    if value is None:
        return str(uuid.uuid4())
    if not isinstance(value, str) or not value.strip() or len(value) > 200 or "\x00" in value:
        raise DomainError(
            "client_event_id must be a non-empty string of at most 200 characters.",
            field="client_event_id",
        )
    check_storable(value, "client_event_id")
    return value.strip()


@transaction.atomic
def submit_review(
    workspace: Workspace,
    card_id: object,
    rating: object,
    *,
    reviewed_at: datetime | None = None,
    client_event_id: str | None = None,
    review_event_id: object = None,
    context: WriteContext | None = None,
) -> ReviewResult:
    """Run FSRS for one review: lock, schedule, append the event, update the card, record both
    changes. Idempotent by (replica, client_event_id): a repeat returns the first result."""
    context = context or WriteContext()
    grade = parse_rating(rating)
    event_key = _clean_client_event_id(client_event_id)
    event_uuid: uuid.UUID | None = None
    if review_event_id is not None:
        try:
            event_uuid = uuid.UUID(str(review_event_id))
        except ValueError as exc:
            raise DomainError("review_event_id must be a UUID.", field="review_event_id") from exc
    ws = lock_workspace(workspace)
    existing = ReviewEvent.objects.filter(
        workspace=ws, replica_id=context.replica_id, client_event_id=event_key
    ).first()
    if existing is None and event_uuid is not None:
        existing = ReviewEvent.objects.filter(id=event_uuid).first()
        if existing is not None and existing.workspace_id != ws.pk:
            raise DomainError("review_event_id is already used.", field="review_event_id")
    if existing is not None:
        return ReviewResult(existing, Card.objects.get(pk=existing.card_id), created=False)

    from flashcards.services.content import get_live_card

    card = get_live_card(ws, card_id)
    at = now_ms()
    when = truncate_ms(reviewed_at) if reviewed_at is not None else at
    try:
        schedule = review_card(card_schedule(card), workspace_scheduler_settings(ws), grade, when)
    except ReviewBeforeLastReviewError as exc:
        raise DomainError(
            f"reviewed_at {format_timestamp(when)} is earlier than the card's last review "
            f"({format_timestamp(card.fsrs_last_reviewed_at)}); reviews must be in order.",
            field="reviewed_at",
        ) from exc
    except OverflowError as exc:
        # A review date near year 9999 pushes the next due date past what datetime can hold.
        raise DomainError(
            f"reviewed_at {format_timestamp(when)} is too far in the future to schedule.",
            field="reviewed_at",
        ) from exc
    client_at, replica, operation = context.stamp(at)
    apply_schedule(card, schedule)
    card.updated_at = at
    card.client_updated_at = client_at
    card.last_modified_by_replica_id = replica
    card.last_operation_id = operation
    card.save(
        update_fields=[
            *SCHEDULE_FIELDS,
            "updated_at",
            "client_updated_at",
            "last_modified_by_replica_id",
            "last_operation_id",
        ]
    )
    ws.last_review_sequence += 1
    Workspace.objects.filter(pk=ws.pk).update(last_review_sequence=ws.last_review_sequence)
    event = ReviewEvent.objects.create(
        id=event_uuid or uuid.uuid4(),
        workspace=ws,
        card=card,
        client_event_id=event_key,
        replica_id=replica,
        rating=grade,
        reviewed_at_client=when,
        reviewed_at_server=at,
        sequence=ws.last_review_sequence,
    )
    record_changes(ws, "review_event", [event.id], action="append", context=context, at=at)
    record_changes(ws, "card", [card.id], action="upsert", context=context, at=at)
    return ReviewResult(event, card, created=True)


def _steps(value: object, field: str) -> list[int]:
    if (
        not isinstance(value, (list, tuple))
        or not value
        or any(isinstance(m, bool) or not isinstance(m, (int, float)) for m in value)
    ):
        raise DomainError(
            f"{field} must be a non-empty list of whole minutes, e.g. [1, 10].", field=field
        )
    steps = []
    for m in value:
        if isinstance(m, float) and not m.is_integer():
            raise DomainError(f"{field} must hold whole minutes; got {m}.", field=field)
        steps.append(int(m))
    if any(not (0 < m < 1440) for m in steps):
        raise DomainError(f"Each of {field} must be between 1 and 1439 minutes.", field=field)
    if any(b <= a for a, b in itertools.pairwise(steps)):
        raise DomainError(f"{field} must be strictly increasing.", field=field)
    return steps


def clean_scheduler_settings(changes: dict[str, Any]) -> dict[str, Any]:
    unknown = set(changes) - set(SETTINGS_FIELDS)
    if unknown:
        raise DomainError(
            f"Unknown scheduler setting(s): {', '.join(sorted(unknown))}. "
            f"Known: {', '.join(SETTINGS_FIELDS)}.",
            field=sorted(unknown)[0],
        )
    cleaned: dict[str, Any] = {}
    if "desired_retention" in changes:
        value = changes["desired_retention"]
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or not 0 < value < 1
        ):
            raise DomainError(
                "desired_retention must be a number strictly between 0 and 1, e.g. 0.9.",
                field="desired_retention",
            )
        cleaned["desired_retention"] = float(value)
    for field in ("learning_steps_minutes", "relearning_steps_minutes"):
        if field in changes:
            cleaned[field] = _steps(changes[field], field)
    if "maximum_interval_days" in changes:
        value = changes["maximum_interval_days"]
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 36500:
            raise DomainError(
                "maximum_interval_days must be a whole number from 1 to 36500.",
                field="maximum_interval_days",
            )
        cleaned["maximum_interval_days"] = value
    if "enable_fuzz" in changes:
        if not isinstance(changes["enable_fuzz"], bool):
            raise DomainError("enable_fuzz must be true or false.", field="enable_fuzz")
        cleaned["enable_fuzz"] = changes["enable_fuzz"]
    if "time_zone" in changes:
        zone_name = valid_time_zone(changes["time_zone"])
        if zone_name is None:
            raise DomainError(
                f"time_zone must be an IANA time zone name such as Europe/Madrid or UTC; "
                f"got {changes['time_zone']!r}.",
                field="time_zone",
            )
        cleaned["time_zone"] = zone_name
    if "day_starts_at_hour" in changes:
        value = changes["day_starts_at_hour"]
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 23:
            raise DomainError(
                "day_starts_at_hour must be a whole hour from 0 to 23 (Anki's default is 4).",
                field="day_starts_at_hour",
            )
        cleaned["day_starts_at_hour"] = value
    return cleaned


@transaction.atomic
def update_scheduler_settings(
    workspace: Workspace, changes: dict[str, Any], *, context: WriteContext | None = None
) -> Workspace:
    """Change settings forward only (existing schedules are kept)."""
    context = context or WriteContext()
    cleaned = clean_scheduler_settings(changes)
    ws = lock_workspace(workspace)
    at = now_ms()
    client_at, replica, operation = context.stamp(at)
    for name, value in cleaned.items():
        setattr(ws, name, value)
    ws.updated_at = at
    ws.settings_client_updated_at = client_at
    ws.settings_replica_id = replica
    ws.settings_operation_id = operation
    ws.save(
        update_fields=[
            *cleaned,
            "updated_at",
            "settings_client_updated_at",
            "settings_replica_id",
            "settings_operation_id",
        ]
    )
    record_changes(
        ws, "workspace_scheduler_settings", [ws.pk], action="upsert", context=context, at=at
    )
    return ws


RESET_BATCH = 1000


@transaction.atomic
def reset_progress(
    workspace: Workspace, confirmation: object, *, context: WriteContext | None = None
) -> int:
    """Every live card back to `new`; review events are kept. Returns the number of cards reset."""
    if confirmation != RESET_CONFIRMATION:
        raise DomainError(
            f'Confirmation text must be exactly "{RESET_CONFIRMATION}".', field="confirmation"
        )
    context = context or WriteContext()
    ws = lock_workspace(workspace)
    at = now_ms()
    client_at, replica, operation = context.stamp(at)
    live = Card.objects.filter(workspace=ws, deleted_at__isnull=True)
    ids = list(live.values_list("id", flat=True))
    live.update(
        fsrs_card_state="new",
        due_at=None,
        reps=0,
        lapses=0,
        fsrs_step_index=None,
        fsrs_stability=None,
        fsrs_difficulty=None,
        fsrs_last_reviewed_at=None,
        fsrs_scheduled_days=None,
        updated_at=at,
        client_updated_at=client_at,
        last_modified_by_replica_id=replica,
        last_operation_id=operation,
    )
    for start in range(0, len(ids), RESET_BATCH):
        record_changes(
            ws, "card", ids[start : start + RESET_BATCH], action="upsert", context=context, at=at
        )
    return len(ids)
