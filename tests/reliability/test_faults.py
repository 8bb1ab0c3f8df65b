"""Database faults on PostgreSQL: the server is unreachable, or a connection is killed in the middle
of a write (pg_terminate_backend from another session, as a failover or an operator would).

The client gets 503 SERVICE_UNAVAILABLE with Retry-After and a statement of whether the outcome is
known, nothing partial is visible, and the next request succeeds without any restart. SQLite has
no server to lose (and Django keeps its in-memory test database on one connection), so these run
on PostgreSQL only."""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from django.db import DatabaseError, connection, connections, transaction

from flashcards import services
from flashcards.http.db_errors import RETRY_AFTER_SECONDS, is_database_unavailable, outcome_of
from flashcards.models import AppliedOperation, Card, ChangeLog
from tests.factories import make_cards
from tests.reliability.helpers import envelope, post_sql, refused

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs a PostgreSQL server"),
]


def _dsn() -> str:
    db = connection.settings_dict
    return f"host={db['HOST']} port={db['PORT'] or 5432} user={db['USER']} dbname={db['NAME']}"


@pytest.fixture
def session() -> Iterator[psycopg.Connection]:
    """A second database session, outside Django: it watches and kills backends."""
    with psycopg.connect(_dsn(), autocommit=True) as conn:
        yield conn


@pytest.fixture
def unreachable_database() -> Iterator[Callable[[bool], None]]:
    """``down(True)`` points Django's connection at a port nobody listens on (connection
    refused, as with a stopped server); ``down(False)`` points it back."""
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
    real_host, real_port = connection.settings_dict["HOST"], connection.settings_dict["PORT"]

    def down(is_down: bool) -> None:
        connection.close()
        connection.settings_dict["HOST"] = "127.0.0.1" if is_down else real_host
        connection.settings_dict["PORT"] = blocker.getsockname()[1] if is_down else real_port

    try:
        yield down
    finally:
        down(False)
        blocker.close()


