"""dsl.md §6.2 Select items and grouping, §6.3 ORDER BY, LIMIT, OFFSET."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from flashcards import services
from tests.factories import make_card, make_cards

pytestmark = pytest.mark.django_db


@pytest.fixture
def reviewed(workspace):
    """Cards with reps 0, 1, 2 and 3 and effort fast, medium, long, medium."""
    cards = services.create_cards(
        workspace,
        [
            {"front_text": f"c{i}", "back_text": "", "effort_level": effort, "tags": tags}
            for i, (effort, tags) in enumerate(
                [("fast", ["a"]), ("medium", ["a", "b"]), ("long", []), ("medium", ["b"])]
            )
        ],
    )
    moment = datetime(2025, 1, 1, tzinfo=UTC)
    for reps, card in enumerate(cards):
        for i in range(reps):
            services.submit_review(
                workspace, card.id, "good", reviewed_at=moment + timedelta(days=i)
            )
    return cards


# "Default output names: count, count_<col>, sum_<col>, avg_<col>, min_<col>, max_<col>, date_<col>."


def test_default_output_names(rows, reviewed):
    result = rows(
        "SELECT COUNT(*), COUNT(due_at), COUNT(DISTINCT effort_level), SUM(reps), AVG(reps), "
        "MIN(reps), MAX(reps), MIN(front_text), MAX(created_at) FROM cards"
    )
    assert len(result) == 1
    row = result[0]
    assert list(row) == [
        "count",
        "count_due_at",
        "count_effort_level",
        "sum_reps",
        "avg_reps",
        "min_reps",
        "max_reps",
        "min_front_text",
        "max_created_at",
    ]
    assert row["count"] == 4 and row["count_due_at"] == 3 and row["count_effort_level"] == 3
    assert row["sum_reps"] == 6 and row["avg_reps"] == 1.5
    assert (row["min_reps"], row["max_reps"], row["min_front_text"]) == (0, 3, "c0")
    day = rows("SELECT DATE(created_at) FROM cards GROUP BY DATE(created_at)")
    assert list(day[0]) == ["date_created_at"]


def test_aliases_name_items(rows, reviewed):
    result = rows(
        "SELECT COUNT(*) AS Total, MAX(reps) AS top, DATE(created_at) AS Day FROM cards GROUP BY Day"
    )
    assert list(result[0]) == ["total", "top", "day"]


def test_aggregate_value_types(rows, reviewed):
    [row] = rows(
        "SELECT AVG(fsrs_stability) AS a, SUM(fsrs_stability) AS s, MIN(due_at) AS m FROM cards"
    )
    assert isinstance(row["a"], float) and isinstance(row["s"], float)
    assert row["m"].endswith("Z") and len(row["m"]) == len("2026-03-05T10:00:00.000Z")
    [row] = rows("SELECT MAX(workspace_id) AS top, MIN(enable_fuzz) AS f FROM workspace")
    assert row["top"] == row["top"].lower() and row["f"] is True


# "Without GROUP BY an aggregate query returns exactly one row, even over no rows (COUNT(*) → 0,
# SUM → 0, AVG/MIN/MAX → null)."


@pytest.mark.parametrize(
    "where", ["", " WHERE reps > 100", " WHERE tag = 'none'", " WHERE tags OVERLAP ('none')"]
)
def test_aggregates_over_no_rows(rows, workspace, where):
    result = rows(
        "SELECT COUNT(*), COUNT(due_at), SUM(reps), SUM(fsrs_stability), AVG(reps), MIN(reps), "
        f"MAX(due_at), MIN(front_text) FROM cards{where}"
    )
    assert result == [
        {
            "count": 0,
            "count_due_at": 0,
            "sum_reps": 0,
            "sum_fsrs_stability": 0,
            "avg_reps": None,
            "min_reps": None,
            "max_due_at": None,
            "min_front_text": None,
        }
    ]


def test_grouped_aggregates_over_no_rows_are_no_rows(rows, workspace):
    assert rows("SELECT effort_level, COUNT(*) FROM cards GROUP BY effort_level") == []


# "Grouping: any aggregate, GROUP BY or DISTINCT makes the query grouped. Every non-aggregate item
# must appear in GROUP BY (error names the item)"


@pytest.mark.parametrize(
    ("statement", "item"),
    [
        ("SELECT front_text, COUNT(*) FROM cards", "front_text"),
        ("SELECT effort_level, reps FROM cards GROUP BY effort_level", "reps"),
        ("SELECT tag, card_id FROM cards GROUP BY tag", "card_id"),
        ("SELECT DATE(due_at), COUNT(*) FROM cards", "DATE(due_at)"),
    ],
)
def test_items_outside_group_by_are_named(fails, statement, item):
    error = fails(statement)
    assert error["code"] == "QUERY_INVALID_SQL"
    assert item in error["message"]


def test_group_by_columns_aliases_dates_and_tags(rows, reviewed):
    by_effort = [
        {"effort_level": "fast", "n": 1},
        {"effort_level": "long", "n": 1},
        {"effort_level": "medium", "n": 2},
    ]
    assert rows("SELECT effort_level, COUNT(*) AS n FROM cards GROUP BY effort_level") == by_effort
    assert rows("SELECT effort_level AS e, COUNT(*) AS n FROM cards GROUP BY e") == [
        {"e": r["effort_level"], "n": r["n"]} for r in by_effort
    ]
    today = rows("SELECT DATE(created_at) AS day, COUNT(*) AS n FROM cards GROUP BY day")
    assert today == rows(
        "SELECT DATE(created_at) AS day, COUNT(*) AS n FROM cards GROUP BY DATE(created_at)"
    )
    assert today[0]["n"] == 4 and len(today) == 1
    assert rows("SELECT tag, COUNT(*) AS n FROM cards GROUP BY tag") == [
        {"tag": "a", "n": 2},
        {"tag": "b", "n": 2},
    ]
    assert rows("SELECT x, SUM(reps) AS r FROM cards UNNEST tags AS x GROUP BY x") == [
        {"x": "a", "r": 1},
        {"x": "b", "r": 4},
    ]
    assert rows(
        "SELECT COUNT(*) AS n FROM cards GROUP BY effort_level, reps ORDER BY n DESC LIMIT 1"
    ) == [{"n": 1}]


def test_group_by_a_key_not_selected(rows, reviewed):
    assert rows("SELECT COUNT(*) AS n FROM cards GROUP BY effort_level") == [
        {"n": 1},
        {"n": 1},
        {"n": 2},
    ]


def test_date_of_a_nullable_column_groups_nulls(rows, reviewed):
    result = rows("SELECT DATE(due_at) AS d, COUNT(*) AS n FROM cards GROUP BY d")
    assert result[0] == {"d": None, "n": 1}
    assert sum(r["n"] for r in result) == 4


# "HAVING filters groups and may use aggregates and aliases."


def test_having(rows, reviewed):
    assert rows(
        "SELECT effort_level, COUNT(*) AS n FROM cards GROUP BY effort_level HAVING COUNT(*) > 1"
    ) == [{"effort_level": "medium", "n": 2}]
    assert rows(
        "SELECT effort_level, COUNT(*) AS n FROM cards GROUP BY effort_level HAVING n = 1"
    ) == [
        {"effort_level": "fast", "n": 1},
        {"effort_level": "long", "n": 1},
    ]
    assert rows(
        "SELECT effort_level FROM cards GROUP BY effort_level HAVING SUM(reps) >= 3 AND effort_level != 'long'"
    ) == [{"effort_level": "medium"}]
    assert rows("SELECT tag FROM cards GROUP BY tag HAVING MAX(reps) > 2") == [{"tag": "b"}]
    assert rows("SELECT effort_level FROM cards GROUP BY effort_level HAVING COUNT(*) > 1.5") == [
        {"effort_level": "medium"}
    ]
    assert rows("SELECT effort_level FROM cards GROUP BY effort_level HAVING AVG(reps) = 2") == [
        {"effort_level": "long"},
        {"effort_level": "medium"},
    ]


def test_having_without_group_by_filters_the_single_row(rows, reviewed):
    assert rows("SELECT COUNT(*) AS n FROM cards HAVING COUNT(*) > 10") == []
    assert rows("SELECT COUNT(*) AS n FROM cards HAVING n = 4") == [{"n": 4}]


def test_distinct_is_grouped(rows, reviewed):
    assert rows("SELECT DISTINCT effort_level FROM cards") == [
        {"effort_level": "fast"},
        {"effort_level": "long"},
        {"effort_level": "medium"},
    ]
    assert rows("SELECT DISTINCT tag FROM cards") == [{"tag": "a"}, {"tag": "b"}]
    assert rows("SELECT DISTINCT effort_level, tag FROM cards ORDER BY tag DESC") == [
        {"effort_level": "medium", "tag": "b"},
        {"effort_level": "fast", "tag": "a"},
        {"effort_level": "medium", "tag": "a"},
    ]


def test_aggregate_argument_rules(reason):
    assert reason("SELECT SUM(front_text) FROM cards") == "type_mismatch"
    assert reason("SELECT AVG(due_at) FROM cards") == "type_mismatch"
    assert reason("SELECT MAX(metadata) FROM cards") == "not_sortable"
    assert reason("SELECT DATE(reps) FROM cards") == "type_mismatch"
    assert reason("SELECT COUNT(nope) FROM cards") == "unknown_column"


# §6.3 "Items: a column, an alias, an aggregate, or DATE(col), each with ASC (default) or DESC and
# optional NULLS FIRST / NULLS LAST. Default null placement: first for ASC, last for DESC, on every
# database."


def _fronts(result):
    return [r["front_text"] for r in result]


def test_order_by_column_alias_aggregate_and_date(rows, reviewed):
    assert _fronts(rows("SELECT front_text FROM cards ORDER BY reps DESC")) == [
        "c3",
        "c2",
        "c1",
        "c0",
    ]
    assert _fronts(rows("SELECT front_text, reps AS r FROM cards ORDER BY r ASC")) == [
        "c0",
        "c1",
        "c2",
        "c3",
    ]
    assert rows(
        "SELECT effort_level, COUNT(*) AS n FROM cards GROUP BY effort_level ORDER BY COUNT(*) DESC"
    )[0] == {
        "effort_level": "medium",
        "n": 2,
    }
    assert rows(
        "SELECT DATE(due_at) AS d FROM cards GROUP BY DATE(due_at) ORDER BY DATE(due_at) DESC"
    )[-1] == {"d": None}


def test_default_null_placement(rows, reviewed):
    assert _fronts(rows("SELECT front_text FROM cards ORDER BY due_at"))[0] == "c0"
    assert _fronts(rows("SELECT front_text FROM cards ORDER BY due_at ASC"))[0] == "c0"
    assert _fronts(rows("SELECT front_text FROM cards ORDER BY due_at DESC"))[-1] == "c0"
    assert _fronts(rows("SELECT front_text FROM cards ORDER BY due_at ASC NULLS LAST"))[-1] == "c0"
    assert _fronts(rows("SELECT front_text FROM cards ORDER BY due_at DESC NULLS FIRST"))[0] == "c0"
    assert (
        _fronts(rows("SELECT front_text FROM cards ORDER BY fsrs_stability NULLS FIRST"))[0] == "c0"
    )
    grouped = rows(
        "SELECT MAX(due_at) AS m, effort_level FROM cards GROUP BY effort_level ORDER BY m"
    )
    assert grouped[0] == {"m": None, "effort_level": "fast"}
    grouped = rows(
        "SELECT MAX(due_at) AS m, effort_level FROM cards GROUP BY effort_level ORDER BY m DESC"
    )
    assert grouped[-1] == {"m": None, "effort_level": "fast"}


# "ORDER BY RANDOM() must stand alone. ORDER BY 1 (positions) is an error with a hint."


def test_order_by_random(rows, fails, reviewed):
    result = rows("SELECT front_text FROM cards ORDER BY RANDOM()")
    assert sorted(_fronts(result)) == ["c0", "c1", "c2", "c3"]
    assert len(rows("SELECT front_text FROM cards ORDER BY random() LIMIT 2")) == 2
    assert len(rows("SELECT tag, COUNT(*) FROM cards GROUP BY tag ORDER BY RANDOM()")) == 2
    error = fails("SELECT front_text FROM cards ORDER BY RANDOM(), reps")
    assert error["code"] == "QUERY_INVALID_SQL" and "RANDOM" in error["message"]
    error = fails("SELECT front_text FROM cards ORDER BY reps, RANDOM()")
    assert "RANDOM" in error["message"]


def test_order_by_position_is_an_error_with_a_hint(fails):
    error = fails("SELECT front_text FROM cards ORDER BY 1")
    assert error["code"] == "QUERY_INVALID_SQL"
    assert error["details"]["hint"]
    assert "ORDER BY" in error["message"] or "ORDER BY" in error["details"]["hint"]


def test_order_by_a_non_sortable_column(reason):
    assert reason("SELECT card_id FROM cards ORDER BY metadata") == "not_sortable"
    assert reason("SELECT card_id FROM cards ORDER BY tags") == "not_sortable"


# "Strings (enum values included) sort case-insensitively first, then case-sensitively as a
# tie-break, on every database."


def test_strings_sort_case_insensitively_then_case_sensitively(rows, workspace):
    values = ["b", "B", "a", "A", "C", "ab", "Ab", "é", "É", "e", "_x", "Z"]
    services.create_cards(workspace, [{"front_text": v, "back_text": ""} for v in values])
    ascending = _fronts(rows("SELECT front_text FROM cards ORDER BY front_text"))
    assert ascending == ["_x", "A", "a", "Ab", "ab", "B", "b", "C", "e", "Z", "É", "é"]
    descending = _fronts(rows("SELECT front_text FROM cards ORDER BY front_text DESC"))
    assert descending == list(reversed(ascending))


def test_enum_values_sort_as_strings(rows, reviewed):
    result = rows("SELECT effort_level FROM cards ORDER BY effort_level")
    assert [r["effort_level"] for r in result] == ["fast", "long", "medium", "medium"]


def test_min_and_max_of_strings_use_code_point_order(rows, workspace):
    # Decision (docs/decisions.md): aggregates take code point order on both databases.
    services.create_cards(workspace, [{"front_text": v, "back_text": ""} for v in ("a", "B", "c")])
    assert rows("SELECT MIN(front_text), MAX(front_text) FROM cards") == [
        {"min_front_text": "B", "max_front_text": "c"}
    ]


def test_review_grade_sorts_and_groups_as_a_string(rows, workspace):
    cards = make_cards(workspace, 4)
    for card, rating in zip(cards, (3, 2, 1, 0), strict=True):
        services.submit_review(workspace, card.id, rating)
    result = rows("SELECT review_grade FROM review_events ORDER BY review_grade")
    assert [r["review_grade"] for r in result] == ["again", "easy", "good", "hard"]
    result = rows("SELECT review_grade, COUNT(*) AS n FROM review_events GROUP BY review_grade")
    assert [r["review_grade"] for r in result] == ["again", "easy", "good", "hard"]


def test_tag_rows_sort_case_insensitively(rows, workspace):
    make_card(workspace, tags=["beta", "Alpha", "alphabet", "Beta2"])
    result = rows("SELECT tag FROM cards ORDER BY tag")
    assert [r["tag"] for r in result] == ["Alpha", "alphabet", "beta", "Beta2"]


# "Without ORDER BY: the resource's default order; grouped queries order by their group keys
# ascending. Every ungrouped order is completed with the resource's id ascending, and every grouped
# order with the group keys ascending, so pages never overlap."


def test_ungrouped_orders_are_completed_by_id_ascending(rows, workspace):
    cards = make_cards(workspace, 6, effort_level="medium")
    ids = sorted(str(c.id) for c in cards)
    assert [r["card_id"] for r in rows("SELECT card_id FROM cards ORDER BY effort_level")] == ids
    assert [
        r["card_id"] for r in rows("SELECT card_id FROM cards ORDER BY effort_level DESC")
    ] == ids
    decks = services.create_decks(workspace, [{"name": "same"} for _ in range(5)])
    deck_ids = sorted(str(d.id) for d in decks)
    assert [r["deck_id"] for r in rows("SELECT deck_id FROM decks ORDER BY name")] == deck_ids


def test_grouped_orders_are_completed_by_the_group_keys(rows, workspace):
    services.create_cards(
        workspace,
        [
            {"front_text": f, "back_text": "", "effort_level": e}
            for f, e in [("x", "long"), ("y", "fast"), ("z", "medium")]
        ],
    )
    result = rows(
        "SELECT effort_level, COUNT(*) AS n FROM cards GROUP BY effort_level ORDER BY n DESC"
    )
    assert [r["effort_level"] for r in result] == ["fast", "long", "medium"]
    result = rows(
        "SELECT effort_level, front_text, COUNT(*) AS n FROM cards GROUP BY front_text, effort_level"
    )
    assert [r["front_text"] for r in result] == ["x", "y", "z"]


def test_pages_never_overlap(rows, workspace):
    make_cards(workspace, 7)
    make_cards(workspace, 7, effort_level="long")
    for statement in (
        "SELECT card_id FROM cards",
        "SELECT card_id FROM cards ORDER BY effort_level",
        "SELECT card_id FROM cards ORDER BY created_at",
        "SELECT card_id FROM cards ORDER BY reps DESC",
    ):
        everything = [r["card_id"] for r in rows(statement)]
        paged = []
        for offset in range(0, 14, 3):
            paged += [r["card_id"] for r in rows(f"{statement} LIMIT 3 OFFSET {offset}")]
        assert paged == everything and len(set(paged)) == 14


def test_tag_row_pages_never_overlap(rows, workspace):
    for i in range(4):
        make_card(workspace, tags=[f"t{i}", "shared", f"u{i}"])
    everything = [(r["card_id"], r["tag"]) for r in rows("SELECT card_id, tag FROM cards")]
    paged = []
    for offset in range(0, 12, 5):
        paged += [
            (r["card_id"], r["tag"])
            for r in rows(f"SELECT card_id, tag FROM cards LIMIT 5 OFFSET {offset}")
        ]
    assert paged == everything and len(set(paged)) == 12


# "LIMIT: default 100; a value above 100 is lowered to 100 and reported in warnings; LIMIT 0,
# negative or fractional limits are errors. OFFSET: default 0, non-negative integer."


def test_limit_above_100_is_lowered_and_warned(ok, workspace):
    make_cards(workspace, 100)
    make_card(workspace)
    data = ok("SELECT card_id FROM cards LIMIT 500")
    assert data["limit"] == 100 and data["rowCount"] == 100 and data["hasMore"] is True
    assert len(data["warnings"]) == 1
    assert "100" in data["warnings"][0] and "500" in data["warnings"][0]
    data = ok("SELECT card_id FROM cards LIMIT 100")
    assert data["limit"] == 100 and data["warnings"] == []
    data = ok("SELECT card_id FROM cards LIMIT 101 OFFSET 100")
    assert data["limit"] == 100 and data["rowCount"] == 1 and len(data["warnings"]) == 1


@pytest.mark.parametrize(
    "tail",
    ["LIMIT 0", "LIMIT -1", "LIMIT 1.5", "OFFSET -1", "OFFSET 0.5", "LIMIT 10 OFFSET -5"],
)
def test_bad_limits_and_offsets(reason, tail):
    assert reason(f"SELECT * FROM cards {tail}") == "limit_out_of_range"


def test_limit_1_and_offset_0(ok, workspace):
    make_cards(workspace, 2)
    data = ok("SELECT card_id FROM cards LIMIT 1 OFFSET 0")
    assert (data["limit"], data["offset"], data["rowCount"], data["hasMore"]) == (1, 0, 1, True)
