"""Sync push (domain.md §5): apply an offline client's queued operations to the server's copy.

A push is one transaction under the workspace lock; each operation runs in its own savepoint, so a
rejected operation (bad payload, broken invariant) is rolled back alone and the others still apply.

- Cards, decks and the scheduler settings arrive as snapshots in the dialect's column names.
  Keys absent from a snapshot keep the stored value (their default when the entity is new), so a
  full snapshot replaces the row; a tombstone is a snapshot whose `deleted_at` is set, and a later
  snapshot with `deleted_at: null` brings the entity back. Conflicts resolve last-writer-wins on
  (client_updated_at, replica id, operation id), compared in that order: the incoming snapshot
  applies only when its triple is strictly greater than the stored one, else it is `ignored`.
- Review events are appended as history only: the server does not re-run FSRS for them, because
  the client already ran the same scheduler and pushes the resulting card snapshot separately (the
  snapshot carries the schedule). They are deduplicated by id and by (replica, client_event_id).
- (workspace, replica, operation id) is the idempotency key (AppliedOperation): a repeated
  operation is `duplicate` and reports the change number of its first application. Rejected
  operations leave no key, so the client may fix and resend them under the same id.
- The replica is derived from the installation (Installation), never sent by the client.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import DataError, IntegrityError, transaction

from flashcards.models import (
    REVIEW_GRADES,
    AppliedOperation,
    Card,
    ChangeLog,
    Deck,
    Installation,
    ReviewEvent,
    Workspace,
)
from flashcards.rows import (
    CARD_COLUMNS,
    DECK_COLUMNS,
    REVIEW_EVENT_COLUMNS,
    WORKSPACE_COLUMNS,
)
from flashcards.services.common import DomainError, WriteContext, lock_workspace, record_changes
from flashcards.services.content import (
    CARD_WRITABLE,
    DECK_WRITABLE,
    clean_card_fields,
    clean_deck_fields,
)
from flashcards.services.scheduling import (
    SETTINGS_FIELDS,
    clean_scheduler_settings,
    parse_rating,
    update_scheduler_settings,
)
from flashcards.services.sync_payloads import (
    check_keys,
    check_storable,
    clean_metadata,
    clean_schedule,
    entity_uuid,
    label,
    parse_timestamp,
    uuid_or_none,
)
from flashcards.services.tags import (
    canonical_spelling,
    replace_card_tags,
    replace_deck_tags,
    resolve_tags,
)
from flashcards.services.timestamps import now_ms

MAX_PUSH_OPERATIONS = 500
MAX_PLATFORM_LENGTH = 40
ALGORITHM = "fsrs-6"

ENTITY_ACTIONS = {
    "card": "upsert",
    "deck": "upsert",
    "workspace_scheduler_settings": "upsert",
    "review_event": "append",
}
# The keys of a pulled payload (flashcards.services.sync_feed: the published row, and deleted_at
# for cards and decks). A client may echo the read-only ones back; the server keeps its own values.
CARD_SNAPSHOT_KEYS = (*CARD_COLUMNS, "deleted_at")
DECK_SNAPSHOT_KEYS = (*DECK_COLUMNS, "deleted_at")
SETTINGS_SNAPSHOT_KEYS = WORKSPACE_COLUMNS
REVIEW_EVENT_KEYS = REVIEW_EVENT_COLUMNS
Stamp = tuple[datetime, str, str]


@dataclass(frozen=True)
class PushOperation:
    """One queued client operation as received; every field but the id is validated on apply."""

    operation_id: object
    entity_type: object = None
    entity_id: object = None
    action: object = None
    client_updated_at: object = None
    payload: object = None


@dataclass(frozen=True)
class OperationResult:
    operation_id: str
    entity_type: str | None
    entity_id: str | None
    status: str
    resulting_change_id: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class _Outcome:
    status: str
    change_id: int | None = None


def _snapshot_times(
    payload: Mapping[str, Any], existing: Card | Deck | None
) -> tuple[datetime | None, datetime | None]:
    """(created_at for a new entity, deleted_at): creation keeps the client's time; an existing
    entity keeps its own. An absent `deleted_at` keeps the stored tombstone state."""
    created_at = None
    if existing is None and payload.get("created_at") is not None:
        created_at = parse_timestamp(payload["created_at"], "created_at")
    if "deleted_at" in payload:
        deleted_at = parse_timestamp(payload["deleted_at"], "deleted_at", nullable=True)
    else:
        deleted_at = existing.deleted_at if existing is not None else None
    return created_at, deleted_at


def _stamp_of(entity: Card | Deck) -> Stamp:
    return (entity.client_updated_at, entity.last_modified_by_replica_id, entity.last_operation_id)


def _stamp_entity(entity: Card | Deck, at: datetime, stamp: Stamp) -> None:
    entity.updated_at = at
    entity.client_updated_at, entity.last_modified_by_replica_id, entity.last_operation_id = stamp


@contextmanager
def _fresh_id(column: str, entity_id: uuid.UUID) -> Iterator[None]:
    """Ids are global (clients create them offline) but every read here is scoped to the
    workspace, so an id already taken elsewhere shows up as the primary key refusing the insert;
    it is refused without saying where. The caller's savepoint rolls the failed insert back."""
    try:
        yield
    except IntegrityError as exc:
        raise DomainError(
            f"{column} {entity_id} is already in use; choose a new id.", field=column
        ) from exc


