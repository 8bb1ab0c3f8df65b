"""Grammar-aware fuzzing of POST /v1/agent/sql (hypothesis): statements built from the dialect's
own resources, columns, operators and literals, then mutated at the character level; and arbitrary
JSON bodies. Every response must be a §2 envelope with an allowed status, never a 500, and no
returned row may belong to the other workspace.

The suite runs a few hundred cases; ``make fuzz`` runs FUZZ_EXAMPLES=100000. Each case runs in a
savepoint that is rolled back, so writes never pile up across cases."""

from __future__ import annotations

import json
import os
from datetime import datetime
from typing import Any

import pytest
from django.db import transaction
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from dsl.schema import get_resource
from tests.reliability.helpers import assert_no_foreign_rows, envelope, post_body

pytestmark = pytest.mark.django_db

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "300"))
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
ALLOWED_STATUS = {200, 400, 401, 403, 404, 409, 413, 415}

RESOURCES = ("cards", "decks", "review_events", "workspace")
COLUMNS = {
    name: tuple(column.name for column in get_resource(name).columns)  # type: ignore[union-attr]
    for name in RESOURCES
}
ALL_COLUMNS = tuple(sorted({c for cols in COLUMNS.values() for c in cols}))
JUNK_NAMES = ("deleted_at", "workspace_id", "id", "fron_text", "cardz", "pg_user", "*", "1")
KEYWORDS = (
    "SELECT",
    "FROM",
    "WHERE",
    "AND",
    "OR",
    "NOT",
    "IN",
    "LIKE",
    "ILIKE",
    "BETWEEN",
    "IS",
    "NULL",
    "GROUP BY",
    "HAVING",
    "ORDER BY",
    "ASC",
    "DESC",
    "NULLS FIRST",
    "LIMIT",
    "OFFSET",
    "UNNEST",
    "AS",
    "DISTINCT",
    "JOIN",
    "UNION",
    "WITH",
    "INSERT INTO",
    "VALUES",
    "UPDATE",
    "SET",
    "DELETE FROM",
    "RETURNING",
    "OVERLAP",
    "CONTAINS",
    "ANY",
    "MATCH",
    "NOW()",
    "INTERVAL",
    "COUNT(*)",
    "DROP TABLE",
    "BEGIN",
    "COMMIT",
    ";",
    "(",
    ")",
    ",",
    "'",
    '"',
    "--",
    "/*",
    "*/",
)
OPERATORS = ("=", "!=", "<>", "<", "<=", ">", ">=")

# Any code point, lone surrogates included (json.dumps sends them as \\udXXX escapes).
characters = st.one_of(st.characters(), st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF))
text = st.text(alphabet=characters, max_size=12)


def names_for(resource: str) -> st.SearchStrategy[str]:
    """Mostly the resource's own columns, so most cases get past name checks to execution."""
    own = COLUMNS.get(resource, ALL_COLUMNS)
    return st.sampled_from(own * 6 + JUNK_NAMES + ALL_COLUMNS)


def quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


numbers = st.one_of(
    st.integers(-(10**20), 10**20).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["1e400", "-0", ".5", "1e3", "9223372036854775807", "0x10", "1_000"]),
)
small_numbers = st.one_of(st.integers(0, 150).map(str), numbers)
datetimes = st.one_of(
    st.datetimes().map(lambda d: quoted(d.isoformat())),
    st.sampled_from(["NOW()", "CURRENT_TIMESTAMP", "'2026-03-05'", "'2026-02-30'", "'yesterday'"]),
    st.tuples(
        st.sampled_from(["+", "-"]),
        st.integers(-5, 10**6),
        st.sampled_from(["minute", "hours", "day", "weeks", "month", "years", "fortnight"]),
    ).map(lambda t: f"NOW() {t[0]} INTERVAL '{t[1]} {t[2]}'"),
)
scalars = st.one_of(
    text.map(quoted),
    numbers,
    datetimes,
    st.sampled_from(["TRUE", "FALSE", "NULL", "'fast'", "'english'", "'review'", "'good'"]),
    st.uuids().map(lambda u: quoted(str(u))),
)
arrays = st.lists(
    st.one_of(text.map(quoted), st.sampled_from(["'english'", "'verbs'", "'fast'"])), max_size=4
).flatmap(
    lambda items: st.sampled_from(
        [
            "(" + ", ".join(items) + ")",
            "[" + ", ".join(items) + "]",
            "ARRAY[" + ", ".join(items) + "]",
        ]
    )
)
values = st.one_of(scalars, arrays)


