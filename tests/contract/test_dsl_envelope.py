"""dsl.md §2 Response envelope: top-level shape, `data` key order for every statement type, batch
shape, warnings, paging, dry-run placement and the value formats of §2.4."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from flashcards import services
from tests.factories import make_card, make_cards, make_deck
from tests.support.envelope import check_envelope, post_sql

pytestmark = pytest.mark.django_db

READ_KEYS = [
    "statementType",
    "resource",
    "rows",
    "rowCount",
    "limit",
    "offset",
    "hasMore",
    "sql",
    "normalizedSql",
    "warnings",
]
WRITE_KEYS = [
    "statementType",
    "resource",
    "sql",
    "normalizedSql",
    "rows",
    "affectedCount",
    "rowsOmitted",
    "warnings",
]
BATCH_KEYS = [
    "statementType",
    "resource",
    "sql",
    "normalizedSql",
    "statements",
    "statementCount",
    "affectedCountTotal",
    "rowsOmitted",
    "warnings",
]
READ_ENTRY_KEYS = [k for k in READ_KEYS if k not in ("sql", "normalizedSql")]
WRITE_ENTRY_KEYS = [k for k in WRITE_KEYS if k not in ("sql", "normalizedSql")]
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


# "success: {"ok": true, "data": {...}, "instructions": ..., "docs": {...}, "requestId": ...}
# failure: {"ok": false, "data": {}, ..., "error": {"code", "message", "details"}}"


def test_success_and_failure_envelopes(sql):
    success = sql("SHOW TABLES")
    body = check_envelope(success)
    assert list(body) == ["ok", "data", "instructions", "docs", "requestId"]
    assert body["ok"] is True
    failure = sql("SELEC 1")
    body = check_envelope(failure)
    assert list(body) == ["ok", "data", "instructions", "docs", "requestId", "error"]
    assert body["ok"] is False and body["data"] == {}
    assert isinstance(body["error"]["details"], dict)


def test_docs_urls_are_absolute_and_resolve(api, sql):
    docs = check_envelope(sql("SHOW TABLES"))["docs"]
    assert docs["discoveryUrl"] == "http://testserver/v1/"
    assert api.get(docs["discoveryUrl"]).status_code == 200
    # "Every response of every /v1/agent/* route is JSON with this shape": the grammar page too,
    # unless a browser asks for HTML.
    grammar = api.get(docs["grammarUrl"])
    assert grammar.status_code == 200
    assert check_envelope(grammar)["ok"] is True
    page = api.get(docs["grammarUrl"], HTTP_ACCEPT="text/html,*/*;q=0.8")
    assert page.status_code == 200 and page["Content-Type"].startswith("text/html")
    assert b"SELECT" in page.content


def test_invalid_sql_instructions_say_how_to_fix_and_retry(sql):
    body = check_envelope(sql("SELECT fron_text FROM cards"))
    assert "error.message" in body["instructions"] or "error.details" in body["instructions"]


# §2.1 "Keys in this order: statementType, resource, rows, rowCount, limit, offset, hasMore, sql,
# normalizedSql, warnings"


def test_select_data_keys_and_defaults(ok, workspace):
    make_cards(workspace, 2)
    data = ok("SELECT card_id FROM cards")
    assert list(data) == READ_KEYS
    assert data["statementType"] == "select" and data["resource"] == "cards"
    assert (data["rowCount"], data["limit"], data["offset"], data["hasMore"]) == (2, 100, 0, False)
    assert data["warnings"] == []


def test_show_tables_data(ok):
    data = ok("SHOW TABLES")
    assert list(data) == READ_KEYS
    assert data["statementType"] == "show_tables" and data["resource"] is None
    assert (data["limit"], data["offset"], data["hasMore"]) == (None, None, False)
    assert data["rowCount"] == 4


@pytest.mark.parametrize("statement", ["DESCRIBE decks", "DESC decks", "SHOW COLUMNS FROM decks"])
def test_describe_data(ok, statement):
    data = ok(statement)
    assert list(data) == READ_KEYS
    assert data["statementType"] == "describe" and data["resource"] == "decks"
    assert (data["limit"], data["offset"], data["hasMore"]) == (None, None, False)
    assert data["rowCount"] == len(data["rows"]) == 6


# "sql (the submitted string, trimmed), normalizedSql (whitespace outside string literals collapsed
# to single spaces, final ; and comments removed)"


def test_sql_echo_is_trimmed_and_normalized_sql_collapses_whitespace(ok):
    text = "\n  SELECT   card_id,\n\tfront_text /* note */ FROM cards\n WHERE front_text = 'a   b\nc' -- why\n ;  \n"
    data = ok(text)
    assert data["sql"] == text.strip()
    assert (
        data["normalizedSql"]
        == "SELECT card_id, front_text FROM cards WHERE front_text = 'a   b\nc'"
    )


def test_normalized_sql_keeps_the_case_and_the_literals(ok):
    data = ok("select  Card_Id from CARDS where front_text='It''s'")
    assert data["normalizedSql"] == "select Card_Id from CARDS where front_text='It''s'"


# "SELECT: limit is the effective limit (default 100), offset the effective offset (default 0),
# hasMore is true exactly when at least one more row exists after this page (fetch limit + 1).
# When hasMore, instructions tells the model the exact OFFSET to use next."


def test_has_more_and_the_next_offset(sql, workspace):
    make_cards(workspace, 5)
    body = check_envelope(sql("SELECT card_id FROM cards LIMIT 2 OFFSET 1"))
    data = body["data"]
    assert (data["rowCount"], data["limit"], data["offset"], data["hasMore"]) == (2, 2, 1, True)
    assert "OFFSET 3" in body["instructions"]
    data = check_envelope(sql("SELECT card_id FROM cards LIMIT 2 OFFSET 3"))["data"]
    assert (data["rowCount"], data["hasMore"]) == (2, False)
    data = check_envelope(sql("SELECT card_id FROM cards LIMIT 5"))["data"]
    assert (data["rowCount"], data["hasMore"]) == (5, False)
    data = check_envelope(sql("SELECT card_id FROM cards LIMIT 4"))["data"]
    assert (data["rowCount"], data["hasMore"]) == (4, True)
    data = check_envelope(sql("SELECT card_id FROM cards OFFSET 10"))["data"]
    assert (data["rowCount"], data["hasMore"], data["offset"]) == (0, False, 10)


def test_has_more_with_the_default_limit(sql, workspace):
    make_cards(workspace, 100)
    make_card(workspace)
    body = check_envelope(sql("SELECT card_id FROM cards"))
    assert body["data"]["rowCount"] == 100 and body["data"]["hasMore"] is True
    assert "OFFSET 100" in body["instructions"]


def test_has_more_of_a_grouped_query(sql, workspace):
    for tag in ("a", "b", "c"):
        make_card(workspace, tags=[tag])
    body = check_envelope(sql("SELECT tag, COUNT(*) FROM cards GROUP BY tag LIMIT 2"))
    assert body["data"]["rows"] == [{"tag": "a", "count": 1}, {"tag": "b", "count": 1}]
    assert body["data"]["hasMore"] is True and "OFFSET 2" in body["instructions"]


# §2.2 "statementType, resource, sql, normalizedSql, rows, affectedCount, rowsOmitted, warnings, and
# dryRun when it was a dry run."


def test_write_data_keys(ok, workspace):
    card = make_card(workspace)
    for statement in (
        "INSERT INTO cards (front_text, back_text) VALUES ('a', 'b')",
        f"UPDATE cards SET back_text = 'c' WHERE card_id = '{card.id}'",
        f"DELETE FROM cards WHERE card_id = '{card.id}'",
    ):
        data = ok(statement)
        assert list(data) == WRITE_KEYS
        assert data["resource"] == "cards" and data["rowsOmitted"] is False
        assert data["warnings"] == []
    data = ok("INSERT INTO decks (name) VALUES ('d')", dry_run=True)
    assert list(data) == [*WRITE_KEYS, "dryRun"]


# "Without RETURNING: INSERT and UPDATE return one row per affected entity holding only its id
# column (card_id / deck_id), in VALUES order for INSERT; DELETE returns []."


def test_insert_returns_ids_in_values_order(ok, rows):
    data = ok(
        "INSERT INTO cards (front_text, back_text) VALUES ('one', ''), ('two', ''), ('three', '')"
    )
    assert data["affectedCount"] == 3
    assert all(list(row) == ["card_id"] and UUID.match(row["card_id"]) for row in data["rows"])
    for row, front in zip(data["rows"], ("one", "two", "three"), strict=True):
        assert rows(f"SELECT front_text FROM cards WHERE card_id = '{row['card_id']}'") == [
            {"front_text": front}
        ]
    decks = ok("INSERT INTO decks (name) VALUES ('x'), ('y')")
    assert [list(row) for row in decks["rows"]] == [["deck_id"], ["deck_id"]]


def test_update_returns_ids_and_delete_returns_nothing(ok, workspace):
    cards = make_cards(workspace, 2)
    ids = sorted(str(c.id) for c in cards)
    data = ok(f"UPDATE cards SET card_type = 'cloze' WHERE card_id IN ('{ids[0]}', '{ids[1]}')")
    assert sorted(row["card_id"] for row in data["rows"]) == ids
    assert data["affectedCount"] == 2
    data = ok(f"DELETE FROM cards WHERE card_id IN ('{ids[0]}', '{ids[1]}')")
    assert data["rows"] == [] and data["affectedCount"] == 2


# "With RETURNING: the listed columns (or all readable columns for *) of each affected row — the
# row after the write for INSERT/UPDATE, the row as it was just before deletion for DELETE."


def test_returning_rows(ok, workspace):
    data = ok(
        "INSERT INTO cards (front_text, back_text, tags) VALUES (' a ', 'b', ('x')) RETURNING front_text, tags"
    )
    assert data["rows"] == [{"front_text": "a", "tags": ["x"]}]
    card_id = ok("SELECT card_id FROM cards")["rows"][0]["card_id"]
    data = ok(
        f"UPDATE cards SET back_text = 'new' WHERE card_id = '{card_id}' RETURNING back_text, card_id"
    )
    assert data["rows"] == [{"back_text": "new", "card_id": card_id}]
    describe = [r["column_name"] for r in ok("DESCRIBE cards")["rows"] if r["column_name"] != "tag"]
    data = ok(f"DELETE FROM cards WHERE card_id = '{card_id}' RETURNING *")
    assert list(data["rows"][0]) == describe
    assert data["rows"][0]["back_text"] == "new" and data["rows"][0]["card_id"] == card_id


# §2.3 "statementType: "batch", resource: null, sql, normalizedSql (each statement's normalized
# text joined with "; "), statements (...), statementCount, affectedCountTotal (sum over writes;
# null when the batch has no write), rowsOmitted, warnings (every statement's warnings, each
# prefixed Statement N: ; each entry also keeps its own warnings)."


def test_batch_shape(ok):
    text = "SHOW TABLES ;\n INSERT INTO decks (name) VALUES ('a'), ('b') ; DESCRIBE  decks;SELECT name FROM decks LIMIT 500;"
    data = ok(text)
    assert list(data) == BATCH_KEYS
    assert data["statementType"] == "batch" and data["resource"] is None
    assert data["sql"] == text.strip()
    assert data["normalizedSql"] == (
        "SHOW TABLES; INSERT INTO decks (name) VALUES ('a'), ('b'); DESCRIBE decks; "
        "SELECT name FROM decks LIMIT 500"
    )
    assert data["statementCount"] == 4
    assert data["affectedCountTotal"] == 2 and data["rowsOmitted"] is False
    entries = data["statements"]
    assert [list(e) for e in entries] == [
        READ_ENTRY_KEYS,
        WRITE_ENTRY_KEYS,
        READ_ENTRY_KEYS,
        READ_ENTRY_KEYS,
    ]
    assert [e["statementType"] for e in entries] == ["show_tables", "insert", "describe", "select"]
    assert entries[3]["limit"] == 100 and len(entries[3]["warnings"]) == 1
    assert data["warnings"] == [f"Statement 4: {entries[3]['warnings'][0]}"]


def test_batch_without_writes_has_null_affected_count_total(ok):
    data = ok("SELECT * FROM cards; SELECT * FROM decks")
    assert data["affectedCountTotal"] is None
    assert data["rowsOmitted"] is False and data["warnings"] == []


def test_batch_of_writes_matching_nothing_totals_zero(ok):
    data = ok("DELETE FROM cards WHERE reps = 5; DELETE FROM decks WHERE name = 'x'")
    assert data["affectedCountTotal"] == 0


def test_batch_warnings_are_prefixed_per_statement(ok):
    data = ok("SELECT * FROM cards LIMIT 101; SELECT * FROM decks; SELECT * FROM decks LIMIT 1000")
    assert len(data["warnings"]) == 2
    assert data["warnings"][0].startswith("Statement 1: ")
    assert data["warnings"][1].startswith("Statement 3: ")
    assert data["warnings"][0] == "Statement 1: " + data["statements"][0]["warnings"][0]
    assert data["statements"][1]["warnings"] == []


def test_batch_has_more_names_the_statement_and_offset(sql, workspace):
    make_cards(workspace, 3)
    body = check_envelope(sql("SELECT * FROM decks; SELECT card_id FROM cards LIMIT 2"))
    assert body["data"]["statements"][1]["hasMore"] is True
    assert "OFFSET 2" in body["instructions"]


# §2.4 Values in rows.


def test_value_formats(ok, workspace):
    card = make_card(workspace, tags=["Español"])
    services.submit_review(
        workspace, card.id, "good", reviewed_at=datetime(2026, 3, 5, 10, 0, 0, 123456, tzinfo=UTC)
    )
    row = ok("SELECT * FROM cards")["rows"][0]
    assert UUID.match(row["card_id"])
    for key in ("created_at", "updated_at", "due_at", "fsrs_last_reviewed_at"):
        assert TIMESTAMP.match(row[key]), (key, row[key])
    assert row["fsrs_last_reviewed_at"] == "2026-03-05T10:00:00.123Z"
    assert type(row["reps"]) is int and type(row["lapses"]) is int
    assert isinstance(row["fsrs_stability"], float) and isinstance(row["fsrs_difficulty"], float)
    assert row["tags"] == ["Español"]
    assert isinstance(row["metadata"], dict) and row["metadata"]["version"] == 1
    assert row["fsrs_card_state"] in {"learning", "review"}
    workspace_row = ok("SELECT * FROM workspace")["rows"][0]
    assert workspace_row["workspace_id"] == str(workspace.id)
    assert workspace_row["desired_retention"] == 0.9
    assert workspace_row["learning_steps_minutes"] == [1, 10]
    assert workspace_row["relearning_steps_minutes"] == [10]
    assert workspace_row["maximum_interval_days"] == 36500
    assert workspace_row["enable_fuzz"] is True
    assert workspace_row["algorithm"] == "fsrs-6"


def test_uuid_values_are_lowercase_even_when_written_in_upper_case(ok, workspace):
    card = make_card(workspace)
    upper = str(card.id).upper()
    data = ok(f"SELECT card_id FROM cards WHERE card_id = '{upper}'")
    assert data["rows"] == [{"card_id": str(card.id)}]


def test_absent_values_are_null(ok, workspace):
    make_card(workspace)
    row = ok("SELECT * FROM cards")["rows"][0]
    for key in (
        "due_at",
        "fsrs_step_index",
        "fsrs_scheduled_days",
        "fsrs_stability",
        "fsrs_difficulty",
        "fsrs_last_reviewed_at",
    ):
        assert row[key] is None
    assert row["fsrs_card_state"] == "new" and row["tags"] == []
    assert row["card_type"] == "basic" and row["effort_level"] == "fast"


def test_date_values_are_calendar_dates_in_utc(ok, workspace):
    card = make_card(workspace)
    # 23:30 at UTC-05:00 is the next day in UTC.
    services.submit_review(
        workspace,
        card.id,
        "again",
        reviewed_at=datetime(2026, 3, 5, 23, 30, tzinfo=UTC) + timedelta(hours=1),
    )
    rows = ok("SELECT DATE(reviewed_at_client) FROM review_events")["rows"]
    assert rows == [{"date_reviewed_at_client": "2026-03-06"}]


# "Output keys are the column name or alias, folded to lower case. SELECT * and RETURNING * give
# every readable column in DESCRIBE order, without the virtual tag."


def test_output_keys_fold_to_lower_case(ok, workspace):
    make_card(workspace, front_text="Hola")
    rows = ok('SELECT FRONT_TEXT, Back_Text AS "Answer", reps AS Reviews, "CARD_TYPE" FROM cards')[
        "rows"
    ]
    assert list(rows[0]) == ["front_text", "answer", "reviews", "card_type"]


@pytest.mark.parametrize("resource", ["workspace", "cards", "decks", "review_events"])
def test_select_star_is_describe_order_without_tag(ok, workspace, resource):
    card = make_card(workspace, tags=["x"])
    make_deck(workspace)
    services.submit_review(workspace, card.id, "good")
    describe = [r["column_name"] for r in ok(f"DESCRIBE {resource}")["rows"]]
    rows = ok(f"SELECT * FROM {resource}")["rows"]
    assert list(rows[0]) == [name for name in describe if name != "tag"]


def test_returning_star_on_insert_is_describe_order(ok):
    describe = [r["column_name"] for r in ok("DESCRIBE decks")["rows"]]
    rows = ok("INSERT INTO decks (name) VALUES ('d') RETURNING *")["rows"]
    assert list(rows[0]) == describe


def test_post_helper_reports_errors_with_the_envelope(api):
    response = post_sql(api, "SELECT * FROM nowhere")
    assert check_envelope(response)["error"]["code"] == "QUERY_INVALID_SQL"