# ---------------------------------------------------------------- snapshots


@dataclass(frozen=True)
class _SnapshotKind:
    """What differs between card and deck snapshots; everything else is shared."""

    entity_type: str
    model: type[Card] | type[Deck]
    id_column: str
    keys: tuple[str, ...]
    writable: tuple[str, ...]
    clean: Callable[..., dict[str, Any]]
    replace_tags: Callable[[Workspace, dict[object, list[str]], dict], None]


CARD = _SnapshotKind(
    "card", Card, "card_id", CARD_SNAPSHOT_KEYS, CARD_WRITABLE, clean_card_fields, replace_card_tags
)
DECK = _SnapshotKind(
    "deck", Deck, "deck_id", DECK_SNAPSHOT_KEYS, DECK_WRITABLE, clean_deck_fields, replace_deck_tags
)


def _apply_snapshot(
    kind: _SnapshotKind,
    ws: Workspace,
    entity_id: object,
    payload: Mapping[str, Any],
    context: WriteContext,
    extra_fields: Callable[[Any], dict[str, Any]],
) -> _Outcome:
    """Validate a snapshot, compare it last-writer-wins with the stored entity, and create or
    replace the entity. `extra_fields(existing)` cleans the kind's non-content columns."""
    check_keys(payload, kind.keys, kind.entity_type)
    pk = entity_uuid(entity_id, payload, kind.id_column)
    entity = kind.model.objects.filter(workspace=ws, pk=pk).first()
    fields = kind.clean(
        {k: payload[k] for k in kind.writable if k in payload}, creating=entity is None
    )
    fields.update(extra_fields(entity))
    created_at, fields["deleted_at"] = _snapshot_times(payload, entity)
    at = now_ms()
    stamp = context.stamp(at)
    if entity is not None and not stamp > _stamp_of(entity):
        return _Outcome("ignored")
    creating = entity is None
    was_live = entity is not None and entity.deleted_at is None
    if entity is None:
        entity = kind.model(id=pk, workspace=ws, created_at=created_at or at)
    resolved = resolve_tags(ws, [fields["tags"]]) if "tags" in fields else {}
    if "tags" in fields:
        fields["tags"] = canonical_spelling(fields["tags"], resolved)
    for name, value in fields.items():
        setattr(entity, name, value)
    _stamp_entity(entity, at, stamp)
    with _fresh_id(kind.id_column, pk):
        entity.save(force_insert=creating)
    live = entity.deleted_at is None
    if "tags" in fields or live != was_live:
        # Tag rows exist for live rows only: a tombstone has none, a row brought back gets its
        # tags' rows again.
        if live and not resolved:
            resolved = resolve_tags(ws, [entity.tags])
        kind.replace_tags(ws, {entity.pk: list(entity.tags) if live else []}, resolved)
    action = "delete" if fields["deleted_at"] else "upsert"
    [change_id] = record_changes(
        ws, kind.entity_type, [entity.pk], action=action, context=context, at=at
    )
    return _Outcome("applied", change_id)


