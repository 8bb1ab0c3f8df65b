"""Rows in the dialect's `SELECT *` shape (dsl.md §5 column names in DESCRIBE order, §2.4 value
formats), built from model instances by the columns of flashcards.schema. Everything that
publishes a row outside the SQL executor — explicit commands, the sync feed, export — uses these,
so a card looks the same whichever route returned it."""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any

from flashcards.models import REVIEW_GRADES, Card, Deck, ReviewEvent, Workspace
from flashcards.schema import (
    CARDS,
    DATETIME,
    DECKS,
    INTEGER_ARRAY,
    REVIEW_EVENTS,
    STRING_ARRAY,
    UUID,
    WORKSPACE,
    ColumnType,
    Resource,
)
from flashcards.services.timestamps import format_timestamp

# One formatter per value type; the other types (strings, numbers, booleans, JSON) are published
# as the model holds them.
_FORMATTERS: dict[ColumnType, Callable[[Any], Any]] = {
    UUID: str,
    DATETIME: format_timestamp,
    STRING_ARRAY: list,
    INTEGER_ARRAY: list,
}

# Readable columns without a model field: the attribute each is computed from, and how. The
# compiler computes the same columns in SQL (dsl.runtime.compiler); both follow flashcards.models.
_COMPUTED: dict[tuple[str, str], tuple[str, Callable[[Any], Any]]] = {
    ("review_events", "review_grade"): ("rating", REVIEW_GRADES.__getitem__),
}


def _row_function(resource: Resource) -> Callable[[Any], dict[str, Any]]:
    """The row of one model instance of ``resource``. Worked out once per resource at import, so a
    row costs one C-level attribute fetch, one ``dict(zip(...))`` and a call per converted value
    (export writes many rows)."""
    keys: list[str] = []
    sources: list[str] = []
    converted: list[tuple[int, str, Callable[[Any], Any]]] = []
    for index, column in enumerate(resource.readable_columns):
        convert: Callable[[Any], Any] | None
        if column.field is None:
            source, convert = _COMPUTED[resource.name, column.name]
        else:
            source, convert = column.field, _FORMATTERS.get(column.type)
        keys.append(column.name)
        sources.append(source)
        if convert is not None:
            converted.append((index, column.name, convert))
    # Every resource has several columns, so the getter returns a tuple.
    fetch = attrgetter(*sources)
    names = tuple(keys)
    conversions = tuple(converted)

    def row(instance: Any) -> dict[str, Any]:
        values = fetch(instance)
        published = dict(zip(names, values, strict=True))
        for index, key, convert in conversions:
            value = values[index]
            if value is not None:
                published[key] = convert(value)
        return published

    return row


CARD_COLUMNS: tuple[str, ...] = tuple(c.name for c in CARDS.readable_columns)
DECK_COLUMNS: tuple[str, ...] = tuple(c.name for c in DECKS.readable_columns)
REVIEW_EVENT_COLUMNS: tuple[str, ...] = tuple(c.name for c in REVIEW_EVENTS.readable_columns)
WORKSPACE_COLUMNS: tuple[str, ...] = tuple(c.name for c in WORKSPACE.readable_columns)

card_row: Callable[[Card], dict[str, Any]] = _row_function(CARDS)
deck_row: Callable[[Deck], dict[str, Any]] = _row_function(DECKS)
review_event_row: Callable[[ReviewEvent], dict[str, Any]] = _row_function(REVIEW_EVENTS)
workspace_row: Callable[[Workspace], dict[str, Any]] = _row_function(WORKSPACE)
