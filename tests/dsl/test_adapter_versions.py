"""The system check that refuses a Django or psycopg the adapter below Django's public API was not
tested with (issue #20 item 6), through ``manage.py check``."""

from __future__ import annotations

import io

import django
import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from dsl import checks


def test_the_pinned_versions_pass():
    assert checks.check_adapter_versions() == []
    call_command("check", stdout=io.StringIO())


def test_another_django_minor_is_refused(monkeypatch):
    monkeypatch.setattr(django, "VERSION", (5, 3, 0, "final", 0))
    errors = checks.check_adapter_versions()
    assert [e.id for e in errors] == ["dsl.E004"]
    assert "django 5.3 is installed" in errors[0].msg and "tested with django 5.2" in errors[0].msg
    with pytest.raises(SystemCheckError, match=r"dsl\.E004"):
        call_command("check", stdout=io.StringIO(), stderr=io.StringIO())


def test_another_psycopg_minor_is_refused(monkeypatch):
    psycopg = pytest.importorskip("psycopg")
    monkeypatch.setattr(psycopg, "__version__", "3.4.0")
    errors = checks.check_adapter_versions()
    assert [e.id for e in errors] == ["dsl.E004"]
    assert "psycopg 3.4.0 is installed" in errors[0].msg