def _predicate(names: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(names, st.sampled_from(OPERATORS), values).map(" ".join),
        st.tuples(names, st.lists(scalars, min_size=0, max_size=5)).map(
            lambda t: f"{t[0]} IN ({', '.join(t[1])})"
        ),
        st.tuples(names, scalars, scalars).map(lambda t: f"{t[0]} BETWEEN {t[1]} AND {t[2]}"),
        st.tuples(names, st.sampled_from(["IS NULL", "IS NOT NULL"])).map(" ".join),
        st.tuples(names, st.sampled_from(["LIKE", "NOT ILIKE", "ILIKE"]), text).map(
            lambda t: f"{t[0]} {t[1]} {quoted(t[2])}"
        ),
        text.map(lambda t: f"MATCH({quoted(t)})"),
        st.tuples(
            st.sampled_from(["tags", "effort_levels", "front_text"]),
            st.sampled_from(["OVERLAP", "CONTAINS", "="]),
            arrays,
        ).map(" ".join),
        text.map(lambda t: f"{quoted(t)} = ANY(tags)"),
        st.sampled_from(
            ["tag = 'english'", "LOWER(front_text) = 'x'", "DATE(due_at) = '2026-01-01'"]
        ),
    )


def _conditions(names: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.recursive(
        _predicate(names),
        lambda inner: st.one_of(
            inner.map(lambda c: f"NOT {c}"),
            inner.map(lambda c: f"({c})"),
            st.tuples(inner, st.sampled_from(["AND", "OR"]), inner).map(" ".join),
        ),
        max_leaves=8,
    )


NAMES = {resource: names_for(resource) for resource in RESOURCES}
CONDITIONS = {resource: _conditions(NAMES[resource]) for resource in RESOURCES}


def _select_items(names: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.just("*"),
        st.lists(
            st.one_of(
                names,
                st.sampled_from(
                    ["COUNT(*)", "COUNT(DISTINCT tag)", "SUM(reps)", "AVG(fsrs_stability)"]
                ),
                st.tuples(st.sampled_from(["MIN", "MAX", "DATE", "COUNT"]), names).map(
                    lambda t: f"{t[0]}({t[1]})"
                ),
                st.tuples(names, names).map(lambda t: f"{t[0]} AS {t[1]}"),
            ),
            min_size=1,
            max_size=4,
        ).map(", ".join),
    )


@st.composite
def selects(draw: Any) -> str:
    resource = draw(st.sampled_from(RESOURCES))
    names, conditions = NAMES[resource], CONDITIONS[resource]
    source = draw(st.sampled_from([resource] * 4 + ["cards UNNEST tags AS t", "nope"]))
    parts = [f"SELECT {draw(st.sampled_from(['', 'DISTINCT ']))}{draw(_select_items(names))}"]
    parts.append(f"FROM {source}")
    if draw(st.booleans()):
        parts.append(f"WHERE {draw(conditions)}")
    if draw(st.integers(0, 3)) == 0:
        parts.append(f"GROUP BY {draw(names)}")
        if draw(st.booleans()):
            parts.append(f"HAVING {draw(conditions)}")
    if draw(st.booleans()):
        direction = draw(st.sampled_from(["", " ASC", " DESC", " DESC NULLS FIRST"]))
        parts.append(f"ORDER BY {draw(st.one_of(names, st.just('RANDOM()')))}{direction}")
    if draw(st.booleans()):
        parts.append(f"LIMIT {draw(small_numbers)}")
    if draw(st.integers(0, 2)) == 0:
        parts.append(f"OFFSET {draw(small_numbers)}")
    return " ".join(parts)


@st.composite
def writes(draw: Any) -> str:
    resource = draw(st.sampled_from(["cards", "cards", "decks", "review_events", "workspace"]))
    names, conditions = NAMES[resource], CONDITIONS[resource]
    columns = draw(st.lists(names, min_size=1, max_size=4))
    returning = draw(st.sampled_from(["", " RETURNING *", " RETURNING card_id, tags"]))
    kind = draw(st.sampled_from(["insert", "update", "delete"]))
    if kind == "insert":
        width = len(columns) if draw(st.integers(0, 3)) else draw(st.integers(1, 5))
        rows = draw(
            st.lists(st.lists(values, min_size=width, max_size=width), min_size=1, max_size=3)
        )
        tuples = ", ".join("(" + ", ".join(row) + ")" for row in rows)
        return f"INSERT INTO {resource} ({', '.join(columns)}) VALUES {tuples}{returning}"
    where = f" WHERE {draw(conditions)}" if draw(st.integers(0, 5)) else ""
    if kind == "update":
        sets = ", ".join(f"{c} = {draw(values)}" for c in columns)
        return f"UPDATE {resource} SET {sets}{where}{returning}"
    return f"DELETE FROM {resource}{where}{returning}"


resources = st.sampled_from([*RESOURCES, "cards UNNEST tags AS t", "nope"])


def _literal(column: Any) -> st.SearchStrategy[str]:
    """A literal of the column's own type, so the statement reaches the database."""
    if column.allowed_values:
        return st.sampled_from(column.allowed_values).map(quoted)
    by_type: dict[str, st.SearchStrategy[str]] = {
        "uuid": st.uuids().map(lambda u: quoted(str(u))),
        "string": text.map(quoted),
        "integer": st.integers(-(2**31), 2**31 - 1).map(str),
        "number": st.floats(-1e9, 1e9).map(repr),
        "boolean": st.sampled_from(["TRUE", "FALSE"]),
        "datetime": st.one_of(
            st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1)).map(
                lambda d: quoted(d.isoformat() + "Z")
            ),
            st.just("NOW() - INTERVAL '3 days'"),
        ),
    }
    return by_type.get(column.type, text.map(quoted))


