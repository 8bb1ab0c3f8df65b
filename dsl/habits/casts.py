"""Habits, Casts: CAST(), CONVERT(), ::type."""

from __future__ import annotations

from dsl.habits.base import Habit, h

ROWS: tuple[Habit, ...] = (
    h(
        "aggregates",
        "cast #args",
        "CAST() is not supported: every column and literal already has its type.",
        "Write {fix} without the cast",
        replace="{2[0]:cast_inner}",
        fallback="Drop the cast and write literals of the column's type, e.g. reps = 3",
        example="SELECT * FROM cards WHERE CAST(reps AS text) = '1'",
    ),
    h(
        "aggregates",
        "convert|try_cast|try_convert #args",
        "{1:upper}() is not supported: every column and literal already has its type.",
        "Write {fix} without the conversion",
        replace=("{2[1]:column}", "{2[0]:cast_inner}"),
        fallback="Drop the conversion and write literals of the column's type, e.g. reps = 3",
        example="SELECT CONVERT(varchar, front_text) FROM cards",
    ),
    h(
        "aggregates",
        "#operand :: #word",
        "Type casts (::) are not supported: every column and literal already has its type.",
        "Write {fix} without the cast",
        replace="{1}",
        at=1,
        fallback="Drop the cast and write literals of the column's type, e.g. due_at < '2026-03-05'",
        example="SELECT * FROM cards WHERE due_at < now()::date",
    ),
)
