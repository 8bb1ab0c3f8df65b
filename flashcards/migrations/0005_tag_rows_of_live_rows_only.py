"""Tag rows (CardTag, DeckTag) exist for live cards and decks only: the rows of cards and decks
deleted before this invariant are removed (their ``tags`` column keeps the list). Whole-workspace
tag counts are then answered from the tag-row index without joining the cards
(docs/decisions.md, "Tag rows of live rows only")."""

from django.db import migrations


def remove_rows_of_deleted(apps, schema_editor):
    CardTag = apps.get_model("flashcards", "CardTag")
    DeckTag = apps.get_model("flashcards", "DeckTag")
    CardTag.objects.filter(card__deleted_at__isnull=False).delete()
    DeckTag.objects.filter(deck__deleted_at__isnull=False).delete()


def restore_rows(apps, schema_editor):
    """Going back needs no rows: the old code filtered tag rows by their row's liveness."""


class Migration(migrations.Migration):
    dependencies = [("flashcards", "0004_aggregate_indexes")]

    operations = [migrations.RunPython(remove_rows_of_deleted, restore_rows)]
