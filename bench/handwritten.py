"""The hand-written equivalents of the benchmark's dialect statements: Django ORM code as a
developer would write it in a view (returning the same row dicts the dialect returns, so both sides
pay for formatting), and raw SQL through the database driver (psycopg / sqlite3) as the floor.

Writes on the ORM side call the same service functions the dialect calls (that *is* the
hand-written code: invariants, tags, sync stamps and the change log live there). The raw-SQL
writes do the same work by hand: workspace lock, row writes, tag rows, change log, counter."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from django.db.models import Count, Exists, F, OuterRef, Q

from flashcards import services
from flashcards.models import SERVER_REPLICA, Card, CardTag, ReviewEvent, Workspace
from flashcards.services import format_timestamp

Row = dict[str, Any]

CARD_COLUMNS = (
    ("card_id", "id"),
    ("front_text", "front_text"),
    ("back_text", "back_text"),
    ("card_type", "card_type"),
    ("tags", "tags"),
    ("effort_level", "effort_level"),
    ("metadata", "metadata"),
    ("due_at", "due_at"),
    ("created_at", "created_at"),
    ("updated_at", "updated_at"),
    ("reps", "reps"),
    ("lapses", "lapses"),
    ("fsrs_card_state", "fsrs_card_state"),
    ("fsrs_step_index", "fsrs_step_index"),
    ("fsrs_scheduled_days", "fsrs_scheduled_days"),
    ("fsrs_stability", "fsrs_stability"),
    ("fsrs_difficulty", "fsrs_difficulty"),
    ("fsrs_last_reviewed_at", "fsrs_last_reviewed_at"),
)
CARD_FIELDS = tuple(field for _, field in CARD_COLUMNS)
PAGE = 20


def _value(value: Any) -> Any:
    """The dialect's published value formats (dsl.md §2.4)."""
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, datetime):
        return format_timestamp(value)
    return value


def _rows(keys: Sequence[str], tuples: Any) -> list[Row]:
    return [dict(zip(keys, map(_value, values), strict=True)) for values in tuples]


def _page(rows: list[Row]) -> tuple[list[Row], bool]:
    return rows[:PAGE], len(rows) > PAGE


def live_cards(ws: Workspace):
    return Card.objects.filter(workspace=ws, deleted_at__isnull=True)


def with_tags(queryset, keys: Sequence[str]):
    return queryset.filter(
        Exists(CardTag.objects.filter(card=OuterRef("pk"), tag__key__in=list(keys)))
    )


# ORM reads -------------------------------------------------------------------------------------


def paged_cards_queryset(ws: Workspace, tag: str, efforts: Sequence[str]):
    """Shared with the DRF comparison endpoint of the throughput benchmark."""
    queryset = with_tags(live_cards(ws).filter(effort_level__in=list(efforts)), [tag.lower()])
    return queryset.order_by("-updated_at", "id")


def orm_paged(ws: Workspace) -> tuple[list[Row], bool]:
    queryset = paged_cards_queryset(ws, "english", ["fast", "medium"])
    tuples = queryset.values_list(*CARD_FIELDS)[: PAGE + 1]
    return _page(_rows([key for key, _ in CARD_COLUMNS], tuples))


def orm_match(ws: Workspace, word: str = "photosynthesis") -> tuple[list[Row], bool]:
    """MATCH as a Django developer writes it: icontains on both texts or a tag EXISTS."""
    matches = (
        Q(front_text__icontains=word)
        | Q(back_text__icontains=word)
        | Q(Exists(CardTag.objects.filter(card=OuterRef("pk"), tag__key__contains=word)))
    )
    tuples = (
        live_cards(ws)
        .filter(matches)
        .order_by("-created_at", "id")
        .values_list("id", "front_text", "back_text")[: PAGE + 1]
    )
    return _page(_rows(("card_id", "front_text", "back_text"), tuples))


def orm_due(ws: Workspace, now: datetime) -> tuple[list[Row], bool]:
    # Nulls first, as the dialect orders (and indexes) a nullable column: a plain
    # order_by("due_at") is NULLS LAST on PostgreSQL and cannot walk that index.
    tuples = (
        live_cards(ws)
        .filter(due_at__lte=now)
        .order_by(F("due_at").asc(nulls_first=True), "id")
        .values_list("id", "front_text", "due_at")[: PAGE + 1]
    )
    return _page(_rows(("card_id", "front_text", "due_at"), tuples))


def orm_tag_counts(ws: Workspace) -> tuple[list[Row], bool]:
    tuples = (
        CardTag.objects.filter(workspace=ws)
        .values("tag__key", "tag__name")
        .annotate(card_count=Count("*"))
        .order_by("-card_count", "tag__key")
        .values_list("tag__name", "card_count")[: PAGE + 1]
    )
    return _page(_rows(("tag", "card_count"), tuples))


