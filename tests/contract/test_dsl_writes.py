"""dsl.md §7 Writes: what can be written, INSERT / UPDATE / DELETE rules, invariants through the
services, soft deletes and batches."""

from __future__ import annotations

import pytest

from flashcards import services
from tests.factories import make_card, make_cards, make_deck

pytestmark = pytest.mark.django_db


def pull(api, workspace) -> list[dict]:
    response = api.post(
        f"/v1/workspaces/{workspace.id}/sync/pull", {"after_change_id": 0}, format="json"
    )
    assert response.status_code == 200, response.json()
    return response.json()["data"]["changes"]


# "Only cards and decks are writable; INSERT/UPDATE/DELETE on workspace or review_events is an
# error that names the explicit command to use instead where one exists."


@pytest.mark.parametrize(
    ("statement", "command"),
    [
        (
            "UPDATE workspace SET enable_fuzz = FALSE WHERE name = 'Personal'",
            "/v1/agent/workspace/scheduler-settings",
        ),
        ("INSERT INTO workspace (name) VALUES ('x')", "/v1/agent/workspace"),
        ("DELETE FROM workspace WHERE name = 'Personal'", "/v1/agent/workspace"),
        (
            "INSERT INTO review_events (card_id, rating) VALUES ('123e4567-e89b-42d3-a456-426614174000', 2)",
            "/v1/agent/reviews",
        ),
        ("UPDATE review_events SET rating = 3 WHERE rating = 2", "/v1/agent/reviews"),
        ("DELETE FROM review_events WHERE rating = 0", "/v1/agent/reviews"),
    ],
)
def test_read_only_resources_name_the_explicit_command(fails, statement, command):
    error = fails(statement)
    assert error["code"] == "QUERY_INVALID_SQL"
    assert command in error["message"] + " " + error["details"]["hint"]


# "INSERT needs an explicit column list."


def test_insert_needs_a_column_list(fails, rows):
    error = fails("INSERT INTO cards VALUES ('q', 'a')")
    assert error["code"] == "QUERY_INVALID_SQL"
    assert "column" in (error["message"] + error["details"]["hint"]).lower()
    assert rows("SELECT * FROM cards") == []


# "Read-only columns are rejected (read_only_column, naming the writable columns)."


@pytest.mark.parametrize(
    ("statement", "writable"),
    [
        (
            "INSERT INTO cards (card_id, front_text, back_text) VALUES ('123e4567-e89b-42d3-a456-426614174000', 'q', 'a')",
            ["front_text", "back_text", "card_type", "tags", "effort_level"],
        ),
        (
            "INSERT INTO cards (front_text, back_text, reps) VALUES ('q', 'a', 3)",
            ["front_text", "back_text", "card_type", "tags", "effort_level"],
        ),
        (
            "UPDATE cards SET due_at = NOW() WHERE reps = 0",
            ["front_text", "back_text", "card_type", "tags", "effort_level"],
        ),
        ("UPDATE cards SET metadata = '{}' WHERE reps = 0", ["front_text", "back_text"]),
        ("UPDATE cards SET tag = 'x' WHERE reps = 0", ["tags"]),
        (
            "UPDATE decks SET created_at = '2026-01-01' WHERE name = 'x'",
            ["name", "effort_levels", "tags"],
        ),
        (
            "INSERT INTO decks (deck_id, name) VALUES ('123e4567-e89b-42d3-a456-426614174000', 'x')",
            ["name", "effort_levels", "tags"],
        ),
    ],
)
def test_read_only_columns(fails, statement, writable):
    error = fails(statement)
    assert error["details"]["reason"] == "read_only_column"
    text = error["message"] + " " + error["details"]["hint"]
    for name in writable:
        assert name in text


def test_unknown_columns_in_writes(reason):
    assert reason("INSERT INTO cards (front, back_text) VALUES ('q', 'a')") == "unknown_column"
    assert reason("UPDATE cards SET answer = 'x' WHERE reps = 0") == "unknown_column"


# "Values are literals or array literals; a row with too many or too few values is an error that
# shows the row. At most 100 rows per INSERT."


@pytest.mark.parametrize(
    ("statement", "row_text"),
    [
        (
            "INSERT INTO cards (front_text, back_text) VALUES ('q', 'a', 'extra')",
            "('q', 'a', 'extra')",
        ),
        (
            "INSERT INTO cards (front_text, back_text) VALUES ('ok', 'ok'), ('only one')",
            "('only one')",
        ),
    ],
)
def test_a_row_with_the_wrong_number_of_values_is_shown(fails, rows, statement, row_text):
    error = fails(statement)
    assert error["code"] == "QUERY_INVALID_SQL"
    assert row_text in error["message"]
    assert rows("SELECT * FROM cards") == []


