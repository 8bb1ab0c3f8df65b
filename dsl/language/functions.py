"""The dialect's function names (dsl.md §6): the only calls the grammar accepts, and the list that
the syntax errors suggest from."""

from __future__ import annotations

AGGREGATES = frozenset({"count", "sum", "avg", "min", "max"})
SCALAR_FUNCTIONS = frozenset({"date", "lower", "upper"})
FUNCTIONS = AGGREGATES | SCALAR_FUNCTIONS | {"now", "today", "random", "match", "any"}
FUNCTION_LIST = (
    "COUNT, SUM, AVG, MIN, MAX, DATE, LOWER, UPPER, NOW, TODAY, RANDOM (in ORDER BY), MATCH and ANY"
)
