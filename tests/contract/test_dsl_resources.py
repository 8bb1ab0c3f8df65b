"""dsl.md §5 Resources: SHOW TABLES, DESCRIBE row shapes, visibility, default orders, the virtual
`tag` column and UNNEST, internal fields."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from flashcards import services
from tests.factories import make_card, make_cards, make_deck

pytestmark = pytest.mark.django_db

DESCRIBE_KEYS = [
    "column_name",
    "type",
    "nullable",
    "read_only",
    "filterable",
    "sortable",
    "description",
    "allowed_values",
]
TYPES = {
    "uuid",
    "string",
    "integer",
    "number",
    "boolean",
    "datetime",
    "json",
    "string[]",
    "integer[]",
}


# "SHOW TABLES returns rows {table_name, writable, description} in this order"


def test_show_tables(rows):
    result = rows("SHOW TABLES")
    assert [list(r) for r in result] == [["table_name", "writable", "description"]] * 4
    assert [(r["table_name"], r["writable"]) for r in result] == [
        ("workspace", False),
        ("cards", True),
        ("decks", True),
        ("review_events", False),
    ]
    assert all(isinstance(r["description"], str) and r["description"] for r in result)


# "DESCRIBE returns one row per column, in the order of the tables below (the cards' virtual tag
# last), {column_name, type, nullable, read_only, filterable, sortable, description,
# allowed_values}"

EXPECTED_COLUMNS = {
    "cards": [
        ("card_id", "uuid", False, True),
        ("front_text", "string", False, False),
        ("back_text", "string", False, False),
        ("card_type", "string", False, False),
        ("tags", "string[]", False, False),
        ("effort_level", "string", False, False),
        ("metadata", "json", False, True),
        ("due_at", "datetime", True, True),
        ("created_at", "datetime", False, True),
        ("updated_at", "datetime", False, True),
        ("reps", "integer", False, True),
        ("lapses", "integer", False, True),
        ("fsrs_card_state", "string", False, True),
        ("fsrs_step_index", "integer", True, True),
        ("fsrs_scheduled_days", "integer", True, True),
        ("fsrs_stability", "number", True, True),
        ("fsrs_difficulty", "number", True, True),
        ("fsrs_last_reviewed_at", "datetime", True, True),
        ("tag", "string", False, True),
    ],
    "decks": [
        ("deck_id", "uuid", False, True),
        ("name", "string", False, False),
        ("effort_levels", "string[]", False, False),
        ("tags", "string[]", False, False),
        ("created_at", "datetime", False, True),
        ("updated_at", "datetime", False, True),
    ],
    "review_events": [
        ("review_event_id", "uuid", False, True),
        ("card_id", "uuid", False, True),
        ("client_event_id", "string", False, True),
        ("rating", "integer", False, True),
        ("review_grade", "string", False, True),
        ("reviewed_at_client", "datetime", False, True),
        ("reviewed_at_server", "datetime", False, True),
    ],
    "workspace": [
        ("workspace_id", "uuid", False, True),
        ("name", "string", False, True),
        ("created_at", "datetime", False, True),
        ("algorithm", "string", False, True),
        ("desired_retention", "number", False, True),
        ("learning_steps_minutes", "integer[]", False, True),
        ("relearning_steps_minutes", "integer[]", False, True),
        ("maximum_interval_days", "integer", False, True),
        ("enable_fuzz", "boolean", False, True),
        ("time_zone", "string", False, True),
        ("day_starts_at_hour", "integer", False, True),
    ],
}
ALLOWED = {
    ("cards", "effort_level"): ["fast", "medium", "long"],
    ("cards", "fsrs_card_state"): ["new", "learning", "review", "relearning"],
    ("decks", "effort_levels"): ["fast", "medium", "long"],
    ("review_events", "review_grade"): ["again", "hard", "good", "easy"],
}


@pytest.mark.parametrize("resource", list(EXPECTED_COLUMNS))
def test_describe_rows(rows, resource):
    result = rows(f"DESCRIBE {resource}")
    assert all(list(r) == DESCRIBE_KEYS for r in result)
    assert [(r["column_name"], r["type"], r["nullable"], r["read_only"]) for r in result] == (
        EXPECTED_COLUMNS[resource]
    )
    for row in result:
        assert row["type"] in TYPES
        assert isinstance(row["filterable"], bool) and isinstance(row["sortable"], bool)
        assert isinstance(row["description"], str) and row["description"]
        assert row["allowed_values"] == ALLOWED.get((resource, row["column_name"])), row


def test_describe_filterable_and_sortable_flags(rows):
    cards = {r["column_name"]: r for r in rows("DESCRIBE cards")}
    # "metadata ... not filterable, not sortable"
    assert (cards["metadata"]["filterable"], cards["metadata"]["sortable"]) == (False, False)
    for name in (
        "card_id",
        "front_text",
        "due_at",
        "reps",
        "fsrs_stability",
        "effort_level",
        "tag",
    ):
        assert cards[name]["filterable"] and cards[name]["sortable"], name
    assert cards["tags"]["filterable"] is True
    workspace = {r["column_name"]: r for r in rows("DESCRIBE workspace")}
    # "Columns that are not filterable (json, the workspace step arrays) reject every operator."
    assert workspace["learning_steps_minutes"]["filterable"] is False
    assert workspace["relearning_steps_minutes"]["filterable"] is False


# "cards — flashcards; soft-deleted cards are never visible"; "review_events — the immutable review
# log (includes reviews of cards deleted later)"; "decks — soft-deleted decks are never visible"


def test_soft_deleted_rows_are_invisible_but_their_reviews_stay(ok, rows, workspace):
    card, kept = make_cards(workspace, 2, tags=["gone"])
    services.submit_review(workspace, card.id, "good")
    deck = make_deck(workspace, name="Old")
    ok(f"DELETE FROM cards WHERE card_id = '{card.id}'")
    ok(f"DELETE FROM decks WHERE deck_id = '{deck.id}'")
    assert rows("SELECT card_id FROM cards") == [{"card_id": str(kept.id)}]
    assert rows(f"SELECT card_id FROM cards WHERE card_id = '{card.id}'") == []
    assert rows("SELECT tag, COUNT(*) FROM cards GROUP BY tag") == [{"tag": "gone", "count": 1}]
    assert rows("SELECT * FROM decks") == []
    assert rows("SELECT card_id FROM review_events") == [{"card_id": str(card.id)}]
    assert ok(f"UPDATE cards SET back_text = 'x' WHERE card_id = '{card.id}'")["affectedCount"] == 0


def test_workspace_is_one_row(rows, workspace):
    result = rows("SELECT workspace_id, name FROM workspace")
    assert result == [{"workspace_id": str(workspace.id), "name": "Personal"}]


# "Default order: created_at DESC, card_id ASC."


def _ids(result, key):
    return [r[key] for r in result]


def _one_second_later(monkeypatch, created_at):
    """The next write's clock: a second after ``created_at``, so "later" never shares its
    millisecond with the batch however fast the writes are."""
    import flashcards.services.content as content

    monkeypatch.setattr(content, "now_ms", lambda: created_at + timedelta(seconds=1))


def test_cards_default_order(rows, workspace, monkeypatch):
    batch = make_cards(workspace, 4)  # one service call: the same created_at
    _one_second_later(monkeypatch, batch[0].created_at)
    later = make_card(workspace)
    result = rows("SELECT card_id, created_at FROM cards")
    assert result[0]["card_id"] == str(later.id)
    assert _ids(result[1:], "card_id") == sorted(str(c.id) for c in batch)
    assert len({r["created_at"] for r in result[1:]}) == 1


# "Default order: created_at DESC, deck_id DESC."


def test_decks_default_order(rows, workspace, monkeypatch):
    batch = services.create_decks(workspace, [{"name": f"d{i}"} for i in range(4)])
    _one_second_later(monkeypatch, batch[0].created_at)
    later = make_deck(workspace)
    result = rows("SELECT deck_id FROM decks")
    assert result[0]["deck_id"] == str(later.id)
    assert _ids(result[1:], "deck_id") == sorted((str(d.id) for d in batch), reverse=True)


# "review_events ... Default order: reviewed_at_server DESC, review_event_id DESC."


def test_review_events_default_order(rows, workspace):
    cards = make_cards(workspace, 3)
    moment = datetime(2026, 3, 5, tzinfo=UTC)
    events = [
        services.submit_review(workspace, c.id, "good", reviewed_at=moment + timedelta(minutes=i))
        for i, c in enumerate(cards)
    ]
    result = rows("SELECT review_event_id, reviewed_at_server FROM review_events")
    servers = [r["reviewed_at_server"] for r in result]
    assert servers == sorted(servers, reverse=True)
    assert sorted(_ids(result, "review_event_id")) == sorted(str(e.review_event.id) for e in events)
    for earlier, later in itertools.pairwise(result):
        if earlier["reviewed_at_server"] == later["reviewed_at_server"]:
            assert earlier["review_event_id"] > later["review_event_id"]


def test_review_grade_is_the_rating_as_a_word(rows, workspace):
    cards = make_cards(workspace, 4)
    for card, rating in zip(cards, range(4), strict=True):
        services.submit_review(workspace, card.id, rating)
    result = rows("SELECT rating, review_grade FROM review_events ORDER BY rating")
    assert result == [
        {"rating": 0, "review_grade": "again"},
        {"rating": 1, "review_grade": "hard"},
        {"rating": 2, "review_grade": "good"},
        {"rating": 3, "review_grade": "easy"},
    ]
    assert rows("SELECT rating FROM review_events WHERE review_grade = 'easy'") == [{"rating": 3}]


# "The virtual column tag: a cards SELECT that names tag anywhere (select list, WHERE, GROUP BY,
# HAVING, ORDER BY) returns one row per (card, tag) pair; a card without tags yields no such row.
# ... The rows of one card come in the card's own tag order."


def test_tag_in_the_select_list_gives_one_row_per_card_and_tag(rows, workspace):
    card = make_card(workspace, tags=["zeta", "Alpha", "mid"])
    make_card(workspace, tags=[])
    result = rows("SELECT card_id, tag FROM cards")
    assert result == [{"card_id": str(card.id), "tag": t} for t in ("zeta", "Alpha", "mid")]


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT card_id FROM cards WHERE tag = 'b'",
        "SELECT card_id FROM cards WHERE tag != 'zzz'",
        "SELECT card_id FROM cards ORDER BY tag",
    ],
)
def test_naming_tag_anywhere_explodes_rows(rows, workspace, statement):
    make_card(workspace, tags=["a", "b"])
    make_card(workspace, tags=[])
    expected = {"SELECT card_id FROM cards WHERE tag = 'b'": 1}.get(statement, 2)
    assert len(rows(statement)) == expected


def test_tag_in_group_by_and_having(rows, workspace):
    make_card(workspace, tags=["a", "b"])
    make_card(workspace, tags=["a"])
    make_card(workspace, tags=[])
    assert rows("SELECT tag, COUNT(*) AS card_count FROM cards GROUP BY tag") == [
        {"tag": "a", "card_count": 2},
        {"tag": "b", "card_count": 1},
    ]
    assert rows("SELECT COUNT(*) AS n FROM cards GROUP BY tag HAVING COUNT(*) > 1") == [{"n": 2}]
    assert rows("SELECT COUNT(*) FROM cards") == [{"count": 3}]
    assert rows("SELECT COUNT(tag) AS n FROM cards") == [{"n": 3}]


# "FROM cards UNNEST tags AS <alias> is the explicit form of the same thing under a name of the
# caller's choice (only cards.tags can be unnested). SELECT * with UNNEST appends the alias as the
# last key."


def test_unnest_alias_is_the_tag_under_another_name(rows, workspace):
    card = make_card(workspace, tags=["x", "Y"])
    make_card(workspace, tags=[])
    result = rows("SELECT card_id, t FROM cards UNNEST tags AS t")
    assert result == [{"card_id": str(card.id), "t": "x"}, {"card_id": str(card.id), "t": "Y"}]
    assert rows("SELECT t, COUNT(*) FROM cards UNNEST tags AS t WHERE t = 'y' GROUP BY t") == [
        {"t": "Y", "count": 1}
    ]
    assert rows("SELECT t FROM cards UNNEST tags AS t ORDER BY t DESC") == [{"t": "Y"}, {"t": "x"}]


def test_select_star_with_unnest_appends_the_alias_last(ok, rows, workspace):
    make_card(workspace, tags=["x", "y"])
    describe = [r["column_name"] for r in rows("DESCRIBE cards") if r["column_name"] != "tag"]
    result = rows("SELECT * FROM cards UNNEST tags AS label")
    assert len(result) == 2
    assert list(result[0]) == [*describe, "label"]
    assert [r["label"] for r in result] == ["x", "y"]
    assert result[0]["tags"] == ["x", "y"]


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT * FROM decks UNNEST tags AS t",
        "SELECT * FROM cards UNNEST front_text AS t",
        "SELECT * FROM review_events UNNEST tags AS t",
    ],
)
def test_only_cards_tags_can_be_unnested(reason, statement):
    assert reason(statement) in {"unsupported_syntax", "unknown_column", "syntax_error"}


# "Internal fields (workspace ids on rows, deleted_at, sync metadata such as client timestamps,
# replica and operation ids) are not columns. Naming one gives unknown_column with a hint;
# deleted_at specifically says that deleted rows are never visible, so the condition can be
# dropped."


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT workspace_id FROM cards",
        "SELECT * FROM cards WHERE deleted_at IS NULL",
        "SELECT client_updated_at FROM cards",
        "SELECT * FROM decks WHERE replica_id = 'x'",
        "SELECT operation_id FROM cards",
        "SELECT * FROM review_events WHERE workspace_id = '123e4567-e89b-42d3-a456-426614174000'",
    ],
)
def test_internal_fields_are_unknown_columns_with_a_hint(fails, statement):
    error = fails(statement)
    assert error["details"]["reason"] == "unknown_column"
    assert error["details"]["hint"]


def test_deleted_at_hint_says_the_condition_can_be_dropped(fails):
    hint = fails("SELECT * FROM cards WHERE deleted_at IS NULL")["details"]["hint"].lower()
    assert "deleted" in hint and "never visible" in hint and "drop" in hint
