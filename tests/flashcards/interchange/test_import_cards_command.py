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


def test_import_cards_runs_without_a_secret_key(tmp_path):
    """Issue #21: the command signs nothing, so it must not demand SECRET_KEY."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    path = tmp_path / "cards.csv"
    path.write_text("front_text,back_text\na,b\n")
    env = {
        "PATH": os.environ["PATH"],
        "DATABASE_URL": f"sqlite:///{tmp_path / 'keyless.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "0",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "import_cards", str(path), "--workspace", "nope"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = result.stdout + result.stderr
    assert "SECRET_KEY" not in output, output
    assert "No workspace" in output or "no such table" in output, output
