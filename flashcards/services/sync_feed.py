"""What sync clients download (domain.md §5): the change feed, the bootstrap snapshot and the
review history. Every page is a keyset query in the database with a fixed number of statements,
whatever its size, and every query is filtered by the workspace.

Payloads are rows in the dialect's `SELECT *` shape (flashcards.rows) plus `deleted_at`,
which is null for live entities and set for tombstones.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Exists, OuterRef

from flashcards import safe_json
from flashcards.models import Card, ChangeLog, Deck, ReviewEvent, Workspace
from flashcards.rows import card_row, deck_row, review_event_row, workspace_row
from flashcards.services.common import DomainError
from flashcards.services.timestamps import format_timestamp

MAX_PULL_LIMIT = 500
MAX_BOOTSTRAP_LIMIT = 1000
MAX_HISTORY_LIMIT = 500
MAX_CHANGE_ID = 2**63 - 1
SETTINGS_ENTITY = "workspace_scheduler_settings"
# Bootstrap walks the settings, then cards by id, then decks by id.
BOOTSTRAP_PHASES: tuple[tuple[str, type[Card] | type[Deck]], ...] = (("card", Card), ("deck", Deck))


def card_payload(card: Card) -> dict[str, Any]:
    return {**card_row(card), "deleted_at": format_timestamp(card.deleted_at)}


def deck_payload(deck: Deck) -> dict[str, Any]:
    return {**deck_row(deck), "deleted_at": format_timestamp(deck.deleted_at)}


def review_event_payload(event: ReviewEvent) -> dict[str, Any]:
    """A review event row plus its per-workspace sequence number (the history cursor)."""
    return {**review_event_row(event), "sequence": event.sequence}


@dataclass(frozen=True)
class ChangePage:
    changes: list[dict[str, Any]]
    next_change_id: int
    has_more: bool


@dataclass(frozen=True)
class BootstrapPage:
    entries: list[dict[str, Any]]
    next_cursor: str | None
    has_more: bool
    next_change_id: int


@dataclass(frozen=True)
class HistoryPage:
    review_events: list[dict[str, Any]]
    next_sequence: int
    has_more: bool


def _payloads(ws: Workspace, wanted: Iterable[tuple[str, str]]) -> dict[tuple[str, str], dict]:
    """Current payload of each (entity_type, entity_id): one query per entity type."""
    ids: dict[str, list[str]] = {}
    for entity_type, entity_id in wanted:
        ids.setdefault(entity_type, []).append(entity_id)
    found: dict[tuple[str, str], dict] = {}
    if "card" in ids:
        for card in Card.objects.filter(workspace=ws, pk__in=ids["card"]):
            found["card", str(card.pk)] = card_payload(card)
    if "deck" in ids:
        for deck in Deck.objects.filter(workspace=ws, pk__in=ids["deck"]):
            found["deck", str(deck.pk)] = deck_payload(deck)
    if "review_event" in ids:
        for event in ReviewEvent.objects.filter(workspace=ws, pk__in=ids["review_event"]):
            found["review_event", str(event.pk)] = review_event_payload(event)
    if SETTINGS_ENTITY in ids:
        found[SETTINGS_ENTITY, str(ws.pk)] = workspace_row(ws)
    return found


def pull_changes(ws: Workspace, after_change_id: int, limit: int) -> ChangePage:
    """The latest state of each entity changed after the cursor, in change-number order. An
    entity changed several times appears once, at its latest change, so a page never carries a
    stale state; the entries it skips all have a later entry that is still ahead of the cursor."""
    newer = ChangeLog.objects.filter(
        workspace_id=ws.pk,
        entity_type=OuterRef("entity_type"),
        entity_id=OuterRef("entity_id"),
        change_id__gt=OuterRef("change_id"),
    )
    entries = list(
        ChangeLog.objects.filter(workspace=ws, change_id__gt=after_change_id)
        .exclude(Exists(newer))
        .order_by("change_id")
        .values_list("change_id", "entity_type", "entity_id")[: limit + 1]
    )
    has_more = len(entries) > limit
    entries = entries[:limit]
    payloads = _payloads(ws, ((t, i) for _, t, i in entries))
    changes = [
        {
            "change_id": change_id,
            "entity_type": entity_type,
            "entity_id": entity_id,
            "payload": payloads[entity_type, entity_id],
        }
        for change_id, entity_type, entity_id in entries
        if (entity_type, entity_id) in payloads
    ]
    next_change_id = entries[-1][0] if entries else after_change_id
    return ChangePage(changes, next_change_id, has_more)


# ---------------------------------------------------------------- bootstrap


def _encode_cursor(change_id: int, phase: str, after: uuid.UUID | None) -> str:
    raw = json.dumps({"c": change_id, "p": phase, "a": str(after) if after else None})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[int, str, uuid.UUID | None]:
    invalid = DomainError(
        "cursor is not a bootstrap cursor: pass null for the first page, then next_cursor "
        "exactly as returned.",
        field="cursor",
    )
    try:
        data = safe_json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        change_id, phase, after = data["c"], data["p"], data["a"]
        after_id = uuid.UUID(after) if after is not None else None
    except (ValueError, TypeError, KeyError, binascii.Error, UnicodeDecodeError) as exc:
        raise invalid from exc
    if (
        isinstance(change_id, bool)
        or not isinstance(change_id, int)
        or not 0 <= change_id <= MAX_CHANGE_ID
        or phase not in dict(BOOTSTRAP_PHASES)
    ):
        raise invalid
    return change_id, phase, after_id


def bootstrap_page(ws: Workspace, cursor: str | None, limit: int) -> BootstrapPage:
    """One page of every live and tombstoned entity: the scheduler settings first, then cards,
    then decks, each by id. The first page fixes the change number to pull from afterwards, read
    before any entity: whatever changes while the client pages is at a later change number, so
    pulling from it afterwards catches up (an entity may arrive twice; the newer copy wins)."""
    entries: list[dict[str, Any]] = []
    if cursor is None:
        change_id, phase, after = ws.last_change_id, BOOTSTRAP_PHASES[0][0], None
        entries.append(
            {"entity_type": SETTINGS_ENTITY, "entity_id": str(ws.pk), "payload": workspace_row(ws)}
        )
    else:
        change_id, phase, after = _decode_cursor(cursor)
    phase_names = [name for name, _ in BOOTSTRAP_PHASES]
    payload_of = {"card": card_payload, "deck": deck_payload}
    for name, model in BOOTSTRAP_PHASES[phase_names.index(phase) :]:
        start = after if name == phase else None
        room = limit - len(entries)
        rows = model.objects.filter(workspace=ws).order_by("pk")
        if start is not None:
            rows = rows.filter(pk__gt=start)
        # One row more than there is room for says whether this phase goes on.
        page = list(rows[: room + 1])
        entries.extend(
            {"entity_type": name, "entity_id": str(row.pk), "payload": payload_of[name](row)}
            for row in page[:room]
        )
        if len(page) > room:
            last = page[room - 1].pk if room else start
            return BootstrapPage(entries, _encode_cursor(change_id, name, last), True, change_id)
    return BootstrapPage(entries, None, False, change_id)


# ---------------------------------------------------------------- review history


def review_history_page(ws: Workspace, after_sequence: int, limit: int) -> HistoryPage:
    events = list(
        ReviewEvent.objects.filter(workspace=ws, sequence__gt=after_sequence).order_by("sequence")[
            : limit + 1
        ]
    )
    has_more = len(events) > limit
    events = events[:limit]
    next_sequence = events[-1].sequence if events else after_sequence
    return HistoryPage([review_event_payload(e) for e in events], next_sequence, has_more)
