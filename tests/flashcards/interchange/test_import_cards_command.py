from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from flashcards.models import Card
from tests.fixtures.anki_packages import genanki_package


def test_import_cards_imports_a_package_and_previews_first(workspace, tmp_path, capsys):
    package = genanki_package(tmp_path)
    call_command("import_cards", str(package.path), "--workspace", str(workspace.pk), "--dry-run")
    assert "Dry run, nothing written" in capsys.readouterr().out
    assert Card.objects.count() == 0
    call_command("import_cards", str(package.path), "--workspace", str(workspace.pk))
    assert "cards 5 created" in capsys.readouterr().out
    assert Card.objects.filter(workspace=workspace).count() == 5


def test_import_cards_names_the_bad_line(workspace, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("front_text,back_text\nok,1\n ,2\n")
    with pytest.raises(CommandError) as caught:
        call_command("import_cards", str(path), "--workspace", str(workspace.pk))
    assert "bad.csv: 1 row(s) break a rule" in str(caught.value)
    assert "line 3: " in str(caught.value)
    assert Card.objects.count() == 0


def test_import_cards_needs_a_real_workspace(db, tmp_path):
    with pytest.raises(CommandError, match="No workspace"):
        call_command("import_cards", str(tmp_path / "x.csv"), "--workspace", "nope")