@st.composite
def typed_selects(draw: Any) -> str:
    resource = get_resource(draw(st.sampled_from(RESOURCES)))
    filterable = [c for c in resource.columns if c.filterable]
    clauses = []
    for column in draw(st.lists(st.sampled_from(filterable), min_size=1, max_size=3)):
        if column.is_array:
            words = draw(st.lists(st.sampled_from(["english", "verbs", "x", "fast"]), max_size=3))
            operator = draw(st.sampled_from(["OVERLAP", "CONTAINS", "="]))
            clauses.append(f"{column.name} {operator} ({', '.join(map(quoted, words))})")
        elif draw(st.booleans()) or not column.nullable:
            operator = draw(st.sampled_from(["=", "!=", "<", ">=", "IN"]))
            literal = draw(_literal(column))
            clauses.append(
                f"{column.name} IN ({literal})"
                if operator == "IN"
                else f"{column.name} {operator} {literal}"
            )
        else:
            clauses.append(f"{column.name} IS {draw(st.sampled_from(['', 'NOT ']))}NULL")
    joiner = draw(st.sampled_from([" AND ", " OR "]))
    order = draw(st.sampled_from([c.name for c in resource.columns if c.sortable]))
    limit = draw(st.integers(1, 120))
    return (
        f"SELECT * FROM {resource.name} WHERE {joiner.join(clauses)} "
        f"ORDER BY {order} {draw(st.sampled_from(['ASC', 'DESC']))} LIMIT {limit}"
    )


discovery = st.one_of(
    st.just("SHOW TABLES"),
    text.map(lambda t: f"SHOW TABLES LIKE {quoted(t)}"),
    resources.map(lambda r: f"DESCRIBE {r}"),
    resources.map(lambda r: f"SHOW COLUMNS FROM {r}"),
)
statements = st.one_of(selects(), typed_selects(), writes(), discovery)


@st.composite
def mutated(draw: Any) -> str:
    """A statement with a few character-level edits: deletions, insertions of keywords or noise,
    duplicated slices."""
    sql = draw(statements)
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(sql)))
        edit = draw(st.integers(0, 2))
        if edit == 0:
            sql = sql[:at] + sql[at + draw(st.integers(1, 8)) :]
        elif edit == 1:
            noise = draw(st.one_of(st.sampled_from(KEYWORDS), st.text(max_size=4)))
            sql = f"{sql[:at]} {noise} {sql[at:]}"
        else:
            sql = sql[:at] + sql[max(0, at - 10) : at] + sql[at:]
    return sql


requests = st.one_of(
    statements,
    mutated(),
    st.lists(st.one_of(mutated(), statements), min_size=2, max_size=3).map("; ".join),
)


def _run(api: Any, body: bytes, foreign: set[str]) -> None:
    with transaction.atomic():
        response = post_body(api, body)
        transaction.set_rollback(True)
    assert response.status_code in ALLOWED_STATUS, (response.status_code, body[:300])
    checked = envelope(response)
    assert_no_foreign_rows(checked, foreign)
    # Shown by --hypothesis-show-statistics: how deep the cases get (parse, validate, execute).
    error = checked.get("error") or {}
    event(
        f"{response.status_code} {error.get('code', 'ok')} {error.get('details', {}).get('reason', '')}"
    )


@FUZZ_SETTINGS
@given(sql=requests, dry_run=st.booleans())
def test_fuzzed_statements_never_fail_the_contract(api, own_data, foreign, sql, dry_run):
    _run(api, json.dumps({"sql": sql, "dry_run": dry_run}).encode(), foreign)


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), text),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(text, inner, max_size=4)),
    max_leaves=12,
)


@FUZZ_SETTINGS
@given(
    body=st.one_of(
        st.fixed_dictionaries(
            {"sql": st.one_of(json_values, requests)},
            optional={"dry_run": json_values, "workspace_id": json_values, "extra": json_values},
        ).map(lambda b: json.dumps(b).encode()),
        json_values.map(lambda v: json.dumps(v).encode()),
        st.binary(max_size=64),
    )
)
def test_fuzzed_bodies_never_fail_the_contract(api, own_data, foreign, body):
    _run(api, body, foreign)
