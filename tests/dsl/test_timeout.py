"""The per-request statement time limit (dsl.md §8): QUERY_TIMEOUT, nothing written, and the
connection keeps working."""

from __future__ import annotations

import pytest
from django.db import OperationalError, connection, transaction
from django.test import override_settings

from dsl.runtime.time_limit import is_timeout, statement_deadline
from flashcards.models import Card
from tests.factories import make_cards

pytestmark = pytest.mark.django_db

# Counts to ten million: far more work than any limit below allows, on either database.
RUNAWAY = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000000) "
    "SELECT COUNT(*) FROM n"
)


def test_the_database_stops_a_runaway_statement_and_stays_usable(workspace):
    make_cards(workspace, 1)
    with transaction.atomic(), statement_deadline(0.05) as deadline:
        deadline.arm()
        with pytest.raises(OperationalError) as caught, connection.cursor() as cursor:
            cursor.execute(RUNAWAY)
        transaction.set_rollback(True)
    assert is_timeout(caught.value)
    assert Card.objects.filter(workspace=workspace).count() == 1


@override_settings(FLASHCARDS_DSL={"STATEMENT_TIMEOUT_SECONDS": 0.000001})
def test_tiny_limit_gives_query_timeout(fails, workspace):
    make_cards(workspace, 3)
    error = fails("SELECT tag, COUNT(*) FROM cards WHERE MATCH('front') GROUP BY tag")
    assert error["code"] == "QUERY_TIMEOUT"
    assert "hint" in error["details"]


def test_a_timed_out_batch_writes_nothing_and_the_next_request_works(fails, ok, workspace):
    make_cards(workspace, 100, back_text="x" * 200)
    heavy = "; ".join(["SELECT * FROM cards WHERE MATCH('zz') OR reps >= 0"] * 48)
    batch = f"INSERT INTO cards (front_text, back_text) VALUES ('late', 'a'); {heavy}"
    with override_settings(FLASHCARDS_DSL={"STATEMENT_TIMEOUT_SECONDS": 0.02}):
        error = fails(batch)
    assert error["code"] == "QUERY_TIMEOUT"
    index = error["details"]["statementIndex"]
    assert error["message"].startswith(f"Statement {index} failed: ")
    assert not Card.objects.filter(front_text="late").exists()
    assert ok("SELECT COUNT(*) AS n FROM cards")["rows"] == [{"n": 100}]


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's busy timeout")
def test_the_wait_for_a_sqlite_lock_is_cut_to_the_statement_limit_and_restored():
    from django.conf import settings

    def busy_timeout() -> int:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA busy_timeout")
            return cursor.fetchone()[0]

    configured = int(settings.SQLITE_BUSY_TIMEOUT_SECONDS * 1000)
    assert busy_timeout() == configured
    with statement_deadline(0.25):
        assert busy_timeout() == 250
    assert busy_timeout() == configured


def test_the_sqlite_busy_timeout_is_checked_against_the_statement_limit(settings):
    from dsl.checks import check_sqlite_busy_timeout

    with override_settings(FLASHCARDS_DSL={"STATEMENT_TIMEOUT_SECONDS": 5}):
        assert check_sqlite_busy_timeout() == []
    if connection.vendor == "sqlite":
        with override_settings(FLASHCARDS_DSL={"STATEMENT_TIMEOUT_SECONDS": 1}):
            assert [m.id for m in check_sqlite_busy_timeout()] == ["dsl.W001"]
