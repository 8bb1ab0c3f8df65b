"""dsl.md §8 Limits and §9 Errors: every error code, every reason in the situation the page lists,
positions, statement indexes, hints and suggestions."""

from __future__ import annotations

import uuid

import pytest
from django.core.cache import cache
from django.test import override_settings

from flashcards import services
from tests.factories import make_cards
from tests.support.envelope import check_envelope, post_sql

pytestmark = pytest.mark.django_db


# §8 "JSON envelope size for reads | 48,000 characters → 400 QUERY_RESULT_TOO_LARGE with a hint to
# narrow the query"


def test_a_read_over_the_envelope_budget_is_result_too_large(fails, workspace):
    make_cards(workspace, 100, back_text="x" * 600)
    error = fails("SELECT * FROM cards")
    assert error["code"] == "QUERY_RESULT_TOO_LARGE"
    assert error["details"]["hint"]
    assert "LIMIT" in error["details"]["hint"]


def test_a_read_under_the_budget_fits(sql, workspace):
    make_cards(workspace, 100, back_text="x" * 300)
    response = sql("SELECT card_id, back_text FROM cards")
    assert response.status_code == 200
    assert len(response.content.decode()) <= 48_000


def test_a_batch_of_reads_over_the_budget_is_result_too_large(fails, workspace):
    make_cards(workspace, 40, back_text="y" * 500)
    error = fails(
        "SELECT back_text FROM cards; SELECT back_text FROM cards; SELECT back_text FROM cards"
    )
    assert error["code"] == "QUERY_RESULT_TOO_LARGE"


# "JSON envelope size for writes | over budget → rows dropped, rowsOmitted: true, the write still
# succeeds"


def test_a_write_over_the_budget_omits_rows_and_succeeds(ok, rows):
    values = ", ".join(f"('q{i}', '{'z' * 600}')" for i in range(100))
    data = ok(f"INSERT INTO cards (front_text, back_text) VALUES {values} RETURNING *")
    assert data["rowsOmitted"] is True and data["rows"] == []
    assert data["affectedCount"] == 100
    assert rows("SELECT COUNT(*) AS n FROM cards") == [{"n": 100}]


def test_a_batch_write_over_the_budget_sets_rows_omitted(ok, rows, workspace):
    make_cards(workspace, 100, front_text="f" * 600)
    data = ok(
        "UPDATE cards SET back_text = 'short' WHERE reps = 0 RETURNING *; "
        "SELECT COUNT(*) AS n FROM cards WHERE back_text = 'short'"
    )
    assert data["rowsOmitted"] is True
    assert data["statements"][0]["rowsOmitted"] is True and data["statements"][0]["rows"] == []
    assert data["statements"][0]["affectedCount"] == 100
    assert data["statements"][1]["rows"] == [{"n": 100}]
    assert rows("SELECT COUNT(*) AS n FROM cards WHERE back_text = 'short'") == [{"n": 100}]


# "values in one IN list | 1,000 (too_complex)"


def test_in_lists_up_to_1000_values(ok, reason, workspace):
    card = make_cards(workspace, 1)[0]
    ids = [str(uuid.uuid4()) for _ in range(999)] + [str(card.id)]
    listed = ", ".join(f"'{i}'" for i in ids)
    data = ok(f"SELECT card_id FROM cards WHERE card_id IN ({listed})")
    assert data["rows"] == [{"card_id": str(card.id)}]
    numbers = ", ".join(str(i) for i in range(1000))
    assert ok(f"SELECT card_id FROM cards WHERE reps IN ({numbers})")["rowCount"] == 1
    assert reason(f"SELECT card_id FROM cards WHERE reps IN ({numbers}, 1000)") == "too_complex"
    assert reason(
        f"SELECT card_id FROM cards WHERE tags OVERLAP ({', '.join(repr(str(i)) for i in range(1001))})"
    ) == ("too_complex")


# "nesting depth of parentheses / predicates per statement | 32 (too_deep) / 500 (too_complex)"


def test_nesting_depth(ok, reason):
    assert ok("SELECT * FROM cards WHERE " + "(" * 32 + "reps = 0" + ")" * 32)["rowCount"] == 0
    assert reason("SELECT * FROM cards WHERE " + "(" * 33 + "reps = 0" + ")" * 33) == "too_deep"
    assert ok("SELECT * FROM cards WHERE " + "NOT " * 32 + "reps = 0")["rowCount"] == 0
    assert reason("SELECT * FROM cards WHERE " + "NOT " * 33 + "reps = 0") == "too_deep"


def test_predicates_per_statement(ok, reason):
    assert ok("SELECT * FROM cards WHERE " + " OR ".join(["reps = 1"] * 500))["rowCount"] == 0
    assert reason("SELECT * FROM cards WHERE " + " OR ".join(["reps = 1"] * 501)) == "too_complex"


