"""The fault suite (``make faults``, docs/reliability.md): real servers, real PostgreSQL behind a
proxy the test controls, real Redis servers the test starts and pauses. Every test here carries the
``faults`` marker; the ones that need PostgreSQL skip on SQLite, except under CI=true with a
DATABASE_URL, where a skip would hide a failure."""

from __future__ import annotations

import os

import pytest
from django.db import connection


def pytest_collection_modifyitems(items):
    for item in items:
        if "reliability/faults/" in str(item.fspath):
            item.add_marker(pytest.mark.faults)


@pytest.fixture
def needs_postgres():
    if connection.vendor != "postgresql":
        if os.environ.get("CI") == "true" and os.environ.get("DATABASE_URL"):
            pytest.fail("CI=true with DATABASE_URL but the tests run on " + connection.vendor)
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://…)")