def test_values_must_be_literals(reason):
    assert (
        reason("INSERT INTO cards (front_text, back_text) VALUES (back_text, 'a')")
        == "type_mismatch"
    )
    assert reason("UPDATE cards SET back_text = front_text WHERE reps = 0") in {
        "type_mismatch",
        "unsupported_syntax",
    }


def test_at_most_100_rows_per_insert(ok, fails, rows):
    values = ", ".join(f"('q{i}', 'a')" for i in range(101))
    error = fails(f"INSERT INTO cards (front_text, back_text) VALUES {values}")
    assert error["details"]["reason"] == "too_many_rows"
    assert rows("SELECT COUNT(*) AS n FROM cards") == [{"n": 0}]
    values = ", ".join(f"('q{i}', 'a')" for i in range(100))
    data = ok(f"INSERT INTO cards (front_text, back_text) VALUES {values}")
    assert data["affectedCount"] == 100 and len(data["rows"]) == 100


# Defaults of §5: card_type basic, tags (), effort_level fast; decks effort_levels () and tags ().


def test_insert_defaults(ok):
    data = ok(
        "INSERT INTO cards (front_text, back_text) VALUES ('q', 'a') RETURNING card_type, tags, effort_level, fsrs_card_state, reps, due_at"
    )
    assert data["rows"] == [
        {
            "card_type": "basic",
            "tags": [],
            "effort_level": "fast",
            "fsrs_card_state": "new",
            "reps": 0,
            "due_at": None,
        }
    ]
    data = ok("INSERT INTO decks (name) VALUES ('d') RETURNING effort_levels, tags")
    assert data["rows"] == [{"effort_levels": [], "tags": []}]


def test_insert_metadata_is_version_1(ok):
    data = ok("INSERT INTO cards (front_text, back_text) VALUES ('q', 'a') RETURNING metadata")
    assert data["rows"][0]["metadata"]["version"] == 1
    assert isinstance(data["rows"][0]["metadata"]["source"], dict)


# "Every write goes through the same service functions ...: invariants (trimming, non-empty front,
# tag normalisation, enum checks) are enforced there ... Invariant failures come back as
# QUERY_INVALID_SQL with reason invalid_value."


def test_invariants_on_insert(ok):
    data = ok(
        "INSERT INTO cards (front_text, back_text, card_type) VALUES ('  q  ', '  ', '  ') RETURNING front_text, back_text, card_type"
    )
    assert data["rows"] == [{"front_text": "q", "back_text": "", "card_type": "basic"}]
    data = ok("INSERT INTO decks (name) VALUES ('  Deck  ') RETURNING name")
    assert data["rows"] == [{"name": "Deck"}]


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO cards (front_text, back_text) VALUES ('', 'a')",
        "INSERT INTO cards (front_text, back_text) VALUES ('   ', 'a')",
        "INSERT INTO cards (front_text, back_text, effort_level) VALUES ('q', 'a', 'slow')",
        "INSERT INTO cards (front_text, back_text, effort_level) VALUES ('q', 'a', NULL)",
        "INSERT INTO cards (front_text, back_text) VALUES (NULL, 'a')",
        "INSERT INTO cards (front_text, back_text) VALUES ('q', NULL)",
        "INSERT INTO cards (front_text) VALUES ('q')",
        "INSERT INTO cards (back_text) VALUES ('a')",
        "INSERT INTO decks (name) VALUES ('')",
        "INSERT INTO decks (effort_levels) VALUES (('fast'))",
        "INSERT INTO decks (name, effort_levels) VALUES ('d', ('fast', 'slow'))",
        "INSERT INTO decks (name, tags) VALUES ('d', NULL)",
        "UPDATE cards SET front_text = '' WHERE reps = 0",
        "UPDATE cards SET back_text = NULL WHERE reps = 0",
        "UPDATE cards SET effort_level = 'huge' WHERE reps = 0",
        "UPDATE decks SET name = '  ' WHERE name = 'd'",
    ],
)
def test_invariant_failures_are_invalid_value(reason, rows, workspace, statement):
    make_card(workspace, front_text="kept")
    make_deck(workspace, name="d")
    assert reason(statement) == "invalid_value"
    assert rows("SELECT front_text, back_text, effort_level FROM cards") == [
        {"front_text": "kept", "back_text": "Back 0", "effort_level": "fast"}
    ]
    assert rows("SELECT name FROM decks") == [{"name": "d"}]