# "statement time | 5 s per request on PostgreSQL and SQLite → 400 QUERY_TIMEOUT, nothing written"


def test_a_request_out_of_time_is_query_timeout_and_writes_nothing(sql, rows):
    with override_settings(FLASHCARDS_DSL={"STATEMENT_TIMEOUT_SECONDS": 0}):
        response = sql("INSERT INTO decks (name) VALUES ('d'); SELECT * FROM decks")
    body = check_envelope(response)
    assert response.status_code == 400
    assert body["error"]["code"] == "QUERY_TIMEOUT"
    assert rows("SELECT * FROM decks") == []


# §9 "error.code is one of: ..."; RATE_LIMITED (429, with Retry-After).


def test_rate_limited_is_429_with_retry_after(api):
    cache.clear()
    with override_settings(AGENT_RATE_LIMIT=2):
        statuses = [post_sql(api, "SHOW TABLES").status_code for _ in range(2)]
        response = post_sql(api, "SHOW TABLES")
    cache.clear()
    assert statuses == [200, 200]
    body = check_envelope(response)
    assert response.status_code == 429
    assert body["error"]["code"] == "RATE_LIMITED"
    assert int(response["Retry-After"]) > 0


def test_workspace_not_found_for_a_foreign_workspace_id(api, other_workspace):
    response = post_sql(api, "SELECT * FROM cards", workspace_id=str(other_workspace.id))
    body = check_envelope(response)
    assert response.status_code == 404
    assert body["error"]["code"] == "WORKSPACE_NOT_FOUND"


# "No input, however malformed, may produce a 500."


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT * FROM cards WHERE front_text = '\x01\x7f'",
        "SELECT * FROM cards WHERE reps = 1e999999",
        "SELECT * FROM cards WHERE due_at > '9999-12-31T23:59:59Z'",
        "SELECT * FROM cards WHERE due_at > NOW() + INTERVAL '999999999 years'",
        "SELECT * FROM cards WHERE due_at > '0001-01-01'",
        "SELECT * FROM cards LIMIT 99999999999999999999999",
        "SELECT * FROM cards OFFSET 9223372036854775807",
        "SELECT \u0000 FROM cards",
        "INSERT INTO cards (front_text, back_text) VALUES ('\ud800', 'x')",
        "SELECT * FROM cards WHERE card_id LIKE '%\\'",
        "SELECT * FROM cards WHERE MATCH('\\')",
        "'",
        '"',
        "/*",
        "SELECT * FROM cards WHERE tags = '{\"a}'",
    ],
)
def test_malformed_input_is_never_a_500(api, statement):
    response = api.post(
        "/v1/agent/sql",
        '{"sql": ' + __import__("json").dumps(statement) + "}",
        content_type="application/json",
    )
    assert response.status_code < 500
    check_envelope(response)