def _unavailable(response: Any, outcome: str = "not_applied") -> dict[str, Any]:
    error = refused(response, 503, "SERVICE_UNAVAILABLE")
    assert response["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert error["details"]["retryable"] is True
    assert error["details"]["outcome"] == outcome
    return error


def test_database_down_is_503_with_retry_after_and_the_server_recovers(
    api, workspace, unreachable_database
):
    make_cards(workspace, 2)
    unreachable_database(True)
    _unavailable(post_sql(api, "SELECT COUNT(*) AS n FROM cards"))
    _unavailable(api.get("/v1/agent/me"))
    _unavailable(
        api.post("/v1/agent/reviews", {"card_id": str(uuid.uuid4()), "rating": 2}, format="json")
    )
    unreachable_database(False)
    body = envelope(post_sql(api, "SELECT COUNT(*) AS n FROM cards"))
    assert body["data"]["rows"] == [{"n": 2}]


def _blocked_backend(session: psycopg.Connection, timeout: float = 10.0) -> int:
    """The pid of the session waiting on a lock held by ``session``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = session.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        ).fetchone()
        if row:
            return row[0]
        time.sleep(0.02)
    raise AssertionError("the request never blocked on the lock")


Interrupt = Callable[[psycopg.Connection, psycopg.Connection, int], None]


def _kill(session: psycopg.Connection, locker: psycopg.Connection, pid: int) -> None:
    session.execute("SELECT pg_terminate_backend(%s)", [pid])


def _interrupt_mid_write(
    session: psycopg.Connection,
    locked: Card,
    request: Callable[[], Any],
    between: Callable[[], Any] = lambda: None,
    interrupt: Interrupt = _kill,
) -> tuple[Any, Any, Any]:
    """In a thread of its own: run ``request`` while another session (the locker) holds
    ``locked``'s row lock, and call ``interrupt(session, locker, pid)`` once the request's
    backend waits on that lock; then, on the same thread, ``between()`` and ``request`` again.
    Returns the three results."""
    results: list[Any] = []

    def client_thread() -> None:
        try:
            results.append(request())
            results.append(between())
            results.append(request())  # the same thread, after the interrupted attempt
        finally:
            connections.close_all()

    # The locker is a third session: statistics views are frozen inside a transaction, so the
    # session that watches pg_stat_activity must not be the one holding the lock.
    with psycopg.connect(_dsn(), autocommit=True) as locker:
        locker.execute("BEGIN")
        locker.execute("SELECT 1 FROM flashcards_card WHERE id = %s FOR UPDATE", [locked.pk])
        thread = threading.Thread(target=client_thread)
        thread.start()
        try:
            interrupt(session, locker, _blocked_backend(session))
        finally:
            time.sleep(0.1)
            locker.execute("ROLLBACK")
            thread.join(timeout=30)
    assert len(results) == 3, "the client thread did not finish"
    return results[0], results[1], results[2]


def _batch(locked: Card) -> str:
    return (
        "INSERT INTO cards (front_text, back_text) VALUES ('partial', 'x'); "
        f"UPDATE cards SET back_text = 'changed' WHERE card_id = '{locked.pk}'"
    )


def test_a_sync_push_killed_mid_batch_applies_nothing_and_says_so(api, workspace, session):
    locked = make_cards(workspace, 1, back_text="before")[0]
    changes = ChangeLog.objects.filter(workspace=workspace).count()
    new_card = str(uuid.uuid4())
    # Later than the server's own stamp on the locked card, so last-writer-wins applies it.
    at = services.format_timestamp(datetime.now(UTC) + timedelta(minutes=1))
    body = {
        "installation_id": "phone",
        "platform": "ios",
        "operations": [
            {
                "operation_id": f"op-{n}",
                "entity_type": "card",
                "entity_id": card_id,
                "action": "upsert",
                "client_updated_at": at,
                "payload": {"front_text": "pushed", "back_text": "pushed"},
            }
            for n, card_id in enumerate([new_card, str(locked.pk)])
        ],
    }
    url = f"/v1/workspaces/{workspace.pk}/sync/push"

    def visible_effects() -> tuple[bool, bool, int]:
        return (
            Card.objects.filter(pk=new_card).exists(),
            AppliedOperation.objects.filter(workspace=workspace).exists(),
            ChangeLog.objects.filter(workspace=workspace).count(),
        )

    first, effects, second = _interrupt_mid_write(
        session, locked, lambda: api.post(url, body, format="json"), visible_effects
    )
    _unavailable(first)
    assert effects == (False, False, changes)
    # The retry on the same thread gets a fresh connection and applies the whole push.
    assert [op["status"] for op in envelope(second)["data"]["operations"]] == ["applied"] * 2


def test_a_dialect_batch_killed_mid_write_is_503_leaves_nothing_and_the_next_request_works(
    api, workspace, session
):
    locked = make_cards(workspace, 1, back_text="before")[0]
    changes = ChangeLog.objects.filter(workspace=workspace).count()

    def visible_effects() -> tuple[int, int]:
        return (
            Card.objects.filter(workspace=workspace, front_text="partial").count(),
            ChangeLog.objects.filter(workspace=workspace).count(),
        )

    first, effects, second = _interrupt_mid_write(
        session, locked, lambda: post_sql(api, _batch(locked)), visible_effects
    )
    _unavailable(first)
    assert effects == (0, changes)
    assert envelope(second)["data"]["affectedCountTotal"] == 2
    assert Card.objects.filter(workspace=workspace, front_text="partial").count() == 1
    assert ChangeLog.objects.filter(workspace=workspace).count() == changes + 2


def test_a_deadlock_victim_gets_a_retryable_503_and_its_retry_applies(api, workspace, session):
    """The push holds the workspace lock and waits for a card another session holds; that
    session then asks for the workspace lock. PostgreSQL aborts the push (it waited first, so
    its deadlock check runs first); the client may simply retry."""
    locked = make_cards(workspace, 1, back_text="before")[0]
    at = services.format_timestamp(datetime.now(UTC) + timedelta(minutes=1))
    operation = {
        "operation_id": "op-deadlock",
        "entity_type": "card",
        "entity_id": str(locked.pk),
        "action": "upsert",
        "client_updated_at": at,
        "payload": {"front_text": "pushed", "back_text": "pushed"},
    }
    body = {"installation_id": "phone", "platform": "ios", "operations": [operation]}
    url = f"/v1/workspaces/{workspace.pk}/sync/push"

    def close_the_cycle(session: psycopg.Connection, locker: psycopg.Connection, pid: int) -> None:
        locker.execute(
            "SELECT 1 FROM flashcards_workspace WHERE id = %s FOR UPDATE", [workspace.pk]
        )

    first, _, second = _interrupt_mid_write(
        session, locked, lambda: api.post(url, body, format="json"), interrupt=close_the_cycle
    )
    error = _unavailable(first)
    assert error["details"]["reason"] == "deadlock_detected"
    assert [op["status"] for op in envelope(second)["data"]["operations"]] == ["applied"]
    locked.refresh_from_db()
    assert locked.front_text == "pushed"


def _in_own_session(work: Callable[[], Any]) -> Any:
    """Run ``work`` on a thread (so on a database connection) of its own; returns what it
    returned or raised."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(work())
        except Exception as exc:
            outcome.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=30)
    return outcome[0]


def test_a_connection_lost_at_commit_has_an_unknown_outcome(workspace, session):
    def write_then_lose_connection_before_commit() -> None:
        with transaction.atomic():
            make_cards(workspace, 1, front_text="at commit")
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                pid = cursor.fetchone()[0]
            session.execute("SELECT pg_terminate_backend(%s)", [pid])
            time.sleep(0.1)

    error = _in_own_session(write_then_lose_connection_before_commit)
    assert isinstance(error, DatabaseError) and is_database_unavailable(error)
    assert outcome_of(error) == "unknown"
    assert not Card.objects.filter(front_text="at commit").exists()


def test_a_connection_lost_before_commit_was_not_applied(workspace, session):
    def lose_connection_then_write() -> None:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                session.execute("SELECT pg_terminate_backend(%s)", [cursor.fetchone()[0]])
            time.sleep(0.1)
            make_cards(workspace, 1, front_text="never")

    error = _in_own_session(lose_connection_then_write)
    assert isinstance(error, DatabaseError) and is_database_unavailable(error)
    assert outcome_of(error) == "not_applied"
    assert not Card.objects.filter(front_text="never").exists()


def test_503_envelope_keeps_the_request_id_header(api, unreachable_database):
    unreachable_database(True)
    response = post_sql(api, "SHOW TABLES")
    body = json.loads(response.content)
    assert response["X-Request-Id"] == body["requestId"]
    assert body["error"]["code"] == "SERVICE_UNAVAILABLE"
