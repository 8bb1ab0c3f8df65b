"""The published schema lives once, in the domain package: its allowed values are the models' own,
dsl.schema shows the same objects, and nothing in flashcards reaches into dsl for it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import dsl.schema
from flashcards import models, schema
from flashcards.admin.site import CardAdmin, DeckAdmin
from flashcards.services.content import CARD_WRITABLE, DECK_WRITABLE

FLASHCARDS = Path(schema.__file__).resolve().parent


def _columns(resource: str) -> dict[str, schema.Column]:
    return {c.name: c for c in next(r for r in schema.RESOURCES if r.name == resource).columns}


def test_allowed_values_are_the_models_definitions():
    assert _columns("cards")["effort_level"].allowed_values is models.EFFORT_LEVELS
    assert _columns("decks")["effort_levels"].allowed_values is models.EFFORT_LEVELS
    assert _columns("cards")["fsrs_card_state"].allowed_values is models.FSRS_STATES
    assert _columns("review_events")["review_grade"].allowed_values is models.REVIEW_GRADES


@pytest.mark.parametrize("resource", schema.RESOURCES, ids=lambda r: r.name)
def test_a_writable_column_writes_the_model_field_of_its_name(resource):
    # The services' writable lists and the admin's content fields are column names used as
    # model field names.
    for column in resource.writable_columns:
        assert column.field == column.name, column


def test_the_writers_take_the_schemas_writable_columns():
    assert CARD_WRITABLE == ("front_text", "back_text", "card_type", "tags", "effort_level")
    assert DECK_WRITABLE == ("name", "effort_levels", "tags")
    assert CardAdmin.content_fields == CARD_WRITABLE and DeckAdmin.content_fields == DECK_WRITABLE


def test_the_dialects_view_is_the_same_schema():
    assert dsl.schema.RESOURCES is schema.RESOURCES
    assert dsl.schema.Column is schema.Column and dsl.schema.ColumnType is schema.ColumnType
    assert [dsl.schema.get_resource(r.name) for r in schema.RESOURCES] == list(schema.RESOURCES)


def _imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_flashcards_never_imports_dsl():
    offenders = [
        f"{path.relative_to(FLASHCARDS.parent)}: {name}"
        for path in sorted(FLASHCARDS.rglob("*.py"))
        for name in sorted(_imported_modules(path))
        if name == "dsl" or name.startswith("dsl.")
    ]
    assert offenders == []
