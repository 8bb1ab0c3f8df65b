"""Hostile input through POST /v1/agent/sql: each case is a clear 400 or 413 envelope, never a
500, and nothing is written."""

from __future__ import annotations

import json

import pytest

from flashcards.models import Card
from tests.reliability.helpers import envelope, post_body, post_sql, refused

pytestmark = pytest.mark.django_db

INVALID = "QUERY_INVALID_SQL"


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM cards WHERE front_text = 'a\x00b'",
        "SELECT * FROM cards WHERE front_text LIKE '%\x00%'",
        "SELECT * FROM cards WHERE MATCH('\x00')",
        "SELECT * FROM cards WHERE tags OVERLAP ('\x00')",
        "INSERT INTO cards (front_text, back_text) VALUES ('a\x00b', 'x')",
        "UPDATE cards SET tags = ('ok', 'n\x00l') WHERE reps = 0",
    ],
)
def test_nul_inside_string_literals_is_invalid_value(api, own_data, sql):
    before = _cards()
    refused(post_sql(api, sql), 400, INVALID, "invalid_value")
    assert _cards() == before


def _cards() -> list[tuple]:
    return list(Card.objects.order_by("pk").values_list("pk", "front_text", "tags", "deleted_at"))


def test_nul_outside_a_literal_is_a_syntax_error(api):
    error = refused(post_sql(api, "SELECT * FROM cards\x00"), 400, INVALID, "syntax_error")
    assert error["details"]["position"]["offset"] == len("SELECT * FROM cards")


@pytest.mark.parametrize(
    "body",
    [
        b'{"sql": "SELECT \xff\xfe FROM cards"}',  # invalid UTF-8
        b'{"sql": "SELECT \xc3"}',  # truncated UTF-8 sequence
        b"\xef\xbb\xbf\xff",
        b'{sql: "SHOW TABLES"}',
        b'{"sql": "SHOW TABLES"',
        b"",
        b"null",
        b'"SHOW TABLES"',
        b'["SHOW TABLES"]',
        b'{"sql": "SHOW TABLES", "x": NaN}',
        b'{"sql": "SHOW TABLES", "dry_run": "yes"}',
        b'{"sql": 12}',
        b'{"sql": ["SHOW TABLES"]}',
        b'{"sql": "   "}',
    ],
)
def test_malformed_bodies_are_request_invalid(api, body):
    refused(post_body(api, body), 400, "REQUEST_INVALID")


@pytest.mark.parametrize(
    "body",
    [
        '{"sql": ' + "[" * 50_000 + "]" * 50_000 + "}",
        '{"sql": "SHOW TABLES", "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
    ],
    ids=["nested-sql", "nested-extra-key"],
)
def test_deeply_nested_json_is_request_invalid(api, body):
    refused(post_body(api, body), 400, "REQUEST_INVALID")


def test_deeply_nested_json_beyond_the_body_limit_is_413(api):
    body = '{"sql": "x", "a": ' + '{"a":' * 60_000 + "1" + "}" * 60_000 + "}"
    refused(post_body(api, body), 413, "REQUEST_TOO_LARGE")


@pytest.mark.parametrize(
    "body",
    [
        '{"sql": "SELECT * FROM cards WHERE front_text = \'\\ud800\'"}',
        "{\"sql\": \"INSERT INTO cards (front_text, back_text) VALUES ('\\udfff', 'x')\"}",
    ],
)
def test_lone_surrogates_are_refused_with_a_400(api, body):
    response = post_body(api, body)
    assert response.status_code == 400, response.content[:500]
    envelope(response)


def test_statements_over_64_kib_are_too_long(api):
    sql = "SELECT * FROM cards WHERE front_text = '" + "é" * 33_000 + "'"
    assert len(sql.encode()) > 65_536 > len(sql)
    refused(post_sql(api, sql), 400, INVALID, "too_long")


def test_bodies_over_256_kib_are_413(api):
    sql = "SELECT * FROM cards WHERE " + " OR ".join(["reps = 1"] * 30_000)
    refused(post_sql(api, sql), 413, "REQUEST_TOO_LARGE")


def test_ten_thousand_nested_parentheses_are_too_deep(api):
    sql = "SELECT * FROM cards WHERE " + "(" * 10_000 + "reps = 0" + ")" * 10_000
    refused(post_sql(api, sql), 400, INVALID, "too_deep")


def test_ten_thousand_nots_are_too_deep(api):
    refused(
        post_sql(api, "SELECT * FROM cards WHERE " + "NOT " * 10_000 + "reps = 0"), 400, INVALID
    )


