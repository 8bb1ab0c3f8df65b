"""Validation against the resource registry: resolved plans for valid statements, and for
invalid ones the dsl.md §9 reason, a message naming the offending token, a hint and the position."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsl.language.errors import DslError
from dsl.language.literals import parse_array_text, parse_interval
from dsl.language.parser import parse_batch
from dsl.language.plan import (
    Aggregate,
    AllOf,
    AnyOf,
    ArrayContains,
    ArrayOverlap,
    ArraySetEquals,
    CaseFold,
    Compare,
    DateOf,
    DeletePlan,
    DescribePlan,
    InList,
    InsertPlan,
    Negation,
    NullCheck,
    OrderKey,
    OutputItem,
    Pattern,
    Plan,
    Range,
    RelativeNow,
    SelectPlan,
    ShowTablesPlan,
    TextMatch,
    UpdatePlan,
)
from dsl.language.validator import validate, validate_batch
from dsl.schema import RESOURCES, get_resource
from flashcards.services.timestamps import parse_timestamp

CARDS = get_resource("cards")
DECKS = get_resource("decks")
REVIEWS = get_resource("review_events")
assert CARDS and DECKS and REVIEWS
UUID_A = "123e4567-e89b-42d3-a456-426614174000"


def c(name: str, resource: str = "cards") -> object:
    found = get_resource(resource)
    assert found is not None
    column = found.column(name)
    assert column is not None, name
    return column


def plan(sql: str) -> Plan:
    (statement,) = parse_batch(sql).statements
    return validate(statement)


def select(sql: str) -> SelectPlan:
    result = plan(sql)
    assert isinstance(result, SelectPlan)
    return result


def where(condition: str, resource: str = "cards") -> object:
    return select(f"SELECT * FROM {resource} WHERE {condition}").where


def fails(sql: str) -> DslError:
    with pytest.raises(DslError) as caught:
        validate_batch(parse_batch(sql))
    return caught.value


# Reads ----------------------------------------------------------------------------------------


def test_show_tables_and_describe() -> None:
    assert plan("SHOW TABLES") == ShowTablesPlan(RESOURCES)
    assert plan("SHOW TABLES LIKE '%card%'") == ShowTablesPlan((CARDS,))
    assert plan("SHOW TABLES LIKE 'REVIEW_%'") == ShowTablesPlan((REVIEWS,))
    assert plan("DESCRIBE decks") == DescribePlan(DECKS)
    assert plan("SHOW COLUMNS FROM review_events") == DescribePlan(REVIEWS)


def test_select_star_expands_to_readable_columns_without_the_virtual_tag() -> None:
    result = select("SELECT * FROM cards")
    assert result.star
    assert [i.name for i in result.items] == [c.name for c in CARDS.columns if c.name != "tag"]
    assert not result.explode_tags and not result.grouped


def test_select_star_with_unnest_appends_the_alias() -> None:
    result = select("SELECT * FROM cards UNNEST tags AS t")
    assert result.items[-1] == OutputItem("t", c("tag"))
    assert result.explode_tags and result.unnest_alias == "t"


def test_naming_tag_anywhere_explodes_tags() -> None:
    assert select("SELECT card_id FROM cards WHERE tag = 'x'").explode_tags
    assert select("SELECT card_id FROM cards ORDER BY tag").explode_tags
    assert not select("SELECT card_id FROM cards WHERE tags OVERLAP ('x')").explode_tags


def test_headline_grouping_examples() -> None:
    result = select(
        "SELECT tag, COUNT(*) AS card_count FROM cards GROUP BY tag ORDER BY card_count DESC "
        "LIMIT 20 OFFSET 0"
    )
    count = Aggregate("count", None)
    assert result.items == (OutputItem("tag", c("tag")), OutputItem("card_count", count))
    assert result.grouped and result.group_by == (c("tag"),)
    assert result.order_by == (OrderKey(count, True),)
    assert (result.limit, result.offset) == (20, 0)
    grades = select(
        "SELECT review_grade, COUNT(*) AS total_reviews FROM review_events GROUP BY review_grade "
        "ORDER BY total_reviews DESC LIMIT 10 OFFSET 0"
    )
    assert grades.group_by == (c("review_grade", "review_events"),)


def test_default_output_names() -> None:
    result = select(
        "SELECT COUNT(*), COUNT(reps), COUNT(DISTINCT tag), SUM(reps), AVG(lapses), "
        "MIN(due_at), MAX(fsrs_stability) FROM cards"
    )
    assert [i.name for i in result.items] == [
        "count",
        "count_reps",
        "count_tag",
        "sum_reps",
        "avg_lapses",
        "min_due_at",
        "max_fsrs_stability",
    ]
    assert result.items[2].term == Aggregate("count", c("tag"), True)
    assert result.grouped and result.group_by == ()


def test_date_grouping_by_alias_expression_and_default_name() -> None:
    day = DateOf(c("created_at"))
    for sql in (
        "SELECT DATE(created_at) AS day, COUNT(*) FROM cards GROUP BY day ORDER BY day",
        "SELECT DATE(created_at) AS day, COUNT(*) FROM cards GROUP BY DATE(created_at) ORDER BY day",
        "SELECT DATE(created_at), COUNT(*) FROM cards GROUP BY DATE(created_at) ORDER BY date_created_at",
    ):
        result = select(sql)
        assert result.group_by == (day,)
        assert result.order_by == (OrderKey(day),)


def test_having_uses_aggregates_aliases_and_group_keys() -> None:
    result = select(
        "SELECT tag AS t, COUNT(*) AS n FROM cards GROUP BY t HAVING n > 2 AND COUNT(*) < 9 "
        "AND tag != 'x' ORDER BY n DESC, t"
    )
    count = Aggregate("count", None)
    assert result.having == AllOf(
        (Compare(count, ">", 2), Compare(count, "<", 9), Compare(c("tag"), "!=", "x"))
    )
    assert result.order_by == (OrderKey(count, True), OrderKey(c("tag")))


def test_default_names_can_be_sorted_on() -> None:
    result = select("SELECT tag, COUNT(*) FROM cards GROUP BY tag ORDER BY count DESC")
    assert result.order_by == (OrderKey(Aggregate("count", None), True),)


def test_distinct_groups_by_its_items() -> None:
    result = select("SELECT DISTINCT effort_level FROM cards ORDER BY effort_level")
    assert result.grouped and result.group_by == (c("effort_level"),)


def test_unnest_alias_acts_as_tag() -> None:
    result = select("SELECT t, COUNT(*) FROM cards UNNEST tags AS t WHERE t ILIKE 'en%' GROUP BY t")
    assert result.items[0] == OutputItem("t", c("tag"))
    assert result.where == Pattern(c("tag"), "en%", False, True)
    assert result.group_by == (c("tag"),)


def test_order_by_random_and_nulls() -> None:
    assert select("SELECT * FROM cards ORDER BY RANDOM()").order_random
    result = select("SELECT * FROM cards ORDER BY due_at DESC NULLS FIRST")
    assert result.order_by == (OrderKey(c("due_at"), True, True),)


# Conditions and literal conversion -------------------------------------------------------------


def test_headline_filter() -> None:
    result = select(
        "SELECT * FROM cards WHERE tags OVERLAP ('english') AND effort_level IN ('fast', 'medium') "
        "ORDER BY updated_at DESC LIMIT 20 OFFSET 0"
    )
    assert result.where == AllOf(
        (
            ArrayOverlap(c("tags"), ("english",)),
            InList(c("effort_level"), ("fast", "medium")),
        )
    )


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        (f"card_id = '{UUID_A}'", Compare(c("card_id"), "=", uuid.UUID(UUID_A))),
        ("reps >= 3", Compare(c("reps"), ">=", 3)),
        ("reps = 1e3", Compare(c("reps"), "=", 1000)),
        ("fsrs_stability < .5", Compare(c("fsrs_stability"), "<", 0.5)),
        ("fsrs_difficulty > -3", Compare(c("fsrs_difficulty"), ">", -3.0)),
        ("reps BETWEEN 1 AND 3", Range(c("reps"), 1, 3)),
        ("due_at IS NULL", NullCheck(c("due_at"))),
        ("NOT due_at IS NOT NULL", Negation(NullCheck(c("due_at"), True))),
        ("front_text LIKE '%hola%'", Pattern(c("front_text"), "%hola%")),
        (f"card_id NOT LIKE '{UUID_A[:8]}%'", Pattern(c("card_id"), f"{UUID_A[:8]}%", True)),
        ("LOWER(front_text) = 'hola'", Compare(CaseFold("lower", c("front_text")), "=", "hola")),
        (
            "UPPER(effort_level) IN ('FAST')",
            InList(CaseFold("upper", c("effort_level")), ("FAST",)),
        ),
        ("tags CONTAINS ('a', 'b')", ArrayContains(c("tags"), ("a", "b"))),
        ("tags = ('b', 'a')", ArraySetEquals(c("tags"), ("b", "a"))),
        ("tags = ()", ArraySetEquals(c("tags"), ())),
        ("tags = '{a,\"b c\"}'", ArraySetEquals(c("tags"), ("a", "b c"))),
        ("tags OVERLAP ARRAY['x']", ArrayOverlap(c("tags"), ("x",))),
        ("tags OVERLAP '{x}'", ArrayOverlap(c("tags"), ("x",))),
        ("'x' = ANY(tags)", ArrayOverlap(c("tags"), ("x",))),
        ("MATCH('hola')", TextMatch("hola", (c("front_text"), c("back_text"), c("tags")))),
        ("due_at < NOW()", Compare(c("due_at"), "<", RelativeNow())),
        ("due_at < NOW() - INTERVAL '7 days'", Compare(c("due_at"), "<", RelativeNow(-7, "days"))),
        (
            "due_at > CURRENT_TIMESTAMP + INTERVAL '1 Month'",
            Compare(c("due_at"), ">", RelativeNow(1, "months")),
        ),
        (
            "due_at < '2026-03-05'",
            Compare(c("due_at"), "<", datetime(2026, 3, 5, tzinfo=UTC)),
        ),
        (
            "due_at < '2026-03-05T10:00:00.250+02:00'",
            Compare(c("due_at"), "<", datetime(2026, 3, 5, 8, 0, 0, 250_000, tzinfo=UTC)),
        ),
        (
            "reps = 0 OR lapses = 0",
            AnyOf((Compare(c("reps"), "=", 0), Compare(c("lapses"), "=", 0))),
        ),
    ],
)
def test_conditions(condition: str, expected: object) -> None:
    assert where(condition) == expected


def test_decks_match_and_enum_arrays() -> None:
    assert where("MATCH('verbs')", "decks") == TextMatch(
        "verbs", (c("name", "decks"), c("tags", "decks"))
    )
    assert where("effort_levels CONTAINS ('fast')", "decks") == ArrayContains(
        c("effort_levels", "decks"), ("fast",)
    )


def test_review_grade_and_workspace_columns() -> None:
    assert where("review_grade = 'good'", "review_events") == Compare(
        c("review_grade", "review_events"), "=", "good"
    )
    assert where("enable_fuzz = FALSE", "workspace") == Compare(
        c("enable_fuzz", "workspace"), "=", False
    )


def test_literal_helpers() -> None:
    assert parse_timestamp("2026-03-05") == datetime(2026, 3, 5, tzinfo=UTC)
    assert parse_timestamp("2026-03-05T10:00:00Z") == datetime(2026, 3, 5, 10, tzinfo=UTC)
    assert parse_timestamp("2026-03-05T10:00:00.123Z") == datetime(
        2026, 3, 5, 10, 0, 0, 123_000, tzinfo=UTC
    )
    assert parse_timestamp("2026-03-05T10:00:00-05:00") == datetime(2026, 3, 5, 15, tzinfo=UTC)
    assert parse_timestamp("yesterday") is None
    assert parse_timestamp("0001-01-01T00:00:00+01:00") is None
    assert parse_interval("3 hours") == RelativeNow(3, "hours")
    assert parse_interval("1 min") == RelativeNow(1, "minutes")
    assert parse_interval("2 fortnights") is None
    assert parse_array_text("{}") == ()
    assert parse_array_text('{a, "b,c", "d\\"e"}') == ("a", "b,c", 'd"e')
    assert parse_array_text("{a,,b}") is None
    assert parse_array_text("a,b") is None


def test_relative_now_resolves_like_postgresql() -> None:
    now = datetime(2026, 1, 31, 12, tzinfo=UTC)
    assert RelativeNow().resolve(now) == now
    assert RelativeNow(-2, "hours").resolve(now) == datetime(2026, 1, 31, 10, tzinfo=UTC)
    assert RelativeNow(1, "months").resolve(now) == datetime(2026, 2, 28, 12, tzinfo=UTC)
    assert RelativeNow(-1, "years").resolve(now) == datetime(2025, 1, 31, 12, tzinfo=UTC)
    assert RelativeNow(1, "weeks").resolve(now) == datetime(2026, 2, 7, 12, tzinfo=UTC)
    assert RelativeNow(999_999_999, "years").resolve(now).year == 9999


# Writes ---------------------------------------------------------------------------------------


def test_insert_plan() -> None:
    result = plan(
        "INSERT INTO decks (name, effort_levels, tags) VALUES ('Grammar', ('medium', 'long'), "
        "('english', 'grammar'))"
    )
    assert isinstance(result, InsertPlan) and result.is_write
    assert result.columns == (c("name", "decks"), c("effort_levels", "decks"), c("tags", "decks"))
    assert result.rows == (("Grammar", ("medium", "long"), ("english", "grammar")),)
    assert result.row_dicts() == [
        {"name": "Grammar", "effort_levels": ("medium", "long"), "tags": ("english", "grammar")}
    ]
    assert result.returning is None


def test_update_and_delete_plans() -> None:
    result = plan(
        "UPDATE cards SET back_text = 'Updated answer', tags = ('english', 'verbs') "
        f"WHERE card_id = '{UUID_A}' RETURNING *"
    )
    assert isinstance(result, UpdatePlan)
    assert result.assignments == (
        (c("back_text"), "Updated answer"),
        (c("tags"), ("english", "verbs")),
    )
    assert result.where == Compare(c("card_id"), "=", uuid.UUID(UUID_A))
    assert result.returning == CARDS.readable_columns
    deleted = plan(f"DELETE FROM cards WHERE card_id IN ('{UUID_A}') RETURNING card_id, tags")
    assert isinstance(deleted, DeletePlan)
    assert deleted.returning == (c("card_id"), c("tags"))
    assert deleted.statement_type == "delete"


# Errors ---------------------------------------------------------------------------------------


def test_unknown_resource_suggests_close_names() -> None:
    sql = "SELECT * FROM card"
    error = fails(sql)
    assert error.reason == "unknown_resource"
    assert error.message == "Unknown resource: card. Did you mean cards?"
    assert error.suggestions == ["cards"]
    assert error.to_details(sql)["position"]["offset"] == 14
    assert fails("SELECT * FROM reviews").suggestions[0] == "review_events"
    assert "GROUP BY tag" in fails("SELECT * FROM tags").hint


def test_unknown_column_message_matches_the_spec_example() -> None:
    error = fails("SELECT fron_text FROM cards")
    assert error.reason == "unknown_column"
    assert error.message == "Unknown column for cards: fron_text. Did you mean front_text?"
    assert error.suggestions == ["front_text"]
    assert error.offset == 7


@pytest.mark.parametrize(
    ("sql", "hint_fragment", "suggestions"),
    [
        ("SELECT * FROM cards WHERE deleted_at IS NULL", "condition can be dropped", []),
        ("SELECT * FROM cards WHERE workspace_id = 'x'", "selected workspace", []),
        ("SELECT * FROM cards WHERE client_updated_at > NOW()", "Sync metadata", []),
        ("SELECT id FROM cards", "DESCRIBE cards", ["card_id"]),
        ("SELECT name FROM cards", "column of workspace and decks", []),
        ('SELECT * FROM cards WHERE "Hola" = front_text', "single quotes", []),
        ("SELECT reps AS r FROM cards WHERE r > 1", "aliases cannot be used in WHERE", []),
    ],
)
def test_unknown_column_hints(sql: str, hint_fragment: str, suggestions: list[str]) -> None:
    error = fails(sql)
    assert error.reason == "unknown_column"
    assert hint_fragment in error.hint
    assert error.suggestions == suggestions


def test_suggestions_only_name_visible_columns() -> None:
    error = fails("SELECT deleted FROM cards")
    assert all(s in {c.name for c in CARDS.columns} for s in error.suggestions)


def test_read_only_column_names_the_writable_columns() -> None:
    error = fails("UPDATE cards SET reps = 0 WHERE reps = 1")
    assert error.reason == "read_only_column"
    assert "front_text, back_text, card_type, tags, effort_level" in error.message
    assert fails(
        "INSERT INTO cards (front_text, back_text, tag) VALUES ('a', 'b', 'x')"
    ).reason == ("read_only_column")


@pytest.mark.parametrize(
    ("sql", "reason", "fragment"),
    [
        ("SELECT * FROM cards WHERE metadata IS NULL", "not_filterable", "metadata"),
        (
            "SELECT * FROM workspace WHERE learning_steps_minutes = (1)",
            "not_filterable",
            "learning",
        ),
        ("SELECT * FROM cards ORDER BY metadata", "not_sortable", "metadata"),
        ("SELECT * FROM cards ORDER BY tags", "not_sortable", "tags"),
        ("SELECT MAX(tags) FROM cards", "not_sortable", "tags"),
        ("SELECT tags, COUNT(*) FROM cards GROUP BY tags", "not_sortable", "GROUP BY tag"),
        ("SELECT DISTINCT metadata FROM cards", "not_sortable", "metadata"),
        ("SELECT * FROM cards WHERE reps LIKE '1%'", "type_mismatch", "LIKE"),
        ("SELECT * FROM cards WHERE reps OVERLAP ('1')", "type_mismatch", "OVERLAP"),
        ("SELECT * FROM cards WHERE front_text CONTAINS ('a')", "type_mismatch", "CONTAINS"),
        ("SELECT * FROM cards WHERE 'x' = ANY(front_text)", "type_mismatch", "ANY"),
        ("SELECT * FROM cards WHERE tags < 'a'", "type_mismatch", "<"),
        ("SELECT * FROM cards WHERE tags != ('a')", "type_mismatch", "!="),
        ("SELECT * FROM cards WHERE tags IN ('a')", "type_mismatch", "IN"),
        ("SELECT * FROM cards WHERE reps = ('1', '2')", "type_mismatch", "list"),
        ("SELECT * FROM cards WHERE reps = 'three'", "type_mismatch", "integer"),
        ("SELECT * FROM cards WHERE reps = 1e400", "type_mismatch", "out of range"),
        ("SELECT * FROM cards WHERE reps > 99999999999999999999999", "type_mismatch", "range"),
        ("SELECT * FROM cards WHERE fsrs_stability > 1e400", "type_mismatch", "out of range"),
        ("SELECT * FROM cards WHERE card_id = 'nope'", "type_mismatch", "UUID"),
        ("SELECT * FROM cards WHERE due_at < 'yesterday'", "type_mismatch", "2026-03-05"),
        ("SELECT * FROM cards WHERE due_at < 5", "type_mismatch", "datetime"),
        ("SELECT * FROM cards WHERE reps < NOW()", "type_mismatch", "datetime"),
        ("SELECT * FROM cards WHERE due_at < NOW() - INTERVAL 'soon'", "type_mismatch", "INTERVAL"),
        ("SELECT * FROM workspace WHERE enable_fuzz = 1", "type_mismatch", "TRUE"),
        ("SELECT * FROM cards WHERE due_at = NULL", "type_mismatch", "IS NULL"),
        ("SELECT * FROM cards WHERE due_at != NULL", "type_mismatch", "IS NOT NULL"),
        ("SELECT * FROM cards WHERE reps IN (1, NULL)", "type_mismatch", "IS NULL"),
        ("SELECT * FROM cards WHERE tags = 'english'", "type_mismatch", "('tag1', 'tag2')"),
        ("SELECT * FROM cards WHERE tags OVERLAP 'english'", "type_mismatch", "('tag1', 'tag2')"),
        ("SELECT * FROM cards WHERE tags OVERLAP (1)", "type_mismatch", "Quote each element"),
        ('SELECT * FROM cards WHERE front_text = "Hola"', "type_mismatch", "single quotes"),
        ('SELECT * FROM cards WHERE tags OVERLAP ("a")', "type_mismatch", "single quotes"),
        ("SELECT * FROM cards WHERE effort_level = fast", "type_mismatch", "'fast'"),
        ("SELECT * FROM cards WHERE front_text LIKE 5", "type_mismatch", "pattern"),
        ("SELECT SUM(front_text) FROM cards", "type_mismatch", "numeric"),
        ("SELECT AVG(due_at) FROM cards", "type_mismatch", "numeric"),
        ("SELECT DATE(reps) FROM cards", "type_mismatch", "datetime"),
        ("SELECT * FROM cards WHERE LOWER(reps) = 'a'", "type_mismatch", "string column"),
        ("SELECT * FROM cards WHERE effort_level = 'huge'", "invalid_value", "'fast', 'medium'"),
        ("SELECT * FROM cards WHERE fsrs_card_state IN ('new', 'old')", "invalid_value", "old"),
        ("SELECT * FROM review_events WHERE review_grade = 'great'", "invalid_value", "again"),
        ("SELECT * FROM decks WHERE effort_levels OVERLAP ('huge')", "invalid_value", "huge"),
        ("SELECT * FROM cards WHERE MATCH('')", "invalid_value", "MATCH"),
        ("SELECT * FROM cards WHERE MATCH('   ')", "invalid_value", "MATCH"),
        ("INSERT INTO cards (front_text) VALUES ('a')", "invalid_value", "back_text"),
        ("INSERT INTO decks (tags) VALUES (('a'))", "invalid_value", "name"),
        ("INSERT INTO cards (front_text, back_text) VALUES ('a', NULL)", "invalid_value", "NULL"),
        ("UPDATE cards SET tags = NULL WHERE reps = 0", "invalid_value", "()"),
        ("UPDATE cards SET effort_level = 'slow' WHERE reps = 0", "invalid_value", "allowed"),
        ("UPDATE decks SET effort_levels = ('x') WHERE name = 'a'", "invalid_value", "allowed"),
        ("UPDATE cards SET tags = 'english' WHERE reps = 0", "type_mismatch", "('tag1', 'tag2')"),
        ("UPDATE cards SET front_text = 3 WHERE reps = 0", "type_mismatch", "string"),
        ("UPDATE cards SET back_text = 'x'", "missing_where", "WHERE"),
        ("DELETE FROM decks", "missing_where", "deck_id"),
        ("SELECT * FROM review_events WHERE MATCH('x')", "unsupported_syntax", "cards and decks"),
        ("SELECT * FROM cards WHERE COUNT(*) > 1", "unsupported_syntax", "HAVING"),
        ("SELECT * FROM cards WHERE DATE(due_at) = '2026-03-05'", "unsupported_syntax", "range"),
        ("SELECT * FROM cards WHERE LOWER(front_text) > 'a'", "unsupported_syntax", "=, !=, IN"),
        ("SELECT LOWER(front_text) FROM cards", "unsupported_syntax", "conditions"),
        ("SELECT * FROM cards WHERE front_text = back_text", "unsupported_syntax", "literal"),
        ("SELECT * FROM decks UNNEST tags AS t", "unsupported_syntax", "cards.tags"),
        ("SELECT * FROM cards UNNEST front_text AS t", "unsupported_syntax", "cards.tags"),
        ("SELECT DISTINCT * FROM cards", "unsupported_syntax", "DISTINCT *"),
        (
            f"DELETE FROM cards WHERE card_id = '{UUID_A}' RETURNING tag",
            "unsupported_syntax",
            "tags",
        ),
        ("SELECT front_text, COUNT(*) FROM cards", "syntax_error", "front_text must appear"),
        ("SELECT tag, reps FROM cards GROUP BY tag", "syntax_error", "reps must appear"),
        ("SELECT * FROM cards GROUP BY tag", "syntax_error", "SELECT *"),
        ("SELECT tag FROM cards GROUP BY COUNT(*)", "syntax_error", "aggregate"),
        ("SELECT tag, COUNT(*) FROM cards GROUP BY tag ORDER BY reps", "syntax_error", "ORDER BY"),
        ("SELECT reps FROM cards ORDER BY COUNT(*)", "syntax_error", "grouped"),
        ("SELECT tag, COUNT(*) FROM cards GROUP BY tag HAVING reps > 1", "syntax_error", "HAVING"),
        ("SELECT reps, lapses AS reps FROM cards", "syntax_error", "named reps"),
        ("SELECT * FROM cards UNNEST tags AS reps", "syntax_error", "already a column"),
        ("INSERT INTO cards (front_text, front_text) VALUES ('a', 'b')", "syntax_error", "twice"),
        ("UPDATE cards SET reps2 = 1 WHERE reps = 0", "unknown_column", "DESCRIBE"),
        (
            "UPDATE cards SET back_text = 'a', back_text = 'b' WHERE reps = 0",
            "syntax_error",
            "twice",
        ),
    ],
)
def test_errors(sql: str, reason: str, fragment: str) -> None:
    error = fails(sql)
    assert error.reason == reason, error.message
    assert fragment in f"{error.message} {error.hint}", (error.message, error.hint)
    assert error.offset is not None
    assert error.hint


def test_writes_to_read_only_resources_name_the_explicit_command() -> None:
    error = fails("INSERT INTO review_events (rating) VALUES (3)")
    assert error.reason == "unsupported_syntax"
    assert "POST /v1/agent/reviews" in error.message
    error = fails("UPDATE workspace SET desired_retention = 0.9 WHERE name = 'x'")
    assert "POST /v1/agent/workspace/scheduler-settings" in error.message
    assert "read-only" in fails("DELETE FROM review_events WHERE rating = 0").message


def test_insert_row_arity_error_shows_the_row() -> None:
    sql = "INSERT INTO cards (front_text, back_text) VALUES ('a', 'b'), ('only one')"
    error = fails(sql)
    assert error.reason == "syntax_error"
    assert "Row 2 has 1 value but 2 columns are listed: ('only one')" in error.message
    assert error.offset == sql.index("('only one')")


def test_insert_row_limit() -> None:
    rows = ", ".join(["('q', 'a')"] * 101)
    error = fails(f"INSERT INTO cards (front_text, back_text) VALUES {rows}")
    assert error.reason == "too_many_rows"
    rows = ", ".join(["('q', 'a')"] * 100)
    assert plan(f"INSERT INTO cards (front_text, back_text) VALUES {rows}")


def test_condition_nesting_limit_holds_for_not_chains() -> None:
    assert fails("SELECT * FROM cards WHERE " + "NOT " * 40 + "reps = 0").reason == "too_deep"
    assert where("NOT " * 31 + "reps = 0")


def test_batch_validation_marks_the_statement() -> None:
    sql = "SELECT * FROM cards; SELECT nope FROM cards"
    error = fails(sql)
    assert error.statement_index == 2
    assert error.message.startswith("Statement 2 failed: Unknown column for cards: nope.")
    assert error.to_details(sql)["statementIndex"] == 2
    assert fails("SELECT nope FROM cards").statement_index is None


def test_statement_types() -> None:
    assert [p.statement_type for p in validate_batch(parse_batch(
        "SHOW TABLES; DESCRIBE cards; SELECT * FROM cards; "
        "INSERT INTO decks (name) VALUES ('d'); UPDATE decks SET name = 'e' WHERE name = 'd'; "
        "DELETE FROM decks WHERE name = 'e'"
    ))] == ["show_tables", "describe", "select", "insert", "update", "delete"]  # fmt: skip


_WORDS = (
    "SELECT * FROM cards decks review_events workspace WHERE AND OR NOT ( ) , = != < >= IN "
    "BETWEEN IS NULL LIKE ILIKE OVERLAP CONTAINS MATCH('x') NOW() 'x' 'fast' '{a,b}' 1 -2 .5 "
    f"'{UUID_A}' '2026-03-05' tags tag reps due_at effort_level card_id metadata front_text "
    "ORDER BY GROUP HAVING LIMIT 5 OFFSET COUNT(*) SUM(reps) DATE(due_at) LOWER(front_text) "
    "'a' = ANY(tags) UNNEST AS t DISTINCT DESC INSERT INTO VALUES UPDATE SET DELETE RETURNING"
).split()


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_WORDS), min_size=3, max_size=30))
def test_random_statements_validate_or_fail_cleanly(words: list[str]) -> None:
    text = " ".join(words)
    try:
        validate_batch(parse_batch(text))
    except DslError as error:
        assert error.reason
        error.to_details(text)
