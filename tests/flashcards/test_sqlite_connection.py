"""Every SQLite connection the app opens is configured by config/settings.py: WAL, NORMAL sync and
a memory-mapped read path (SQLITE_MMAP_SIZE), checked on a real database file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.db.backends.sqlite3.base import DatabaseWrapper

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's pragmas")


def pragmas(path: Path) -> dict[str, object]:
    wrapper = DatabaseWrapper({**connection.settings_dict, "NAME": str(path)}, alias="pragmas")
    try:
        with wrapper.cursor() as cursor:
            values = {}
            for name in ("journal_mode", "synchronous", "mmap_size"):
                cursor.execute(f"PRAGMA {name}")
                values[name] = cursor.fetchone()[0]
            return values
    finally:
        wrapper.close()


@pytest.mark.django_db
def test_a_new_connection_maps_the_file_and_uses_wal(tmp_path):
    values = pragmas(tmp_path / "app.sqlite3")
    assert values == {
        "journal_mode": "wal",
        "synchronous": 1,  # NORMAL
        "mmap_size": settings.SQLITE_MMAP_SIZE,
    }
    if "SQLITE_MMAP_SIZE" not in os.environ:
        assert settings.SQLITE_MMAP_SIZE == 2**31 - 2**16  # the default: SQLite's own cap


def test_sqlite_mmap_size_zero_turns_the_map_off(tmp_path):
    script = (
        "import django, json; django.setup(); "
        "from django.db import connection; "
        "cursor = connection.cursor(); cursor.execute('PRAGMA mmap_size'); "
        "print(json.dumps(cursor.fetchone()[0]))"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'off.sqlite3'}",
        "SQLITE_MMAP_SIZE": "0",
        "DJANGO_ALLOW_INSECURE_KEY": "1",
    }
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == "0"