# "For QUERY_INVALID_SQL, error.details holds: validationIssues ..., reason ..."
# "Which reason fits: ..."


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        # "an operator on the wrong column type (LIKE on an integer, OVERLAP on a scalar, < on tags),
        # a literal of the wrong type, and = NULL / != NULL → type_mismatch"
        ("SELECT * FROM cards WHERE reps LIKE '1%'", "type_mismatch"),
        ("SELECT * FROM cards WHERE front_text OVERLAP ('a')", "type_mismatch"),
        ("SELECT * FROM cards WHERE tags < 'a'", "type_mismatch"),
        ("SELECT * FROM cards WHERE reps = 'a'", "type_mismatch"),
        ("SELECT * FROM cards WHERE due_at = NULL", "type_mismatch"),
        ("SELECT * FROM cards WHERE due_at != NULL", "type_mismatch"),
        # "a bad enum value, an invariant failure on write, a missing required INSERT column, NULL
        # for a non-nullable column, MATCH('') → invalid_value"
        ("SELECT * FROM cards WHERE effort_level = 'slow'", "invalid_value"),
        ("INSERT INTO cards (front_text, back_text) VALUES (' ', 'a')", "invalid_value"),
        ("INSERT INTO cards (back_text) VALUES ('a')", "invalid_value"),
        ("INSERT INTO cards (front_text, back_text) VALUES ('q', NULL)", "invalid_value"),
        ("SELECT * FROM cards WHERE MATCH('')", "invalid_value"),
        # "IN (), a dangling WHERE / AND / OR → syntax_error"
        ("SELECT * FROM cards WHERE reps IN ()", "syntax_error"),
        ("SELECT * FROM cards WHERE", "syntax_error"),
        ("SELECT * FROM cards WHERE reps = 0 AND", "syntax_error"),
        ("SELECT * FROM cards WHERE reps = 0 OR", "syntax_error"),
        ("SELECT * FROM cards WHERE AND reps = 0", "syntax_error"),
        # "UPDATE/DELETE without WHERE → missing_where"
        ("UPDATE cards SET back_text = 'x'", "missing_where"),
        ("DELETE FROM decks", "missing_where"),
        # "negative or fractional LIMIT/OFFSET, LIMIT 0 → limit_out_of_range"
        ("SELECT * FROM cards LIMIT -1", "limit_out_of_range"),
        ("SELECT * FROM cards LIMIT 2.5", "limit_out_of_range"),
        ("SELECT * FROM cards LIMIT 0", "limit_out_of_range"),
        ("SELECT * FROM cards OFFSET -3", "limit_out_of_range"),
        # The other reasons.
        ("SELEC * FROM cards", "syntax_error"),
        ("SELECT * FROM cards JOIN decks", "unsupported_syntax"),
        ("SELECT * FROM flashcards", "unknown_resource"),
        ("SELECT fron_text FROM cards", "unknown_column"),
        ("UPDATE cards SET reps = 1 WHERE reps = 0", "read_only_column"),
        ("SELECT * FROM cards WHERE metadata = 'x'", "not_filterable"),
        ("SELECT * FROM cards ORDER BY metadata", "not_sortable"),
        ("SELECT * FROM cards;;", "empty_statement"),
        (";".join(["SHOW TABLES"] * 51), "too_many_statements"),
        ("SELECT * FROM cards WHERE " + "(" * 40 + "reps = 0" + ")" * 40, "too_deep"),
        ("SELECT * FROM cards WHERE " + " OR ".join(["reps = 1"] * 501), "too_complex"),
        ("SELECT * FROM cards -- " + "x" * 65_536, "too_long"),
    ],
)
def test_reasons(reason, statement, expected):
    assert reason(statement) == expected


def test_too_many_rows_reason_for_inserts_and_matches(reason, workspace):
    values = ", ".join(f"('q{i}', 'a')" for i in range(101))
    assert reason(f"INSERT INTO cards (front_text, back_text) VALUES {values}") == "too_many_rows"
    make_cards(workspace, 100)
    make_cards(workspace, 1)
    assert reason("UPDATE cards SET back_text = 'x' WHERE reps = 0") == "too_many_rows"
    assert reason("DELETE FROM cards WHERE reps = 0") == "too_many_rows"


def test_wrong_endpoint_reason(reason):
    assert reason("SELECT * FROM cards", url="/v1/agent/sql/execute") == "wrong_endpoint"
    assert reason("DELETE FROM cards WHERE reps = 0", url="/v1/agent/sql/query") == "wrong_endpoint"


def test_details_key_order_and_contents(fails):
    error = fails("SELECT fron_text FROM cards")
    details = error["details"]
    assert details["validationIssues"] == [
        {"path": "sql", "code": "unknown_column", "message": error["message"]}
    ]
    assert set(details) >= {"validationIssues", "reason", "position", "hint", "suggestions"}
    assert "statementIndex" not in details


# "position: {line, column, offset} (1-based line/column, 0-based offset into sql) of the offending
# token whenever one exists (end of input points just past the last character)"


@pytest.mark.parametrize(
    ("statement", "position"),
    [
        ("SELECT fron_text FROM cards", {"line": 1, "column": 8, "offset": 7}),
        ("\n  SELECT fron_text FROM cards", {"line": 2, "column": 10, "offset": 10}),
        ("SELECT card_id\nFROM cards\nWHERE  rep = 0", {"line": 3, "column": 8, "offset": 33}),
        ("SELECT * FROM card", {"line": 1, "column": 15, "offset": 14}),
        ("SELECT * FROM cards WHERE", {"line": 1, "column": 26, "offset": 25}),
        ("SELECT * FROM cards WHERE reps = 0 AND", {"line": 1, "column": 39, "offset": 38}),
        ("SELECT * FROM cards WHERE reps = 'x'", {"line": 1, "column": 34, "offset": 33}),
        ("SELECT * FROM cards; SELECT * FROM card", {"line": 1, "column": 36, "offset": 35}),
        (
            "SELECT *\r\nFROM cards\r\nWHERE effort_level = 'slow'",
            {"line": 3, "column": 22, "offset": 43},
        ),
        # Offsets count characters of the string, not UTF-8 bytes.
        ("SELECT * FROM cards WHERE back_text = 'ñé' AND fron = 1", None),
    ],
)
def test_positions(fails, statement, position):
    error = fails(statement)
    found = error["details"]["position"]
    if position is None:
        offset = statement.index("fron")
        assert found == {"line": 1, "column": offset + 1, "offset": offset}
    else:
        assert found == position


