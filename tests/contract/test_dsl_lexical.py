"""dsl.md §3 Lexical rules and §4 Statements (the accepted forms and the refused constructs)."""

from __future__ import annotations

import pytest

from tests.factories import make_card, make_cards, make_deck

pytestmark = pytest.mark.django_db


# "Keywords, function names, resource and column names are case-insensitive; identifiers are
# folded to lower case. Double-quoted identifiers ("card_id") are accepted and folded too."


def test_names_and_keywords_are_case_insensitive(rows, workspace):
    make_card(workspace, front_text="Hola")
    assert rows("select FRONT_TEXT from CARDS where Reps = 0 order BY Created_At desc") == [
        {"front_text": "Hola"}
    ]
    assert rows("SeLeCt count(*), Max(REPS) FrOm Cards") == [{"count": 1, "max_reps": 0}]


def test_double_quoted_identifiers_are_folded(rows, workspace):
    make_card(workspace, front_text="Hola")
    assert rows('SELECT "Front_Text" FROM "CARDS" WHERE "REPS" = 0') == [{"front_text": "Hola"}]


# "String literals use single quotes; '' inside is one quote; everything else (newlines, ;, \) is
# literal."


def test_string_literals(ok, rows):
    ok(
        "INSERT INTO cards (front_text, back_text) VALUES ('It''s; a\\b', 'line 1\nline 2 -- not a comment /* nor this */')"
    )
    assert rows("SELECT front_text, back_text FROM cards") == [
        {"front_text": "It's; a\\b", "back_text": "line 1\nline 2 -- not a comment /* nor this */"}
    ]
    assert rows("SELECT front_text FROM cards WHERE front_text = 'It''s; a\\b'") == [
        {"front_text": "It's; a\\b"}
    ]


# "A double-quoted token used where a value is expected gets an error whose hint says that strings
# take single quotes."


@pytest.mark.parametrize(
    "statement",
    [
        'SELECT * FROM cards WHERE front_text = "Hola"',
        'SELECT * FROM cards WHERE effort_level IN ("fast")',
        'INSERT INTO cards (front_text, back_text) VALUES ("Hola", "Hello")',
        'UPDATE cards SET back_text = "x" WHERE reps = 0',
    ],
)
def test_double_quoted_value_hint_says_single_quotes(fails, statement):
    error = fails(statement)
    assert error["code"] == "QUERY_INVALID_SQL"
    assert "single quote" in error["details"]["hint"].lower()


# "Numbers: 12, -3, 0.5, .5, 1e3. Booleans TRUE / FALSE. NULL."


def test_number_boolean_and_null_literals(rows, workspace):
    make_card(workspace)
    assert rows("SELECT reps FROM cards WHERE reps > -3 AND reps < 12 AND reps < 1e3") == [
        {"reps": 0}
    ]
    assert rows("SELECT reps FROM cards WHERE reps < 0.5 AND reps < .5") == [{"reps": 0}]
    assert rows("SELECT reps FROM cards WHERE due_at IS NULL") == [{"reps": 0}]
    assert rows("SELECT enable_fuzz FROM workspace WHERE enable_fuzz = TRUE") == [
        {"enable_fuzz": True}
    ]
    assert rows("SELECT enable_fuzz FROM workspace WHERE enable_fuzz = false") == []
    assert rows("SELECT name FROM workspace WHERE desired_retention = .9") == [{"name": "Personal"}]


# "Comments -- … (to end of line) and /* … */ are ignored."


def test_comments_are_ignored(rows, workspace):
    make_card(workspace, front_text="Hola")
    text = "-- first\nSELECT /* the\nprompt */ front_text -- trailing\nFROM cards /**/ WHERE reps = 0 -- end"
    assert rows(text) == [{"front_text": "Hola"}]


# "Whitespace is free-form: WHERE(reps=0), front_text='Hola'OR reps=0 and SELECT*FROM cards lex and
# parse like their spaced forms."


