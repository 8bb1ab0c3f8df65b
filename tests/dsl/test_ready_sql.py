"""dsl.runtime.ready_sql, the one module below Django's public queryset API: each step gives what the
public API gives (the same rows as evaluating the queryset, Django's own LIMIT / OFFSET), and on
both databases no literal of a caller reaches SQL text except through psycopg's quoting (a
property test over arbitrary text)."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsl.runtime import compiler, ready_sql
from dsl.runtime import reads as caches
from dsl.runtime.executor import current_limits, prepare
from dsl.runtime.querylog import ExecutionStats
from dsl.runtime.rows import row_formatter
from flashcards.services import now_ms
from tests.factories import make_card, make_cards

pytestmark = pytest.mark.django_db

READS = [
    "SELECT * FROM cards",
    "SELECT card_id, front_text, due_at FROM cards WHERE reps = 0 ORDER BY front_text",
    "SELECT front_text FROM cards WHERE front_text LIKE 'Front%' AND due_at <= NOW()",
    "SELECT tag, COUNT(*) FROM cards GROUP BY tag",
    "SELECT card_id, tag FROM cards WHERE tags OVERLAP ('a', 'b')",
    "SELECT * FROM decks WHERE MATCH('x')",
    "SELECT card_id FROM cards WHERE card_id IN ('00000000-0000-4000-8000-000000000000')",
    "SELECT * FROM workspace",
]


def _plan(sql: str):
    _, plans = prepare(sql, current_limits(), "read", ExecutionStats())
    return plans[0]


@pytest.mark.parametrize("sql", READS)
def test_ready_sql_returns_what_the_queryset_returns(workspace, sql):
    make_cards(workspace, 3, tags=["a", "c"])
    make_card(workspace, front_text="other", tags=["b"])
    plan = _plan(sql)
    ready = caches.ready_select(plan, workspace)
    moment = now_ms()
    compiled = compiler.compile_select(plan, workspace, now=moment)
    published = row_formatter(compiled.columns)  # Django's converters, then the generic formats
    for offset, count in ((0, 100), (1, 2)):
        expected = [published(row) for row in compiled.queryset[offset : offset + count]]
        fetched = ready.fetch(moment, offset, count, timeout_ms=None)
        assert [ready.format_row(row) for row in fetched] == expected


def test_a_where_that_matches_nothing_generates_no_sql(workspace):
    from flashcards.models import Card

    queryset = Card.objects.filter(pk__in=[]).values_list("pk")
    assert ready_sql.generate(queryset) is None
    assert list(queryset) == []


def test_paging_is_djangos_own_limit_and_offset():
    assert ready_sql.paged("SELECT 1", 5, 10) == (
        f"SELECT 1 {connection.ops.limit_offset_sql(5, 15)}"
    )


def test_literals_are_inlined_only_with_client_side_binding_on_postgresql(workspace):
    ready = caches.ready_select(
        _plan("SELECT card_id FROM cards WHERE front_text = 'x'"), workspace
    )
    if connection.vendor != "postgresql":
        assert ready.literal_pieces is None
        return
    with connection.cursor() as cursor:
        assert "".join(ready.literal_pieces) == cursor.cursor.mogrify(ready.sql, ready.params)


# Text a caller may put in a string literal: anything storable (no NUL, no lone surrogate).
CALLER_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=40,
)


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(text=CALLER_TEXT, form=st.sampled_from(["=", "IN", "LIKE", "MATCH"]))
def test_no_caller_literal_reaches_sql_text_except_through_psycopgs_quoting(workspace, text, form):
    marker = f"lit{uuid.uuid4().hex}"
    value = marker + text
    make_card(workspace, front_text=value)
    quoted = value.replace("'", "''")
    pattern = quoted.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    condition = {
        "=": f"front_text = '{quoted}'",
        "IN": f"front_text IN ('{quoted}', 'other')",
        "LIKE": f"front_text LIKE '{pattern}'",
        "MATCH": f"MATCH('{quoted}')",
    }[form]
    plan = _plan(f"SELECT front_text FROM cards WHERE {condition}")
    ready = caches.ready_select(plan, workspace)
    # The SQL Django generated carries every caller value as a parameter, never in its text.
    assert marker not in ready.sql
    if ready.literal_pieces is not None:
        # PostgreSQL: the values are written in, by psycopg's mogrify and nothing else.
        with connection.cursor() as cursor:
            assert "".join(ready.literal_pieces) == cursor.cursor.mogrify(ready.sql, ready.params)
    rows = ready.fetch(now_ms(), 0, 10, timeout_ms=None)
    assert [row[0] for row in rows] == [value]