def test_ten_thousand_value_in_lists_are_too_complex(api):
    values = ", ".join(str(n) for n in range(10_000))
    refused(
        post_sql(api, f"SELECT * FROM cards WHERE reps IN ({values})"), 400, INVALID, "too_complex"
    )
    # 1,500 ids: the most that fit in 64 KiB, still over the 1,000-value limit.
    ids = ", ".join(f"'{n:08d}-e89b-42d3-a456-426614174000'" for n in range(1_500))
    refused(
        post_sql(api, f"DELETE FROM cards WHERE card_id IN ({ids})"), 400, INVALID, "too_complex"
    )


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM cards WHERE reps = 99999999999999999999999999",
        "SELECT * FROM cards WHERE reps > 9223372036854775808",
        "SELECT * FROM cards WHERE reps BETWEEN -1e30 AND 1e30",
        "SELECT * FROM cards WHERE fsrs_stability = 1e400",
        "SELECT * FROM cards WHERE fsrs_stability > -1e400",
        "SELECT * FROM cards LIMIT 1e308",
        "SELECT * FROM cards LIMIT 99999999999999999999999999999999",
        "SELECT * FROM cards OFFSET 99999999999999999999999",
        "SELECT * FROM cards WHERE due_at < NOW() - INTERVAL '99999999999 years'",
        "SELECT * FROM cards WHERE due_at < '99999-01-01'",
    ],
)
def test_enormous_numbers_are_refused(api, own_data, sql):
    error = refused(post_sql(api, sql), 400, INVALID)
    assert error["details"]["reason"] in {"type_mismatch", "limit_out_of_range", "invalid_value"}


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM cards WHERE fsrs_stability < 1e308",
        "SELECT * FROM cards OFFSET 9223372036854775806",
        "SELECT * FROM cards WHERE due_at < NOW() + INTERVAL '999999 days'",
        "SELECT COUNT(*) FROM cards WHERE reps < 2147483648",
    ],
)
def test_large_but_valid_numbers_run(api, own_data, sql):
    response = post_sql(api, sql)
    body = envelope(response)
    assert response.status_code == 200, body


@pytest.mark.parametrize(
    ("sql", "reason", "suggestion"),
    [
        ("SELECT * FROM c\u0430rds", "unknown_resource", "cards"),  # Cyrillic a (U+0430)
        (
            "SELECT fr\u043ent_text FROM cards",
            "unknown_column",
            "front_text",
        ),  # Cyrillic o (U+043E)
        ("SELECT * FROM cards WHERE \u0435ffort_level = 'fast'", "unknown_column", "effort_level"),
        ("SELECT * FROM \uff43\uff41\uff52\uff44\uff53", "unknown_resource", None),  # fullwidth
    ],
)
def test_confusable_identifiers_are_unknown_names(api, sql, reason, suggestion):
    error = refused(post_sql(api, sql), 400, INVALID, reason)
    if suggestion is not None:
        assert suggestion in error["details"]["suggestions"]


def test_confusable_keyword_is_a_syntax_error(api):
    fullwidth_select = "\uff33\uff25\uff2c\uff25\uff23\uff34"
    refused(post_sql(api, f"{fullwidth_select} * FROM cards"), 400, INVALID, "syntax_error")


def test_bidi_and_zero_width_text_is_data_not_syntax(api, own_data):
    response = post_sql(api, "SELECT card_id FROM cards WHERE front_text = '\u202egnp.exe\u200b'")
    assert envelope(response)["data"]["rows"] == []


def test_a_statement_echo_too_big_for_the_read_budget_is_result_too_large(api):
    """A 60 KB literal is a legal statement, but a read echoes it twice (sql, normalizedSql)."""
    sql = "SELECT card_id FROM cards WHERE tags OVERLAP ('" + "a" * 60_000 + "')"
    refused(post_sql(api, sql), 400, "QUERY_RESULT_TOO_LARGE")


def test_five_thousand_statements_are_too_many(api):
    refused(post_sql(api, ";".join(["SHOW TABLES"] * 5_000)), 400, INVALID, "too_many_statements")


def test_oversized_header_values_do_not_break_the_request(api):
    response = post_sql(api, "SHOW TABLES", headers={"Idempotency-Key": "k" * 10_000})
    refused(response, 400, "REQUEST_INVALID")
    response = api.generic(
        "POST",
        "/v1/agent/sql",
        json.dumps({"sql": "SHOW TABLES"}),
        content_type="application/json; charset=latin-1",
    )
    assert envelope(response)["ok"] is True
