"""Patterns are checked against MAX_PATTERN_BYTES (dsl.md §8) before the database sees them, and a
statement the database refuses is a 400 QUERY_INVALID_SQL with a reason, never a 503 outage
(issue #20 item 2). Runs on SQLite and PostgreSQL alike (DATABASE_URL)."""

from __future__ import annotations

import pytest
from django.db import OperationalError, connection
from django.test import override_settings

from dsl.models import QueryLog
from flashcards.http.db_errors import is_database_unavailable
from tests.factories import make_card

BIG = "a" * 60_000


@pytest.mark.parametrize(
    "statement",
    [
        f"SELECT card_id FROM cards WHERE front_text LIKE '%{BIG}%'",
        f"SELECT card_id FROM cards WHERE back_text ILIKE '{BIG}'",
        f"SELECT card_id FROM cards WHERE front_text NOT LIKE '{BIG}'",
        f"SELECT card_id FROM cards WHERE MATCH('{BIG}')",
    ],
)
def test_a_60000_byte_pattern_is_a_400_naming_the_limit(fails, statement):
    error = fails(statement)
    assert error["code"] == "QUERY_INVALID_SQL"
    assert error["details"]["reason"] == "too_long"
    assert "at most 50,000 bytes are allowed" in error["message"]
    assert "60,00" in error["message"]  # the pattern's own size (with or without the two %)
    assert QueryLog.objects.get().status_code == 400


def test_multibyte_patterns_are_measured_in_utf8_bytes(fails, ok):
    # 12,000 characters of 4 bytes each: 48,000 bytes, under the limit; one more is over it.
    ok(f"SELECT card_id FROM cards WHERE front_text LIKE '{'😀' * 12_000}'")
    error = fails(f"SELECT card_id FROM cards WHERE front_text LIKE '{'😀' * 12_501}'")
    assert "50,004 bytes" in error["message"]


def test_the_limit_follows_the_settings(fails, ok):
    with override_settings(FLASHCARDS_DSL={"MAX_PATTERN_BYTES": 10}):
        error = fails("SELECT card_id FROM cards WHERE front_text LIKE '%abcdefghijk'")
        assert "at most 10 bytes" in error["message"]
        assert error["details"]["hint"] == "Search for a shorter text (at most 10 bytes of UTF-8)."
        ok("SELECT card_id FROM cards WHERE front_text LIKE '%abc%'")


def test_a_statement_the_database_refuses_is_a_400_with_a_reason(sql, workspace):
    """With the dialect's own check lifted, SQLite refuses the pattern itself ("LIKE or GLOB
    pattern too complex"): that is the statement's fault, a 400, and no outage is logged.
    PostgreSQL has no such limit and answers the read."""
    make_card(workspace)  # a row, so the database evaluates the pattern
    lifted = {"MAX_PATTERN_BYTES": 65_536, "MAX_READ_ENVELOPE_CHARS": 200_000}
    with override_settings(FLASHCARDS_DSL=lifted):
        response = sql(f"SELECT card_id FROM cards WHERE front_text LIKE '%{BIG}%'")
    body = response.json()
    if connection.vendor == "sqlite":
        assert response.status_code == 400, body
        assert body["error"]["code"] == "QUERY_INVALID_SQL", body["error"]["message"]
        assert body["error"]["details"]["reason"] == "too_complex"
        assert "pattern too complex" in body["error"]["message"]
        assert "Retry-After" not in response
    else:
        assert response.status_code == 200, body
        assert body["data"]["rows"] == []


@pytest.mark.django_db
def test_only_unavailability_is_an_outage():
    # A driver's refusal of a statement, as Django wraps it.
    with pytest.raises(Exception) as refused, connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT 'a' LIKE %s", ["a" * 60_000])
        else:
            cursor.execute("SELECT repeat('x', 2000000000)::text || repeat('x', 2000000000)")
    assert not is_database_unavailable(refused.value)
    # A connection that never answered (no driver error behind it) is one.
    assert is_database_unavailable(OperationalError("server closed the connection unexpectedly"))
