"""The statement time limit on PostgreSQL when the time goes to waiting, not computing: a write
stuck behind another session's row lock is cancelled by ``statement_timeout``, answers
QUERY_TIMEOUT, writes nothing, and the same database connection serves the next request."""

from __future__ import annotations

import time

import psycopg
import pytest
from django.db import connection
from django.test import override_settings

from flashcards.models import Card
from tests.factories import make_cards
from tests.reliability.helpers import envelope, post_sql, refused

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="statement_timeout is PostgreSQL's"
    ),
]


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def test_a_write_waiting_on_a_lock_times_out_and_the_connection_stays_usable(api, workspace):
    locked = make_cards(workspace, 1, back_text="before")[0]
    pid = _backend_pid()
    db = connection.settings_dict
    dsn = f"host={db['HOST']} port={db['PORT'] or 5432} user={db['USER']} dbname={db['NAME']}"
    batch = (
        "INSERT INTO cards (front_text, back_text) VALUES ('late', 'x'); "
        f"UPDATE cards SET back_text = 'after' WHERE card_id = '{locked.pk}'"
    )
    with psycopg.connect(dsn, autocommit=True) as locker:
        locker.execute("BEGIN")
        locker.execute("SELECT 1 FROM flashcards_card WHERE id = %s FOR UPDATE", [locked.pk])
        started = time.monotonic()
        with override_settings(FLASHCARDS_DSL={"STATEMENT_TIMEOUT_SECONDS": 0.5}):
            error = refused(post_sql(api, batch), 400, "QUERY_TIMEOUT")
        waited = time.monotonic() - started
        locker.execute("ROLLBACK")
    assert 0.4 < waited < 5, waited
    assert error["details"]["statementIndex"] == 2
    assert not Card.objects.filter(front_text="late").exists()
    locked.refresh_from_db()
    assert locked.back_text == "before"
    assert _backend_pid() == pid  # not reconnected: the cancelled session is still good
    assert envelope(post_sql(api, batch))["data"]["affectedCountTotal"] == 2
    assert _backend_pid() == pid


def test_a_lone_read_carries_its_time_limit_in_one_round_trip(api, workspace):
    """A request that is one SELECT runs without BEGIN / set_config / COMMIT: ``SET LOCAL
    statement_timeout`` travels with the SELECT (dsl.runtime.backends.fetch_rows)."""
    from django.test.utils import CaptureQueriesContext

    make_cards(workspace, 3)
    with CaptureQueriesContext(connection) as captured:
        assert envelope(post_sql(api, "SELECT card_id FROM cards"))["data"]["rowCount"] == 3
    reads = [q["sql"] for q in captured.captured_queries if "flashcards_card" in q["sql"]]
    assert len(reads) == 1, reads
    assert reads[0].startswith("SET LOCAL statement_timeout = ")
    assert not any("set_config" in q["sql"] for q in captured.captured_queries)
    with connection.cursor() as cursor:  # the limit ended with the SELECT's implicit transaction
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone()[0] == "0"


def test_a_lone_read_waiting_on_a_lock_times_out_and_the_connection_stays_usable(api, workspace):
    make_cards(workspace, 2)
    pid = _backend_pid()
    db = connection.settings_dict
    dsn = f"host={db['HOST']} port={db['PORT'] or 5432} user={db['USER']} dbname={db['NAME']}"
    with psycopg.connect(dsn, autocommit=True) as locker:
        locker.execute("BEGIN")
        locker.execute("LOCK TABLE flashcards_card IN ACCESS EXCLUSIVE MODE")
        started = time.monotonic()
        with override_settings(FLASHCARDS_DSL={"STATEMENT_TIMEOUT_SECONDS": 0.5}):
            refused(
                post_sql(api, "SELECT card_id FROM cards WHERE reps >= 0"), 400, "QUERY_TIMEOUT"
            )
        waited = time.monotonic() - started
        locker.execute("ROLLBACK")
    assert 0.4 < waited < 5, waited
    assert _backend_pid() == pid
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone()[0] == "0"
    assert (
        envelope(post_sql(api, "SELECT card_id FROM cards WHERE reps >= 0"))["data"]["rowCount"]
        == 2
    )
