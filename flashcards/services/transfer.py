"""Whole-workspace export and import (domain.md §7): the documented way to back up a workspace and
to load real or fixture data into an installation.

The file is `{"format": 1, "workspace": {...}, "cards": [...], "decks": [...],
"review_events": [...]}`, every row in the dialect's `SELECT *` shape (flashcards.rows).
An import is a restore: ids, timestamps, scheduling state and the order of review events are kept.
It validates the whole file before writing anything, then writes everything — workspace, owner,
tags, cards, decks, review events and one change-log entry per entity — in one transaction with
bulk inserts, so large fixtures load in a few statements per thousand rows.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection, models, transaction

from flashcards.models import (
    FSRS_STATES,
    REVIEW_GRADES,
    SERVER_REPLICA,
    Card,
    CardTag,
    Deck,
    DeckTag,
    Membership,
    ReviewEvent,
    Tag,
    Workspace,
)
from flashcards.rows import (
    CARD_COLUMNS,
    DECK_COLUMNS,
    REVIEW_EVENT_COLUMNS,
    WORKSPACE_COLUMNS,
    card_row,
    deck_row,
    review_event_row,
    workspace_row,
)
from flashcards.services.common import (
    DomainError,
    WriteContext,
    check_storable,
    lock_workspace,
    record_changes,
)
from flashcards.services.content import (
    CARD_WRITABLE,
    DECK_WRITABLE,
    clean_card_fields,
    clean_deck_fields,
)
from flashcards.services.scheduling import (
    LEARNING_DAY_FIELDS,
    SETTINGS_FIELDS,
    clean_scheduler_settings,
)
from flashcards.services.tags import canonical_spelling, resolve_tags
from flashcards.services.timestamps import now_ms, parse_timestamp, truncate_ms
from flashcards.services.workspaces import clean_workspace_name, get_or_create_user

FORMAT_VERSION = 1
TOP_LEVEL_KEYS = ("format", "workspace", "cards", "decks", "review_events")
DEFAULT_OWNER = "admin"
ALGORITHM = "fsrs-6"
# Rows per INSERT / per change-log batch: bounds statement size and memory, not correctness.
BATCH = 1000
# Ids per `IN (...)` when checking for collisions; below every backend's parameter limit.
ID_CHUNK = 500
MAX_INT = 2**31 - 1


class TransferError(DomainError):
    """The file cannot be imported. The message starts with the JSON path of the offending value
    (`cards[3].front_text`, zero-based row index) so the user can find it."""


@dataclass(frozen=True)
class ImportReport:
    workspace_id: uuid.UUID
    workspace_name: str
    owner: str
    owner_created: bool
    cards: int
    decks: int
    review_events: int
    tags: int
    changes: int

    def summary(self) -> str:
        owner = f"{self.owner} (created)" if self.owner_created else self.owner
        return (
            f'Imported workspace {self.workspace_id} "{self.workspace_name}" for owner {owner}: '
            f"{self.cards} cards, {self.decks} decks, {self.review_events} review events, "
            f"{self.tags} tags, {self.changes} change-log entries."
        )


# ---------------------------------------------------------------- export


def export_workspace(workspace: Workspace) -> dict[str, Any]:
    """The workspace's live rows. Cards and decks come oldest first so that re-importing replays
    tag spellings in their original order; review events come in review-sequence order. Events of
    deleted cards are left out with their cards (an event cannot exist without its card)."""
    # Settings as stored, not as the caller's possibly stale instance holds them.
    workspace = Workspace.objects.get(pk=workspace.pk)
    cards = Card.objects.filter(workspace=workspace, deleted_at__isnull=True).order_by(
        "created_at", "id"
    )
    decks = Deck.objects.filter(workspace=workspace, deleted_at__isnull=True).order_by(
        "created_at", "id"
    )
    events = ReviewEvent.objects.filter(
        workspace=workspace, card__deleted_at__isnull=True
    ).order_by("sequence")
    return {
        "format": FORMAT_VERSION,
        "workspace": workspace_row(workspace),
        "cards": [card_row(c) for c in cards.iterator(chunk_size=BATCH)],
        "decks": [deck_row(d) for d in decks.iterator(chunk_size=BATCH)],
        "review_events": [review_event_row(e) for e in events.iterator(chunk_size=BATCH)],
    }


# ---------------------------------------------------------------- validation


class _Row:
    """One row of the file with typed accessors whose errors name the row and column."""

    def __init__(
        self, data: object, path: str, columns: Sequence[str], optional: Sequence[str] = ()
    ):
        """``optional``: columns that files written by earlier versions lack."""
        self.path = path
        if not isinstance(data, dict):
            raise TransferError(f"{path}: must be a JSON object with the columns {_list(columns)}.")
        missing = [c for c in columns if c not in data and c not in optional]
        if missing:
            raise TransferError(f"{path}: missing column(s) {_list(missing)}.")
        unknown = sorted(set(data) - set(columns))
        if unknown:
            raise TransferError(
                f"{path}: unknown column(s) {_list(unknown)}; expected {_list(columns)}."
            )
        self.data: dict[str, Any] = data

    def error(self, column: str, message: str) -> TransferError:
        return TransferError(f"{self.path}.{column}: {message}", field=column)

    def uuid(self, column: str) -> uuid.UUID:
        value = self.data[column]
        if isinstance(value, str):
            try:
                return uuid.UUID(value)
            except ValueError:
                pass
        raise self.error(column, f"must be a UUID string; got {_show(value)}.")

    def timestamp(self, column: str) -> datetime:
        value = self.data[column]
        parsed = parse_timestamp(value, require_offset=True)
        if parsed is not None:
            return truncate_ms(parsed)
        raise self.error(
            column,
            "must be an ISO-8601 timestamp with a time zone, e.g. 2026-03-05T10:00:00.000Z; "
            f"got {_show(value)}.",
        )

    def optional_timestamp(self, column: str) -> datetime | None:
        return None if self.data[column] is None else self.timestamp(column)

    def integer(self, column: str, *, minimum: int = 0) -> int:
        value = self.data[column]
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or not (minimum <= value <= MAX_INT)
        ):
            raise self.error(column, f"must be a whole number >= {minimum}; got {_show(value)}.")
        return value

    def optional_integer(self, column: str) -> int | None:
        return None if self.data[column] is None else self.integer(column)

    def number(self, column: str, check: Callable[[float], bool], expected: str) -> float:
        value = self.data[column]
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or not check(value)
        ):
            raise self.error(column, f"must be {expected}; got {_show(value)}.")
        return float(value)

    def clean(self, cleaner: Callable[[dict[str, Any]], dict[str, Any]], columns: Sequence[str]):
        try:
            return cleaner({c: self.data[c] for c in columns if c in self.data})
        except DomainError as exc:
            raise self.error(exc.field or columns[0], exc.message) from exc


def _list(names: Iterable[str]) -> str:
    return ", ".join(names)


def _show(value: object) -> str:
    """A value for an error message, cut short: the offending value may be a whole document."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass
