"""The console's statement rewrites: paging (LIMIT / OFFSET set on the dialect's tokens), a
suggestion put in place of the offending token, and the error marker."""

from __future__ import annotations

import pytest

from dsl.surfaces.console.edits import apply_suggestion, marker_at, page_statement


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT * FROM cards", "SELECT * FROM cards LIMIT 20 OFFSET 40"),
        ("SELECT * FROM cards;", "SELECT * FROM cards LIMIT 20 OFFSET 40;"),
        ("SELECT * FROM cards LIMIT 20", "SELECT * FROM cards LIMIT 20 OFFSET 40"),
        ("SELECT * FROM cards LIMIT 500", "SELECT * FROM cards LIMIT 20 OFFSET 40"),
        ("select * from cards limit 20 offset 20", "select * from cards limit 20 offset 40"),
        ("SELECT * FROM cards OFFSET 5", "SELECT * FROM cards OFFSET 40 LIMIT 20"),
        (
            "SELECT * FROM cards -- first page\n",
            "SELECT * FROM cards LIMIT 20 OFFSET 40 -- first page\n",
        ),
        (
            "SELECT * FROM cards WHERE front_text = 'LIMIT 5 OFFSET 5'",
            "SELECT * FROM cards WHERE front_text = 'LIMIT 5 OFFSET 5' LIMIT 20 OFFSET 40",
        ),
        (
            "SELECT *\nFROM cards\nLIMIT 20\nOFFSET 0\n",
            "SELECT *\nFROM cards\nLIMIT 20\nOFFSET 40\n",
        ),
    ],
)
def test_page_statement(sql, expected):
    assert page_statement(sql, limit=20, offset=40) == expected


@pytest.mark.parametrize(
    ("sql", "offset", "suggestion", "expected"),
    [
        ("SELECT fron_text FROM cards", 7, "front_text", "SELECT front_text FROM cards"),
        ("SELECT * FROM card", 14, "cards", "SELECT * FROM cards"),
        ("SELECT * FORM cards", 9, "FROM", "SELECT * FROM cards"),
        ("SELECT * FROM cards WHERE", 25, "card_id", "SELECT * FROM cards WHERE card_id"),
        ("SELECT *  FROM cards", 9, "x", "SELECT * x  FROM cards"),
    ],
)
def test_apply_suggestion(sql, offset, suggestion, expected):
    assert apply_suggestion(sql, offset, suggestion) == expected


def test_the_marker_points_into_the_right_line():
    marker = marker_at("SELECT *\n\tFROM crads", 15)
    assert (marker.line_number, marker.line, marker.column) == (2, "\tFROM crads", 6)
    assert marker.padding == "\t     "
    assert marker.gutter == "2 | " and marker.blank_gutter == "    "


def test_the_marker_clamps_past_the_end():
    marker = marker_at("SELECT", 99)
    assert (marker.line, marker.column) == ("SELECT", 6)
