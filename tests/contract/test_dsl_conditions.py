"""dsl.md §6.1 Conditions: precedence, every operator, typing, datetime and array literals, the
tag rules — on whichever database the suite runs against."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from flashcards import services
from tests.factories import make_card, make_deck

pytestmark = pytest.mark.django_db


def fronts(result) -> list[str]:
    return sorted(r["front_text"] for r in result)


@pytest.fixture
def numbered(workspace):
    """Cards A..E with reps 0..4 (through reviews), and a few text and tag variations."""
    cards = services.create_cards(
        workspace,
        [
            {"front_text": "A", "back_text": "", "tags": ["english"], "effort_level": "fast"},
            {"front_text": "B", "back_text": "", "tags": ["grammar"], "effort_level": "medium"},
            {
                "front_text": "C",
                "back_text": "",
                "tags": ["english", "grammar"],
                "effort_level": "long",
            },
            {"front_text": "D", "back_text": "", "tags": [], "effort_level": "fast"},
            {"front_text": "E", "back_text": "", "tags": ["verbs"], "effort_level": "medium"},
        ],
    )
    moment = datetime(2025, 1, 1, tzinfo=UTC)
    for reps, card in enumerate(cards):
        for i in range(reps):
            services.submit_review(
                workspace, card.id, "good", reviewed_at=moment.replace(day=1 + i)
            )
    return cards


# "Precedence: NOT binds tighter than AND, which binds tighter than OR; parentheses group."


def test_and_binds_tighter_than_or(rows, numbered):
    assert fronts(rows("SELECT front_text FROM cards WHERE reps = 0 OR reps = 1 AND reps = 2")) == [
        "A"
    ]
    assert fronts(rows("SELECT front_text FROM cards WHERE reps = 1 AND reps = 2 OR reps = 0")) == [
        "A"
    ]
    assert fronts(
        rows("SELECT front_text FROM cards WHERE (reps = 0 OR reps = 1) AND reps = 1")
    ) == ["B"]


def test_not_binds_tighter_than_and(rows, numbered):
    assert fronts(rows("SELECT front_text FROM cards WHERE NOT reps = 0 AND reps < 2")) == ["B"]
    assert fronts(rows("SELECT front_text FROM cards WHERE NOT (reps = 0 AND reps < 2)")) == [
        "B",
        "C",
        "D",
        "E",
    ]
    assert fronts(rows("SELECT front_text FROM cards WHERE NOT reps = 0 OR reps = 0")) == [
        "A",
        "B",
        "C",
        "D",
        "E",
    ]
    assert fronts(rows("SELECT front_text FROM cards WHERE NOT NOT reps = 0")) == ["A"]


# "col = v, !=, <>, <, <=, >, >= | scalar columns | typed comparison"


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ("reps = 2", ["C"]),
        ("reps != 2", ["A", "B", "D", "E"]),
        ("reps <> 2", ["A", "B", "D", "E"]),
        ("reps < 2", ["A", "B"]),
        ("reps <= 2", ["A", "B", "C"]),
        ("reps > 2", ["D", "E"]),
        ("reps >= 2", ["C", "D", "E"]),
        ("front_text = 'C'", ["C"]),
        ("front_text > 'C'", ["D", "E"]),
        ("effort_level = 'medium'", ["B", "E"]),
        ("effort_level != 'fast'", ["B", "C", "E"]),
        ("fsrs_card_state = 'new'", ["A"]),
        ("fsrs_card_state != 'new'", ["B", "C", "D", "E"]),
    ],
)
def test_scalar_comparisons(rows, numbered, condition, expected):
    assert fronts(rows(f"SELECT front_text FROM cards WHERE {condition}")) == expected


# "integers and numbers take numbers"


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ("reps < 1.5", ["A", "B"]),
        ("reps > 2.5", ["D", "E"]),
        ("reps = 2.0", ["C"]),
        ("reps = 2.5", []),
        ("reps != 2.5", ["A", "B", "C", "D", "E"]),
        ("reps IN (1.5, 2)", ["C"]),
        ("reps BETWEEN 0.5 AND 2.5", ["B", "C"]),
        ("reps >= 1e0", ["B", "C", "D", "E"]),
        ("fsrs_stability > 0", ["B", "C", "D", "E"]),
        ("fsrs_stability > 0.5", ["B", "C", "D", "E"]),
    ],
)
def test_integer_and_number_columns_take_any_number(rows, numbered, condition, expected):
    assert fronts(rows(f"SELECT front_text FROM cards WHERE {condition}")) == expected


def test_uuid_and_datetime_comparisons(rows, numbered):
    target = numbered[2]
    assert fronts(rows(f"SELECT front_text FROM cards WHERE card_id = '{target.id}'")) == ["C"]
    assert len(rows(f"SELECT front_text FROM cards WHERE card_id != '{target.id}'")) == 4
    last = rows(f"SELECT fsrs_last_reviewed_at FROM cards WHERE card_id = '{target.id}'")
    moment = last[0]["fsrs_last_reviewed_at"]
    assert fronts(
        rows(f"SELECT front_text FROM cards WHERE fsrs_last_reviewed_at = '{moment}'")
    ) == ["C"]


# "col [NOT] IN (v, …) | at most 1,000 values; () is an error"


def test_in_and_not_in(rows, reason, numbered):
    assert fronts(rows("SELECT front_text FROM cards WHERE reps IN (0, 4, 9)")) == ["A", "E"]
    assert fronts(rows("SELECT front_text FROM cards WHERE reps NOT IN (0, 4)")) == ["B", "C", "D"]
    assert fronts(rows("SELECT front_text FROM cards WHERE effort_level IN ('fast', 'long')")) == [
        "A",
        "C",
        "D",
    ]
    assert reason("SELECT * FROM cards WHERE reps IN ()") == "syntax_error"
    assert reason("SELECT * FROM cards WHERE reps NOT IN ()") == "syntax_error"


# "col [NOT] BETWEEN a AND b | scalar columns | inclusive"


def test_between_is_inclusive(rows, numbered):
    assert fronts(rows("SELECT front_text FROM cards WHERE reps BETWEEN 1 AND 3")) == [
        "B",
        "C",
        "D",
    ]
    assert fronts(rows("SELECT front_text FROM cards WHERE reps NOT BETWEEN 1 AND 3")) == ["A", "E"]
    assert fronts(rows("SELECT front_text FROM cards WHERE front_text BETWEEN 'B' AND 'D'")) == [
        "B",
        "C",
        "D",
    ]
    assert fronts(rows("SELECT front_text FROM cards WHERE reps BETWEEN 3 AND 1")) == []


# "col IS [NOT] NULL | nullable columns"


def test_is_null_and_is_not_null(rows, numbered):
    assert fronts(rows("SELECT front_text FROM cards WHERE due_at IS NULL")) == ["A"]
    assert fronts(rows("SELECT front_text FROM cards WHERE due_at IS NOT NULL")) == [
        "B",
        "C",
        "D",
        "E",
    ]
    assert fronts(
        rows("SELECT front_text FROM cards WHERE fsrs_step_index IS NULL AND reps = 0")
    ) == ["A"]


# "col [NOT] LIKE 'p', col [NOT] ILIKE 'p' | string and uuid columns | % any run (newlines
# included), _ one character; LIKE is case-sensitive, ILIKE is not, on every database"


@pytest.fixture
def texts(workspace):
    values = [
        "Hello World",
        "hello\nworld",
        "h_llo",
        "HELLO",
        "Ünïcode Ärger",
        "ünïcode ärger",
        "50% off",
    ]
    services.create_cards(workspace, [{"front_text": v, "back_text": ""} for v in values])
    return values


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ("front_text LIKE 'Hello%'", ["Hello World"]),
        ("front_text LIKE 'hello%'", ["hello\nworld"]),
        ("front_text LIKE 'HELLO'", ["HELLO"]),
        ("front_text LIKE 'hello'", []),
        ("front_text ILIKE 'hello%'", ["HELLO", "Hello World", "hello\nworld"]),
        ("front_text ILIKE 'HELLO WORLD'", ["Hello World"]),
        ("front_text LIKE 'hello%world'", ["hello\nworld"]),
        ("front_text LIKE 'hello_world'", ["hello\nworld"]),
        ("front_text LIKE '%\n%'", ["hello\nworld"]),
        ("front_text LIKE 'h_llo'", ["h_llo"]),
        ("front_text LIKE 'h__lo'", ["h_llo"]),
        ("front_text LIKE '%'", None),
        ("front_text NOT LIKE '%o%'", ["HELLO"]),
        ("front_text NOT ILIKE '%o%'", []),
        (
            "front_text NOT ILIKE '%ä%'",
            ["HELLO", "Hello World", "hello\nworld", "h_llo", "50% off"],
        ),
        ("front_text LIKE 'Ü%'", ["Ünïcode Ärger"]),
        ("front_text ILIKE 'ünïcode ärger'", ["Ünïcode Ärger", "ünïcode ärger"]),
        ("front_text ILIKE 'ÜNÏCODE%'", ["Ünïcode Ärger", "ünïcode ärger"]),
        ("front_text LIKE '50\\% off'", ["50% off"]),
        ("front_text LIKE 'h\\_llo'", ["h_llo"]),
        ("front_text LIKE '%*%'", []),
        ("front_text LIKE '%[%'", []),
        ("front_text LIKE '%?%'", []),
    ],
)
def test_like_and_ilike(rows, texts, condition, expected):
    result = [r["front_text"] for r in rows(f"SELECT front_text FROM cards WHERE {condition}")]
    assert sorted(result) == sorted(texts if expected is None else expected)


def test_like_on_uuid_columns_uses_the_lowercase_canonical_text(rows, workspace):
    card = make_card(workspace)
    make_card(workspace)
    text = str(card.id)
    assert rows(f"SELECT card_id FROM cards WHERE card_id LIKE '{text[:9]}%'") == [
        {"card_id": text}
    ]
    assert rows(f"SELECT card_id FROM cards WHERE card_id LIKE '%{text[-12:]}'") == [
        {"card_id": text}
    ]
    assert rows(f"SELECT card_id FROM cards WHERE card_id LIKE '{text[:8]}_{text[9:]}'") == [
        {"card_id": text}
    ]
    upper = text.upper()
    if upper != text:
        assert rows(f"SELECT card_id FROM cards WHERE card_id LIKE '{upper}'") == []
    assert rows(f"SELECT card_id FROM cards WHERE card_id ILIKE '{upper}'") == [{"card_id": text}]


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT * FROM cards WHERE reps LIKE '1%'",
        "SELECT * FROM cards WHERE due_at LIKE '2026%'",
        "SELECT * FROM cards WHERE tags LIKE 'a%'",
        "SELECT * FROM workspace WHERE enable_fuzz ILIKE 't%'",
    ],
)
def test_like_on_other_types_is_type_mismatch(reason, statement):
    assert reason(statement) == "type_mismatch"


# "LOWER(col) / UPPER(col) on the left of =, !=, IN, LIKE | string columns"


def test_lower_and_upper(rows, texts):
    def run(condition):
        return sorted(
            r["front_text"] for r in rows(f"SELECT front_text FROM cards WHERE {condition}")
        )

    assert run("LOWER(front_text) = 'hello'") == ["HELLO"]
    assert run("UPPER(front_text) = 'HELLO WORLD'") == ["Hello World"]
    assert run("LOWER(front_text) != 'hello'") == sorted(t for t in texts if t != "HELLO")
    assert run("LOWER(front_text) IN ('hello', 'h_llo')") == ["HELLO", "h_llo"]
    assert run("LOWER(front_text) LIKE 'hello%'") == ["HELLO", "Hello World", "hello\nworld"]
    assert run("UPPER(front_text) LIKE 'ÜNÏCODE%'") == ["Ünïcode Ärger", "ünïcode ärger"]
    assert run("LOWER(front_text) = 'ünïcode ärger'") == ["Ünïcode Ärger", "ünïcode ärger"]


def test_lower_on_a_non_string_column_is_an_error(reason):
    assert reason("SELECT * FROM cards WHERE LOWER(reps) = 'a'") == "type_mismatch"


# "arr OVERLAP (v, …) | string[] columns | holds at least one of the values"
# "arr CONTAINS (v, …) | holds all of the values"
# "arr = (v, …) | same set (order and repeats ignored); = () means empty"
# "'v' = ANY(arr) | same as arr OVERLAP ('v')"
# "Tag comparisons (OVERLAP, CONTAINS, array =, ANY, and tag / UNNEST alias comparisons, LIKE
# included) ignore case."


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ("tags OVERLAP ('english')", ["A", "C"]),
        ("tags OVERLAP ('ENGLISH', 'verbs')", ["A", "C", "E"]),
        ("tags OVERLAP ('nothing')", []),
        ("tags CONTAINS ('english')", ["A", "C"]),
        ("tags CONTAINS ('Grammar', 'English')", ["C"]),
        ("tags CONTAINS ('english', 'verbs')", []),
        ("tags = ('grammar', 'english')", ["C"]),
        ("tags = ('ENGLISH', 'grammar', 'english')", ["C"]),
        ("tags = ('english')", ["A"]),
        ("tags = ()", ["D"]),
        ("NOT tags = ()", ["A", "B", "C", "E"]),
        ("'english' = ANY(tags)", ["A", "C"]),
        ("'GRAMMAR' = ANY(tags)", ["B", "C"]),
        ("NOT tags OVERLAP ('english')", ["B", "D", "E"]),
        ("tag = 'ENGLISH'", ["A", "C"]),
        ("tag != 'english'", ["B", "C", "E"]),
        ("tag IN ('Verbs', 'GRAMMAR')", ["B", "C", "E"]),
        ("tag LIKE 'ENG%'", ["A", "C"]),
        ("tag ILIKE '%RAM%'", ["B", "C"]),
        ("tag NOT LIKE 'e%'", ["B", "C", "E"]),
        ("LOWER(tag) = 'verbs'", ["E"]),
    ],
)
def test_array_operators_and_tag_comparisons_ignore_case(rows, numbered, condition, expected):
    result = rows(f"SELECT DISTINCT front_text FROM cards WHERE {condition}")
    assert fronts(result) == expected


def test_unnest_alias_comparisons_ignore_case(rows, numbered):
    result = rows("SELECT front_text, t FROM cards UNNEST tags AS t WHERE t LIKE 'GRAM%'")
    assert sorted((r["front_text"], r["t"]) for r in result) == [("B", "grammar"), ("C", "grammar")]


def test_deck_array_columns(rows, workspace):
    make_deck(workspace, name="any")
    make_deck(workspace, name="fast", effort_levels=["fast"])
    make_deck(workspace, name="both", effort_levels=["long", "fast"], tags=["English"])

    def names(condition):
        return sorted(r["name"] for r in rows(f"SELECT name FROM decks WHERE {condition}"))

    assert names("effort_levels OVERLAP ('fast')") == ["both", "fast"]
    assert names("effort_levels CONTAINS ('fast', 'long')") == ["both"]
    assert names("effort_levels = ('fast', 'long')") == ["both"]
    assert names("effort_levels = ()") == ["any"]
    assert names("'long' = ANY(effort_levels)") == ["both"]
    assert names("tags OVERLAP ('ENGLISH')") == ["both"]
    assert names("tags = ()") == ["any", "fast"]


def test_array_operators_on_scalars_and_scalar_operators_on_arrays_are_type_mismatch(reason):
    assert reason("SELECT * FROM cards WHERE front_text OVERLAP ('a')") == "type_mismatch"
    assert reason("SELECT * FROM cards WHERE reps CONTAINS (1)") == "type_mismatch"
    assert reason("SELECT * FROM cards WHERE tags < ('a')") == "type_mismatch"
    assert reason("SELECT * FROM cards WHERE tags > 'a'") == "type_mismatch"


def test_enum_array_elements_are_checked(fails):
    error = fails("SELECT * FROM decks WHERE effort_levels OVERLAP ('slow')")
    assert error["details"]["reason"] == "invalid_value"


# "MATCH('text') | cards, decks | case-insensitive substring search over the text columns (cards:
# front_text, back_text, tags; decks: name, tags)"


def test_match_on_cards(rows, workspace):
    services.create_cards(
        workspace,
        [
            {"front_text": "Hola Mundo", "back_text": "Hello", "tags": []},
            {"front_text": "Adiós", "back_text": "Goodbye WORLD", "tags": []},
            {"front_text": "Gato", "back_text": "Cat", "tags": ["Animales"]},
            {"front_text": "50% de", "back_text": "half_of", "tags": []},
            {"front_text": "Fao", "back_text": "", "tags": []},
        ],
    )

    def run(text):
        return fronts(rows(f"SELECT front_text FROM cards WHERE MATCH('{text}')"))

    assert run("mundo") == ["Hola Mundo"]
    assert run("HELLO") == ["Hola Mundo"]
    assert run("world") == ["Adiós"]
    assert run("ADIÓS") == ["Adiós"]
    assert run("anima") == ["Gato"]
    assert run("%") == ["50% de"]
    assert run("f_o") == ["50% de"]
    assert run("_") == ["50% de"]
    assert run("fao") == ["Fao"]
    assert fronts(rows("SELECT front_text FROM cards WHERE MATCH('AT') AND reps = 0")) == ["Gato"]
    assert fronts(rows("SELECT front_text FROM cards WHERE NOT MATCH('at')")) == [
        "50% de",
        "Adiós",
        "Fao",
        "Hola Mundo",
    ]


def test_match_on_decks(rows, workspace):
    make_deck(workspace, name="Spanish verbs")
    make_deck(workspace, name="Other", tags=["SPANISH"])
    make_deck(workspace, name="None")
    result = rows("SELECT name FROM decks WHERE MATCH('spanish')")
    assert sorted(r["name"] for r in result) == ["Other", "Spanish verbs"]


def test_match_elsewhere_and_empty_match_are_errors(reason):
    assert reason("SELECT * FROM cards WHERE MATCH('')") == "invalid_value"
    assert reason("SELECT * FROM review_events WHERE MATCH('x')") in {
        "unsupported_syntax",
        "invalid_value",
    }


# "Typing — a literal must fit its column, otherwise type_mismatch naming the column, its type and
# an example of a valid literal"


@pytest.mark.parametrize(
    ("statement", "column", "type_"),
    [
        ("SELECT * FROM cards WHERE reps = 'three'", "reps", "integer"),
        ("SELECT * FROM cards WHERE fsrs_stability > 'x'", "fsrs_stability", "number"),
        ("SELECT * FROM cards WHERE front_text = 5", "front_text", "string"),
        ("SELECT * FROM cards WHERE card_id = 'not-a-uuid'", "card_id", "uuid"),
        ("SELECT * FROM cards WHERE card_id = 5", "card_id", "uuid"),
        ("SELECT * FROM workspace WHERE enable_fuzz = 1", "enable_fuzz", "boolean"),
        ("SELECT * FROM workspace WHERE enable_fuzz = 'true'", "enable_fuzz", "boolean"),
        ("SELECT * FROM cards WHERE due_at < 'yesterday'", "due_at", "datetime"),
        ("SELECT * FROM cards WHERE due_at < 5", "due_at", "datetime"),
        ("SELECT * FROM cards WHERE reps = TRUE", "reps", "integer"),
        ("SELECT * FROM cards WHERE reps IN (1, 'two')", "reps", "integer"),
        ("SELECT * FROM cards WHERE reps BETWEEN 1 AND 'z'", "reps", "integer"),
    ],
)
def test_type_mismatch_names_column_type_and_example(fails, statement, column, type_):
    error = fails(statement)
    assert error["details"]["reason"] == "type_mismatch"
    assert column in error["message"] and type_ in error["message"]
    assert "e.g." in error["details"]["hint"] or "e.g." in error["message"]


# "enum columns take one of their allowed values (the error lists them)"


def test_bad_enum_value_is_invalid_value_listing_the_allowed_values(fails):
    error = fails("SELECT * FROM cards WHERE effort_level = 'slow'")
    assert error["details"]["reason"] == "invalid_value"
    for value in ("fast", "medium", "long"):
        assert value in error["message"]
    error = fails("SELECT * FROM review_events WHERE review_grade IN ('good', 'great')")
    assert error["details"]["reason"] == "invalid_value"
    assert all(v in error["message"] for v in ("again", "hard", "good", "easy"))
    error = fails("SELECT * FROM cards WHERE fsrs_card_state = 'NEW'")
    assert error["details"]["reason"] == "invalid_value"


# "datetime takes an ISO-8601 string ('2026-03-05' = midnight UTC, '2026-03-05T10:00:00Z', offsets
# allowed, with or without milliseconds), NOW() / CURRENT_TIMESTAMP, or NOW() ± INTERVAL '<n>
# <unit>' (units: minute(s), hour(s), day(s), week(s), month(s), year(s))"


@pytest.fixture
def reviewed(workspace):
    """Card 'midnight' reviewed at 2025-03-05T00:00Z, card 'ten' at 2025-03-05T10:00:00.250Z."""
    midnight, ten = services.create_cards(
        workspace,
        [{"front_text": "midnight", "back_text": ""}, {"front_text": "ten", "back_text": ""}],
    )
    services.submit_review(
        workspace, midnight.id, "good", reviewed_at=datetime(2025, 3, 5, tzinfo=UTC)
    )
    services.submit_review(
        workspace, ten.id, "good", reviewed_at=datetime(2025, 3, 5, 10, 0, 0, 250000, tzinfo=UTC)
    )


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ("fsrs_last_reviewed_at = '2025-03-05'", ["midnight"]),
        ("fsrs_last_reviewed_at = '2025-03-05T00:00:00Z'", ["midnight"]),
        ("fsrs_last_reviewed_at = '2025-03-05T00:00:00.000Z'", ["midnight"]),
        ("fsrs_last_reviewed_at = '2025-03-05T01:00:00+01:00'", ["midnight"]),
        ("fsrs_last_reviewed_at = '2025-03-04T19:00:00-05:00'", ["midnight"]),
        ("fsrs_last_reviewed_at = '2025-03-05T10:00:00.250Z'", ["ten"]),
        ("fsrs_last_reviewed_at = '2025-03-05T10:00:00.25Z'", ["ten"]),
        ("fsrs_last_reviewed_at = '2025-03-05T10:00:00Z'", []),
        ("fsrs_last_reviewed_at = '2025-03-05T12:30:00.250+02:30'", ["ten"]),
        ("fsrs_last_reviewed_at > '2025-03-05'", ["ten"]),
        (
            "fsrs_last_reviewed_at >= '2025-03-05' AND fsrs_last_reviewed_at < '2025-03-06'",
            ["midnight", "ten"],
        ),
        ("fsrs_last_reviewed_at BETWEEN '2025-03-05T00:00:01Z' AND '2025-03-06'", ["ten"]),
        ("fsrs_last_reviewed_at IN ('2025-03-05', '2030-01-01')", ["midnight"]),
    ],
)
def test_datetime_literals(rows, reviewed, condition, expected):
    assert fronts(rows(f"SELECT front_text FROM cards WHERE {condition}")) == expected


@pytest.mark.parametrize(
    "unit",
    [
        "minute",
        "minutes",
        "hour",
        "hours",
        "day",
        "days",
        "week",
        "weeks",
        "month",
        "months",
        "year",
        "years",
    ],
)
def test_now_plus_and_minus_intervals_in_every_unit(rows, workspace, unit):
    make_card(workspace, front_text="new")
    assert fronts(
        rows(f"SELECT front_text FROM cards WHERE created_at > NOW() - INTERVAL '2 {unit}'")
    ) == ["new"]
    assert (
        rows(f"SELECT front_text FROM cards WHERE created_at > NOW() + INTERVAL '1 {unit}'") == []
    )
    assert (
        rows(
            f"SELECT front_text FROM cards WHERE created_at < CURRENT_TIMESTAMP - INTERVAL '1 {unit}'"
        )
        == []
    )
    assert fronts(
        rows(
            f"SELECT front_text FROM cards WHERE created_at < CURRENT_TIMESTAMP + INTERVAL '3 {unit}'"
        )
    ) == ["new"]


def test_now_and_current_timestamp(rows, workspace):
    make_card(workspace, front_text="new")
    assert fronts(rows("SELECT front_text FROM cards WHERE created_at <= NOW()")) == ["new"]
    assert fronts(rows("SELECT front_text FROM cards WHERE created_at <= CURRENT_TIMESTAMP")) == [
        "new"
    ]
    assert rows("SELECT front_text FROM cards WHERE created_at > now()") == []


def test_interval_arithmetic_reaches_the_past(rows, reviewed):
    result = rows(
        "SELECT front_text FROM cards WHERE fsrs_last_reviewed_at > NOW() - INTERVAL '100 years'"
    )
    assert fronts(result) == ["midnight", "ten"]
    assert (
        rows("SELECT front_text FROM cards WHERE fsrs_last_reviewed_at > NOW() - INTERVAL '1 day'")
        == []
    )


def test_a_bad_interval_is_type_mismatch(reason):
    assert (
        reason("SELECT * FROM cards WHERE due_at < NOW() - INTERVAL '3 fortnights'")
        == "type_mismatch"
    )


# "col = NULL and col != NULL are errors whose hint says to use IS NULL / IS NOT NULL."


def test_equals_null_is_an_error_with_an_is_null_hint(fails):
    error = fails("SELECT * FROM cards WHERE due_at = NULL")
    assert error["details"]["reason"] == "type_mismatch"
    assert "IS NULL" in error["details"]["hint"]
    error = fails("SELECT * FROM cards WHERE due_at != NULL")
    assert error["details"]["reason"] == "type_mismatch"
    assert "IS NOT NULL" in error["details"]["hint"]
    error = fails("SELECT * FROM cards WHERE due_at <> NULL")
    assert "IS NOT NULL" in error["details"]["hint"]


# "Columns that are not filterable (json, the workspace step arrays) reject every operator."


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT * FROM cards WHERE metadata = '{}'",
        "SELECT * FROM cards WHERE metadata IS NULL",
        "SELECT * FROM cards WHERE metadata LIKE '%x%'",
        "SELECT * FROM workspace WHERE learning_steps_minutes = (1, 10)",
        "SELECT * FROM workspace WHERE relearning_steps_minutes IS NOT NULL",
        "SELECT * FROM workspace WHERE learning_steps_minutes OVERLAP ('1')",
    ],
)
def test_not_filterable_columns_reject_every_operator(reason, statement):
    assert reason(statement) == "not_filterable"


# "Array literals (INSERT values, SET values, array operators): ('a', 'b'), (), ['a','b'],
# ARRAY['a','b'], '{a,b}'."


@pytest.mark.parametrize(
    ("literal", "expected"),
    [
        ("('a', 'b')", ["a", "b"]),
        ("('a')", ["a"]),
        ("()", []),
        ("['a','b']", ["a", "b"]),
        ("[]", []),
        ("ARRAY['a','b']", ["a", "b"]),
        ("array['a']", ["a"]),
        ("'{a,b}'", ["a", "b"]),
        ("'{}'", []),
        ("'{\"two words\",b}'", ["two words", "b"]),
    ],
)
def test_array_literal_forms_in_writes(ok, rows, literal, expected):
    ok(f"INSERT INTO cards (front_text, back_text, tags) VALUES ('q', 'a', {literal})")
    assert rows("SELECT tags FROM cards") == [{"tags": expected}]
    deck = ok(f"INSERT INTO decks (name, tags) VALUES ('d', {literal}) RETURNING tags")
    assert deck["rows"] == [{"tags": expected}]
    ok(f"UPDATE cards SET tags = {literal} WHERE front_text = 'q'")
    assert rows("SELECT tags FROM cards") == [{"tags": expected}]


@pytest.mark.parametrize("literal", ["('a', 'b')", "['a','b']", "ARRAY['a','b']", "'{a,b}'"])
def test_array_literal_forms_in_conditions(rows, workspace, literal):
    make_card(workspace, front_text="ab", tags=["a", "b"])
    make_card(workspace, front_text="c", tags=["c"])
    assert fronts(rows(f"SELECT front_text FROM cards WHERE tags OVERLAP {literal}")) == ["ab"]
    assert fronts(rows(f"SELECT front_text FROM cards WHERE tags CONTAINS {literal}")) == ["ab"]
    assert fronts(rows(f"SELECT front_text FROM cards WHERE tags = {literal}")) == ["ab"]


# "A bare string where an array is expected is an error whose hint shows ('tag1', 'tag2')."


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT * FROM cards WHERE tags OVERLAP 'english'",
        "SELECT * FROM cards WHERE tags CONTAINS 'english'",
        "SELECT * FROM cards WHERE tags = 'english'",
        "UPDATE cards SET tags = 'english' WHERE reps = 0",
        "INSERT INTO cards (front_text, back_text, tags) VALUES ('q', 'a', 'english')",
    ],
)
def test_a_bare_string_for_an_array_hints_the_list_form(fails, statement):
    error = fails(statement)
    assert error["details"]["reason"] == "type_mismatch"
    assert "('tag1', 'tag2')" in error["details"]["hint"]


# "Tag rules: on write, each tag is trimmed and Unicode-NFC-normalised, empty tags are dropped, and
# duplicates that differ only in case are dropped (the first spelling is kept)."


def test_tags_are_normalised_on_write(ok):
    decomposed = "Cafe\u0301"
    data = ok(
        "INSERT INTO cards (front_text, back_text, tags) VALUES "
        f"('q', 'a', ('  verbs ', '', '   ', 'Verbs', '{decomposed}', 'CAFÉ', 'x')) RETURNING tags"
    )
    assert data["rows"] == [{"tags": ["verbs", "Café", "x"]}]
    # Comparisons see the same normalised tag, whichever form the literal takes.
    for condition in (
        f"tags OVERLAP ('{decomposed}')",
        "tags CONTAINS ('café', 'VERBS')",
        f"tag = '{decomposed.upper()}'",
        f"'{decomposed}' = ANY(tags)",
    ):
        assert ok(f"SELECT DISTINCT front_text FROM cards WHERE {condition}")["rowCount"] == 1


# "A tag's spelling is fixed by its first use in the workspace: writing english where English
# already exists stores English ... "Used" means by any card or deck of the workspace, deleted ones
# included"


def test_the_first_spelling_in_the_workspace_wins(ok, rows):
    ok("INSERT INTO cards (front_text, back_text, tags) VALUES ('one', '', ('English'))")
    data = ok(
        "INSERT INTO cards (front_text, back_text, tags) VALUES ('two', '', ('english', 'NEW')) RETURNING tags"
    )
    assert data["rows"] == [{"tags": ["English", "NEW"]}]
    data = ok("INSERT INTO decks (name, tags) VALUES ('d', ('ENGLISH', 'new')) RETURNING tags")
    assert data["rows"] == [{"tags": ["English", "NEW"]}]
    assert rows("SELECT tag, COUNT(*) AS n FROM cards GROUP BY tag") == [
        {"tag": "English", "n": 2},
        {"tag": "NEW", "n": 1},
    ]


def test_deleted_cards_and_decks_still_fix_the_spelling(ok, workspace):
    card = make_card(workspace, tags=["Grammar"])
    deck = make_deck(workspace, tags=["DeckOnly"])
    ok(f"DELETE FROM cards WHERE card_id = '{card.id}'")
    ok(f"DELETE FROM decks WHERE deck_id = '{deck.id}'")
    data = ok(
        "INSERT INTO cards (front_text, back_text, tags) VALUES ('q', '', ('grammar', 'deckonly')) RETURNING tags"
    )
    assert data["rows"] == [{"tags": ["Grammar", "DeckOnly"]}]


def test_spellings_are_per_workspace(ok, other_workspace):
    make_card(other_workspace, tags=["ENGLISH"])
    data = ok(
        "INSERT INTO cards (front_text, back_text, tags) VALUES ('q', '', ('english')) RETURNING tags"
    )
    assert data["rows"] == [{"tags": ["english"]}]
