"""Checks of the values inside sync push operations. Each raises DomainError with a message
that names the offending key, which push reports as the operation's `error`."""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from flashcards.models import FSRS_STATES, Card
from flashcards.services import timestamps
from flashcards.services.common import DomainError, check_storable
from flashcards.services.scheduling import SCHEDULE_FIELDS
from flashcards.services.timestamps import truncate_ms

MAX_LABEL_LENGTH = 200
MAX_INT = 2**31 - 1
MAX_METADATA_CHARS = 16_000
# Deeper JSON could not be stored and rendered back without hitting Python's recursion limit.

NEW_SCHEDULE: dict[str, Any] = {
    "fsrs_card_state": "new",
    "due_at": None,
    "reps": 0,
    "lapses": 0,
    "fsrs_step_index": None,
    "fsrs_stability": None,
    "fsrs_difficulty": None,
    "fsrs_last_reviewed_at": None,
    "fsrs_scheduled_days": None,
}
# Scheduling memory: all null for a new card, all set otherwise (domain.md §2).
FSRS_MEMORY = ("fsrs_stability", "fsrs_difficulty", "fsrs_last_reviewed_at", "fsrs_scheduled_days")


def label(value: object, field: str, max_length: int = MAX_LABEL_LENGTH) -> str:
    """A client-chosen identifier: a non-empty string of bounded length."""
    if not isinstance(value, str) or not value.strip() or len(value) > max_length:
        raise DomainError(
            f"{field} must be a non-empty string of at most {max_length} characters.", field=field
        )
    check_storable(value, field)
    return value


def parse_timestamp(value: object, field: str, *, nullable: bool = False) -> datetime | None:
    """ISO-8601, truncated to milliseconds in UTC; a time without an offset is UTC."""
    if value is None and nullable:
        return None
    parsed = timestamps.parse_timestamp(value)
    if parsed is not None:
        return truncate_ms(parsed)
    raise DomainError(
        f"{field} must be an ISO-8601 timestamp such as 2026-03-05T10:00:00.000Z"
        f"{' or null' if nullable else ''}; got {value!r}.",
        field=field,
    )


def _integer(value: object, field: str, *, nullable: bool = False) -> int | None:
    if value is None and nullable:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_INT:
        raise DomainError(
            f"{field} must be a whole number >= 0{' or null' if nullable else ''}; got {value!r}.",
            field=field,
        )
    return value


def _number(
    value: object, field: str, check: Callable[[float], bool], expected: str
) -> float | None:
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not check(value)
    ):
        raise DomainError(f"{field} must be {expected} or null; got {value!r}.", field=field)
    return float(value)


def _state(value: object) -> str:
    if value not in FSRS_STATES:
        raise DomainError(
            f"fsrs_card_state must be one of {', '.join(FSRS_STATES)}; got {value!r}.",
            field="fsrs_card_state",
        )
    return str(value)


SCHEDULE_PARSERS: dict[str, Callable[[object], Any]] = {
    "fsrs_card_state": _state,
    "due_at": lambda v: parse_timestamp(v, "due_at", nullable=True),
    "reps": lambda v: _integer(v, "reps"),
    "lapses": lambda v: _integer(v, "lapses"),
    "fsrs_step_index": lambda v: _integer(v, "fsrs_step_index", nullable=True),
    "fsrs_stability": lambda v: _number(v, "fsrs_stability", lambda x: x > 0, "a positive number"),
    "fsrs_difficulty": lambda v: _number(
        v, "fsrs_difficulty", lambda x: 1 <= x <= 10, "a number from 1 to 10"
    ),
    "fsrs_last_reviewed_at": lambda v: parse_timestamp(v, "fsrs_last_reviewed_at", nullable=True),
    "fsrs_scheduled_days": lambda v: _integer(v, "fsrs_scheduled_days", nullable=True),
}


def clean_schedule(payload: Mapping[str, Any], card: Card | None) -> dict[str, Any]:
    """The snapshot's scheduling state merged over the stored one (or a new card's), checked for
    FSRS state consistency with the rule of the database CHECK constraint."""
    values = {f: getattr(card, f) for f in SCHEDULE_FIELDS} if card else dict(NEW_SCHEDULE)
    for name, parse in SCHEDULE_PARSERS.items():
        if name in payload:
            values[name] = parse(payload[name])
    state = values["fsrs_card_state"]
    if state == "new":
        for name in ("due_at", "fsrs_step_index", *FSRS_MEMORY):
            if values[name] is not None:
                raise DomainError(f"{name} must be null when fsrs_card_state is 'new'.", field=name)
        return values
    for name in FSRS_MEMORY:
        if values[name] is None:
            raise DomainError(
                f"{name} must not be null when fsrs_card_state is {state!r}.", field=name
            )
    if state == "review" and values["fsrs_step_index"] is not None:
        raise DomainError(
            "fsrs_step_index must be null when fsrs_card_state is 'review'.",
            field="fsrs_step_index",
        )
    if state != "review" and values["fsrs_step_index"] is None:
        raise DomainError(
            f"fsrs_step_index must not be null when fsrs_card_state is {state!r}.",
            field="fsrs_step_index",
        )
    return values


def clean_metadata(value: object) -> dict[str, Any]:
    """`{"version": 1, "source": {...}, ...}`; a missing version is 1."""
    if not isinstance(value, dict):
        raise DomainError(
            'metadata must be a JSON object, e.g. {"version": 1, "source": {}}.', field="metadata"
        )
    metadata = {"version": 1, **value}
    if type(metadata["version"]) is not int or metadata["version"] != 1:
        raise DomainError("metadata.version must be 1.", field="metadata")
    if "source" in metadata and not isinstance(metadata["source"], dict):
        raise DomainError("metadata.source must be a JSON object.", field="metadata")
    if len(json.dumps(metadata, ensure_ascii=False)) > MAX_METADATA_CHARS:
        raise DomainError(
            f"metadata may be at most {MAX_METADATA_CHARS} characters.", field="metadata"
        )
    return metadata


def uuid_or_none(value: object) -> uuid.UUID | None:
    try:
        return uuid.UUID(value) if isinstance(value, str) else None
    except ValueError:
        return None


def entity_uuid(entity_id: object, payload: Mapping[str, Any], id_column: str) -> uuid.UUID:
    """The operation's entity id; the payload's own id column, when present, must agree."""
    value = uuid_or_none(entity_id)
    if value is None:
        raise DomainError(f"entity_id must be a UUID; got {entity_id!r}.", field="entity_id")
    if id_column in payload and uuid_or_none(payload[id_column]) != value:
        raise DomainError(
            f"payload.{id_column} ({payload[id_column]!r}) must equal entity_id ({value}).",
            field=id_column,
        )
    return value


def check_keys(payload: Mapping[str, Any], allowed: Sequence[str], what: str) -> None:
    unknown = sorted(set(payload) - set(allowed))
    if unknown:
        raise DomainError(
            f"Unknown key(s) in the {what} payload: {', '.join(unknown)}. "
            f"Accepted keys: {', '.join(allowed)}.",
            field=unknown[0],
        )
