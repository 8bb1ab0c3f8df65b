"""Reads through POST /v1/agent/sql and /v1/agent/sql/query: the §2.1 shape, paging, values."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest

from dsl.schema import RESOURCES, get_resource
from flashcards import services
from flashcards.services import now_ms
from tests.factories import make_card, make_cards
from tests.support.envelope import QUERY_URL, check_envelope, post_sql

pytestmark = pytest.mark.django_db

SELECT_KEYS = [
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
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def test_select_shape_and_values(ok, workspace):
    card = make_card(workspace, front_text="Hola", back_text="Hello", tags=["Spanish"])
    services.submit_review(workspace, card.id, "good")
    data = ok("  SELECT * FROM cards -- all of them\n;  ")
    assert list(data) == SELECT_KEYS
    assert data["sql"] == "SELECT * FROM cards -- all of them\n;"
    assert data["normalizedSql"] == "SELECT * FROM cards"
    assert (data["limit"], data["offset"], data["hasMore"], data["rowCount"]) == (100, 0, False, 1)
    row = data["rows"][0]
    assert list(row) == [c.name for c in get_resource("cards").readable_columns]
    assert row["card_id"] == str(card.id) and row["card_id"] == row["card_id"].lower()
    assert row["tags"] == ["Spanish"] and row["metadata"]["version"] == 1
    assert row["reps"] == 1 and isinstance(row["fsrs_stability"], float)
    for key in ("created_at", "updated_at", "due_at", "fsrs_last_reviewed_at"):
        assert TIMESTAMP.match(row[key]), key


def test_aliases_functions_and_dates(ok, workspace):
    make_cards(workspace, 2)
    data = ok(
        "SELECT DATE(created_at), COUNT(*) AS Total, MAX(reps) FROM cards GROUP BY DATE(created_at)"
    )
    day = now_ms().date().isoformat()
    assert data["rows"] == [{"date_created_at": day, "total": 2, "max_reps": 0}]


def test_paging_never_overlaps_and_names_the_next_offset(sql, workspace):
    cards = make_cards(workspace, 5)
    seen = []
    offset = 0
    while True:
        response = sql(f"SELECT card_id FROM cards ORDER BY reps LIMIT 2 OFFSET {offset}")
        body = check_envelope(response)
        data = body["data"]
        seen += [row["card_id"] for row in data["rows"]]
        if not data["hasMore"]:
            assert "OFFSET" not in body["instructions"]
            break
        assert f"OFFSET {offset + 2}" in body["instructions"]
        offset += 2
    assert seen == sorted(str(card.id) for card in cards)


def test_limit_above_maximum_is_lowered_with_a_warning(ok, workspace):
    make_cards(workspace, 3)
    data = ok("SELECT card_id FROM cards LIMIT 500")
    assert data["limit"] == 100 and data["rowCount"] == 3
    assert len(data["warnings"]) == 1 and "100" in data["warnings"][0]


def test_has_more_is_exact_at_the_boundary(ok, workspace):
    make_cards(workspace, 4)
    assert ok("SELECT card_id FROM cards LIMIT 4")["hasMore"] is False
    assert ok("SELECT card_id FROM cards LIMIT 3")["hasMore"] is True
    assert ok("SELECT card_id FROM cards OFFSET 3 LIMIT 1")["hasMore"] is False


def test_show_tables_and_like(ok):
    data = ok("SHOW TABLES")
    assert data["statementType"] == "show_tables" and data["resource"] is None
    assert [row["table_name"] for row in data["rows"]] == [r.name for r in RESOURCES]
    assert list(data["rows"][0]) == ["table_name", "writable", "description"]
    assert (data["limit"], data["offset"], data["hasMore"]) == (None, None, False)
    assert [r["table_name"] for r in ok("SHOW TABLES LIKE '%s'")["rows"]] == [
        "cards",
        "decks",
        "review_events",
    ]


@pytest.mark.parametrize("statement", ["DESCRIBE cards", "DESC cards", "SHOW COLUMNS FROM cards"])
def test_describe(ok, statement):
    data = ok(statement)
    assert data["statementType"] == "describe" and data["resource"] == "cards"
    names = [row["column_name"] for row in data["rows"]]
    assert names[0] == "card_id" and names[-1] == "tag"
    effort = next(row for row in data["rows"] if row["column_name"] == "effort_level")
    assert effort == {
        "column_name": "effort_level",
        "type": "string",
        "nullable": False,
        "read_only": False,
        "filterable": True,
        "sortable": True,
        "description": effort["description"],
        "allowed_values": ["fast", "medium", "long"],
    }


def test_default_orders(ok, workspace, frozen_clock):
    # Cards: created_at DESC; review events: reviewed_at_server DESC. The clock moves a
    # millisecond between the rows, so each gets its own.
    first = make_card(workspace, front_text="first")
    frozen_clock.advance(timedelta(milliseconds=1))
    second = make_card(workspace, front_text="second")
    assert [r["front_text"] for r in ok("SELECT front_text FROM cards")["rows"]] == [
        "second",
        "first",
    ]
    first_review = services.submit_review(workspace, first.id, 2).review_event
    frozen_clock.advance(timedelta(milliseconds=1))
    second_review = services.submit_review(workspace, second.id, 2).review_event
    rows = ok("SELECT review_event_id FROM review_events")["rows"]
    assert [r["review_event_id"] for r in rows] == [str(second_review.id), str(first_review.id)]


def test_unnest_alias_comes_last_in_star(ok, workspace):
    make_card(workspace, tags=["a", "b"])
    rows = ok("SELECT * FROM cards UNNEST tags AS label")["rows"]
    assert [row["label"] for row in rows] == ["a", "b"]
    assert list(rows[0])[-1] == "label" and "tag" not in rows[0]


def test_dry_run_flag_on_reads(ok):
    data = ok("SHOW TABLES", dry_run=True)
    assert list(data)[-1] == "dryRun" and data["dryRun"] is True
    assert "dryRun" not in ok("SHOW TABLES")


def test_query_endpoint_runs_reads_and_batches(api, workspace):
    make_cards(workspace, 2)
    response = post_sql(api, "SELECT COUNT(*) AS n FROM cards; SHOW TABLES", url=QUERY_URL)
    body = check_envelope(response)
    data = body["data"]
    assert data["statementType"] == "batch" and data["affectedCountTotal"] is None
    assert data["statements"][0]["rows"] == [{"n": 2}]
    assert "sql" not in data["statements"][0]


def test_session_user_reads_through_the_browsable_surface(client, user, workspace):
    make_card(workspace, front_text="mine")
    client.force_login(user)
    response = client.post(
        "/v1/agent/sql",
        {"sql": "SELECT front_text FROM cards"},
        content_type="application/json",
    )
    assert response.status_code == 200
    assert response.json()["data"]["rows"] == [{"front_text": "mine"}]


def test_browsable_form_page_renders_for_humans(client, user, workspace):
    client.force_login(user)
    response = client.get("/v1/agent/sql", HTTP_ACCEPT="text/html")
    # The form page opens under a 200 that says what to do, not a red 405 (issue 11).
    assert response.status_code == 200
    assert b"<textarea" in response.content and b'name="sql"' in response.content
    assert b"405" not in response.content and b"Method Not Allowed" not in response.content
    assert b"This field is required" not in response.content


def test_a_json_get_is_still_a_405_envelope(client, user, workspace):
    client.force_login(user)
    response = client.get("/v1/agent/sql", HTTP_ACCEPT="application/json")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "METHOD_NOT_ALLOWED"


def test_the_browsable_form_keeps_the_statement_after_a_submit(client, user, workspace):
    client.force_login(user)
    statement = "SELECT fron_text FROM cards WHERE tags OVERLAP ('kept')"
    response = client.post("/v1/agent/sql", {"sql": statement}, HTTP_ACCEPT="text/html")
    assert response.status_code == 400
    page = response.content.decode()
    textarea = page[page.index('<textarea name="sql"') :]
    textarea = textarea[: textarea.index("</textarea>")]
    assert "SELECT fron_text FROM cards WHERE tags OVERLAP (&#x27;kept&#x27;)" in textarea


def test_browsable_form_post(client, user, workspace):
    make_card(workspace, front_text="from the form")
    client.force_login(user)
    response = client.post(
        "/v1/agent/sql", {"sql": "SELECT front_text FROM cards", "dry_run": "on"}
    )
    body = response.json()
    assert body["data"]["rows"] == [{"front_text": "from the form"}] and body["data"]["dryRun"]


def test_explicit_workspace_id(api, user, workspace):
    second = services.create_workspace(user, "Second")
    make_card(second, front_text="elsewhere")
    response = post_sql(api, "SELECT front_text FROM cards", workspace_id=str(second.id))
    assert response.json()["data"]["rows"] == [{"front_text": "elsewhere"}]
    response = post_sql(api, "SELECT front_text FROM cards", workspace_id=str(uuid.uuid4()))
    assert response.status_code == 404
    assert check_envelope(response)["error"]["code"] == "WORKSPACE_NOT_FOUND"