def orm_rating_counts(ws: Workspace) -> tuple[list[Row], bool]:
    tuples = (
        ReviewEvent.objects.filter(workspace=ws)
        .values("rating")
        .annotate(reviews=Count("*"))
        .order_by("-reviews", "rating")
        .values_list("rating", "reviews")[:11]
    )
    rows = _rows(("rating", "reviews"), tuples)
    return rows[:10], len(rows) > 10


def orm_count(ws: Workspace) -> tuple[list[Row], bool]:
    return [{"count": live_cards(ws).count()}], False


# ORM writes (the service functions) ------------------------------------------------------------


def orm_update(ws: Workspace, ids: Sequence[uuid.UUID], text: str) -> list[Row]:
    cards = services.update_cards(ws, ids, {"back_text": text})
    return [{"card_id": str(card.pk)} for card in cards]


def orm_insert(ws: Workspace, rows: Sequence[dict[str, Any]]) -> list[Row]:
    cards = services.create_cards(ws, rows)
    return [{"card_id": str(card.pk)} for card in cards]


def orm_delete(ws: Workspace, ids: Sequence[uuid.UUID]) -> list[Row]:
    cards = services.delete_cards(ws, ids)
    return [{"card_id": str(card.pk)} for card in cards]


# Raw SQL ---------------------------------------------------------------------------------------


