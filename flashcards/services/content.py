"""Create, update and soft-delete cards and decks: the only code that writes them.

Every function takes the workspace, works in bulk (at most 100 rows), enforces the invariants of
domain.md §2, stamps sync metadata and appends change-log entries in one transaction under the
workspace lock. The number of SQL statements does not grow with the number of rows."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flashcards.models import EFFORT_LEVELS, Card, Deck, Tag, Workspace
from flashcards.schema import CARDS, DECKS
from flashcards.services.common import (
    DomainError,
    NotFoundError,
    WriteContext,
    check_bulk_size,
    check_storable,
    lock_workspace,
    record_changes,
    write_service,
)
from flashcards.services.tags import (
    canonical_spelling,
    normalize_tags,
    replace_card_tags,
    replace_deck_tags,
    resolve_tags,
)
from flashcards.services.timestamps import now_ms

# The published writable columns; each is also the name of the model field it writes.
CARD_WRITABLE: tuple[str, ...] = tuple(c.name for c in CARDS.writable_columns)
DECK_WRITABLE: tuple[str, ...] = tuple(c.name for c in DECKS.writable_columns)
MAX_TEXT_LENGTH = 20_000
# Card.card_type is a varchar(100): PostgreSQL would refuse a longer value mid-write.
MAX_CARD_TYPE_LENGTH = 100


def _text(value: object, field: str, *, required_non_empty: bool) -> str:
    if value is None:
        raise DomainError(f"{field} must not be NULL.", field=field)
    if not isinstance(value, str):
        raise DomainError(f"{field} must be a string.", field=field)
    check_storable(value, field)
    value = value.strip()
    if required_non_empty and not value:
        raise DomainError(f"{field} must not be empty.", field=field)
    if len(value) > MAX_TEXT_LENGTH:
        raise DomainError(f"{field} may be at most {MAX_TEXT_LENGTH} characters.", field=field)
    return value


def _effort_level(value: object, field: str = "effort_level") -> str:
    if value not in EFFORT_LEVELS:
        raise DomainError(
            f"{field} must be one of {', '.join(EFFORT_LEVELS)}; got {value!r}.", field=field
        )
    return str(value)


def _effort_levels(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise DomainError(
            "effort_levels must be a list, e.g. ('fast', 'medium').", field="effort_levels"
        )
    result: list[str] = []
    for item in value:
        level = _effort_level(item, "effort_levels")
        if level not in result:
            result.append(level)
    return result


def clean_card_fields(values: Mapping[str, Any], *, creating: bool) -> dict[str, Any]:
    """Validate and normalise writable card fields (domain.md §2)."""
    unknown = set(values) - set(CARD_WRITABLE)
    if unknown:
        raise DomainError(
            f"Not writable on cards: {', '.join(sorted(unknown))}. "
            f"Writable columns: {', '.join(CARD_WRITABLE)}.",
            code="read_only_column",
        )
    if creating:
        for required in ("front_text", "back_text"):
            if required not in values:
                raise DomainError(f"{required} is required to create a card.", field=required)
    cleaned: dict[str, Any] = {}
    if "front_text" in values:
        cleaned["front_text"] = _text(values["front_text"], "front_text", required_non_empty=True)
    if "back_text" in values:
        cleaned["back_text"] = _text(values["back_text"], "back_text", required_non_empty=False)
    if "card_type" in values:
        card_type = values["card_type"]
        cleaned["card_type"] = (
            "basic"
            if card_type is None
            else _text(card_type, "card_type", required_non_empty=False)
        ) or "basic"
        if len(cleaned["card_type"]) > MAX_CARD_TYPE_LENGTH:
            raise DomainError(
                f"card_type may be at most {MAX_CARD_TYPE_LENGTH} characters.", field="card_type"
            )
    elif creating:
        cleaned["card_type"] = "basic"
    if "effort_level" in values:
        cleaned["effort_level"] = _effort_level(values["effort_level"])
    elif creating:
        cleaned["effort_level"] = "fast"
    if "tags" in values:
        cleaned["tags"] = normalize_tags(values["tags"])
    elif creating:
        cleaned["tags"] = []
    return cleaned


def clean_deck_fields(values: Mapping[str, Any], *, creating: bool) -> dict[str, Any]:
    unknown = set(values) - set(DECK_WRITABLE)
    if unknown:
        raise DomainError(
            f"Not writable on decks: {', '.join(sorted(unknown))}. "
            f"Writable columns: {', '.join(DECK_WRITABLE)}.",
            code="read_only_column",
        )
    if creating and "name" not in values:
        raise DomainError("name is required to create a deck.", field="name")
    cleaned: dict[str, Any] = {}
    if "name" in values:
        cleaned["name"] = _text(values["name"], "name", required_non_empty=True)
        if len(cleaned["name"]) > 500:
            raise DomainError("name may be at most 500 characters.", field="name")
    if "effort_levels" in values:
        cleaned["effort_levels"] = _effort_levels(values["effort_levels"])
    elif creating:
        cleaned["effort_levels"] = []
    if "tags" in values:
        cleaned["tags"] = normalize_tags(values["tags"])
    elif creating:
        cleaned["tags"] = []
    return cleaned


def _parse_id(value: object, what: str) -> uuid.UUID:
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except ValueError as exc:
        raise DomainError(f"{what} must be a UUID; got {value!r}.", field=what) from exc


# ---------------------------------------------------------------- cards and decks


@dataclass(frozen=True)
class _ContentKind:
    """What differs between writing cards and writing decks; everything else is shared."""

    model: type[Card] | type[Deck]
    entity_type: str
    plural: str
    id_name: str
    clean: Callable[..., dict[str, Any]]
    replace_tags: Callable[[Workspace, dict[object, list[str]], dict[str, Tag]], None]
    extra_fields: Callable[[str], dict[str, Any]]


CARD_KIND = _ContentKind(
    model=Card,
    entity_type="card",
    plural="cards",
    id_name="card_id",
    clean=clean_card_fields,
    replace_tags=replace_card_tags,
    extra_fields=lambda replica: {
        "metadata": {"version": 1, "source": {"kind": "server", "replica": replica}}
    },
)
DECK_KIND = _ContentKind(
    model=Deck,
    entity_type="deck",
    plural="decks",
    id_name="deck_id",
    clean=clean_deck_fields,
    replace_tags=replace_deck_tags,
    extra_fields=lambda replica: {},
)


def _create(
    kind: _ContentKind,
    workspace: Workspace,
    rows: Sequence[Mapping[str, Any]],
    context: WriteContext | None,
) -> list[Any]:
    check_bulk_size(len(rows), kind.plural)
    context = context or WriteContext()
    cleaned = [kind.clean(row, creating=True) for row in rows]
    ws = lock_workspace(workspace)
    at = now_ms()
    client_at, replica, operation = context.stamp(at)
    resolved = resolve_tags(ws, (values["tags"] for values in cleaned))
    objects = []
    for values in cleaned:
        values["tags"] = canonical_spelling(values["tags"], resolved)
        objects.append(
            kind.model(
                id=uuid.uuid4(),
                workspace=ws,
                created_at=at,
                updated_at=at,
                client_updated_at=client_at,
                last_modified_by_replica_id=replica,
                last_operation_id=operation,
                **kind.extra_fields(replica),
                **values,
            )
        )
    kind.model.objects.bulk_create(objects)
    kind.replace_tags(ws, {o.id: o.tags for o in objects if o.tags}, resolved)
    record_changes(
        ws, kind.entity_type, (o.id for o in objects), action="upsert", context=context, at=at
    )
    return objects


def _live(kind: _ContentKind, ws: Workspace, ids: Sequence[object]) -> list[Any]:
    """The live rows of `ws` among `ids`, in the order of `ids`, each once."""
    wanted = [_parse_id(value, kind.id_name) for value in ids]
    found = {
        o.id: o
        for o in kind.model.objects.filter(workspace=ws, id__in=wanted, deleted_at__isnull=True)
    }
    return [found[i] for i in dict.fromkeys(wanted) if i in found]


def _update(
    kind: _ContentKind,
    workspace: Workspace,
    ids: Sequence[object],
    changes: Mapping[str, Any],
    context: WriteContext | None,
) -> list[Any]:
    check_bulk_size(len(ids), kind.plural)
    context = context or WriteContext()
    cleaned = kind.clean(changes, creating=False)
    if not cleaned:
        raise DomainError("Nothing to update: name at least one writable column.")
    ws = lock_workspace(workspace)
    objects = _live(kind, ws, ids)
    if not objects:
        return []
    at = now_ms()
    client_at, replica, operation = context.stamp(at)
    resolved = resolve_tags(ws, [cleaned["tags"]]) if "tags" in cleaned else {}
    if "tags" in cleaned:
        cleaned["tags"] = canonical_spelling(cleaned["tags"], resolved)
    stamps = {
        "updated_at": at,
        "client_updated_at": client_at,
        "last_modified_by_replica_id": replica,
        "last_operation_id": operation,
    }
    # Every row gets the same values, so one UPDATE ... WHERE id IN (...) does it; bulk_update
    # would build a CASE per row and field.
    kind.model.objects.filter(id__in=[o.id for o in objects]).update(**cleaned, **stamps)
    for obj in objects:
        for name, value in {**cleaned, **stamps}.items():
            setattr(obj, name, list(value) if isinstance(value, list) else value)
    if "tags" in cleaned:
        kind.replace_tags(ws, {o.id: o.tags for o in objects}, resolved)
    record_changes(
        ws, kind.entity_type, (o.id for o in objects), action="upsert", context=context, at=at
    )
    return objects


def _delete(
    kind: _ContentKind,
    workspace: Workspace,
    ids: Sequence[object],
    context: WriteContext | None,
) -> list[Any]:
    """Soft delete. The tag rows go with the row (tag rows exist for live rows only, so tag counts
    need no join to the cards); the row keeps its ``tags``; review events stay."""
    check_bulk_size(len(ids), kind.plural)
    context = context or WriteContext()
    ws = lock_workspace(workspace)
    objects = _live(kind, ws, ids)
    if not objects:
        return []
    at = now_ms()
    client_at, replica, operation = context.stamp(at)
    kind.model.objects.filter(id__in=[o.id for o in objects]).update(
        deleted_at=at,
        updated_at=at,
        client_updated_at=client_at,
        last_modified_by_replica_id=replica,
        last_operation_id=operation,
    )
    kind.replace_tags(ws, {o.id: [] for o in objects}, {})
    record_changes(
        ws, kind.entity_type, (o.id for o in objects), action="delete", context=context, at=at
    )
    return objects


@write_service
def create_cards(
    workspace: Workspace, rows: Sequence[Mapping[str, Any]], *, context: WriteContext | None = None
) -> list[Card]:
    """Create cards in the order given. Returns them in that order."""
    return _create(CARD_KIND, workspace, rows, context)


@write_service
def update_cards(
    workspace: Workspace,
    card_ids: Sequence[object],
    changes: Mapping[str, Any],
    *,
    context: WriteContext | None = None,
) -> list[Card]:
    """Apply the same field changes to each live card among `card_ids` (ids of other workspaces or
    of deleted cards are ignored). Returns the updated cards in the order of `card_ids`."""
    return _update(CARD_KIND, workspace, card_ids, changes, context)


@write_service
def delete_cards(
    workspace: Workspace, card_ids: Sequence[object], *, context: WriteContext | None = None
) -> list[Card]:
    """Soft-delete live cards. Returns the cards as they were just before deletion."""
    return _delete(CARD_KIND, workspace, card_ids, context)


@write_service
def create_decks(
    workspace: Workspace, rows: Sequence[Mapping[str, Any]], *, context: WriteContext | None = None
) -> list[Deck]:
    return _create(DECK_KIND, workspace, rows, context)


@write_service
def update_decks(
    workspace: Workspace,
    deck_ids: Sequence[object],
    changes: Mapping[str, Any],
    *,
    context: WriteContext | None = None,
) -> list[Deck]:
    return _update(DECK_KIND, workspace, deck_ids, changes, context)


@write_service
def delete_decks(
    workspace: Workspace, deck_ids: Sequence[object], *, context: WriteContext | None = None
) -> list[Deck]:
    return _delete(DECK_KIND, workspace, deck_ids, context)


def get_live_card(workspace: Workspace, card_id: object) -> Card:
    card_uuid = _parse_id(card_id, "card_id")
    try:
        return Card.objects.get(workspace=workspace, id=card_uuid, deleted_at__isnull=True)
    except Card.DoesNotExist as exc:
        raise NotFoundError(
            f"No card with card_id {card_uuid} in this workspace.", field="card_id"
        ) from exc
