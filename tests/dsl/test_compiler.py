"""The compiler, asserted by the rows its querysets return (on SQLite and PostgreSQL alike).

Statements go through the real parser and validator; only the HTTP layer is skipped."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection

from dsl.language.parser import parse_batch
from dsl.language.validator import validate
from dsl.runtime import compiler
from dsl.runtime.rows import row_formatter
from dsl.schema import get_resource
from flashcards import services
from flashcards.models import Card, CardTag
from flashcards.services import now_ms
from tests.factories import make_card, make_cards, make_deck


def select(workspace: Any, statement: str) -> list[dict[str, Any]]:
    plan = validate(parse_batch(statement).statements[0])
    compiled = compiler.compile_select(plan, workspace, now=now_ms())
    format_row = row_formatter(compiled.columns)
    return [format_row(values) for values in compiled.queryset]


def column(workspace: Any, statement: str, key: str) -> list[Any]:
    return [row[key] for row in select(workspace, statement)]


def review(workspace: Any, card: Card, rating: int, at: datetime) -> None:
    services.submit_review(workspace, card.id, rating, reviewed_at=at)


pytestmark = pytest.mark.django_db


class TestBaseQueryset:
    def test_only_live_rows_of_the_workspace(self, workspace, other_workspace):
        mine = make_cards(workspace, 2, tags=["t"])
        make_cards(other_workspace, 2, tags=["t"])
        services.delete_cards(workspace, [mine[1].id])
        cards = get_resource("cards")
        assert list(compiler.base_queryset(cards, workspace).values_list("id", flat=True)) == [
            mine[0].id
        ]
        tag_rows = compiler.base_queryset(cards, workspace, tag_rows=True)
        assert list(tag_rows.values_list("card_id", flat=True)) == [mine[0].id]
        # The other tenant's rows exist; the deleted card's went with it (tag rows of live rows
        # only), which is what lets tag counts skip the join to the cards.
        assert CardTag.objects.count() == 3
        assert not CardTag.objects.filter(card=mine[1]).exists()

    def test_workspace_resource_is_the_one_row(self, workspace, other_workspace):
        assert column(workspace, "SELECT workspace_id FROM workspace", "workspace_id") == [
            str(workspace.id)
        ]


class TestPatterns:
    @pytest.fixture
    def fronts(self, workspace):
        for text in ("Hola mundo", "hola", "50% off", "a*b?[c]", "line one\nline two", "hx"):
            make_card(workspace, front_text=text)
        return workspace

    @pytest.mark.parametrize(
        ("condition", "expected"),
        [
            ("front_text LIKE 'hola%'", ["hola"]),
            ("front_text LIKE 'Hola%'", ["Hola mundo"]),
            ("front_text ILIKE 'HOLA%'", ["Hola mundo", "hola"]),
            ("front_text NOT LIKE '%o%'", ["a*b?[c]", "hx"]),
            ("front_text LIKE 'h_'", ["hx"]),
            ("front_text LIKE '50\\% %'", ["50% off"]),
            ("front_text LIKE 'a*b?[c]'", ["a*b?[c]"]),
            ("front_text LIKE 'line%two'", ["line one\nline two"]),
            ("UPPER(front_text) LIKE 'HOLA%'", ["Hola mundo", "hola"]),
            ("LOWER(front_text) = 'hola mundo'", ["Hola mundo"]),
        ],
    )
    def test_like(self, fronts, condition, expected):
        found = column(fronts, f"SELECT front_text FROM cards WHERE {condition}", "front_text")
        assert sorted(found) == sorted(expected)

    def test_uuid_like_uses_the_canonical_text(self, workspace):
        card = make_card(workspace)
        make_card(workspace)
        prefix = str(card.id)[:13]  # includes the first dash
        statement = f"SELECT card_id FROM cards WHERE card_id LIKE '{prefix}%'"
        assert column(workspace, statement, "card_id") == [str(card.id)]


class TestOrdering:
    def test_strings_case_insensitive_then_code_points(self, workspace):
        make_cards(workspace, 1, front_text="b")
        make_cards(workspace, 1, front_text="B")
        make_cards(workspace, 1, front_text="a")
        make_cards(workspace, 1, front_text="A")
        assert column(
            workspace, "SELECT front_text FROM cards ORDER BY front_text", "front_text"
        ) == [
            "A",
            "a",
            "B",
            "b",
        ]
        assert column(
            workspace, "SELECT front_text FROM cards ORDER BY front_text DESC", "front_text"
        ) == ["b", "B", "a", "A"]

    def test_nulls_first_ascending_last_descending(self, workspace):
        new, reviewed = make_cards(workspace, 2)
        review(workspace, reviewed, 2, now_ms())
        asc = column(workspace, "SELECT card_id FROM cards ORDER BY due_at", "card_id")
        desc = column(workspace, "SELECT card_id FROM cards ORDER BY due_at DESC", "card_id")
        last = column(workspace, "SELECT card_id FROM cards ORDER BY due_at NULLS LAST", "card_id")
        assert asc == [str(new.id), str(reviewed.id)]
        assert desc == [str(reviewed.id), str(new.id)]
        assert last == [str(reviewed.id), str(new.id)]

    def test_default_order_is_completed_by_id(self, workspace):
        cards = make_cards(workspace, 5)  # one bulk insert: the same created_at
        expected = sorted(str(card.id) for card in cards)
        assert column(workspace, "SELECT card_id FROM cards", "card_id") == expected
        assert column(workspace, "SELECT card_id FROM cards ORDER BY reps", "card_id") == expected

    def test_grouped_default_order_is_the_group_keys(self, workspace):
        make_cards(workspace, 2, effort_level="long")
        make_cards(workspace, 1, effort_level="fast")
        rows = select(workspace, "SELECT effort_level, COUNT(*) FROM cards GROUP BY effort_level")
        assert rows == [{"effort_level": "fast", "count": 1}, {"effort_level": "long", "count": 2}]


class TestThreeValuedLogic:
    def test_comparisons_never_match_null(self, workspace):
        new, reviewed = make_cards(workspace, 2)
        review(workspace, reviewed, 2, now_ms())
        far = "'2000-01-01T00:00:00Z'"
        for condition in (f"due_at != {far}", f"NOT (due_at = {far})", f"due_at > {far}"):
            found = column(workspace, f"SELECT card_id FROM cards WHERE {condition}", "card_id")
            assert found == [str(reviewed.id)], condition
        assert column(workspace, "SELECT card_id FROM cards WHERE due_at IS NULL", "card_id") == [
            str(new.id)
        ]


class TestScalarPredicates:
    @pytest.fixture
    def counted(self, workspace):
        cards = make_cards(workspace, 4)
        for index, card in enumerate(cards):
            at = now_ms()
            for _ in range(index):
                at += timedelta(days=1)
                review(workspace, card, 2, at)
        return workspace

    @pytest.mark.parametrize(
        ("condition", "expected"),
        [
            ("reps BETWEEN 1 AND 2", [1, 2]),
            ("reps NOT BETWEEN 1 AND 2", [0, 3]),
            ("reps IN (0, 3)", [0, 3]),
            ("reps NOT IN (0, 3)", [1, 2]),
            ("reps >= 2 OR reps = 0", [0, 2, 3]),
            ("NOT reps < 3", [3]),
            ("fsrs_card_state = 'new'", [0]),
            ("created_at <= NOW() AND created_at > NOW() - INTERVAL '1 day'", [0, 1, 2, 3]),
        ],
    )
    def test_conditions(self, counted, condition, expected):
        found = column(counted, f"SELECT reps FROM cards WHERE {condition}", "reps")
        assert sorted(found) == expected


class TestTags:
    @pytest.fixture
    def tagged(self, workspace):
        self.one = make_card(workspace, front_text="one", tags=["Verbs", "english", "b1"])
        self.two = make_card(workspace, front_text="two", tags=["English"])
        self.three = make_card(workspace, front_text="three", tags=[])
        return workspace

    def test_tag_rows_follow_each_cards_own_order(self, tagged):
        rows = select(tagged, "SELECT front_text, tag FROM cards ORDER BY front_text")
        assert [(r["front_text"], r["tag"]) for r in rows] == [
            ("one", "Verbs"),
            ("one", "english"),
            ("one", "b1"),
            ("two", "english"),  # the workspace's first spelling wins
        ]

    def test_unnest_alias_is_the_last_key_of_star(self, tagged):
        rows = select(tagged, "SELECT * FROM cards UNNEST tags AS t WHERE t = 'VERBS'")
        assert len(rows) == 1 and list(rows[0])[-1] == "t" and rows[0]["t"] == "Verbs"

    def test_group_by_tag(self, tagged):
        rows = select(tagged, "SELECT tag, COUNT(*) AS n FROM cards GROUP BY tag ORDER BY n DESC")
        assert rows == [{"tag": "english", "n": 2}, {"tag": "b1", "n": 1}, {"tag": "Verbs", "n": 1}]

    def test_tag_like_ignores_case(self, tagged):
        assert column(tagged, "SELECT tag FROM cards WHERE tag LIKE 'V%'", "tag") == ["Verbs"]

    @pytest.mark.parametrize(
        ("condition", "expected"),
        [
            ("tags OVERLAP ('ENGLISH', 'nothing')", ["one", "two"]),
            ("tags OVERLAP ('verbs')", ["one"]),
            ("tags CONTAINS ('english', 'verbs')", ["one"]),
            ("tags CONTAINS ('english', 'nothing')", []),
            ("tags = ('ENGLISH')", ["two"]),
            ("tags = ('b1', 'english', 'verbs')", ["one"]),
            ("tags = ('english', 'verbs')", []),
            ("tags = ()", ["three"]),
            ("'verbs' = ANY(tags)", ["one"]),
            ("NOT tags OVERLAP ('english')", ["three"]),
            ("tags = '{English}'", ["two"]),
            ("MATCH('ERB')", ["one"]),
            ("MATCH('hre')", ["three"]),
        ],
    )
    def test_array_operators(self, tagged, condition, expected):
        found = column(tagged, f"SELECT front_text FROM cards WHERE {condition}", "front_text")
        assert sorted(found) == sorted(expected)

    def test_array_operator_on_tag_rows_refers_to_the_card(self, tagged):
        rows = select(tagged, "SELECT tag FROM cards WHERE tags OVERLAP ('verbs') AND tag != 'b1'")
        assert [r["tag"] for r in rows] == ["Verbs", "english"]


class TestDecks:
    @pytest.fixture
    def decks(self, workspace):
        make_deck(workspace, name="Any")
        make_deck(workspace, name="Fast", effort_levels=["fast"], tags=["Grammar"])
        make_deck(workspace, name="Both", effort_levels=["medium", "fast"], tags=["x", "grammar"])
        return workspace

    @pytest.mark.parametrize(
        ("condition", "expected"),
        [
            ("effort_levels OVERLAP ('fast')", ["Both", "Fast"]),
            ("effort_levels CONTAINS ('fast', 'medium')", ["Both"]),
            ("effort_levels = ('fast', 'medium')", ["Both"]),
            ("effort_levels = ('fast')", ["Fast"]),
            ("effort_levels = ()", ["Any"]),
            ("'long' = ANY(effort_levels)", []),
            ("tags OVERLAP ('GRAMMAR')", ["Both", "Fast"]),
            ("tags = ()", ["Any"]),
            ("MATCH('gram')", ["Both", "Fast"]),
            ("MATCH('bot')", ["Both"]),
        ],
    )
    def test_deck_arrays(self, decks, condition, expected):
        found = column(decks, f"SELECT name FROM decks WHERE {condition}", "name")
        assert sorted(found) == sorted(expected)


class TestAggregates:
    def test_aggregates_without_group_by_make_one_row_over_nothing(self, workspace):
        rows = select(
            workspace,
            "SELECT COUNT(*), SUM(reps), AVG(reps), MIN(front_text), MAX(due_at) FROM cards",
        )
        assert rows == [
            {
                "count": 0,
                "sum_reps": 0,
                "avg_reps": None,
                "min_front_text": None,
                "max_due_at": None,
            }
        ]

    def test_min_max_over_uuid_and_strings(self, workspace):
        cards = make_cards(workspace, 3)
        rows = select(workspace, "SELECT MIN(card_id) AS lo, MAX(front_text) AS hi FROM cards")
        assert rows == [{"lo": min(str(c.id) for c in cards), "hi": "Front 2"}]

    def test_having_uses_aliases_and_hidden_aggregates(self, workspace):
        make_cards(workspace, 3, effort_level="long")
        make_cards(workspace, 1, effort_level="fast")
        rows = select(
            workspace,
            "SELECT effort_level, COUNT(*) AS n FROM cards GROUP BY effort_level HAVING n > 1",
        )
        assert rows == [{"effort_level": "long", "n": 3}]
        rows = select(
            workspace,
            "SELECT effort_level FROM cards GROUP BY effort_level HAVING MAX(front_text) = 'Front 0' "
            "AND COUNT(*) < 3",
        )
        assert rows == [{"effort_level": "fast"}]

    def test_order_by_aggregates_that_are_not_selected(self, workspace):
        make_cards(workspace, 1, tags=["one"], front_text="b")
        make_cards(workspace, 2, tags=["two"], front_text="a")
        rows = select(workspace, "SELECT tag FROM cards GROUP BY tag ORDER BY COUNT(*) DESC")
        assert rows == [{"tag": "two"}, {"tag": "one"}]
        rows = select(
            workspace,
            "SELECT tag FROM cards GROUP BY tag HAVING COUNT(*) >= 1 ORDER BY MAX(front_text) DESC",
        )
        assert rows == [{"tag": "one"}, {"tag": "two"}]

    def test_distinct_over_fewer_columns_than_the_group_keys(self, workspace):
        make_cards(workspace, 1, effort_level="fast", card_type="basic")
        make_cards(workspace, 1, effort_level="fast", card_type="cloze")
        rows = select(
            workspace,
            "SELECT DISTINCT effort_level, COUNT(*) AS n FROM cards GROUP BY effort_level, card_type",
        )
        assert rows == [{"effort_level": "fast", "n": 1}]

    def test_distinct(self, workspace):
        make_cards(workspace, 3, effort_level="long")
        make_cards(workspace, 1, effort_level="medium")
        rows = select(
            workspace, "SELECT DISTINCT effort_level FROM cards ORDER BY effort_level DESC"
        )
        assert rows == [{"effort_level": "medium"}, {"effort_level": "long"}]

    def test_date_groups_in_utc(self, workspace):
        card = make_card(workspace)
        late = datetime(2026, 3, 5, 23, 30, tzinfo=UTC)
        review(workspace, card, 2, late)
        review(workspace, card, 3, late + timedelta(hours=1))
        rows = select(
            workspace,
            "SELECT DATE(reviewed_at_client) AS day, COUNT(*) FROM review_events GROUP BY day",
        )
        assert rows == [{"day": "2026-03-05", "count": 1}, {"day": "2026-03-06", "count": 1}]

    def test_review_grade(self, workspace):
        card = make_card(workspace)
        start = now_ms()
        for offset, rating in enumerate((2, 0, 2)):
            review(workspace, card, rating, start + timedelta(days=offset))
        rows = select(
            workspace,
            "SELECT review_grade, COUNT(*) AS n FROM review_events GROUP BY review_grade "
            "ORDER BY n DESC",
        )
        assert rows == [{"review_grade": "good", "n": 2}, {"review_grade": "again", "n": 1}]
        found = column(
            workspace,
            "SELECT rating FROM review_events WHERE review_grade IN ('again', 'easy')",
            "rating",
        )
        assert found == [0]

    def test_grouping_by_review_grade_groups_by_the_rating(self, workspace):
        """GROUP BY review_grade is GROUP BY rating in SQL (the index on workspace and rating
        answers it); the grade name is computed for the result rows only, and the keys, HAVING,
        DISTINCT and ORDER BY on the grade behave as on any text column."""
        card = make_card(workspace)
        start = now_ms()
        for offset, rating in enumerate((2, 0, 2, 3, 1, 1, 1)):
            review(workspace, card, rating, start + timedelta(days=offset))
        statement = "SELECT review_grade, COUNT(*) AS n FROM review_events GROUP BY review_grade"
        plan = validate(parse_batch(statement).statements[0])
        sql = str(compiler.compile_select(plan, workspace, now=now_ms()).queryset.query)
        group_by = sql.split("GROUP BY", 1)[1].split("ORDER BY", 1)[0]
        assert "CASE" not in group_by and "rating" in group_by, sql
        assert select(workspace, statement) == [
            {"review_grade": "again", "n": 1},
            {"review_grade": "easy", "n": 1},
            {"review_grade": "good", "n": 2},
            {"review_grade": "hard", "n": 3},
        ]
        assert select(
            workspace,
            "SELECT review_grade, COUNT(*) AS n FROM review_events GROUP BY review_grade "
            "HAVING COUNT(*) >= 2 ORDER BY review_grade DESC",
        ) == [{"review_grade": "hard", "n": 3}, {"review_grade": "good", "n": 2}]
        assert column(
            workspace,
            "SELECT review_grade FROM review_events GROUP BY review_grade, card_id "
            "ORDER BY review_grade",
            "review_grade",
        ) == ["again", "easy", "good", "hard"]
        assert select(
            workspace,
            "SELECT review_grade, COUNT(*) AS n FROM review_events WHERE review_grade != 'hard' "
            "GROUP BY review_grade HAVING review_grade IN ('good', 'easy') ORDER BY n DESC",
        ) == [{"review_grade": "good", "n": 2}, {"review_grade": "easy", "n": 1}]


class TestWriteTargets:
    def test_matching_ids_are_scoped_and_capped(self, workspace, other_workspace):
        mine = make_cards(workspace, 3, front_text="same")
        make_cards(other_workspace, 3, front_text="same")
        plan = validate(parse_batch("DELETE FROM cards WHERE front_text = 'same'").statements[0])
        ids = compiler.matching_ids(plan.resource, workspace, plan.where, limit=2, now=now_ms())
        assert len(ids) == 2 and set(ids) <= {card.id for card in mine}


@pytest.mark.parametrize("resource", ["cards", "decks"])
@pytest.mark.parametrize(
    "condition",
    ["tags OVERLAP ('x')", "tags CONTAINS ('x', 'y')", "tags = ('x')"],
)
def test_tag_subqueries_are_correlated_to_the_scoped_row(workspace, resource, condition):
    """Tag rows are read through the outer row (the card or deck the workspace scope already
    admitted), with no second workspace condition: that one made PostgreSQL underestimate a
    common tag and sort the whole tag side (docs/benchmarks.md)."""
    statement = f"SELECT COUNT(*) AS n FROM {resource} WHERE {condition}"
    plan = validate(parse_batch(statement).statements[0])
    query = compiler.compile_select(plan, workspace, now=now_ms()).queryset.query
    sql, params = query.sql_with_params()
    owner = "card" if resource == "cards" else "deck"
    subquery = sql.split("EXISTS", 1)[1]
    assert f'"{owner}_id" = ("flashcards_{owner}"."id")' in subquery
    workspace_params = [p for p in params if str(p).replace("-", "") == workspace.pk.hex]
    assert sql.count('"workspace_id" = %s') == len(workspace_params) == 1


@pytest.mark.parametrize("resource", ["cards", "decks"])
def test_match_checks_tags_per_row_against_the_workspaces_matching_tags(workspace, resource):
    """MATCH's tag check: the workspace's tags containing the text (a workspace condition on the
    tag table), and each outer row's own tag rows checked against them; on PostgreSQL as a
    per-row subquery (OFFSET 0) over an id array computed once (docs/benchmarks.md, MATCH)."""
    statement = f"SELECT COUNT(*) AS n FROM {resource} WHERE MATCH('x')"
    plan = validate(parse_batch(statement).statements[0])
    query = compiler.compile_select(plan, workspace, now=now_ms()).queryset.query
    sql, params = query.sql_with_params()
    owner = "card" if resource == "cards" else "deck"
    assert f'"{owner}_id" = ("flashcards_{owner}"."id")' in sql
    workspace_params = [p for p in params if str(p).replace("-", "") == workspace.pk.hex]
    # The scope, the "any tag contains it" check and the tag ids of the per-row check.
    assert sql.count('"workspace_id" = %s') == len(workspace_params) == 3
    if connection.vendor == "postgresql":
        assert "= ANY(ARRAY(SELECT" in sql and "OFFSET 0" in sql


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's planner")
def test_match_on_a_common_tag_word_reads_no_other_workspace(workspace, other_workspace):
    """MATCH('english') when another workspace holds many 'english' cards: the plan must not hash
    every card carrying a matching tag (which read all workspaces' tag rows, 30-40 ms at any
    size in the benchmark), and the rows are this workspace's only."""
    mine = make_cards(workspace, 3, tags=["English"])
    for _ in range(3):
        make_cards(other_workspace, 100, tags=["english"])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    plan = validate(parse_batch("SELECT card_id FROM cards WHERE MATCH('english')").statements[0])
    queryset = compiler.compile_select(plan, workspace, now=now_ms()).queryset
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql, params)
        explained = "\n".join(row[0] for row in cursor.fetchall())
    assert "hashed SubPlan" not in explained, explained
    assert {row[0] for row in queryset} == {card.id for card in mine}


@pytest.mark.parametrize(
    ("needle", "expected"),
    [
        ("50%", ["sale"]),  # % and _ are literal in MATCH
        ("0%_o", ["sale"]),
        ("5000", ["number"]),
        ("ÉTÉ", ["summer"]),  # tags match case-insensitively, all of Unicode
        ("été", ["summer"]),
        ("back\\slash", ["slash"]),
        ("nowhere", []),
    ],
)
def test_match_finds_tags_by_literal_substring(workspace, other_workspace, needle, expected):
    make_card(workspace, front_text="sale", back_text="-", tags=["50%_off"])
    make_card(workspace, front_text="number", back_text="-", tags=["5000"])
    make_card(workspace, front_text="summer", back_text="-", tags=["Été"])
    make_card(workspace, front_text="slash", back_text="-", tags=["back\\slash"])
    make_card(other_workspace, front_text="foreign", back_text="-", tags=["50%_off", "Été"])
    statement = f"SELECT front_text FROM cards WHERE MATCH('{needle}') ORDER BY front_text"
    assert column(workspace, statement, "front_text") == expected