@pytest.mark.parametrize(
    ("compact", "spaced"),
    [
        (
            "SELECT front_text FROM cards WHERE(reps=0)",
            "SELECT front_text FROM cards WHERE (reps = 0)",
        ),
        (
            "SELECT front_text FROM cards WHERE front_text='Hola'OR reps=0",
            "SELECT front_text FROM cards WHERE front_text = 'Hola' OR reps = 0",
        ),
        ("SELECT*FROM cards", "SELECT * FROM cards"),
        ("SELECT\tfront_text\r\nFROM\n\ncards", "SELECT front_text FROM cards"),
        (
            "SELECT front_text FROM cards WHERE tags OVERLAP('a')AND reps>=0",
            "SELECT front_text FROM cards WHERE tags OVERLAP ('a') AND reps >= 0",
        ),
    ],
)
def test_free_form_whitespace(rows, workspace, compact, spaced):
    make_card(workspace, front_text="Hola", tags=["a"])
    make_card(workspace, front_text="Adiós")
    assert rows(compact) == rows(spaced)
    assert rows(compact)


# "Statements are separated by ; outside string literals. A trailing ; is fine; an empty statement
# (;;, a leading ;) is an error. At most 50 statements per request."


def test_semicolons_inside_strings_do_not_split(ok):
    data = ok("INSERT INTO decks (name) VALUES ('a;b'); SELECT name FROM decks")
    assert data["statementCount"] == 2
    assert data["statements"][1]["rows"] == [{"name": "a;b"}]


def test_a_trailing_semicolon_is_fine(ok):
    assert ok("SELECT * FROM cards;")["statementType"] == "select"
    assert ok("SELECT * FROM cards ; -- done")["statementType"] == "select"
    assert ok("SELECT * FROM cards; SELECT * FROM decks;")["statementCount"] == 2


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT * FROM cards;;",
        "SELECT * FROM cards;; SELECT * FROM decks",
        "; SELECT * FROM cards",
        ";",
        "SELECT * FROM cards; ; SELECT * FROM decks",
        "SELECT * FROM cards; -- nothing\n;",
    ],
)
def test_empty_statements_are_errors(reason, statement):
    assert reason(statement) == "empty_statement"


def test_fifty_statements_run_and_fifty_one_are_too_many(ok, reason):
    assert ok("; ".join(["SELECT card_id FROM cards"] * 50))["statementCount"] == 50
    assert reason("; ".join(["SELECT card_id FROM cards"] * 51)) == "too_many_statements"


# §4 Statements.


def test_show_tables_like(rows):
    assert [r["table_name"] for r in rows("SHOW TABLES LIKE 'c%'")] == ["cards"]
    assert [r["table_name"] for r in rows("SHOW TABLES LIKE '%s'")] == [
        "cards",
        "decks",
        "review_events",
    ]
    assert rows("SHOW TABLES LIKE 'nothing'") == []


def test_describe_desc_and_show_columns_agree(rows):
    assert rows("DESCRIBE cards") == rows("DESC cards") == rows("SHOW COLUMNS FROM cards")


def test_offset_before_limit_is_accepted(rows, workspace):
    make_cards(workspace, 5)
    assert rows("SELECT card_id FROM cards OFFSET 1 LIMIT 2") == rows(
        "SELECT card_id FROM cards LIMIT 2 OFFSET 1"
    )
    assert len(rows("SELECT card_id FROM cards OFFSET 1 LIMIT 2")) == 2


def test_select_distinct(rows, workspace):
    make_cards(workspace, 3, effort_level="long")
    make_card(workspace, effort_level="fast")
    assert rows("SELECT DISTINCT effort_level FROM cards") == [
        {"effort_level": "fast"},
        {"effort_level": "long"},
    ]