def apply_card_snapshot(
    ws: Workspace, entity_id: object, payload: Mapping[str, Any], context: WriteContext
) -> _Outcome:
    """Create or replace one card from a client snapshot, possibly with scheduling state and a
    client-chosen id. `ws` must be locked by the caller."""

    def schedule_and_metadata(card: Card | None) -> dict[str, Any]:
        fields = clean_schedule(payload, card)
        if "metadata" in payload:
            fields["metadata"] = clean_metadata(payload["metadata"])
        elif card is None:
            fields["metadata"] = {
                "version": 1,
                "source": {"kind": "sync", "replica": context.replica_id},
            }
        return fields

    return _apply_snapshot(CARD, ws, entity_id, payload, context, schedule_and_metadata)


def apply_deck_snapshot(
    ws: Workspace, entity_id: object, payload: Mapping[str, Any], context: WriteContext
) -> _Outcome:
    """Create or replace one deck from a client snapshot. `ws` must be locked by the caller."""
    return _apply_snapshot(DECK, ws, entity_id, payload, context, lambda _deck: {})


def apply_settings_snapshot(
    ws: Workspace, entity_id: object, payload: Mapping[str, Any], context: WriteContext
) -> _Outcome:
    """Replace the scheduler settings from a snapshot in the workspace row's column names. The
    entity id is the workspace id; name and created_at are echoed columns, not settings."""
    check_keys(payload, SETTINGS_SNAPSHOT_KEYS, "workspace_scheduler_settings")
    if entity_uuid(entity_id, payload, "workspace_id") != ws.pk:
        raise DomainError(
            "entity_id of workspace_scheduler_settings must be this workspace's id.",
            field="entity_id",
        )
    if "algorithm" in payload and payload["algorithm"] != ALGORITHM:
        raise DomainError(f"algorithm must be {ALGORITHM!r}.", field="algorithm")
    # Validated before the comparison, so a bad snapshot is rejected even when it would lose.
    changes = clean_scheduler_settings({k: payload[k] for k in SETTINGS_FIELDS if k in payload})
    stored = (ws.settings_client_updated_at, ws.settings_replica_id, ws.settings_operation_id)
    if stored[0] is not None and not context.stamp(now_ms()) > stored:
        return _Outcome("ignored")
    updated = update_scheduler_settings(ws, changes, context=context)
    # The settings change was the last number allocated under the lock we hold.
    return _Outcome("applied", updated.last_change_id)


# ---------------------------------------------------------------- review events


def _existing_event_change(ws: Workspace, event: ReviewEvent) -> _Outcome:
    change_id = (
        ChangeLog.objects.filter(workspace=ws, entity_type="review_event", entity_id=str(event.id))
        .order_by("change_id")
        .values_list("change_id", flat=True)
        .first()
    )
    return _Outcome("duplicate", change_id)


