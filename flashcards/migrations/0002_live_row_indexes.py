"""Partial indexes over live rows (``deleted_at IS NULL``) in the orders the dialect reads them.

Why (docs/benchmarks.md, "Indexes"): every read filters ``deleted_at IS NULL``, and PostgreSQL does
not treat ``IS NULL`` as an equality, so the existing ``(workspace, deleted_at, <order column>)``
indexes cannot deliver rows in order: a LIMIT 20 page sorted the whole workspace (a paged SELECT
by tag took 215 ms at 100k cards, the due cards 74 ms). With these, PostgreSQL walks the index
and stops after the page (0.3 ms and 0.07 ms).

The due index sorts nulls first because the dialect orders nullable columns ASC NULLS FIRST on
every database (SQLite sorts nulls first natively and has no NULLS clause in CREATE INDEX).

Database-only (no model state), so models.py and makemigrations stay as they are; moving them
into ``Card.Meta.indexes`` / ``Deck.Meta.indexes`` as ``models.Index(..., condition=Q(
deleted_at__isnull=True))`` later would replace this migration's raw SQL.
"""

from django.db import migrations

INDEXES = (
    ("card_live_updated", "flashcards_card", "workspace_id, updated_at DESC, id", None),
    ("card_live_created", "flashcards_card", "workspace_id, created_at DESC, id", None),
    (
        "card_live_due",
        "flashcards_card",
        "workspace_id, due_at ASC NULLS FIRST, id",
        "workspace_id, due_at ASC, id",
    ),
    ("deck_live_created", "flashcards_deck", "workspace_id, created_at DESC, id DESC", None),
)


def create_indexes(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor not in ("postgresql", "sqlite"):
        return
    for name, table, columns, sqlite_columns in INDEXES:
        if vendor == "sqlite" and sqlite_columns is not None:
            columns = sqlite_columns
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({columns}) WHERE deleted_at IS NULL"
        )


def drop_indexes(apps, schema_editor):
    if schema_editor.connection.vendor not in ("postgresql", "sqlite"):
        return
    for name, *_ in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("flashcards", "0001_initial")]

    operations = [migrations.RunPython(create_indexes, drop_indexes, elidable=False)]
