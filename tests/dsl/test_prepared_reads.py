"""dsl.runtime.prepared_reads on PostgreSQL: a lone read repeated on a connection runs as a prepared
statement after PREPARE_AFTER plain runs, answers exactly what the plain path answers (the clock
still moving, the workspace still its own), keeps the time limit in the same round trip, stays
within MAX_PER_CONNECTION statements, and recovers from statements that vanished behind its back
or from an error on the prepared path."""

from __future__ import annotations

from datetime import timedelta

import psycopg
import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from dsl.runtime import prepared_reads
from flashcards.models import Card
from flashcards.services import now_ms
from tests.factories import make_cards
from tests.reliability.helpers import envelope, post_sql, refused

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's PREPARE"),
]

DUE = "SELECT card_id, front_text FROM cards WHERE due_at <= NOW() ORDER BY due_at LIMIT 5"


def _read(api, sql: str) -> tuple[list[dict], list[str]]:
    with CaptureQueriesContext(connection) as captured:
        body = envelope(post_sql(api, sql))
    sent = [q["sql"] for q in captured.captured_queries if "statement_timeout" in q["sql"]]
    return body["data"]["rows"], sent


def _make_due(card: Card, when) -> None:
    Card.objects.filter(pk=card.pk).update(
        due_at=when,
        fsrs_card_state="review",
        fsrs_stability=1.0,
        fsrs_difficulty=5.0,
        fsrs_last_reviewed_at=when - timedelta(days=1),
        fsrs_scheduled_days=1,
    )


def _server_statements() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM pg_prepared_statements")
        return {row[0] for row in cursor.fetchall()}


def test_a_repeated_read_is_prepared_and_answers_what_the_plain_path_answers(api, workspace):
    cards = make_cards(workspace, 3)
    _make_due(cards[0], now_ms() - timedelta(days=1))
    answers = [_read(api, DUE) for _ in range(prepared_reads.PREPARE_AFTER + 2)]
    plain = answers[: prepared_reads.PREPARE_AFTER]
    prepared = answers[prepared_reads.PREPARE_AFTER :]
    assert all("EXECUTE" not in sent[0] and "PREPARE" not in sent[0] for _, sent in plain)
    first, second = (sent[0] for _, sent in prepared)
    assert "PREPARE dsl_read_" in first and "EXECUTE dsl_read_" in first
    assert "PREPARE" not in second and second.startswith("SET LOCAL statement_timeout = ")
    assert {rows[0]["card_id"] for rows, _ in answers} == {str(cards[0].pk)}
    assert set(prepared_reads.prepared_names(connection)) <= _server_statements()
    # The moment is a parameter: a card that became due since is in the next answer.
    _make_due(cards[1], now_ms() - timedelta(seconds=1))
    rows, sent = _read(api, DUE)
    assert sent[0].startswith("SET LOCAL") and "EXECUTE" in sent[0]
    assert [row["card_id"] for row in rows] == [str(cards[0].pk), str(cards[1].pk)]
    with connection.cursor() as cursor:  # the limit ended with the read's implicit transaction
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone()[0] == "0"


def test_each_workspace_has_its_own_statement_and_only_its_own_rows(
    api, workspace, other_user, other_workspace, client_for
):
    from flashcards import services

    _, plaintext = services.create_api_key(other_user, "other", workspace=other_workspace)
    other_api = client_for(plaintext)
    mine = make_cards(workspace, 2)
    theirs = make_cards(other_workspace, 2)
    sql = "SELECT card_id FROM cards ORDER BY card_id"
    for _ in range(prepared_reads.PREPARE_AFTER + 2):
        mine_rows, mine_sent = _read(api, sql)
        their_rows, their_sent = _read(other_api, sql)
    assert {r["card_id"] for r in mine_rows} == {str(c.pk) for c in mine}
    assert {r["card_id"] for r in their_rows} == {str(c.pk) for c in theirs}
    assert "EXECUTE" in mine_sent[0] and "EXECUTE" in their_sent[0]
    assert mine_sent[0].split("EXECUTE ")[1] != their_sent[0].split("EXECUTE ")[1]