def test_insert_update_delete_returning_forms(ok, workspace):
    deck = make_deck(workspace, name="Old")
    data = ok(
        f"UPDATE decks SET name = 'New', tags = ('a') WHERE deck_id = '{deck.id}' RETURNING deck_id, name, tags"
    )
    assert data["rows"] == [{"deck_id": str(deck.id), "name": "New", "tags": ["a"]}]
    data = ok(f"DELETE FROM decks WHERE deck_id = '{deck.id}' RETURNING name")
    assert data["rows"] == [{"name": "New"}]


# "Not part of the language, each rejected with a message that names the construct and says what to
# do instead"


@pytest.mark.parametrize(
    ("statement", "construct"),
    [
        ("SELECT * FROM cards JOIN review_events ON cards.card_id = review_events.card_id", "JOIN"),
        ("SELECT * FROM cards LEFT JOIN decks ON 1 = 1", "JOIN"),
        ("SELECT * FROM cards INNER JOIN decks USING (tags)", "JOIN"),
        ("SELECT * FROM cards, decks", "FROM"),
        ("SELECT c.front_text FROM cards c", "qualified"),
        ("SELECT front_text FROM cards AS c", "alias"),
        ("SELECT cards.front_text FROM cards", "cards.front_text"),
        ("SELECT * FROM cards WHERE card_id IN (SELECT card_id FROM review_events)", "subquer"),
        ("SELECT * FROM (SELECT * FROM cards)", "subquer"),
        ("WITH x AS (SELECT * FROM cards) SELECT * FROM x", "WITH"),
        ("SELECT card_id FROM cards UNION SELECT card_id FROM review_events", "UNION"),
        ("SELECT card_id FROM cards INTERSECT SELECT card_id FROM review_events", "INTERSECT"),
        ("SELECT card_id FROM cards EXCEPT SELECT card_id FROM review_events", "EXCEPT"),
        ("SELECT card_id, COUNT(*) OVER () FROM cards", "window"),
        ("SELECT card_id, ROW_NUMBER() OVER (ORDER BY reps) FROM cards", "ROW_NUMBER"),
        (
            "INSERT INTO cards (front_text, back_text) SELECT front_text, back_text FROM cards",
            "INSERT",
        ),
        ("UPDATE cards SET back_text = 'x' FROM decks WHERE reps = 0", "FROM"),
        ("CREATE TABLE x (a int)", "CREATE"),
        ("DROP TABLE cards", "DROP"),
        ("ALTER TABLE cards ADD COLUMN x int", "ALTER"),
        ("TRUNCATE cards", "TRUNCATE"),
        ("BEGIN", "BEGIN"),
        ("COMMIT", "COMMIT"),
        ("GRANT SELECT ON cards TO bob", "GRANT"),
        ("SELECT 1", "FROM"),
        ("SELECT NOW()", "FROM"),
        ("SELECT LENGTH(front_text) FROM cards", "LENGTH"),
        ("SELECT * FROM cards WHERE COALESCE(due_at, NOW()) < NOW()", "COALESCE"),
    ],
)
def test_constructs_outside_the_language(fails, statement, construct):
    error = fails(statement)
    assert error["code"] == "QUERY_INVALID_SQL"
    assert error["details"]["reason"] in {"unsupported_syntax", "syntax_error"}, error
    assert construct.lower() in error["message"].lower(), error["message"]
    assert error["details"]["hint"]


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT * FROM cards JOIN review_events ON cards.card_id = review_events.card_id",
        "WITH x AS (SELECT 1) SELECT * FROM x",
        "SELECT * FROM cards UNION SELECT * FROM decks",
        "DROP TABLE cards",
        "BEGIN",
        "GRANT ALL ON cards TO bob",
        "SELECT 1",
        "SELECT LENGTH(front_text) FROM cards",
    ],
)
def test_outside_constructs_are_unsupported_syntax(reason, statement):
    assert reason(statement) == "unsupported_syntax"


def test_join_suggests_the_two_step_alternative(fails):
    error = fails("SELECT * FROM cards JOIN review_events ON cards.card_id = review_events.card_id")
    text = error["message"] + " " + error["details"]["hint"]
    assert "card_id IN (" in text