def append_review_event(
    ws: Workspace, entity_id: object, payload: Mapping[str, Any], context: WriteContext
) -> _Outcome:
    """Append one review to the history, without re-running FSRS (see the module docstring).
    The card may be a tombstone: a review made offline before a delete is still history.
    `ws` must be locked by the caller."""
    check_keys(payload, REVIEW_EVENT_KEYS, "review_event")
    for required in ("card_id", "client_event_id", "rating", "reviewed_at_client"):
        if required not in payload:
            raise DomainError(f"{required} is required to append a review event.", field=required)
    event_id = entity_uuid(entity_id, payload, "review_event_id")
    client_event_id = label(payload["client_event_id"], "client_event_id")
    rating = parse_rating(payload["rating"])
    if "review_grade" in payload and payload["review_grade"] != REVIEW_GRADES[rating]:
        raise DomainError(
            f"review_grade {payload['review_grade']!r} does not match rating {rating} "
            f"({REVIEW_GRADES[rating]}).",
            field="review_grade",
        )
    reviewed_at = parse_timestamp(payload["reviewed_at_client"], "reviewed_at_client")
    card_id = uuid_or_none(payload["card_id"])
    if card_id is None:
        raise DomainError(f"card_id must be a UUID; got {payload['card_id']!r}.", field="card_id")

    existing = (
        ReviewEvent.objects.filter(workspace=ws, pk=event_id).first()
        or ReviewEvent.objects.filter(
            workspace=ws, replica_id=context.replica_id, client_event_id=client_event_id
        ).first()
    )
    if existing is not None:
        return _existing_event_change(ws, existing)
    if not Card.objects.filter(workspace=ws, pk=card_id).exists():
        raise DomainError(
            f"No card with card_id {card_id} in this workspace; push the card before its reviews.",
            field="card_id",
        )
    at = now_ms()
    ws.last_review_sequence += 1
    Workspace.objects.filter(pk=ws.pk).update(last_review_sequence=ws.last_review_sequence)
    with _fresh_id("review_event_id", event_id):
        ReviewEvent.objects.create(
            id=event_id,
            workspace=ws,
            card_id=card_id,
            client_event_id=client_event_id,
            replica_id=context.replica_id,
            rating=rating,
            reviewed_at_client=reviewed_at,
            reviewed_at_server=at,
            sequence=ws.last_review_sequence,
        )
    [change_id] = record_changes(
        ws, "review_event", [event_id], action="append", context=context, at=at
    )
    return _Outcome("applied", change_id)


APPLIERS: dict[str, Callable[[Workspace, object, Mapping[str, Any], WriteContext], _Outcome]] = {
    "card": apply_card_snapshot,
    "deck": apply_deck_snapshot,
    "workspace_scheduler_settings": apply_settings_snapshot,
    "review_event": append_review_event,
}


# ---------------------------------------------------------------- push


def installation_replica(ws: Workspace, installation_id: str, platform: str) -> str:
    """The replica id of an installation in this workspace, created on its first push."""
    installation = Installation.objects.filter(
        workspace=ws, installation_id=installation_id
    ).first()
    if installation is None:
        installation = Installation.objects.create(
            workspace=ws,
            installation_id=installation_id,
            platform=platform,
            replica_id=str(uuid.uuid4()),
        )
    else:
        installation.platform = platform
        installation.save(update_fields=["platform", "last_seen_at"])
    return installation.replica_id


def _apply_operation(
    workspace_id: uuid.UUID, replica_id: str, operation_id: str, op: PushOperation
) -> _Outcome:
    expected_action = (
        ENTITY_ACTIONS.get(op.entity_type) if isinstance(op.entity_type, str) else None
    )
    if expected_action is None:
        raise DomainError(
            f"entity_type must be one of {', '.join(ENTITY_ACTIONS)}; got {op.entity_type!r}.",
            field="entity_type",
        )
    if op.action != expected_action:
        raise DomainError(
            f"action for {op.entity_type} must be {expected_action!r}; got {op.action!r}.",
            field="action",
        )
    if not isinstance(op.payload, dict):
        raise DomainError("payload must be a JSON object.", field="payload")
    check_storable(op.payload, "payload")
    client_updated_at = parse_timestamp(op.client_updated_at, "client_updated_at")
    context = WriteContext(replica_id, operation_id, client_updated_at)
    # Re-read under the lock we already hold: earlier operations moved the counters.
    ws = lock_workspace(workspace_id)
    return APPLIERS[str(op.entity_type)](ws, op.entity_id, op.payload, context)


def _operation_ids(operations: Sequence[PushOperation]) -> list[str]:
    if len(operations) > MAX_PUSH_OPERATIONS:
        raise DomainError(
            f"At most {MAX_PUSH_OPERATIONS} operations per push; got {len(operations)}. "
            "Send the rest in another push.",
            code="too_many_rows",
            field="operations",
        )
    return [
        label(op.operation_id, f"operations[{index}].operation_id")
        for index, op in enumerate(operations)
    ]