def test_statements_gone_from_the_server_fall_back_and_are_prepared_again(api, workspace):
    make_cards(workspace, 2)
    sql = "SELECT card_id FROM cards"
    for _ in range(prepared_reads.PREPARE_AFTER + 1):
        _read(api, sql)
    assert prepared_reads.prepared_names(connection)
    with connection.cursor() as cursor:  # what a pooler's DISCARD ALL would do
        cursor.execute("DEALLOCATE ALL")
    rows, sent = _read(api, sql)
    assert len(rows) == 2
    assert "EXECUTE" in sent[0] and "EXECUTE" not in sent[-1]  # refused, then the plain text
    rows, sent = _read(api, sql)
    assert len(rows) == 2
    assert sent[0].startswith("DEALLOCATE ALL; PREPARE dsl_read_")
    assert set(prepared_reads.prepared_names(connection)) == _server_statements()


def test_a_column_type_changed_under_a_prepared_read_falls_back_and_prepares_again(api, workspace):
    """A migration that changes a returned column's type makes PostgreSQL refuse the prepared
    statement ("cached plan must not change result type"); the read still answers."""
    make_cards(workspace, 2)
    sql = "SELECT card_id, front_text FROM cards ORDER BY front_text"
    for _ in range(prepared_reads.PREPARE_AFTER + 1):
        _read(api, sql)
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE flashcards_card ALTER COLUMN front_text TYPE varchar(2000)")
    try:
        rows, sent = _read(api, sql)
        assert [r["front_text"] for r in rows] == sorted(r["front_text"] for r in rows)
        assert len(rows) == 2
        assert "EXECUTE" in sent[0] and "EXECUTE" not in sent[-1]
        rows, sent = _read(api, sql)
        assert len(rows) == 2 and sent[0].startswith("DEALLOCATE ALL; PREPARE dsl_read_")
    finally:
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE flashcards_card ALTER COLUMN front_text TYPE text")


def test_a_connection_keeps_at_most_max_per_connection_statements(api, workspace, monkeypatch):
    monkeypatch.setattr(prepared_reads, "MAX_PER_CONNECTION", 2)
    make_cards(workspace, 3)
    for limit in (1, 2, 3):
        for _ in range(prepared_reads.PREPARE_AFTER + 1):
            rows, _ = _read(api, f"SELECT card_id FROM cards LIMIT {limit}")
        assert len(rows) == limit
    names = prepared_reads.prepared_names(connection)
    assert len(names) == 2
    assert set(names) == {n for n in _server_statements() if n.startswith("dsl_read_")}


def test_a_prepared_read_waiting_on_a_lock_times_out_and_the_next_read_recovers(api, workspace):
    make_cards(workspace, 2)
    sql = "SELECT card_id FROM cards WHERE reps >= 0"
    for _ in range(prepared_reads.PREPARE_AFTER + 1):
        _read(api, sql)
    db = connection.settings_dict
    dsn = f"host={db['HOST']} port={db['PORT'] or 5432} user={db['USER']} dbname={db['NAME']}"
    with psycopg.connect(dsn, autocommit=True) as locker:
        locker.execute("BEGIN")
        locker.execute("LOCK TABLE flashcards_card IN ACCESS EXCLUSIVE MODE")
        with override_settings(FLASHCARDS_DSL={"STATEMENT_TIMEOUT_SECONDS": 0.5}):
            refused(post_sql(api, sql), 400, "QUERY_TIMEOUT")
        locker.execute("ROLLBACK")
    rows, sent = _read(api, sql)
    assert len(rows) == 2
    assert sent[0].startswith("DEALLOCATE ALL; ")  # an error makes the connection's set untrusted


@override_settings(DSL_PREPARED_READS=False)
def test_turned_off_nothing_is_prepared(api, workspace):
    make_cards(workspace, 1)
    for _ in range(prepared_reads.PREPARE_AFTER + 2):
        _, sent = _read(api, "SELECT card_id FROM cards")
        assert "EXECUTE" not in sent[0] and "PREPARE" not in sent[0]
