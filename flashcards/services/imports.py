"""Writing imported cards and review histories: the service behind every file import (Anki
packages, CSV/TSV), whatever surface received the file.

One call is one transaction under the workspace lock. Drafts arrive in batches from a streaming
reader and are written batch by batch (bulk inserts, one UPDATE per batch of changed cards, one
change-log entry per entity), so memory and statements per row stay flat whatever the file's
size. Every row goes through the same field rules as ``create_cards`` / ``update_cards``; a row
that breaks one is reported with where it came from and the whole import is rolled back, as is
every dry run. A card whose source stored its schedule (an Anki card with an FSRS memory state)
takes that schedule as it is, and its review events are stored as history; any other card's
scheduling state is rebuilt by replaying all of its review events — the imported ones and any it
already had — through the product's FSRS scheduler with the workspace's settings. A card reviewed
here after the source's last review keeps the newer state: its whole history is replayed.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction

from flashcards.models import SERVER_REPLICA, Card, CardTag, ReviewEvent, Workspace
from flashcards.scheduling import CardSchedule, rebuild_schedule
from flashcards.services.bulk_rows import insert_rows
from flashcards.services.common import DomainError, WriteContext, lock_workspace, record_changes
from flashcards.services.content import CARD_WRITABLE, clean_card_fields
from flashcards.services.scheduling import (
    SCHEDULE_FIELDS,
    apply_schedule,
    card_schedule,
    workspace_scheduler_settings,
)
from flashcards.services.tags import canonical_spelling, replace_card_tags, resolve_tags
from flashcards.services.timestamps import now_ms

# Ids per `IN (...)`: below every backend's parameter limit.
ID_CHUNK = 500
CARD_ATTRS = tuple(f.attname for f in Card._meta.concrete_fields)
EVENT_ATTRS = tuple(f.attname for f in ReviewEvent._meta.concrete_fields)
SYNC_FIELDS = (
    "updated_at",
    "client_updated_at",
    "last_modified_by_replica_id",
    "last_operation_id",
)


@dataclass(frozen=True)
class ReviewDraft:
    review_event_id: uuid.UUID
    client_event_id: str
    rating: int
    reviewed_at: datetime


@dataclass
class CardDraft:
    """One card as a file describes it. ``where`` says where it came from (``{"line": 7}`` or
    ``{"note": ..., "card": ...}``) and is repeated in the report and in every error.
    ``values`` holds only the writable columns the file gives; ``card_id`` None means a new id.
    ``metadata`` is the new card's source; an update keeps the card's own.
    ``problem`` is set when the reader already found the row unusable."""

    where: dict[str, Any]
    card_id: uuid.UUID | None
    values: dict[str, Any]
    metadata: dict[str, Any] | None = None
    reviews: list[ReviewDraft] = field(default_factory=list)
    problem: str | None = None
    # The schedule the source stored (Anki's FSRS memory state and due): taken as it is
    # instead of replaying ``reviews``, unless the card was reviewed here since.
    schedule: CardSchedule | None = None
    # Seam for the ``suspended`` card column (#22): the source's suspension, not yet stored
    # in a column of its own (the Anki reader also keeps it in metadata.source).
    suspended: bool | None = None
    # A row that breaks a rule is skipped and reported instead of failing the whole import
    # (Anki packages: the rest of the collection imports; CSV rows stay all or nothing).
    skip_invalid: bool = False
    # When the source last changed the row (an Anki note's mtime): with the fingerprint of
    # what the last import wrote, decides between a change there and an edit made here.
    source_modified_at: datetime | None = None


@dataclass
class ImportTally:
    """What an import did (or, rolled back, would have done)."""

    created: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0
    rejected: int = 0
    review_events_created: int = 0
    review_events_existing: int = 0
    schedules_rebuilt: int = 0
    schedules_taken: int = 0
    changes: int = 0
    items: list[dict[str, Any]] = field(default_factory=list)
    items_omitted: int = 0
    problems: list[dict[str, Any]] = field(default_factory=list)
    # Rows skipped with a reason (a deleted card, a note over a limit): listed, not fatal.
    skipped_rows: list[dict[str, Any]] = field(default_factory=list)
    # Cards changed both here and in the source, and which change was kept.
    edits: list[dict[str, Any]] = field(default_factory=list)
    rolled_back: bool = False

    def edit(self, draft: CardDraft, card_id: object, outcome: str, limit: int) -> None:
        if len(self.edits) < limit:
            self.edits.append({**draft.where, "card_id": str(card_id), "kept": outcome})

    def note(self, draft: CardDraft, action: str, card_id: object, limit: int, message: str = ""):
        item: dict[str, Any] = {
            **draft.where,
            "action": action,
            "card_id": str(card_id) if card_id else None,
        }
        if message:
            item["message"] = message
        if len(self.items) < limit:
            self.items.append(item)
        else:
            self.items_omitted += 1
        if action == "skipped" and message and len(self.skipped_rows) < limit:
            self.skipped_rows.append({**draft.where, "message": message})
        if action == "rejected" and len(self.problems) < limit:
            self.problems.append({**draft.where, "message": message})


@dataclass
class _Batch:
    ws: Workspace
    context: WriteContext
    at: datetime
    tally: ImportTally
    limit: int
    seen: set[uuid.UUID]
    creates: list[tuple[CardDraft, Card]] = field(default_factory=list)
    updates: list[tuple[CardDraft, Card, set[str]]] = field(default_factory=list)
    resolved: dict[str, Any] = field(default_factory=dict)
    # One outcome per draft, reported in the order of the file whatever order decided it.
    outcomes: dict[int, tuple[CardDraft, str, object, str]] = field(default_factory=dict)

    def note(self, draft: CardDraft, action: str, card_id: object, message: str = "") -> None:
        self.outcomes[id(draft)] = (draft, action, card_id, message)


def _chunks(items: Sequence[Any], size: int = ID_CHUNK) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _existing_cards(ids: list[uuid.UUID]) -> dict[uuid.UUID, Card]:
    found: dict[uuid.UUID, Card] = {}
    for chunk in _chunks(ids):
        found.update({c.id: c for c in Card.objects.filter(pk__in=chunk)})
    return found


def _refuse(batch: _Batch, draft: CardDraft, message: str) -> None:
    if draft.skip_invalid:
        batch.tally.skipped += 1
        batch.note(draft, "skipped", draft.card_id, message)
    else:
        batch.tally.rejected += 1
        batch.note(draft, "rejected", draft.card_id, message)


def _classify(batch: _Batch, drafts: Sequence[CardDraft]) -> None:
    """Decide create / update / unchanged / skipped / rejected for each draft of the batch."""
    tally = batch.tally
    existing = _existing_cards([d.card_id for d in drafts if d.card_id is not None])
    cleaned_rows: list[tuple[CardDraft, Card | None, dict[str, Any]]] = []
    for draft in drafts:
        if draft.problem:
            _refuse(batch, draft, draft.problem)
            continue
        if draft.card_id is not None:
            if draft.card_id in batch.seen:
                tally.rejected += 1
                batch.note(
                    draft,
                    "rejected",
                    draft.card_id,
                    f"card_id {draft.card_id} appears more than once in the file.",
                )
                continue
            batch.seen.add(draft.card_id)
        card = existing.get(draft.card_id) if draft.card_id is not None else None
        if card is not None and card.workspace_id != batch.ws.pk:
            tally.rejected += 1
            batch.note(
                draft,
                "rejected",
                draft.card_id,
                f"card_id {draft.card_id} belongs to another workspace; card ids are global, so "
                "leave card_id empty to create a new card.",
            )
            continue
        if card is not None and card.deleted_at is not None:
            tally.skipped += 1
            batch.note(draft, "skipped", card.id, "This card was deleted here; it is not revived.")
            continue
        try:
            values = dict(draft.values)
            if card is None:
                values.setdefault("back_text", "")
            cleaned = clean_card_fields(values, creating=card is None)
        except DomainError as exc:
            _refuse(batch, draft, exc.message)
            continue
        cleaned_rows.append((draft, card, cleaned))

    batch.resolved = resolve_tags(batch.ws, [c["tags"] for _, _, c in cleaned_rows if "tags" in c])
    for draft, card, cleaned in cleaned_rows:
        if "tags" in cleaned:
            cleaned["tags"] = canonical_spelling(cleaned["tags"], batch.resolved)
        if card is None:
            metadata = draft.metadata or {"version": 1, "source": {"kind": "import"}}
            if draft.source_modified_at is not None and isinstance(metadata.get("source"), dict):
                metadata["source"][FINGERPRINT] = _fingerprint(cleaned, draft.values)
            new = Card(
                id=draft.card_id or uuid.uuid4(),
                workspace=batch.ws,
                metadata=metadata,
                created_at=batch.at,
                **cleaned,
            )
            batch.creates.append((draft, new))
            continue
        cleaned, fingerprint_moved = _reconcile(batch, draft, card, cleaned)
        changed = {name for name, value in cleaned.items() if getattr(card, name) != value}
        for name in changed:
            setattr(card, name, cleaned[name])
        if fingerprint_moved:
            changed.add("metadata")
        batch.updates.append((draft, card, changed))


FINGERPRINT = "imported_fingerprint"


def _fingerprint(values: dict[str, Any], names: Iterable[str]) -> str:
    """What an import wrote of the columns the file gives, as a digest (tags case-folded:
    their spelling is the workspace's)."""
    canonical = {
        name: [t.lower() for t in values[name]] if name == "tags" else values.get(name)
        for name in sorted(names)
    }
    return hashlib.sha256(json.dumps(canonical, sort_keys=True).encode()).hexdigest()[:32]


def _reconcile(
    batch: _Batch, draft: CardDraft, card: Card, incoming: dict[str, Any]
) -> tuple[dict[str, Any], bool]:
    """The values an update writes when the source says when it changed: the source's when only
    it changed; the card's own when only the card was edited here since the last import; when
    both changed, the newer change. Each conflict is listed in ``tally.edits``."""
    source = card.metadata.get("source") if isinstance(card.metadata, dict) else None
    if draft.source_modified_at is None or not isinstance(source, dict):
        return incoming, False
    stored = source.get(FINGERPRINT)
    theirs = _fingerprint(incoming, draft.values)
    mine = _fingerprint({name: getattr(card, name) for name in draft.values}, draft.values)
    keep: dict[str, Any] = {}
    if stored is None or stored == mine:
        keep = incoming  # not edited here: the source's values
    elif stored == theirs:
        keep = {}  # edited here only
        batch.tally.edit(draft, card.id, "kept_edit_made_here", batch.limit)
    elif draft.source_modified_at > card.updated_at:
        keep = incoming
        batch.tally.edit(draft, card.id, "source_newer", batch.limit)
    else:
        keep = {}
        batch.tally.edit(draft, card.id, "edit_made_here_newer", batch.limit)
    if keep and stored != theirs:
        card.metadata = {**card.metadata, "source": {**source, FINGERPRINT: theirs}}
        return keep, True
    return keep, False


def _new_events(batch: _Batch) -> dict[uuid.UUID, list[ReviewDraft]]:
    """The drafts' review events not stored yet, per card id; repeats of stored ones are counted."""
    wanted: dict[uuid.UUID, tuple[uuid.UUID, ReviewDraft]] = {}
    for draft, card in batch.creates:
        for review in draft.reviews:
            wanted[review.review_event_id] = (card.id, review)
    for draft, card, _ in batch.updates:
        for review in draft.reviews:
            wanted[review.review_event_id] = (card.id, review)
    stored: set[uuid.UUID] = set()
    for chunk in _chunks(list(wanted)):
        stored.update(ReviewEvent.objects.filter(pk__in=chunk).values_list("pk", flat=True))
    batch.tally.review_events_existing += len(stored)
    per_card: dict[uuid.UUID, list[ReviewDraft]] = {}
    for event_id, (card_id, review) in wanted.items():
        if event_id not in stored:
            per_card.setdefault(card_id, []).append(review)
    return per_card


def _history_of(card_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[tuple[datetime, int, int]]]:
    history: dict[uuid.UUID, list[tuple[datetime, int, int]]] = {}
    for chunk in _chunks(card_ids):
        rows = ReviewEvent.objects.filter(card_id__in=chunk).values_list(
            "card_id", "reviewed_at_client", "sequence", "rating"
        )
        for card_id, reviewed_at, sequence, rating in rows:
            history.setdefault(card_id, []).append((reviewed_at, sequence, rating))
    return history


def _source_is_newer(schedule: CardSchedule, card: Card) -> bool:
    """The source's schedule replaces the card's unless the card was reviewed here after the
    source's last review (then the card's own, replayed, schedule is the newer one)."""
    mine = card.fsrs_last_reviewed_at
    return mine is None or schedule.last_reviewed_at is None or schedule.last_reviewed_at >= mine


def _write_batch(batch: _Batch) -> None:
    ws, tally, at = batch.ws, batch.tally, batch.at
    client_at, replica, operation = batch.context.stamp(at)
    settings = workspace_scheduler_settings(ws)
    new_events = _new_events(batch)
    prior = _history_of([card.id for _, card, _ in batch.updates if card.id in new_events])
    events: list[ReviewEvent] = []
    # Cards whose schedule changed by taking the source's (an update then writes the fields).
    taken: set[uuid.UUID] = set()

    def reschedule(draft: CardDraft, card: Card) -> bool:
        """Replay the card's whole history; False (and the card rejected) when it cannot be."""
        fresh = sorted(new_events.get(card.id, ()), key=lambda r: r.reviewed_at)
        if draft.schedule is not None and _source_is_newer(draft.schedule, card):
            if card_schedule(card) != draft.schedule:
                apply_schedule(card, draft.schedule)
                taken.add(card.id)
            tally.schedules_taken += 1
        elif not fresh:
            return True
        else:
            history = [(when, 0, seq, rating) for when, seq, rating in prior.get(card.id, ())]
            history += [(r.reviewed_at, 1, i, r.rating) for i, r in enumerate(fresh)]
            history.sort(key=lambda h: (h[0], h[1], h[2]))
            try:
                schedule = rebuild_schedule(settings, [(h[3], h[0]) for h in history])
            except (ValueError, OverflowError) as exc:
                tally.rejected += 1
                batch.note(draft, "rejected", card.id, f"Review history: {exc}.")
                return False
            apply_schedule(card, schedule)
            tally.schedules_rebuilt += 1
        for review in fresh:
            ws.last_review_sequence += 1
            events.append(
                ReviewEvent(
                    id=review.review_event_id,
                    workspace=ws,
                    card_id=card.id,
                    client_event_id=review.client_event_id,
                    replica_id=SERVER_REPLICA,
                    rating=review.rating,
                    reviewed_at_client=review.reviewed_at,
                    reviewed_at_server=at,
                    sequence=ws.last_review_sequence,
                )
            )
        return True

    stamps = {
        "updated_at": at,
        "client_updated_at": client_at,
        "last_modified_by_replica_id": replica,
        "last_operation_id": operation,
    }
    created: list[Card] = []
    for draft, card in batch.creates:
        if reschedule(draft, card):
            for name, value in stamps.items():
                setattr(card, name, value)
            created.append(card)
            tally.created += 1
            batch.note(draft, "created", card.id)
    updated: list[Card] = []
    update_fields: set[str] = set()
    retagged: dict[object, list[str]] = {}
    for draft, card, changed in batch.updates:
        had_events = card.id in new_events
        if not reschedule(draft, card):
            continue
        if had_events or card.id in taken:
            changed = changed | set(SCHEDULE_FIELDS)
        if not changed:
            tally.unchanged += 1
            batch.note(draft, "unchanged", card.id)
            continue
        for name, value in stamps.items():
            setattr(card, name, value)
        update_fields |= changed
        updated.append(card)
        if "tags" in changed:
            retagged[card.id] = card.tags
        tally.updated += 1
        batch.note(draft, "updated", card.id)

    resolved = batch.resolved
    insert_rows(Card, CARD_ATTRS, ([getattr(c, a) for a in CARD_ATTRS] for c in created))
    insert_rows(
        CardTag,
        ("workspace_id", "card_id", "tag_id", "position"),
        (
            (ws.pk, card.id, resolved[tag.lower()].pk, i)
            for card in created
            for i, tag in enumerate(card.tags)
        ),
    )
    if updated:
        Card.objects.bulk_update(updated, sorted(update_fields | set(SYNC_FIELDS)))
        replace_card_tags(ws, retagged, resolved)
    insert_rows(ReviewEvent, EVENT_ATTRS, ([getattr(e, a) for a in EVENT_ATTRS] for e in events))
    if events:
        Workspace.objects.filter(pk=ws.pk).update(last_review_sequence=ws.last_review_sequence)
    tally.review_events_created += len(events)
    # Cards before the review events that refer to them, as a puller applies the feed in order.
    context = batch.context
    tally.changes += len(
        record_changes(
            ws,
            "card",
            [c.id for c in (*created, *updated)],
            action="upsert",
            context=context,
            at=at,
        )
    )
    tally.changes += len(
        record_changes(
            ws, "review_event", [e.id for e in events], action="append", context=context, at=at
        )
    )


def _report_outcomes(batch: _Batch, drafts: Sequence[CardDraft]) -> None:
    for draft in drafts:
        _, action, card_id, message = batch.outcomes[id(draft)]
        batch.tally.note(draft, action, card_id, batch.limit, message)


def import_cards(
    workspace: Workspace,
    batches: Iterable[Sequence[CardDraft]],
    *,
    dry_run: bool = False,
    report_limit: int = 500,
    context: WriteContext | None = None,
) -> ImportTally:
    """Write every batch in one transaction; roll it all back when it is a dry run or any draft
    was rejected (``tally.rolled_back``). Exceptions from the reader roll back too."""
    context = context or WriteContext()
    tally = ImportTally()
    with transaction.atomic():
        ws = lock_workspace(workspace)
        at = now_ms()
        seen: set[uuid.UUID] = set()
        for drafts in batches:
            batch = _Batch(ws, context, at, tally, report_limit, seen)
            _classify(batch, drafts)
            _write_batch(batch)
            _report_outcomes(batch, drafts)
        if dry_run or tally.rejected:
            transaction.set_rollback(True)
            tally.rolled_back = True
    return tally


__all__ = ["CARD_WRITABLE", "CardDraft", "ImportTally", "ReviewDraft", "import_cards"]