class _Plan:
    """The validated file, as unsaved rows ready for bulk insertion."""

    workspace: Workspace
    cards: list[Card] = field(default_factory=list)
    decks: list[Deck] = field(default_factory=list)
    events: list[ReviewEvent] = field(default_factory=list)


def _rows(data: dict[str, Any], key: str) -> list[object]:
    rows = data[key]
    if not isinstance(rows, list):
        raise TransferError(f"{key}: must be a JSON array of row objects.")
    return rows


def _parse_workspace(raw: object, stamp: tuple[datetime, str, str]) -> Workspace:
    row = _Row(raw, "workspace", WORKSPACE_COLUMNS, optional=LEARNING_DAY_FIELDS)
    if row.data["algorithm"] != ALGORITHM:
        raise row.error("algorithm", f"must be {ALGORITHM!r}; got {_show(row.data['algorithm'])}.")
    try:
        name = clean_workspace_name(row.data["name"])
    except DomainError as exc:
        raise row.error("name", exc.message) from exc
    settings = row.clean(clean_scheduler_settings, SETTINGS_FIELDS)
    at, replica, operation = stamp
    return Workspace(
        id=row.uuid("workspace_id"),
        name=name,
        created_at=row.timestamp("created_at"),
        updated_at=at,
        algorithm=ALGORITHM,
        settings_client_updated_at=at,
        settings_replica_id=replica,
        settings_operation_id=operation,
        **settings,
    )


