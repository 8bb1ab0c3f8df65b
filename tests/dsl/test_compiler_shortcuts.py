"""The compiler's shortcuts build the same SQL as Django's generic queryset API.

``dsl.compiler`` builds some query structures directly — resolved columns instead of F() paths,
WHERE nodes instead of ``filter(Q)``, the selected columns instead of ``values_list()``, tag
subqueries cloned from a cached one — because resolving each field path again was most of a
compile (docs/benchmarks.md §1). ``compiler.generic_route()`` turns them off; every statement here
must give the same SQL text and the same parameters both ways, on the database under test."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from dsl import compiler
from dsl import plan as p
from dsl import validator as v
from dsl.parser import parse_batch

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "corpus.sql"
MOMENT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

EXTRA = [
    "SELECT card_id, front_text AS f, front_text AS g FROM cards",
    "SELECT tag, front_text, due_at FROM cards WHERE tag = 'English' ORDER BY tag",
    "SELECT t FROM cards UNNEST tags AS t WHERE t ILIKE 'e%' AND reps > 1 ORDER BY t DESC",
    "SELECT tag, card_id FROM cards WHERE effort_level = 'fast' OR fsrs_stability IS NULL",
    "SELECT * FROM review_events WHERE review_grade IN ('good', 'easy') ORDER BY reviewed_at_client",
    "SELECT * FROM review_events WHERE review_grade != 'again' AND rating BETWEEN 1 AND 3",
    "SELECT card_id, COUNT(*) FROM review_events GROUP BY card_id ORDER BY card_id",
    "SELECT * FROM decks WHERE tags = ('a', 'b') OR tags CONTAINS ('x') ORDER BY name DESC NULLS FIRST",
    "SELECT * FROM decks WHERE effort_levels = ('fast') AND NOT effort_levels OVERLAP ('long')",
    "SELECT * FROM cards WHERE NOT (reps > 2.5 OR front_text > 'm') AND card_id LIKE '12%'",
    "SELECT * FROM cards WHERE reps = 1.5 OR lapses IN (1, 2.5)",
    "SELECT MAX(card_id), MIN(front_text), AVG(fsrs_stability) FROM cards WHERE due_at IS NULL",
    "SELECT effort_level, COUNT(*) AS n FROM cards GROUP BY effort_level HAVING n > 1 AND MAX(reps) < 9",
    "SELECT * FROM workspace",
    "SELECT * FROM cards WHERE MATCH('Photo') ORDER BY due_at DESC LIMIT 5",
    "SELECT * FROM cards WHERE tags OVERLAP () OR tags CONTAINS () OR tags = ()",
    "SELECT card_id FROM cards WHERE UPPER(back_text) NOT LIKE '%X%' AND LOWER(tag) = 'x'",
    "SELECT card_id FROM cards WHERE due_at > NOW() - INTERVAL '3 days' AND due_at < NOW()",
    "SELECT DISTINCT effort_level, card_type FROM cards",
    "SELECT card_id FROM cards WHERE 'x' = ANY(tags) AND card_id = '123e4567-e89b-42d3-a456-426614174000'",
]


def _statements() -> list[str]:
    lines = [
        line.strip()
        for line in CORPUS.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("--")
    ]
    return [*lines, *EXTRA]


def _sql(queryset: Any) -> tuple[str, list[Any]]:
    sql, params = queryset.query.get_compiler(connection=connection).as_sql()
    # psycopg's Int2 / Int4 wrappers say how a parameter is sent, not what it is.
    return sql, [int(p) if isinstance(p, int) and not isinstance(p, bool) else p for p in params]


def _compiled(plan: p.Plan, workspace: Any) -> list[tuple[str, list[Any]]]:
    if isinstance(plan, p.SelectPlan):
        return [_sql(compiler.compile_select(plan, workspace, now=MOMENT).queryset)]
    if isinstance(plan, (p.UpdatePlan, p.DeletePlan)):
        scope = compiler._Scope(plan.resource, workspace, tag_rows=False, now=MOMENT)
        where = compiler.compile_condition(scope, plan.where)
        return [_sql(compiler.base_queryset(plan.resource, workspace, where=where))]
    return []


@pytest.mark.django_db
@pytest.mark.parametrize("statement", _statements())
def test_shortcuts_build_the_generic_sql(workspace, statement):
    plans = [v.validate(parsed) for parsed in parse_batch(statement).statements]
    shortcut = [sql for plan in plans for sql in _compiled(plan, workspace)]
    with compiler.generic_route():
        generic = [sql for plan in plans for sql in _compiled(plan, workspace)]
    assert shortcut == generic


@pytest.mark.django_db
def test_the_generic_route_is_really_another_route(workspace, monkeypatch):
    """Guards the comparison above: without the switch the shortcuts run, with it none does."""
    calls: list[str] = []
    for name in ("_base_col", "_add_condition", "_values_of_columns", "_tag_rows_of"):
        original = getattr(compiler, name)

        def spy(*args: Any, _name: str = name, _original: Any = original, **kwargs: Any) -> Any:
            calls.append(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(compiler, name, spy)
    statement = "SELECT card_id FROM cards WHERE reps > 1 AND tags OVERLAP ('x') ORDER BY due_at"
    plan = v.validate(parse_batch(statement).statements[0])
    with compiler.generic_route():
        compiler.compile_select(plan, workspace, now=MOMENT)
    assert calls == []
    compiler.compile_select(plan, workspace, now=MOMENT)
    assert set(calls) == {"_base_col", "_add_condition", "_values_of_columns", "_tag_rows_of"}
