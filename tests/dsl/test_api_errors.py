"""Every error path of the SQL endpoints through HTTP: status, envelope shape, code, reason."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from flashcards import services
from tests.factories import make_cards
from tests.support.envelope import EXECUTE_URL, QUERY_URL, SQL_URL, check_envelope, post_sql

pytestmark = pytest.mark.django_db

DEEP = "(" * 40 + "reps = 0" + ")" * 40
MANY_IN = ", ".join(str(i) for i in range(1001))
MANY_PREDICATES = " OR ".join(f"reps = {i}" for i in range(501))

REASONS = [
    ("SELECT * FROM cards WHERE", "syntax_error"),
    ("SELECT * FROM cards WHERE reps IN ()", "syntax_error"),
    ("SELECT * FROM cards WHERE reps = 0 AND", "syntax_error"),
    ("SELECT * FROM cards JOIN decks ON cards.card_id = decks.deck_id", "unsupported_syntax"),
    ("DROP TABLE cards", "unsupported_syntax"),
    ("UPDATE review_events SET rating = 1 WHERE rating = 0", "unsupported_syntax"),
    ("SELECT * FROM cardz", "unknown_resource"),
    ("SELECT fron_text FROM cards", "unknown_column"),
    ("SELECT * FROM cards WHERE deleted_at IS NULL", "unknown_column"),
    ("UPDATE cards SET reps = 1 WHERE reps = 0", "read_only_column"),
    (
        "INSERT INTO cards (front_text, back_text, due_at) VALUES ('q', 'a', NOW())",
        "read_only_column",
    ),
    ("SELECT * FROM cards WHERE metadata = 'x'", "not_filterable"),
    ("SELECT * FROM cards ORDER BY metadata", "not_sortable"),
    ("SELECT * FROM cards WHERE reps = 'many'", "type_mismatch"),
    ("SELECT * FROM cards WHERE reps LIKE '1%'", "type_mismatch"),
    ("SELECT * FROM cards WHERE due_at = NULL", "type_mismatch"),
    ("SELECT * FROM cards WHERE tags < 'a'", "type_mismatch"),
    ("SELECT * FROM cards WHERE effort_level = 'slow'", "invalid_value"),
    ("SELECT * FROM cards WHERE MATCH('')", "invalid_value"),
    ("INSERT INTO cards (front_text) VALUES ('q')", "invalid_value"),
    ("DELETE FROM cards", "missing_where"),
    ("UPDATE cards SET back_text = 'x'", "missing_where"),
    ("SHOW TABLES;;", "empty_statement"),
    ("; SHOW TABLES", "empty_statement"),
    ("SHOW TABLES;" * 51, "too_many_statements"),
    ("SELECT * FROM cards WHERE front_text = '" + "x" * 65_600 + "'", "too_long"),
    (f"SELECT * FROM cards WHERE {DEEP}", "too_deep"),
    (f"SELECT * FROM cards WHERE reps IN ({MANY_IN})", "too_complex"),
    (f"SELECT * FROM cards WHERE {MANY_PREDICATES}", "too_complex"),
    ("SELECT * FROM cards LIMIT 0", "limit_out_of_range"),
    ("SELECT * FROM cards LIMIT -1", "limit_out_of_range"),
    ("SELECT * FROM cards LIMIT 1.5", "limit_out_of_range"),
    ("SELECT * FROM cards OFFSET -3", "limit_out_of_range"),
]


@pytest.mark.parametrize(("statement", "reason"), REASONS)
def test_reasons(fails, workspace, statement, reason):
    error = fails(statement)
    details = error["details"]
    assert error["code"] == "QUERY_INVALID_SQL"
    assert details["reason"] == reason
    assert details["validationIssues"] == [
        {"path": "sql", "code": reason, "message": error["message"]}
    ]
    assert isinstance(details["hint"], str) and details["hint"]
    if "position" in details:
        position = details["position"]
        assert 0 <= position["offset"] <= len(statement)
        assert position["line"] >= 1 and position["column"] >= 1


def test_insert_of_more_than_100_rows(fails, workspace):
    values = ", ".join(f"('q{i}', 'a')" for i in range(101))
    error = fails(f"INSERT INTO cards (front_text, back_text) VALUES {values}")
    assert error["details"]["reason"] == "too_many_rows"


def test_unknown_column_names_position_and_suggestion(fails):
    error = fails("SELECT fron_text FROM cards")
    assert error["message"] == "Unknown column for cards: fron_text. Did you mean front_text?"
    assert error["details"]["position"] == {"line": 1, "column": 8, "offset": 7}
    assert error["details"]["suggestions"] == ["front_text"]


def test_join_suggests_two_steps(fails):
    error = fails("SELECT * FROM review_events JOIN cards ON card_id = card_id")
    assert "JOIN is not supported" in error["message"] and "card_id IN" in error["message"]


def test_batch_failure_names_the_statement(fails):
    error = fails("SHOW TABLES; SELECT * FROM cardz")
    assert error["message"].startswith("Statement 2 failed: ")
    assert error["details"]["statementIndex"] == 2
    assert error["details"]["reason"] == "unknown_resource"


def test_wrong_endpoint_both_ways(api):
    response = post_sql(api, "DELETE FROM cards WHERE reps = 0", url=QUERY_URL)
    error = check_envelope(response)["error"]
    assert response.status_code == 400 and error["details"]["reason"] == "wrong_endpoint"
    assert "/v1/agent/sql/execute" in error["message"]
    response = post_sql(api, "SELECT * FROM cards", url=EXECUTE_URL)
    error = check_envelope(response)["error"]
    assert response.status_code == 400 and error["details"]["reason"] == "wrong_endpoint"
    assert "/v1/agent/sql/query" in error["message"]
    response = post_sql(api, "SHOW TABLES; INSERT INTO decks (name) VALUES ('d')", url=QUERY_URL)
    error = check_envelope(response)["error"]
    assert error["details"]["statementIndex"] == 2


def test_result_too_large(fails, workspace):
    make_cards(workspace, 100, back_text="x" * 600)
    error = fails("SELECT * FROM cards", status=400)
    assert error["code"] == "QUERY_RESULT_TOO_LARGE"
    assert "LIMIT" in error["details"]["hint"]


@pytest.mark.parametrize(
    ("payload", "content_type"),
    [
        ('{"sql": ', "application/json"),
        ("[1, 2]", "application/json"),
        ('"SHOW TABLES"', "application/json"),
        ("{}", "application/json"),
        ('{"sql": 5}', "application/json"),
        ('{"sql": null}', "application/json"),
        ('{"sql": ["SHOW TABLES"]}', "application/json"),
        ('{"sql": "   "}', "application/json"),
        ('{"sql": "SHOW TABLES", "dry_run": "yes"}', "application/json"),
        ('{"sql": "SHOW TABLES", "dry_run": 1}', "application/json"),
        ('{"sql": "\\u0000"}', "application/json"),
    ],
)
def test_bad_bodies(api, payload, content_type):
    response = api.generic("POST", SQL_URL, payload, content_type=content_type)
    body = check_envelope(response)
    assert response.status_code in (400, 415), body
    assert body["error"]["code"] in ("REQUEST_INVALID", "QUERY_INVALID_SQL")


def test_unknown_keys_are_ignored(api):
    response = api.post(SQL_URL, {"sql": "SHOW TABLES", "extra": [1]}, format="json")
    assert response.status_code == 200


def test_non_json_media_type(api):
    # Any content type is read as JSON (docs/decisions.md); a non-JSON body is a bad body.
    response = api.generic("POST", SQL_URL, "SHOW TABLES", content_type="text/plain")
    body = check_envelope(response)
    assert response.status_code == 400 and body["error"]["code"] == "REQUEST_INVALID"


def test_body_over_256_kib(api):
    payload = json.dumps({"sql": "SHOW TABLES", "pad": "x" * (257 * 1024)})
    response = api.generic("POST", SQL_URL, payload, content_type="application/json")
    body = check_envelope(response)
    assert response.status_code == 413 and body["error"]["code"] == "REQUEST_TOO_LARGE"


def test_method_not_allowed(api):
    response = api.get(SQL_URL)
    assert response.status_code == 405 and check_envelope(response)["ok"] is False


@pytest.mark.parametrize(
    ("header", "code"),
    [
        (None, "AUTH_UNAUTHORIZED"),
        ("ApiKey fca_nonsense", "AGENT_API_KEY_INVALID"),
        ("Basic dXNlcjpwYXNz", "AGENT_API_KEY_INVALID"),
        ("ApiKey fca_00000000_00000000000000000000000000", "AGENT_API_KEY_INVALID"),
    ],
)
def test_unauthenticated(db, header, code):
    client = APIClient()
    if header:
        client.credentials(HTTP_AUTHORIZATION=header)
    response = post_sql(client, "SHOW TABLES")
    body = check_envelope(response)
    assert response.status_code == 401 and body["error"]["code"] == code


def test_revoked_key(api_key, client_for):
    services.revoke_api_key(api_key)
    response = post_sql(client_for(api_key.plaintext), "SHOW TABLES")
    body = check_envelope(response)
    assert response.status_code == 401 and body["error"]["code"] == "AGENT_API_KEY_INVALID"


def test_workspace_selection_required(user, workspace, client_for):
    services.create_workspace(user, "Second")
    _, plaintext = services.create_api_key(user, "unselected")
    response = post_sql(client_for(plaintext), "SHOW TABLES")
    body = check_envelope(response)
    assert response.status_code == 409
    assert body["error"]["code"] == "WORKSPACE_SELECTION_REQUIRED"


def test_bearer_scheme_and_messy_key_are_accepted(api_key):
    client = APIClient()
    messy = api_key.plaintext.lower().replace("_", "_ ", 1)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {messy}")
    assert post_sql(client, "SHOW TABLES").status_code == 200


def test_huge_offset_does_not_crash(fails, ok):
    data = ok("SELECT card_id FROM cards LIMIT 100 OFFSET 9223372036854775807")
    assert data["rows"] == [] and data["hasMore"] is False
    assert fails("SELECT card_id FROM cards OFFSET 9223372036854775808")["code"] == (
        "QUERY_INVALID_SQL"
    )
