"""The start-up registry check and the generated reference."""

from __future__ import annotations

import dataclasses

import pytest
from django.core.checks import Tags, run_checks
from django.core.management import call_command

from dsl import checks
from dsl.management.commands import dialect_docs
from dsl.schema import RESOURCES


def test_every_registry_column_maps_to_the_models():
    assert checks.check_registry_columns() == []


def test_a_column_without_a_field_is_reported(monkeypatch):
    cards = next(r for r in RESOURCES if r.name == "cards")
    broken = dataclasses.replace(cards.columns[1], field="no_such_field")
    bad = dataclasses.replace(cards, columns=(cards.columns[0], broken))
    monkeypatch.setattr("dsl.schema.RESOURCES", (bad,))
    (error,) = checks.check_registry_columns()
    assert error.id == "dsl.E003" and "no_such_field" in error.msg


def test_the_check_runs_with_the_start_up_checks(monkeypatch):
    # Registered by DslConfig.ready, so `manage.py check` and every server start run it.
    cards = next(r for r in RESOURCES if r.name == "cards")
    broken = dataclasses.replace(cards.columns[1], field="no_such_field")
    monkeypatch.setattr("dsl.schema.RESOURCES", (dataclasses.replace(cards, columns=(broken,)),))
    assert "dsl.E003" in {message.id for message in run_checks(tags=[Tags.models])}


def test_docs_are_current():
    call_command("dialect_docs", "--check")


def test_render_replaces_only_the_generated_block():
    text = f"# Title\n\nhand written\n\n{dialect_docs.BEGIN}\nstale\n{dialect_docs.END}\n\nfooter\n"
    rendered = dialect_docs.render(text)
    assert rendered.startswith("# Title\n\nhand written\n\n")
    assert rendered.endswith("\n\nfooter\n") and "stale" not in rendered
    assert "| `card_id` | uuid |" in rendered and dialect_docs.render(rendered) == rendered


@pytest.mark.parametrize("name", [r.name for r in RESOURCES])
def test_every_resource_is_documented(name):
    assert f"### {name}\n" in dialect_docs.generated_section()
