"""The grammar as a specification: statements parse to these trees (positions aside), errors
carry the reason and position of dsl.md §9, and no input escapes as anything but a DslError."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsl.habits.parse_errors import JOIN_MESSAGE
from dsl.language.ast import (
    And,
    Any,
    ArrayEquals,
    ArrayLit,
    Assignment,
    Between,
    BoolLit,
    ColumnRef,
    Comparison,
    Contains,
    Delete,
    Describe,
    FuncCall,
    In,
    Insert,
    IsNull,
    Like,
    Match,
    Not,
    Now,
    NullLit,
    NumberLit,
    Or,
    OrderItem,
    Overlap,
    Row,
    Select,
    SelectItem,
    ShowTables,
    Star,
    Statement,
    StringLit,
    Update,
)
from dsl.language.errors import DslError
from dsl.language.parser import Limits, parse_batch

UUID_A = "123e4567-e89b-42d3-a456-426614174000"


def parse(sql: str) -> Statement:
    (statement,) = parse_batch(sql).statements
    return statement.node


def fails(sql: str, limits: Limits | None = None) -> DslError:
    with pytest.raises(DslError) as caught:
        parse_batch(sql, limits) if limits else parse_batch(sql)
    return caught.value


def col(name: str) -> ColumnRef:
    return ColumnRef(name)


def num(value: int | str) -> NumberLit:
    return NumberLit(Decimal(value))


def s(value: str) -> StringLit:
    return StringLit(value)


def star_select(**fields: object) -> Select:
    return Select(items=(SelectItem(Star()),), resource="cards", **fields)  # type: ignore[arg-type]


# Statements -----------------------------------------------------------------------------------


def test_show_tables_and_describe_forms() -> None:
    assert parse("SHOW TABLES") == ShowTables()
    assert parse("show tables like 'c%'") == ShowTables("c%")
    assert parse("DESCRIBE cards") == Describe("cards")
    assert parse("DESC decks") == Describe("decks")
    assert parse("SHOW COLUMNS FROM review_events") == Describe("review_events")


def test_select_with_every_clause() -> None:
    sql = (
        "SELECT DISTINCT tag AS t, COUNT(*) n FROM cards WHERE reps >= 1 GROUP BY tag "
        "HAVING COUNT(*) > 2 ORDER BY n DESC NULLS LAST, t LIMIT 20 OFFSET 40"
    )
    assert parse(sql) == Select(
        distinct=True,
        items=(SelectItem(col("tag"), "t"), SelectItem(FuncCall("count", Star()), "n")),
        resource="cards",
        where=Comparison(">=", col("reps"), num(1)),
        group_by=(col("tag"),),
        having=Comparison(">", FuncCall("count", Star()), num(2)),
        order_by=(OrderItem(col("n"), True, False), OrderItem(col("t"))),
        limit=20,
        offset=40,
    )


def test_offset_before_limit_and_raw_large_limit() -> None:
    assert parse("SELECT * FROM cards OFFSET 5 LIMIT 1000") == star_select(limit=1000, offset=5)


def test_unnest() -> None:
    node = parse("SELECT t FROM cards UNNEST tags AS t")
    assert isinstance(node, Select)
    assert (node.unnest_column, node.unnest_alias) == (col("tags"), "t")


def test_order_by_random() -> None:
    assert parse("SELECT * FROM cards ORDER BY RANDOM() LIMIT 5") == star_select(
        order_random=True, limit=5
    )


def test_aggregates_and_functions() -> None:
    node = parse(
        "SELECT COUNT(DISTINCT card_id), SUM(reps), AVG(lapses), MIN(due_at), MAX(due_at), "
        "DATE(created_at) FROM cards"
    )
    assert isinstance(node, Select)
    assert [item.expr for item in node.items] == [
        FuncCall("count", col("card_id"), True),
        FuncCall("sum", col("reps")),
        FuncCall("avg", col("lapses")),
        FuncCall("min", col("due_at")),
        FuncCall("max", col("due_at")),
        FuncCall("date", col("created_at")),
    ]


def test_insert_with_several_rows_and_returning() -> None:
    sql = (
        "INSERT INTO cards (front_text, back_text, tags) VALUES ('a', 'b', ('x', 'y')), "
        "('c', '', []) RETURNING card_id, tags"
    )
    assert parse(sql) == Insert(
        "cards",
        (col("front_text"), col("back_text"), col("tags")),
        (
            Row((s("a"), s("b"), ArrayLit((s("x"), s("y"))))),
            Row((s("c"), s(""), ArrayLit(()))),
        ),
        (col("card_id"), col("tags")),
    )


def test_update_and_delete() -> None:
    assert parse(
        f"UPDATE cards SET back_text = 'x', tags = ARRAY['a'] WHERE card_id = '{UUID_A}'"
    ) == (
        Update(
            "cards",
            (Assignment(col("back_text"), s("x")), Assignment(col("tags"), ArrayLit((s("a"),)))),
            Comparison("=", col("card_id"), s(UUID_A)),
        )
    )
    assert parse("DELETE FROM decks WHERE name = 'x' RETURNING *") == Delete(
        "decks", Comparison("=", col("name"), s("x")), (Star(),)
    )
    assert parse("UPDATE cards SET back_text = 'x'") == Update(
        "cards", (Assignment(col("back_text"), s("x")),)
    )


# Conditions -----------------------------------------------------------------------------------


def where(condition: str) -> object:
    node = parse(f"SELECT * FROM cards WHERE {condition}")
    assert isinstance(node, Select)
    return node.where


def test_not_binds_tighter_than_and_which_binds_tighter_than_or() -> None:
    a, b, c = (Comparison("=", col(n), num(1)) for n in "abc")
    assert where("a = 1 OR b = 1 AND c = 1") == Or((a, And((b, c))))
    assert where("a = 1 AND b = 1 OR c = 1") == Or((And((a, b)), c))
    assert where("NOT a = 1 AND b = 1") == And((Not(a), b))
    assert where("NOT a = 1 OR b = 1") == Or((Not(a), b))
    assert where("NOT (a = 1 OR b = 1)") == Not(Or((a, b)))
    assert where("(a = 1 OR b = 1) AND c = 1") == And((Or((a, b)), c))


def test_and_or_chains_are_flat() -> None:
    a, b, c, d = (Comparison("=", col(n), num(1)) for n in "abcd")
    assert where("a = 1 AND b = 1 AND c = 1 AND d = 1") == And((a, b, c, d))
    assert where("a = 1 OR (b = 1 OR c = 1) OR d = 1") == Or((a, b, c, d))


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ("reps <> 1", Comparison("!=", col("reps"), num(1))),
        ("reps != -3", Comparison("!=", col("reps"), num(-3))),
        ("reps > - 3", Comparison(">", col("reps"), num(-3))),
        ("x = .5", Comparison("=", col("x"), NumberLit(Decimal("0.5")))),
        ("x = 1e3", Comparison("=", col("x"), num(1000))),
        ("b = TRUE", Comparison("=", col("b"), BoolLit(True))),
        ("due_at = NULL", Comparison("=", col("due_at"), NullLit())),
        ("reps IN (1, 2)", In(col("reps"), (num(1), num(2)))),
        ("reps NOT IN (1)", In(col("reps"), (num(1),), negated=True)),
        ("reps BETWEEN 1 AND 3", Between(col("reps"), num(1), num(3))),
        ("reps NOT BETWEEN 1 AND 3", Between(col("reps"), num(1), num(3), negated=True)),
        ("due_at IS NULL", IsNull(col("due_at"))),
        ("due_at IS NOT NULL", IsNull(col("due_at"), negated=True)),
        ("front_text LIKE 'a%'", Like(col("front_text"), s("a%"))),
        ("front_text NOT ILIKE 'a%'", Like(col("front_text"), s("a%"), True, True)),
        ("LOWER(front_text) = 'a'", Comparison("=", FuncCall("lower", col("front_text")), s("a"))),
        ("tags OVERLAP ('a', 'b')", Overlap(col("tags"), ArrayLit((s("a"), s("b"))))),
        ("tags CONTAINS ['a']", Contains(col("tags"), ArrayLit((s("a"),)))),
        ("tags = ()", ArrayEquals(col("tags"), ArrayLit(()))),
        ("tags = '{a,b}'", Comparison("=", col("tags"), s("{a,b}"))),
        ("'a' = ANY(tags)", Any(s("a"), col("tags"))),
        ("MATCH('hola')", Match(s("hola"))),
        ("due_at < NOW()", Comparison("<", col("due_at"), Now())),
        ("due_at < CURRENT_TIMESTAMP", Comparison("<", col("due_at"), Now())),
        ("due_at < NOW() - INTERVAL '7 days'", Comparison("<", col("due_at"), Now(-1, "7 days"))),
        (
            "due_at > CURRENT_TIMESTAMP + INTERVAL '1 hour'",
            Comparison(">", col("due_at"), Now(1, "1 hour")),
        ),
        ('front_text = "Hola"', Comparison("=", col("front_text"), ColumnRef("hola"))),
    ],
)
def test_predicates(condition: str, expected: object) -> None:
    assert where(condition) == expected


def test_quoted_flag_survives_for_the_validator() -> None:
    comparison = where('front_text = "Hola"')
    assert isinstance(comparison, Comparison)
    assert isinstance(comparison.right, ColumnRef) and comparison.right.quoted


# Spans, positions, normalized sql -------------------------------------------------------------


def test_spans_point_into_the_whole_sql() -> None:
    sql = "SHOW TABLES;\nSELECT front_text FROM cards WHERE reps IN (1, 2) AND tags OVERLAP ('a')"
    batch = parse_batch(sql)
    statement = batch.statements[1]
    assert sql[statement.span[0] : statement.span[1]] == statement.sql
    node = statement.node
    assert isinstance(node, Select)
    assert sql[slice(*node.span)] == statement.sql
    assert sql[slice(*node.resource_span)] == "cards"
    assert isinstance(node.where, And)
    in_list, overlap = node.where.operands
    assert sql[slice(*in_list.span)] == "reps IN (1, 2)"
    assert sql[slice(*overlap.span)] == "tags OVERLAP ('a')"
    assert isinstance(overlap, Overlap)
    assert sql[slice(*overlap.value.span)] == "('a')"
    assert sql[slice(*node.items[0].span)] == "front_text"


def test_error_position_is_line_and_column_of_the_token() -> None:
    sql = "SELECT *\nFROM cards\nWHERE reps = = 1"
    error = fails(sql)
    details = error.to_details(sql)
    assert details["reason"] == "syntax_error"
    assert details["position"] == {"line": 3, "column": 12, "offset": 31}
    assert details["validationIssues"] == [
        {"path": "sql", "code": "syntax_error", "message": error.message}
    ]
    assert details["hint"]
    assert details["suggestions"] == []
    assert "statementIndex" not in details


def test_end_of_input_points_just_past_the_last_character() -> None:
    sql = "SELECT * FROM cards WHERE"
    assert fails(sql).to_details(sql)["position"]["offset"] == len(sql)
    sql = "SELECT * FROM cards WHERE reps = 0 AND  "
    assert fails(sql).offset == len(sql)


def test_batch_errors_carry_the_statement_index() -> None:
    sql = "SHOW TABLES; SELECT * FROM cards WHERE; DESCRIBE cards"
    error = fails(sql)
    assert error.statement_index == 2
    assert error.message.startswith("Statement 2 failed: ")
    details = error.to_details(sql)
    assert details["statementIndex"] == 2
    assert details["position"]["offset"] == sql.index(";", 13)


def test_normalized_sql_collapses_whitespace_and_drops_comments_and_final_semicolon() -> None:
    sql = "  SELECT   *\n\tFROM cards -- note\n WHERE front_text = 'a   b'  /* c */ ;  "
    batch = parse_batch(sql)
    assert batch.normalized_sql == "SELECT * FROM cards WHERE front_text = 'a   b'"
    assert parse_batch("SELECT*FROM cards").normalized_sql == "SELECT*FROM cards"
    assert parse_batch("SELECT/**/*FROM cards").normalized_sql == "SELECT *FROM cards"


def test_batch_normalized_sql_joins_statements() -> None:
    batch = parse_batch("SHOW TABLES ;\n DESCRIBE   cards;")
    assert [s.normalized_sql for s in batch.statements] == ["SHOW TABLES", "DESCRIBE cards"]
    assert batch.normalized_sql == "SHOW TABLES; DESCRIBE cards"
    assert [s.index for s in batch.statements] == [1, 2]


def test_semicolons_inside_literals_and_comments_do_not_split() -> None:
    batch = parse_batch("SELECT * FROM cards WHERE front_text = 'a;b' -- ;\n; SHOW TABLES /* ; */")
    assert len(batch.statements) == 2


# Statement-level errors -----------------------------------------------------------------------


@pytest.mark.parametrize("sql", ["", "   ", "\n\t", "-- just a comment", "/* x */"])
def test_empty_sql(sql: str) -> None:
    assert fails(sql).reason == "empty_statement"


@pytest.mark.parametrize(
    ("sql", "offset"),
    [(";", 0), (";SHOW TABLES", 0), ("SHOW TABLES;;", 12), ("SHOW TABLES; ;", 13)],
)
def test_empty_statements(sql: str, offset: int) -> None:
    error = fails(sql)
    assert (error.reason, error.offset) == ("empty_statement", offset)


def test_statement_count_limit() -> None:
    assert len(parse_batch(";".join(["SHOW TABLES"] * 50)).statements) == 50
    error = fails(";".join(["SHOW TABLES"] * 51))
    assert error.reason == "too_many_statements"


def test_sql_length_is_measured_in_utf8_bytes() -> None:
    padding = "é" * 32_760  # two bytes each
    assert fails(f"SELECT * FROM cards WHERE front_text = '{padding}x'").reason == "too_long"
    assert parse_batch(f"SELECT * FROM cards WHERE front_text = '{'e' * 65_000}'")


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("SELECT * FROM cards LIMIT 0", "limit_out_of_range"),
        ("SELECT * FROM cards LIMIT -1", "limit_out_of_range"),
        ("SELECT * FROM cards LIMIT 2.5", "limit_out_of_range"),
        ("SELECT * FROM cards OFFSET -1", "limit_out_of_range"),
        ("SELECT * FROM cards OFFSET 0.5", "limit_out_of_range"),
        ("SELECT * FROM cards LIMIT 1e400", "limit_out_of_range"),
        ("SELECT * FROM cards LIMIT 99999999999999999999999", "limit_out_of_range"),
    ],
)
def test_limit_and_offset_ranges(sql: str, reason: str) -> None:
    assert fails(sql).reason == reason


def test_limit_above_100_and_integral_exponents_are_kept_raw() -> None:
    assert parse("SELECT * FROM cards LIMIT 500 OFFSET 0") == star_select(limit=500, offset=0)
    assert parse("SELECT * FROM cards LIMIT 1e3") == star_select(limit=1000)


@pytest.mark.parametrize(
    ("sql", "fragment"),
    [
        ("SELECT * FROM cards JOIN decks ON true", JOIN_MESSAGE),
        ("SELECT * FROM cards c INNER JOIN decks d ON c.x = d.y", JOIN_MESSAGE),
        ("SELECT * FROM cards, decks", "FROM a, b"),
        ("SELECT * FROM cards c", "aliases"),
        ("SELECT * FROM cards AS c", "aliases"),
        ("SELECT c.front_text FROM cards", "Qualified names (c.front_text)"),
        ("SELECT * FROM cards WHERE card_id IN (SELECT card_id FROM review_events)", "Subqueries"),
        ("WITH x AS (SELECT 1) SELECT * FROM x", "WITH"),
        ("SELECT * FROM cards UNION SELECT * FROM decks", "UNION"),
        ("SELECT * FROM cards INTERSECT SELECT * FROM cards", "INTERSECT"),
        ("SELECT * FROM cards EXCEPT SELECT * FROM cards", "EXCEPT"),
        ("SELECT COUNT(*) OVER (PARTITION BY tag) FROM cards", "Window functions"),
        ("INSERT INTO cards (front_text) SELECT front_text FROM cards", "INSERT ... SELECT"),
        ("UPDATE cards SET back_text = 'x' FROM decks WHERE reps = 0", "UPDATE ... FROM"),
        ("CREATE TABLE x (a int)", "CREATE"),
        ("DROP TABLE cards", "DROP"),
        ("ALTER TABLE cards ADD x int", "ALTER"),
        ("TRUNCATE cards", "TRUNCATE"),
        ("BEGIN", "Transaction control (BEGIN)"),
        ("COMMIT", "Transaction control (COMMIT)"),
        ("ROLLBACK", "Transaction control (ROLLBACK)"),
        ("GRANT SELECT ON cards TO bob", "GRANT"),
        ("SELECT 1", "SELECT without FROM"),
        ("SELECT NOW()", "SELECT without FROM"),
        ("SELECT foo(front_text) FROM cards", "Function foo()"),
        ("SELECT * FROM cards WHERE TRIM(front_text) = 'a'", "Function trim()"),
        ("SELECT * FROM cards ORDER BY 1", "ORDER BY 1"),
        ("SELECT tag, COUNT(*) FROM cards GROUP BY 1", "GROUP BY 1"),
        ("SELECT COUNT(1) FROM cards", "COUNT(*)"),
        ("SELECT SUM(DISTINCT reps) FROM cards", "DISTINCT"),
        ("SELECT CASE WHEN reps > 0 THEN 1 END FROM cards", "CASE"),
        ("EXPLAIN SELECT * FROM cards", "EXPLAIN"),
        ("SET search_path = x", "SET"),
    ],
)
def test_unsupported_sql_is_named(sql: str, fragment: str) -> None:
    error = fails(sql)
    assert error.reason == "unsupported_syntax", error.message
    assert fragment in error.message + " " + error.hint


def test_join_error_points_at_the_join_and_suggests_two_steps() -> None:
    sql = "SELECT * FROM cards LEFT JOIN decks ON true"
    error = fails(sql)
    assert error.message == JOIN_MESSAGE
    assert error.offset == sql.index("LEFT")
    assert "card_id IN" in error.hint


@pytest.mark.parametrize(
    ("sql", "fragment"),
    [
        ("SELECT * FROM cards WHERE reps IN ()", "IN ()"),
        ("SELECT * FROM cards WHERE", "WHERE must be followed by a condition"),
        ("SELECT * FROM cards WHERE reps = 0 AND", "AND must be followed"),
        ("SELECT * FROM cards WHERE reps = 0 OR ORDER BY reps", "OR must be followed"),
        ("SELECT * FROM cards WHERE AND reps = 0", "WHERE must be followed"),
        ("SELECT * FROM cards WHERE 0 = reps", "column on the left"),
        ("SELECT *, tag FROM cards", "* must stand alone"),
        ("SELECT * FROM cards LIMIT 10, 20", "LIMIT 20 OFFSET 40"),
        ("INSERT INTO cards VALUES ('a', 'b')", "explicit column list"),
        ("SELECT * FROM cards WHERE reps == 1", "single ="),
        ("SELECT * FROM cards WHERE due_at IS TRUE", "IS only tests for NULL"),
        ("SELECT * FROM cards WHERE due_at > NOW() - INTERVAL 7 DAY", "INTERVAL '7 days'"),
        ("SELECT * FROM cards ORDER BY reps, RANDOM()", "must stand alone"),
        ("SELECT * FROM cards ORDER BY due_at NULLS MIDDLE", "FIRST or LAST"),
        ("SELECT * FORM cards", "Did you mean FROM?"),
        ("SELCT * FROM cards", "Did you mean SELECT?"),
        ("SELECT * FROM cards LIMT 5", "Did you mean LIMIT?"),
        ('SHOW TABLES LIKE "c%"', "single quotes"),
        ("SHOW INDEXES", "SHOW takes TABLES"),
        ("SHOW COLUMNS", "FROM <resource>"),
        ("SELECT RANDOM() FROM cards", "ORDER BY RANDOM()"),
        ("SELECT * FROM cards WHERE due_at < COUNT(*)", "only NOW()"),
        ("SELECT * FROM cards WHERE COUNT(*)", "not a condition"),
        ("SELECT * FROM cards WHERE MATCH(front_text)", "string literal"),
        ("INSERT INTO cards (front_text) VALUES ()", "one value per column"),
        ("SELECT * FROM cards WHERE reps = 0 ORDER", "Expected BY"),
    ],
)
def test_syntax_errors_say_what_to_do(sql: str, fragment: str) -> None:
    error = fails(sql)
    assert error.reason in ("syntax_error", "type_mismatch"), error.message
    assert fragment in error.message + " " + error.hint


def test_double_quoted_match_text_hints_single_quotes() -> None:
    error = fails('SELECT * FROM cards WHERE MATCH("hola")')
    assert error.reason == "type_mismatch"
    assert "MATCH('hola')" in error.hint


# Hostile input --------------------------------------------------------------------------------


def test_ten_thousand_nested_parentheses() -> None:
    error = fails("SELECT * FROM cards WHERE " + "(" * 10_000 + "reps = 0" + ")" * 10_000)
    assert error.reason == "too_deep"


def test_thirty_two_levels_are_fine() -> None:
    assert parse("SELECT * FROM cards WHERE " + "(" * 32 + "reps = 0" + ")" * 32)


def test_ten_thousand_value_in_list() -> None:
    values = ", ".join(str(i) for i in range(10_000))
    assert fails(f"SELECT * FROM cards WHERE reps IN ({values})").reason == "too_complex"
    values = ", ".join(str(i) for i in range(1_000))
    assert parse(f"SELECT * FROM cards WHERE reps IN ({values})")


def test_predicate_limit() -> None:
    many = " OR ".join(f"reps = {i}" for i in range(501))
    assert fails(f"SELECT * FROM cards WHERE {many}").reason == "too_complex"
    assert parse("SELECT * FROM cards WHERE " + " OR ".join(f"reps = {i}" for i in range(500)))


def test_limits_are_configurable() -> None:
    tight = Limits(max_statements=1, max_nesting=2, max_predicates=1, max_list_values=1)
    assert fails("SHOW TABLES; SHOW TABLES", tight).reason == "too_many_statements"
    assert fails("SELECT * FROM cards WHERE (((reps = 0)))", tight).reason == "too_deep"
    assert fails("SELECT * FROM cards WHERE a = 1 OR b = 1", tight).reason == "too_complex"
    assert fails("SELECT * FROM cards WHERE a IN (1, 2)", tight).reason == "too_complex"


def test_a_long_not_chain_parses_without_recursion() -> None:
    node = parse("SELECT * FROM cards WHERE " + "NOT " * 15_000 + "reps = 0")
    assert isinstance(node, Select) and isinstance(node.where, Not)


def test_statement_just_under_64_kib() -> None:
    conditions = " OR ".join(f"front_text = '{'x' * 100}{i}'" for i in range(400))
    sql = f"SELECT * FROM cards WHERE {conditions}"
    assert 40_000 < len(sql) < 65_536
    assert parse(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM cards WHERE front_text = 'a\x00b'",
        "SELECT * FROM cards\x00",
        "SELECT * FROM cards WHERE fsrs_stability > 1e99999999999999999999",
        "SELECT * FROM cards WHERE front_text = '\ud800'",
        "SELECT * FROM cards WHERE " + "[" * 100,
        "SELECT * FROM cards WHERE reps = " + "9" * 60_000,
        "'" * 70_000,
    ],
)
def test_hostile_inputs_give_clean_errors(sql: str) -> None:
    error = fails(sql)
    assert error.reason in {
        "syntax_error",
        "invalid_value",
        "too_deep",
        "too_long",
    }
    assert error.to_details(sql)["reason"] == error.reason


def test_enormous_numbers_parse_to_exact_values() -> None:
    comparison = where("reps > 99999999999999999999999")
    assert isinstance(comparison, Comparison)
    assert comparison.right == NumberLit(Decimal("99999999999999999999999"))


def test_parsers_are_per_thread() -> None:
    results: list[object] = []

    def work() -> None:
        for _ in range(50):
            results.append(parse("SELECT * FROM cards WHERE reps = 1"))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 200
    assert all(r == results[0] for r in results)


# Property tests -------------------------------------------------------------------------------

_VOCABULARY = [
    "SELECT",
    "*",
    "FROM",
    "cards",
    "decks",
    "WHERE",
    "AND",
    "OR",
    "NOT",
    "(",
    ")",
    ",",
    ";",
    "=",
    "!=",
    "<",
    ">",
    "IN",
    "BETWEEN",
    "IS",
    "NULL",
    "LIKE",
    "ILIKE",
    "OVERLAP",
    "CONTAINS",
    "ANY",
    "MATCH",
    "NOW()",
    "INTERVAL",
    "'7",
    "days'",
    "'x'",
    "1",
    "-2",
    ".5",
    "1e400",
    "tags",
    "tag",
    "reps",
    "ORDER",
    "BY",
    "GROUP",
    "HAVING",
    "LIMIT",
    "OFFSET",
    "COUNT(*)",
    "DATE",
    "LOWER(",
    "INSERT",
    "INTO",
    "VALUES",
    "UPDATE",
    "SET",
    "DELETE",
    "RETURNING",
    "SHOW",
    "TABLES",
    "DESCRIBE",
    "UNNEST",
    "AS",
    "DISTINCT",
    "ASC",
    "DESC",
    "NULLS",
    "FIRST",
    "[",
    "]",
    "ARRAY",
    '"q"',
    "--",
    "/*",
    "*/",
    ".",
    "JOIN",
]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_random_text_raises_nothing_but_dsl_error(text: str) -> None:
    try:
        parse_batch(text)
    except DslError as error:
        assert error.reason
        error.to_details(text)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_VOCABULARY), max_size=40))
def test_random_token_soup_raises_nothing_but_dsl_error(words: list[str]) -> None:
    text = " ".join(words)
    try:
        parse_batch(text)
    except DslError as error:
        error.to_details(text)