def _parse_schedule(row: _Row) -> dict[str, Any]:
    """FSRS state consistency (domain.md §2), the same rule as the database CHECK constraint."""
    state = row.data["fsrs_card_state"]
    if state not in FSRS_STATES:
        raise row.error(
            "fsrs_card_state", f"must be one of {_list(FSRS_STATES)}; got {_show(state)}."
        )
    schedule: dict[str, Any] = {
        "fsrs_card_state": state,
        "reps": row.integer("reps"),
        "lapses": row.integer("lapses"),
    }
    memory = (
        "due_at",
        "fsrs_step_index",
        "fsrs_stability",
        "fsrs_difficulty",
        "fsrs_last_reviewed_at",
        "fsrs_scheduled_days",
    )
    if state == "new":
        for column in memory:
            if row.data[column] is not None:
                raise row.error(column, "must be null when fsrs_card_state is 'new'.")
        return schedule | dict.fromkeys(memory)
    for column in (
        "fsrs_stability",
        "fsrs_difficulty",
        "fsrs_last_reviewed_at",
        "fsrs_scheduled_days",
    ):
        if row.data[column] is None:
            raise row.error(column, f"must not be null when fsrs_card_state is {state!r}.")
    step = row.data["fsrs_step_index"]
    if state == "review" and step is not None:
        raise row.error("fsrs_step_index", "must be null when fsrs_card_state is 'review'.")
    if state != "review" and step is None:
        raise row.error("fsrs_step_index", f"must not be null when fsrs_card_state is {state!r}.")
    return schedule | {
        "due_at": row.optional_timestamp("due_at"),
        "fsrs_step_index": row.optional_integer("fsrs_step_index"),
        "fsrs_stability": row.number("fsrs_stability", lambda v: v > 0, "a positive number"),
        "fsrs_difficulty": row.number(
            "fsrs_difficulty", lambda v: 1 <= v <= 10, "a number from 1 to 10"
        ),
        "fsrs_last_reviewed_at": row.timestamp("fsrs_last_reviewed_at"),
        "fsrs_scheduled_days": row.integer("fsrs_scheduled_days"),
    }


def _unique(seen: set[uuid.UUID], value: uuid.UUID, row: _Row, column: str) -> uuid.UUID:
    if value in seen:
        raise row.error(column, f"{value} appears more than once in the file.")
    seen.add(value)
    return value


def _sync_fields(row_updated_at: datetime | None, operation: str) -> dict[str, Any]:
    # The restored row's own updated_at is its last-writer-wins timestamp: a client edit made
    # after the export still wins, one made before it still loses.
    return {
        "client_updated_at": row_updated_at,
        "last_modified_by_replica_id": SERVER_REPLICA,
        "last_operation_id": operation,
    }


def _parse_cards(raw_rows: list[object], plan: _Plan, operation: str) -> None:
    seen: set[uuid.UUID] = set()
    for index, raw in enumerate(raw_rows):
        row = _Row(raw, f"cards[{index}]", CARD_COLUMNS)
        values = row.clean(lambda v: clean_card_fields(v, creating=True), CARD_WRITABLE)
        metadata = row.data["metadata"]
        if not isinstance(metadata, dict):
            raise row.error("metadata", f"must be a JSON object; got {_show(metadata)}.")
        updated_at = row.timestamp("updated_at")
        plan.cards.append(
            Card(
                id=_unique(seen, row.uuid("card_id"), row, "card_id"),
                workspace=plan.workspace,
                metadata=metadata,
                created_at=row.timestamp("created_at"),
                updated_at=updated_at,
                **values,
                **_parse_schedule(row),
                **_sync_fields(updated_at, operation),
            )
        )


def _parse_decks(raw_rows: list[object], plan: _Plan, operation: str) -> None:
    seen: set[uuid.UUID] = set()
    for index, raw in enumerate(raw_rows):
        row = _Row(raw, f"decks[{index}]", DECK_COLUMNS)
        values = row.clean(lambda v: clean_deck_fields(v, creating=True), DECK_WRITABLE)
        updated_at = row.timestamp("updated_at")
        plan.decks.append(
            Deck(
                id=_unique(seen, row.uuid("deck_id"), row, "deck_id"),
                workspace=plan.workspace,
                created_at=row.timestamp("created_at"),
                updated_at=updated_at,
                **values,
                **_sync_fields(updated_at, operation),
            )
        )