def _result(
    operation_id: str, op: PushOperation, outcome: _Outcome | None, error: str | None = None
) -> OperationResult:
    # Echo the entity only when it is the string it should be; the error names anything else.
    entity_type = op.entity_type if isinstance(op.entity_type, str) else None
    entity_id = op.entity_id if isinstance(op.entity_id, str) else None
    if outcome is None:
        return OperationResult(operation_id, entity_type, entity_id, "rejected", None, error)
    return OperationResult(operation_id, entity_type, entity_id, outcome.status, outcome.change_id)


def _reused_for_another_entity(
    operation_id: str, op: PushOperation, first: tuple[str, str] | None
) -> str | None:
    """The error of an operation id already applied to another entity: resending an operation is
    a `duplicate`, but reusing its id for a different change is a client bug that would otherwise
    drop the change silently."""
    if first is None or not isinstance(op.entity_type, str) or not isinstance(op.entity_id, str):
        return None
    if (op.entity_type, op.entity_id.lower()) == first:
        return None
    return (
        f"operation_id {operation_id!r} was already applied to {first[0]} {first[1]}; "
        "an operation id names one change: send this one under a new operation id."
    )


@transaction.atomic
def push_operations(
    workspace: Workspace,
    *,
    installation_id: object,
    platform: object,
    operations: Sequence[PushOperation],
) -> list[OperationResult]:
    """Apply the operations in order, each in a savepoint, and report one result per operation.
    Raises DomainError (nothing applied) for a malformed installation or operation id."""
    installation_key = label(installation_id, "installation_id")
    platform_name = label(platform, "platform", MAX_PLATFORM_LENGTH)
    operation_ids = _operation_ids(operations)
    ws = lock_workspace(workspace)
    replica_id = installation_replica(ws, installation_key, platform_name)
    # The first application of each operation id already seen, this request's included.
    applied: dict[str, _Outcome] = {
        row.operation_id: _Outcome("duplicate", row.resulting_change_id)
        for row in AppliedOperation.objects.filter(
            workspace=ws, replica_id=replica_id, operation_id__in=set(operation_ids)
        )
    }
    # Which entity each seen id changed (from the change feed; an `ignored` one is unknown).
    entities: dict[str, tuple[str, str]] = {
        change.operation_id: (change.entity_type, change.entity_id.lower())
        for change in ChangeLog.objects.filter(
            workspace=ws,
            change_id__in=[o.change_id for o in applied.values() if o.change_id is not None],
        )
    }
    results = []
    for operation_id, op in zip(operation_ids, operations, strict=True):
        if operation_id in applied:
            reused = _reused_for_another_entity(operation_id, op, entities.get(operation_id))
            if reused is not None:
                results.append(_result(operation_id, op, None, reused))
                continue
            results.append(_result(operation_id, op, applied[operation_id]))
            continue
        try:
            with transaction.atomic():
                outcome = _apply_operation(ws.pk, replica_id, operation_id, op)
                AppliedOperation.objects.create(
                    workspace=ws,
                    replica_id=replica_id,
                    operation_id=operation_id,
                    status=outcome.status,
                    resulting_change_id=outcome.change_id,
                )
        except DomainError as exc:
            results.append(_result(operation_id, op, None, exc.message))
            continue
        except (IntegrityError, DataError) as exc:
            # The database's own constraints back the checks above; report, never 500.
            message = f"The payload breaks a data constraint ({type(exc).__name__})."
            results.append(_result(operation_id, op, None, message))
            continue
        applied[operation_id] = _Outcome("duplicate", outcome.change_id)
        if isinstance(op.entity_type, str) and isinstance(op.entity_id, str):
            entities[operation_id] = (op.entity_type, op.entity_id.lower())
        results.append(_result(operation_id, op, outcome))
    return results