class RawDb:
    """A driver connection of its own (psycopg or sqlite3), outside Django, in autocommit mode;
    ``transaction()`` opens an explicit one. SQL is written with ``%s`` placeholders."""

    def __init__(self, vendor: str, settings_dict: dict[str, Any]) -> None:
        self.vendor = vendor
        if vendor == "postgresql":
            import psycopg

            self.conn: Any = psycopg.connect(
                host=settings_dict["HOST"],
                port=settings_dict["PORT"] or 5432,
                user=settings_dict["USER"],
                dbname=settings_dict["NAME"],
                autocommit=True,
            )
        else:
            self.conn = sqlite3.connect(settings_dict["NAME"], isolation_level=None)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA busy_timeout=20000")

    def close(self) -> None:
        self.conn.close()

    def sql(self, text: str) -> str:
        return text if self.vendor == "postgresql" else text.replace("%s", "?")

    def fetch(self, text: str, params: Sequence[Any] = ()) -> list[tuple]:
        cursor = self.conn.cursor()
        cursor.execute(self.sql(text), list(params))
        rows = cursor.fetchall()
        cursor.close()
        return rows

    def execute(self, text: str, params: Sequence[Any] = ()) -> None:
        cursor = self.conn.cursor()
        cursor.execute(self.sql(text), list(params))
        cursor.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.execute("BEGIN" if self.vendor == "postgresql" else "BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.execute("ROLLBACK")
            raise
        self.execute("COMMIT")

    # Values in the storage format of each database (Django's own conventions).
    def uuid(self, value: uuid.UUID) -> Any:
        return value if self.vendor == "postgresql" else value.hex

    def dt(self, value: datetime) -> Any:
        if self.vendor == "postgresql":
            return value
        return value.astimezone(UTC).replace(tzinfo=None).isoformat(" ")

    def json(self, value: Any) -> Any:
        if self.vendor == "postgresql":
            from psycopg.types.json import Jsonb

            return Jsonb(value)
        return json.dumps(value)

    def in_list(self, count: int) -> str:
        return ", ".join(["%s"] * count)


def _raw_rows(keys: Sequence[str], tuples: list[tuple]) -> list[Row]:
    return [dict(zip(keys, values, strict=True)) for values in tuples]


_CARD_SELECT = ", ".join(f"c.{field}" for field in CARD_FIELDS)


def raw_paged(db: RawDb, ws: Workspace) -> tuple[list[Row], bool]:
    rows = db.fetch(
        f"SELECT {_CARD_SELECT} FROM flashcards_card c "
        "WHERE c.workspace_id = %s AND c.deleted_at IS NULL AND c.effort_level IN (%s, %s) "
        "AND EXISTS (SELECT 1 FROM flashcards_cardtag ct "
        "JOIN flashcards_tag t ON t.id = ct.tag_id WHERE ct.card_id = c.id AND t.key = %s) "
        "ORDER BY c.updated_at DESC, c.id LIMIT 21",
        [db.uuid(ws.pk), "fast", "medium", "english"],
    )
    return _page(_raw_rows([key for key, _ in CARD_COLUMNS], rows))


def raw_match(db: RawDb, ws: Workspace, word: str = "photosynthesis") -> tuple[list[Row], bool]:
    """The best hand-written MATCH: the workspace's tags containing the word found once, and each
    scanned card's own tag rows checked against them — on PostgreSQL per row (OFFSET 0) over an
    id array, as the dialect compiles it (dsl.runtime.backends.PerRowExists): the plain correlated EXISTS
    lets PostgreSQL hash every card of every workspace with such a tag."""
    pattern = f"%{word}%"
    if db.vendor == "postgresql":
        like, tag_ids, fence = "ILIKE", "ct.tag_id = ANY(ARRAY(", "))"
        per_row = " OFFSET 0"
    else:
        like, tag_ids, fence, per_row = "LIKE", "ct.tag_id IN (", ")", ""
    tags = "SELECT t.id FROM flashcards_tag t WHERE t.workspace_id = %s AND t.key LIKE %s"
    rows = db.fetch(
        "SELECT c.id, c.front_text, c.back_text FROM flashcards_card c "
        "WHERE c.workspace_id = %s AND c.deleted_at IS NULL "
        f"AND (c.front_text {like} %s OR c.back_text {like} %s OR (EXISTS ({tags}) AND EXISTS ("
        f"SELECT 1 FROM flashcards_cardtag ct WHERE ct.card_id = c.id AND {tag_ids}{tags}{fence}"
        f"{per_row}))) "
        "ORDER BY c.created_at DESC, c.id LIMIT 21",
        [db.uuid(ws.pk), pattern, pattern, db.uuid(ws.pk), pattern, db.uuid(ws.pk), pattern],
    )
    return _page(_raw_rows(("card_id", "front_text", "back_text"), rows))


def raw_due(db: RawDb, ws: Workspace, now: datetime) -> tuple[list[Row], bool]:
    rows = db.fetch(
        "SELECT c.id, c.front_text, c.due_at FROM flashcards_card c "
        "WHERE c.workspace_id = %s AND c.deleted_at IS NULL AND c.due_at <= %s "
        "ORDER BY c.due_at ASC NULLS FIRST, c.id LIMIT 21",
        [db.uuid(ws.pk), db.dt(now)],
    )
    return _page(_raw_rows(("card_id", "front_text", "due_at"), rows))


def raw_tag_counts(db: RawDb, ws: Workspace) -> tuple[list[Row], bool]:
    rows = db.fetch(
        "SELECT t.name, COUNT(*) AS n FROM flashcards_cardtag ct "
        "JOIN flashcards_tag t ON t.id = ct.tag_id "
        "JOIN flashcards_card c ON c.id = ct.card_id "
        "WHERE ct.workspace_id = %s AND c.deleted_at IS NULL "
        "GROUP BY t.key, t.name ORDER BY n DESC, t.key LIMIT 21",
        [db.uuid(ws.pk)],
    )
    return _page(_raw_rows(("tag", "card_count"), rows))


def raw_rating_counts(db: RawDb, ws: Workspace) -> tuple[list[Row], bool]:
    rows = db.fetch(
        "SELECT rating, COUNT(*) AS n FROM flashcards_reviewevent WHERE workspace_id = %s "
        "GROUP BY rating ORDER BY n DESC, rating LIMIT 11",
        [db.uuid(ws.pk)],
    )
    result = _raw_rows(("rating", "reviews"), rows)
    return result[:10], len(result) > 10


def raw_count(db: RawDb, ws: Workspace) -> tuple[list[Row], bool]:
    rows = db.fetch(
        "SELECT COUNT(*) FROM flashcards_card WHERE workspace_id = %s AND deleted_at IS NULL",
        [db.uuid(ws.pk)],
    )
    return [{"count": rows[0][0]}], False


# Raw SQL writes --------------------------------------------------------------------------------


def _lock(db: RawDb, ws: Workspace) -> int:
    lock = " FOR UPDATE" if db.vendor == "postgresql" else ""
    return db.fetch(
        f"SELECT last_change_id FROM flashcards_workspace WHERE id = %s{lock}", [db.uuid(ws.pk)]
    )[0][0]


def _record_changes(
    db: RawDb, ws: Workspace, last: int, ids: Sequence[Any], action: str, at: datetime, op: str
) -> None:
    if not ids:
        return
    values = []
    params: list[Any] = []
    for number, entity_id in enumerate(ids, start=last + 1):
        values.append("(%s, %s, %s, %s, %s, %s, %s, %s)")
        params += [db.uuid(ws.pk), number, "card", str(entity_id), action, SERVER_REPLICA, op]
        params.append(db.dt(at))
    db.execute(
        "INSERT INTO flashcards_changelog (workspace_id, change_id, entity_type, entity_id, "
        "action, replica_id, operation_id, recorded_at) VALUES " + ", ".join(values),
        params,
    )
    db.execute(
        "UPDATE flashcards_workspace SET last_change_id = %s WHERE id = %s",
        [last + len(ids), db.uuid(ws.pk)],
    )


def _returned_ids(db: RawDb, rows: list[tuple]) -> list[uuid.UUID]:
    return [row[0] if isinstance(row[0], uuid.UUID) else uuid.UUID(row[0]) for row in rows]


def raw_update(db: RawDb, ws: Workspace, ids: Sequence[uuid.UUID], text: str) -> list[Row]:
    at, op = services.now_ms(), str(uuid.uuid4())
    with db.transaction():
        last = _lock(db, ws)
        rows = db.fetch(
            "UPDATE flashcards_card SET back_text = %s, updated_at = %s, client_updated_at = %s, "
            "last_modified_by_replica_id = %s, last_operation_id = %s "
            f"WHERE workspace_id = %s AND deleted_at IS NULL AND id IN ({db.in_list(len(ids))}) "
            "RETURNING id",
            [text, db.dt(at), db.dt(at), SERVER_REPLICA, op, db.uuid(ws.pk)]
            + [db.uuid(i) for i in ids],
        )
        changed = _returned_ids(db, rows)
        _record_changes(db, ws, last, changed, "upsert", at, op)
    return [{"card_id": str(i)} for i in changed]


def raw_delete(db: RawDb, ws: Workspace, ids: Sequence[uuid.UUID]) -> list[Row]:
    at, op = services.now_ms(), str(uuid.uuid4())
    with db.transaction():
        last = _lock(db, ws)
        rows = db.fetch(
            "UPDATE flashcards_card SET deleted_at = %s, updated_at = %s, client_updated_at = %s, "
            "last_modified_by_replica_id = %s, last_operation_id = %s "
            f"WHERE workspace_id = %s AND deleted_at IS NULL AND id IN ({db.in_list(len(ids))}) "
            "RETURNING id",
            [db.dt(at), db.dt(at), db.dt(at), SERVER_REPLICA, op, db.uuid(ws.pk)]
            + [db.uuid(i) for i in ids],
        )
        changed = _returned_ids(db, rows)
        _record_changes(db, ws, last, changed, "delete", at, op)
    return []


_INSERT_COLUMNS = (
    "id, workspace_id, front_text, back_text, card_type, tags, effort_level, metadata, due_at, "
    "reps, lapses, fsrs_card_state, fsrs_step_index, fsrs_stability, fsrs_difficulty, "
    "fsrs_last_reviewed_at, fsrs_scheduled_days, created_at, updated_at, deleted_at, "
    "client_updated_at, last_modified_by_replica_id, last_operation_id"
)


def raw_insert(db: RawDb, ws: Workspace, rows: Sequence[dict[str, Any]]) -> list[Row]:
    """Tags are assumed to exist already in the workspace (they do in the seeded data)."""
    at, op = services.now_ms(), str(uuid.uuid4())
    ids = [uuid.uuid4() for _ in rows]
    with db.transaction():
        last = _lock(db, ws)
        keys = sorted({tag.lower() for row in rows for tag in row.get("tags", ())})
        tag_ids = dict(
            db.fetch(
                "SELECT key, id FROM flashcards_tag WHERE workspace_id = %s "
                f"AND key IN ({db.in_list(len(keys))})",
                [db.uuid(ws.pk), *keys],
            )
        )
        values, params = [], []
        metadata = {"version": 1, "source": {"kind": "server", "replica": SERVER_REPLICA}}
        for card_id, row in zip(ids, rows, strict=True):
            values.append("(" + ", ".join(["%s"] * 23) + ")")
            params += [
                db.uuid(card_id),
                db.uuid(ws.pk),
                row["front_text"].strip(),
                row["back_text"].strip(),
                "basic",
                db.json(list(row.get("tags", ()))),
                row.get("effort_level", "fast"),
                db.json(metadata),
                None,
                0,
                0,
                "new",
                None,
                None,
                None,
                None,
                None,
                db.dt(at),
                db.dt(at),
                None,
                db.dt(at),
                SERVER_REPLICA,
                op,
            ]
        db.execute(
            f"INSERT INTO flashcards_card ({_INSERT_COLUMNS}) VALUES " + ", ".join(values), params
        )
        tag_values, tag_params = [], []
        for card_id, row in zip(ids, rows, strict=True):
            for position, tag in enumerate(row.get("tags", ())):
                tag_values.append("(%s, %s, %s, %s)")
                tag_params += [db.uuid(ws.pk), db.uuid(card_id), tag_ids[tag.lower()], position]
        if tag_values:
            db.execute(
                "INSERT INTO flashcards_cardtag (workspace_id, card_id, tag_id, position) VALUES "
                + ", ".join(tag_values),
                tag_params,
            )
        _record_changes(db, ws, last, ids, "upsert", at, op)
    return [{"card_id": str(i)} for i in ids]