def _parse_events(raw_rows: list[object], plan: _Plan) -> None:
    card_ids = {card.id for card in plan.cards}
    seen: set[uuid.UUID] = set()
    client_ids: set[str] = set()
    for index, raw in enumerate(raw_rows):
        row = _Row(raw, f"review_events[{index}]", REVIEW_EVENT_COLUMNS)
        card_id = row.uuid("card_id")
        if card_id not in card_ids:
            raise row.error("card_id", f"{card_id} is not the card_id of any row in cards.")
        client_event_id = row.data["client_event_id"]
        if (
            not isinstance(client_event_id, str)
            or not client_event_id.strip()
            or len(client_event_id) > 200
        ):
            raise row.error("client_event_id", "must be a non-blank string of 1 to 200 characters.")
        if client_event_id in client_ids:
            raise row.error("client_event_id", f"{_show(client_event_id)} appears more than once.")
        client_ids.add(client_event_id)
        rating = row.integer("rating")
        if rating > 3:
            raise row.error("rating", f"must be 0..3 (again, hard, good, easy); got {rating}.")
        if row.data["review_grade"] != REVIEW_GRADES[rating]:
            raise row.error(
                "review_grade",
                f"must be {REVIEW_GRADES[rating]!r} to agree with rating {rating}; "
                f"got {_show(row.data['review_grade'])}.",
            )
        plan.events.append(
            ReviewEvent(
                id=_unique(seen, row.uuid("review_event_id"), row, "review_event_id"),
                workspace=plan.workspace,
                card_id=card_id,
                client_event_id=client_event_id,
                replica_id=SERVER_REPLICA,
                rating=rating,
                reviewed_at_client=row.timestamp("reviewed_at_client"),
                reviewed_at_server=row.timestamp("reviewed_at_server"),
                sequence=index + 1,
            )
        )


def parse_document(data: object, context: WriteContext, at: datetime) -> _Plan:
    """Validate the whole file without a single query; the result is ready to insert."""
    if not isinstance(data, dict):
        raise TransferError(
            "The file must hold a JSON object with the keys format, workspace, "
            "cards, decks and review_events."
        )
    missing = [k for k in TOP_LEVEL_KEYS if k not in data]
    if missing:
        raise TransferError(f"Missing top-level key(s): {_list(missing)}.")
    unknown = sorted(set(data) - set(TOP_LEVEL_KEYS))
    if unknown:
        raise TransferError(
            f"Unknown top-level key(s): {_list(unknown)}; expected {_list(TOP_LEVEL_KEYS)}."
        )
    version = data["format"]
    if isinstance(version, bool) or version != FORMAT_VERSION:
        raise TransferError(f"format: unsupported format {_show(version)}; this version reads 1.")
    try:
        for key in TOP_LEVEL_KEYS[1:]:
            check_storable(data[key], key)
    except DomainError as exc:
        raise TransferError(exc.message, field=exc.field) from exc
    plan = _Plan(workspace=_parse_workspace(data["workspace"], context.stamp(at)))
    _parse_cards(_rows(data, "cards"), plan, context.operation_id)
    _parse_decks(_rows(data, "decks"), plan, context.operation_id)
    _parse_events(_rows(data, "review_events"), plan)
    return plan


# ---------------------------------------------------------------- import


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _refuse_taken_ids(plan: _Plan) -> None:
    """Ids are global (clients create them offline): a restore must not take one that exists."""
    if Workspace.objects.filter(pk=plan.workspace.pk).exists():
        raise TransferError(
            f"workspace.workspace_id: workspace {plan.workspace.pk} already exists in this "
            "installation. Import restores a workspace that is not present; delete the existing "
            "one first or import into another installation.",
            field="workspace_id",
        )
    checks: list[tuple[str, str, type[models.Model], Sequence[models.Model]]] = [
        ("cards", "card_id", Card, plan.cards),
        ("decks", "deck_id", Deck, plan.decks),
        ("review_events", "review_event_id", ReviewEvent, plan.events),
    ]
    for key, column, model, rows in checks:
        index_of = {row.pk: i for i, row in enumerate(rows)}
        for chunk in _chunks(list(index_of), ID_CHUNK):
            taken = model.objects.filter(pk__in=chunk).values_list("pk", flat=True).first()
            if taken is not None:
                raise TransferError(
                    f"{key}[{index_of[taken]}].{column}: {taken} already exists in another "
                    "workspace; ids are global, so this file cannot be imported here.",
                    field=column,
                )


