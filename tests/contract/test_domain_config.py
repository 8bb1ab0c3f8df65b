"""domain.md §8: configuration from environment variables, read by a fresh interpreter per
environment (settings are read once per process), and every variable listed in the README."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from django.conf import settings

PROBE = """
import json
from config import settings as s
print(json.dumps({
    "database": {"ENGINE": s.DATABASES["default"]["ENGINE"], "NAME": str(s.DATABASES["default"]["NAME"])},
    "debug": s.DEBUG,
    "secret_key": s.SECRET_KEY,
    "allowed_hosts": s.ALLOWED_HOSTS,
    "rate_limit": s.AGENT_RATE_LIMIT,
    "dsl": isinstance(s.FLASHCARDS_DSL, dict),
}))
"""
DOCUMENTED = [
    "DATABASE_URL",
    "SECRET_KEY",
    "DEBUG",
    "ALLOWED_HOSTS",
    "AGENT_RATE_LIMIT",
    "FLASHCARDS_DSL",
]


def settings_under(**env: str) -> dict[str, Any]:
    clean = {
        key: value
        for key, value in os.environ.items()
        if key
        not in {
            "DATABASE_URL",
            "SECRET_KEY",
            "DEBUG",
            "ALLOWED_HOSTS",
            "AGENT_RATE_LIMIT",
            "DJANGO_ALLOW_INSECURE_KEY",
        }
    }
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=settings.BASE_DIR,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_defaults():
    probed = settings_under(SECRET_KEY="s3cret")
    assert probed["database"] == {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(settings.BASE_DIR / "db.sqlite3"),
    }
    assert probed["debug"] is False
    assert probed["secret_key"] == "s3cret"
    assert probed["rate_limit"] == 120
    assert probed["dsl"] is True


def test_every_variable_is_read():
    probed = settings_under(
        SECRET_KEY="another",
        DATABASE_URL="postgres://someone@db.example:5432/cards",
        DEBUG="1",
        ALLOWED_HOSTS="cards.example, api.example",
        AGENT_RATE_LIMIT="0",
    )
    assert probed["database"] == {"ENGINE": "django.db.backends.postgresql", "NAME": "cards"}
    assert probed["debug"] is True
    assert probed["allowed_hosts"] == ["cards.example", "api.example"]
    assert probed["rate_limit"] == 0


def test_without_a_secret_key_production_settings_refuse_to_start():
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=settings.BASE_DIR,
        env={
            k: v
            for k, v in os.environ.items()
            if k not in {"SECRET_KEY", "DEBUG", "DJANGO_ALLOW_INSECURE_KEY"}
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0 and "SECRET_KEY" in result.stderr


@pytest.mark.parametrize("name", DOCUMENTED)
def test_the_readme_lists_the_variable(name):
    readme = (settings.BASE_DIR / "README.md").read_text(encoding="utf-8")
    assert f"`{name}`" in readme


def test_every_variable_the_code_reads_is_in_the_readme():
    import re

    pattern = re.compile(
        r"""(?:os\.environ\.get|os\.environ\.setdefault|os\.getenv|env_bool|env_list)\(\s*"([A-Z0-9_]+)"|os\.environ\["([A-Z0-9_]+)"\]"""
    )
    readme = (settings.BASE_DIR / "README.md").read_text(encoding="utf-8")
    sources = [settings.BASE_DIR / "manage.py"]
    for package in ("config", "flashcards", "dsl"):
        sources += sorted((settings.BASE_DIR / package).rglob("*.py"))
    read = {
        name
        for path in sources
        if path.name != "test_settings.py"
        for match in pattern.finditer(path.read_text(encoding="utf-8"))
        for name in match.groups()
        if name and name != "DJANGO_SETTINGS_MODULE"
    }
    assert {"DATABASE_URL", "SECRET_KEY", "AGENT_RATE_LIMIT"} <= read
    assert sorted(name for name in read if name not in readme) == []