def test_end_of_input_points_just_past_the_last_character(fails):
    for statement in ("SELECT * FROM cards WHERE", "SELECT * FROM cards ORDER BY", "SELECT * FROM"):
        position = fails(statement)["details"]["position"]
        assert position["offset"] == len(statement)
        assert position["column"] == len(statement) + 1


# "statementIndex: 1-based, for batches (any batch failure, at parse or execution time, starts its
# message with Statement N failed: )"


@pytest.mark.parametrize(
    ("statement", "index"),
    [
        ("SELECT * FROM cards; SELEC * FROM cards", 2),
        ("SELECT nope FROM cards; SELECT * FROM cards", 1),
        ("SHOW TABLES; SHOW TABLES; INSERT INTO cards (front_text, back_text) VALUES ('', 'a')", 3),
        ("SHOW TABLES; UPDATE cards SET back_text = 'x'", 2),
        ("SHOW TABLES; SELECT * FROM cards LIMIT 0", 2),
    ],
)
def test_statement_index_for_batches(fails, statement, index):
    error = fails(statement)
    assert error["details"]["statementIndex"] == index
    assert error["message"].startswith(f"Statement {index} failed: ")
    assert error["details"]["validationIssues"][0]["message"] == error["message"]


def test_execution_time_failures_in_batches_have_an_index(fails, workspace):
    make_cards(workspace, 100)
    make_cards(workspace, 1)
    error = fails("SHOW TABLES; UPDATE cards SET back_text = 'x' WHERE reps = 0")
    assert error["details"]["statementIndex"] == 2
    assert error["message"].startswith("Statement 2 failed: ")


def test_result_too_large_in_a_batch(fails, workspace):
    make_cards(workspace, 100, back_text="x" * 600)
    error = fails("SHOW TABLES; SELECT * FROM cards")
    assert error["code"] == "QUERY_RESULT_TOO_LARGE"


# "hint: one sentence that says how to fix it, with a corrected example where one is obvious"
# "suggestions: for unknown names, the closest valid names (only names the caller can see)"


@pytest.mark.parametrize(
    ("statement", "suggestion"),
    [
        ("SELECT fron_text FROM cards", "front_text"),
        ("SELECT * FROM card", "cards"),
        ("SELECT * FROM deck", "decks"),
        ("SELECT * FROM review_event", "review_events"),
        ("SELECT * FROM cards ORDER BY create_at", "created_at"),
        ("SELECT nme FROM decks", "name"),
        ("SELECT * FROM cards WHERE effort_level = 'fats'", "fast"),
    ],
)
def test_suggestions(fails, statement, suggestion):
    error = fails(statement)
    assert suggestion in error["details"]["suggestions"]


def test_suggestions_never_name_internal_fields(fails):
    for statement in (
        "SELECT deleted_a FROM cards",
        "SELECT workspace_i FROM cards",
        "SELECT client_updated FROM decks",
    ):
        suggestions = fails(statement)["details"]["suggestions"]
        assert not any(
            name in suggestions for name in ("deleted_at", "workspace_id", "client_updated_at")
        )


def test_every_invalid_sql_error_has_a_hint(fails):
    for statement in (
        "SELEC 1",
        "SELECT * FROM x",
        "SELECT reps FROM cards WHERE reps = 'a'",
        "DELETE FROM cards",
    ):
        hint = fails(statement)["details"]["hint"]
        assert isinstance(hint, str) and hint.strip()


# "Messages name the offending token and what is allowed instead, e.g. Unknown column for cards:
# fron_text. Did you mean front_text? or JOIN is not supported: query one resource at a time, e.g.
# SELECT card_id FROM review_events WHERE rating = 0, then SELECT * FROM cards WHERE card_id IN
# (...)"


def test_the_two_example_messages(fails):
    assert fails("SELECT fron_text FROM cards")["message"] == (
        "Unknown column for cards: fron_text. Did you mean front_text?"
    )
    assert fails("SELECT * FROM cards JOIN review_events ON card_id = card_id")["message"] == (
        "JOIN is not supported: query one resource at a time, e.g. SELECT card_id FROM "
        "review_events WHERE rating = 0, then SELECT * FROM cards WHERE card_id IN (...)"
    )


def test_request_errors_have_their_codes(api, client_for, user):
    assert (
        check_envelope(api.post("/v1/agent/sql", {}, format="json"))["error"]["code"]
        == "REQUEST_INVALID"
    )
    services.create_workspace(user, "Second")
    _, plaintext = services.create_api_key(user, "unselected")
    response = post_sql(client_for(plaintext), "SHOW TABLES")
    assert response.status_code == 409
    assert check_envelope(response)["error"]["code"] == "WORKSPACE_SELECTION_REQUIRED"