def _write_tag_rows(ws: Workspace, plan: _Plan, resolved: dict[str, Tag]) -> None:
    CardTag.objects.bulk_create(
        (
            CardTag(workspace=ws, card_id=card.id, tag=resolved[tag.lower()], position=i)
            for card in plan.cards
            if card.deleted_at is None  # tag rows exist for live rows only
            for i, tag in enumerate(card.tags)
        ),
        batch_size=BATCH,
    )
    DeckTag.objects.bulk_create(
        (
            DeckTag(workspace=ws, deck_id=deck.id, tag=resolved[tag.lower()], position=i)
            for deck in plan.decks
            if deck.deleted_at is None
            for i, tag in enumerate(deck.tags)
        ),
        batch_size=BATCH,
    )


def import_workspace(data: object, owner_username: str | None = None) -> ImportReport:
    """Restore a workspace from an exported document, all or nothing. Raises TransferError naming
    the offending row and column; nothing is written then."""
    context = WriteContext()
    at = now_ms()
    plan = parse_document(data, context, at)
    username = (owner_username or DEFAULT_OWNER).strip()
    with transaction.atomic():
        _refuse_taken_ids(plan)
        try:
            owner, owner_created = get_or_create_user(username)
        except DomainError as exc:
            raise TransferError(f"--owner: {exc.message}", field="owner") from exc
        plan.workspace.last_review_sequence = len(plan.events)
        plan.workspace.save(force_insert=True)
        Membership.objects.create(user=owner, workspace=plan.workspace, role=Membership.ROLE_OWNER)
        ws = lock_workspace(plan.workspace)
        # First spelling in file order wins (cards, then decks), as if the rows were written anew.
        resolved = resolve_tags(ws, [row.tags for row in (*plan.cards, *plan.decks)])
        for row in (*plan.cards, *plan.decks):
            row.tags = canonical_spelling(row.tags, resolved)
        Card.objects.bulk_create(plan.cards, batch_size=BATCH)
        Deck.objects.bulk_create(plan.decks, batch_size=BATCH)
        _write_tag_rows(ws, plan, resolved)
        ReviewEvent.objects.bulk_create(plan.events, batch_size=BATCH)
        changes = _record_import_changes(ws, plan, context, at)
    refresh_planner_statistics()
    return ImportReport(
        workspace_id=ws.pk,
        workspace_name=ws.name,
        owner=owner.get_username(),
        owner_created=owner_created,
        cards=len(plan.cards),
        decks=len(plan.decks),
        review_events=len(plan.events),
        tags=len(resolved),
        changes=changes,
    )


def refresh_planner_statistics() -> None:
    """SQLite gathers no statistics by itself; after a bulk load its planner would scan a whole
    workspace for an UPDATE by id (docs/benchmarks.md). PostgreSQL's autovacuum does this alone."""
    if connection.vendor == "sqlite" and not connection.in_atomic_block:
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def _record_import_changes(ws: Workspace, plan: _Plan, context: WriteContext, at: datetime) -> int:
    """Cards before the decks and review events that refer to them, so a puller applying the feed
    in order never sees a reference to an entity it has not received yet."""
    feeds: list[tuple[str, str, Sequence[models.Model]]] = [
        ("workspace_scheduler_settings", "upsert", [ws]),
        ("card", "upsert", plan.cards),
        ("deck", "upsert", plan.decks),
        ("review_event", "append", plan.events),
    ]
    count = 0
    for entity_type, action, rows in feeds:
        for chunk in _chunks(rows, BATCH):
            count += len(
                record_changes(
                    ws, entity_type, (r.pk for r in chunk), action=action, context=context, at=at
                )
            )
    return count