def test_type_mismatches_in_writes(reason):
    assert reason("INSERT INTO cards (front_text, back_text) VALUES (1, 'a')") == "type_mismatch"
    assert reason("UPDATE cards SET effort_level = 3 WHERE reps = 0") == "type_mismatch"


# "UPDATE and DELETE require a non-empty WHERE."


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE cards SET back_text = 'x'",
        "DELETE FROM cards",
        "DELETE FROM decks",
        "UPDATE decks SET name = 'x'",
    ],
)
def test_update_and_delete_need_where(reason, rows, workspace, statement):
    make_card(workspace)
    assert reason(statement) == "missing_where"
    assert len(rows("SELECT * FROM cards")) == 1


@pytest.mark.parametrize(
    "statement", ["DELETE FROM cards WHERE", "UPDATE cards SET back_text = 'x' WHERE "]
)
def test_an_empty_where_is_a_syntax_error(reason, statement):
    assert reason(statement) == "syntax_error"


# "A WHERE matching more than 100 rows is rejected before anything is written (too_many_rows,
# telling the model to narrow the WHERE or page by ids). A WHERE matching nothing succeeds with
# affectedCount: 0."


@pytest.mark.parametrize(
    "statement",
    ["UPDATE cards SET back_text = 'changed' WHERE reps = 0", "DELETE FROM cards WHERE reps = 0"],
)
def test_more_than_100_matched_rows_is_too_many_rows(fails, rows, workspace, statement):
    make_cards(workspace, 100)
    make_card(workspace)
    error = fails(statement)
    assert error["details"]["reason"] == "too_many_rows"
    text = (error["message"] + " " + error["details"]["hint"]).lower()
    assert "where" in text and ("id" in text or "page" in text)
    assert rows("SELECT COUNT(*) AS n FROM cards WHERE back_text = 'changed'") == [{"n": 0}]
    assert rows("SELECT COUNT(*) AS n FROM cards") == [{"n": 101}]


def test_exactly_100_matched_rows_are_written(ok, rows, workspace):
    make_cards(workspace, 100)
    data = ok("UPDATE cards SET back_text = 'changed' WHERE reps = 0")
    assert data["affectedCount"] == 100 and len(data["rows"]) == 100
    assert rows("SELECT COUNT(*) AS n FROM cards WHERE back_text = 'changed'") == [{"n": 100}]


def test_a_where_matching_nothing_succeeds_with_zero(ok):
    for statement in (
        "UPDATE cards SET back_text = 'x' WHERE reps = 99",
        "DELETE FROM cards WHERE card_id = '123e4567-e89b-42d3-a456-426614174000'",
        "UPDATE decks SET name = 'x' WHERE name = 'nothing' RETURNING *",
    ):
        data = ok(statement)
        assert data["affectedCount"] == 0 and data["rows"] == []


# "DELETE is a soft delete: the row disappears from every later read and from deck contents, its
# review events stay, and syncing clients receive the tombstone."


def test_delete_is_soft_and_syncs_a_tombstone(ok, rows, api, workspace):
    card = make_card(workspace, front_text="bye")
    services.submit_review(workspace, card.id, "again")
    data = ok(f"DELETE FROM cards WHERE card_id = '{card.id}' RETURNING front_text, reps")
    assert data["rows"] == [{"front_text": "bye", "reps": 1}]
    assert rows("SELECT * FROM cards") == []
    assert rows("SELECT card_id FROM review_events") == [{"card_id": str(card.id)}]
    assert ok(f"DELETE FROM cards WHERE card_id = '{card.id}'")["affectedCount"] == 0
    changes = [c for c in pull(api, workspace) if c["entity_id"] == str(card.id)]
    assert len(changes) == 1
    assert changes[0]["payload"]["deleted_at"] is not None


# "updated_at and sync metadata are stamped there, and a change-log entry is recorded there in the
# same transaction."


def test_update_stamps_updated_at_and_records_a_change(ok, rows, api, workspace):
    card = make_card(workspace)
    before = rows(f"SELECT updated_at FROM cards WHERE card_id = '{card.id}'")[0]["updated_at"]
    changes_before = len(pull(api, workspace))
    data = ok(
        f"UPDATE cards SET back_text = 'new' WHERE card_id = '{card.id}' RETURNING updated_at, back_text"
    )
    assert data["rows"][0]["back_text"] == "new"
    assert data["rows"][0]["updated_at"] >= before
    changes = pull(api, workspace)
    assert len(changes) == changes_before
    latest = next(c for c in changes if c["entity_id"] == str(card.id))
    assert latest["payload"]["back_text"] == "new"


