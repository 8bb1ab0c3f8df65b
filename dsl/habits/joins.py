"""Habits, Joins, subqueries and set operations beyond what the parser already names."""

from __future__ import annotations

from dsl.habits.base import Habit, h

ROWS: tuple[Habit, ...] = (
    h(
        "joins",
        "lateral",
        "LATERAL (and joins in general) are not supported: query one resource at a time.",
        "Run two statements: first SELECT card_id FROM review_events WHERE rating = 0, then SELECT * FROM cards WHERE card_id IN ('<id>', ...)",
    ),
)