def test_insert_is_visible_to_sync(ok, api, workspace):
    data = ok("INSERT INTO decks (name, tags) VALUES ('Synced', ('x'))")
    deck_id = data["rows"][0]["deck_id"]
    assert any(c["entity_id"] == deck_id for c in pull(api, workspace))


# "A batch with any write is atomic: all statements or none. Later statements see earlier effects.
# A failure in statement N says Statement N failed: … and keeps the original reason."


def test_later_statements_see_earlier_effects(ok):
    data = ok(
        "INSERT INTO cards (front_text, back_text) VALUES ('fresh', 'a'); "
        "UPDATE cards SET back_text = 'b' WHERE front_text = 'fresh' RETURNING back_text; "
        "SELECT front_text, back_text FROM cards; "
        "DELETE FROM cards WHERE front_text = 'fresh'; "
        "SELECT COUNT(*) AS n FROM cards"
    )
    entries = data["statements"]
    assert entries[1]["rows"] == [{"back_text": "b"}]
    assert entries[2]["rows"] == [{"front_text": "fresh", "back_text": "b"}]
    assert entries[3]["affectedCount"] == 1
    assert entries[4]["rows"] == [{"n": 0}]
    assert data["affectedCountTotal"] == 3


@pytest.mark.parametrize(
    ("third", "reason_code"),
    [
        ("INSERT INTO cards (front_text, back_text) VALUES ('', 'x')", "invalid_value"),
        ("UPDATE cards SET reps = 1 WHERE reps = 0", "read_only_column"),
        ("SELECT nope FROM cards", "unknown_column"),
        ("DELETE FROM cards", "missing_where"),
        ("SELEC 1", "syntax_error"),
    ],
)
def test_a_failing_statement_rolls_back_the_whole_batch(fails, rows, workspace, third, reason_code):
    card = make_card(workspace, back_text="original")
    error = fails(
        "INSERT INTO decks (name) VALUES ('batch deck'); "
        f"UPDATE cards SET back_text = 'changed' WHERE card_id = '{card.id}'; {third}"
    )
    assert error["message"].startswith("Statement 3 failed: ")
    assert error["details"]["reason"] == reason_code
    assert error["details"]["statementIndex"] == 3
    assert rows("SELECT back_text FROM cards") == [{"back_text": "original"}]
    assert rows("SELECT * FROM decks") == []


def test_too_many_rows_in_a_batch_is_reported_for_its_statement(fails, rows, workspace):
    make_cards(workspace, 100)
    make_card(workspace)
    error = fails("INSERT INTO decks (name) VALUES ('d'); DELETE FROM cards WHERE reps = 0")
    assert error["details"]["reason"] == "too_many_rows"
    assert error["details"]["statementIndex"] == 2
    assert error["message"].startswith("Statement 2 failed: ")
    assert rows("SELECT * FROM decks") == []


def test_update_of_several_columns(ok, workspace):
    card = make_card(workspace)
    data = ok(
        f"UPDATE cards SET front_text = ' F ', back_text = 'B', card_type = 'cloze', tags = ('t'), "
        f"effort_level = 'long' WHERE card_id = '{card.id}' RETURNING front_text, back_text, card_type, tags, effort_level"
    )
    assert data["rows"] == [
        {
            "front_text": "F",
            "back_text": "B",
            "card_type": "cloze",
            "tags": ["t"],
            "effort_level": "long",
        }
    ]


def test_update_where_can_use_tags_and_match(ok, rows, workspace):
    make_card(workspace, front_text="one", tags=["English"])
    make_card(workspace, front_text="two", tags=["other"])
    assert (
        ok("UPDATE cards SET effort_level = 'long' WHERE tags OVERLAP ('english')")["affectedCount"]
        == 1
    )
    assert ok("DELETE FROM cards WHERE MATCH('TWO')")["affectedCount"] == 1
    assert rows("SELECT front_text, effort_level FROM cards") == [
        {"front_text": "one", "effort_level": "long"}
    ]


def test_update_and_delete_where_cannot_name_tag_and_say_what_to_use(fails):
    # tag makes one row per (card, tag), which only a SELECT has (§5).
    for statement in (
        "UPDATE cards SET back_text = 'x' WHERE tag = 'a'",
        "DELETE FROM cards WHERE LOWER(tag) LIKE 'a%'",
    ):
        error = fails(statement)
        assert error["details"]["reason"] == "unsupported_syntax"
        assert "tags OVERLAP" in error["details"]["hint"]
