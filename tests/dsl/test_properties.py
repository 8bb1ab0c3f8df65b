"""Property tests through the HTTP endpoint: grammar-shaped statements and random text never give
a 500 and never return (or change) a row of another workspace."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsl.schema import RESOURCES, Column, Resource
from flashcards.models import Card, Deck
from tests.factories import make_card, make_deck
from tests.support.envelope import post_sql

pytestmark = pytest.mark.django_db

MARKER = "zq-other-tenant"
PROPERTY_SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

RESOURCE_NAMES = [r.name for r in RESOURCES]
COLUMN_NAMES = sorted({c.name for r in RESOURCES for c in r.columns} | {"deleted_at", "nope"})
WRITABLE = {
    "cards": ["front_text", "back_text", "card_type", "tags", "effort_level"],
    "decks": ["name", "effort_levels", "tags"],
}

# Values written to the caller's own workspace never contain MARKER; conditions may search for it.
plain_literals = st.one_of(
    st.integers(-3, 5).map(str),
    st.sampled_from(
        [
            "NULL",
            "TRUE",
            "FALSE",
            "0.5",
            "1e3",
            "NOW()",
            "NOW() - INTERVAL '2 days'",
            "CURRENT_TIMESTAMP",
            "'2026-03-05'",
            "'2026-03-05T10:00:00Z'",
            "'fast'",
            "'good'",
            "'english'",
            "()",
            "('english', 'grammar')",
            "['a']",
            "ARRAY['fast']",
            "'{a,b}'",
            '"front_text"',
            f"'{uuid.uuid4()}'",
        ]
    ),
    st.text(max_size=8).map(lambda text: "'" + text.replace("'", "''") + "'"),
)
literals = st.one_of(plain_literals, st.just(f"'{MARKER}'"))
columns = st.sampled_from(COLUMN_NAMES)
functions = st.sampled_from(["MIN", "MAX", "SUM", "AVG", "DATE", "COUNT", "LOWER"])
operands = st.one_of(
    columns, columns.map(lambda c: f"LOWER({c})"), columns.map(lambda c: f"COUNT({c})")
)


@st.composite
def predicates(draw: st.DrawFn) -> str:
    left = draw(operands)
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return f"{left} IN ({', '.join(draw(st.lists(literals, min_size=1, max_size=3)))})"
    if kind == 1:
        return f"{left} BETWEEN {draw(literals)} AND {draw(literals)}"
    if kind == 2:
        return f"{left} IS {draw(st.sampled_from(['', 'NOT ']))}NULL"
    if kind == 3:
        return f"{left} {draw(st.sampled_from(['LIKE', 'ILIKE', 'NOT LIKE']))} {draw(literals)}"
    if kind == 4:
        return f"{left} {draw(st.sampled_from(['OVERLAP', 'CONTAINS', '=']))} {draw(literals)}"
    if kind == 5:
        return f"{draw(literals)} = ANY({left})"
    if kind == 6:
        return f"MATCH({draw(literals)})"
    operator = draw(st.sampled_from(["=", "!=", "<>", "<", "<=", ">", ">="]))
    return f"{left} {operator} {draw(literals)}"


conditions = st.recursive(
    predicates(),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["AND", "OR"]), inner).map(" ".join),
        inner.map(lambda c: f"NOT {c}"),
        inner.map(lambda c: f"({c})"),
    ),
    max_leaves=6,
)


@st.composite
def selects(draw: st.DrawFn) -> str:
    resource = draw(st.sampled_from([*RESOURCE_NAMES, "tags"]))
    items = draw(
        st.one_of(
            st.just("*"),
            st.lists(
                st.one_of(
                    columns,
                    st.sampled_from(["COUNT(*)", "tag", "t"]),
                    st.tuples(functions, columns).map(lambda pair: f"{pair[0]}({pair[1]})"),
                    columns.map(lambda c: f"{c} AS a"),
                ),
                min_size=1,
                max_size=3,
            ).map(", ".join),
        )
    )
    sql = f"SELECT {draw(st.sampled_from(['', 'DISTINCT ']))}{items} FROM {resource}"
    if draw(st.booleans()):
        sql += " UNNEST tags AS t"
    if draw(st.booleans()):
        sql += f" WHERE {draw(conditions)}"
    if draw(st.booleans()):
        sql += f" GROUP BY {draw(st.sampled_from(['tag', 't', 'a', 'effort_level', 'DATE(created_at)']))}"
        if draw(st.booleans()):
            sql += f" HAVING {draw(conditions)}"
    if draw(st.booleans()):
        direction = draw(st.sampled_from(["", " DESC", " ASC NULLS LAST", " DESC NULLS FIRST"]))
        sql += f" ORDER BY {draw(st.one_of(columns, st.just('RANDOM()'), st.just('COUNT(*)')))}{direction}"
    if draw(st.booleans()):
        sql += f" LIMIT {draw(st.integers(-1, 150))}"
    if draw(st.booleans()):
        sql += f" OFFSET {draw(st.integers(-1, 5))}"
    return sql


@st.composite
def writes(draw: st.DrawFn) -> str:
    resource = draw(st.sampled_from(["cards", "decks", "review_events", "workspace"]))
    names = WRITABLE.get(resource, ["rating"])
    chosen = draw(st.lists(st.sampled_from([*names, "reps"]), min_size=1, max_size=3, unique=True))
    returning = draw(
        st.sampled_from(["", " RETURNING *", " RETURNING card_id, tags", " RETURNING name"])
    )
    kind = draw(st.integers(0, 2))
    if kind == 0:
        values = ", ".join(draw(plain_literals) for _ in chosen)
        return f"INSERT INTO {resource} ({', '.join(chosen)}) VALUES ({values}){returning}"
    where = f" WHERE {draw(conditions)}" if draw(st.integers(0, 5)) else ""
    if kind == 1:
        assignments = ", ".join(f"{name} = {draw(plain_literals)}" for name in chosen)
        return f"UPDATE {resource} SET {assignments}{where}{returning}"
    return f"DELETE FROM {resource}{where}{returning}"


# Type-aware generation: mostly valid statements, so the compiler and executor get exercised,
# not only the validator.
WORDS = ["english", "Grammar", "a", "x"]


def literal_for(column: Column, words: list[str] = WORDS) -> st.SearchStrategy[str]:
    if column.allowed_values and not column.is_array:
        return st.sampled_from([f"'{v}'" for v in column.allowed_values])
    if column.type == "uuid":
        return st.uuids().map(lambda value: f"'{value}'")
    if column.type == "string":
        return st.text(alphabet="aEn gls%_", max_size=6).map(lambda t: f"'{t}'")
    if column.type == "integer":
        return st.integers(-2, 5).map(str)
    if column.type == "number":
        return st.sampled_from(["0", "0.5", "2.25", "-1"])
    if column.type == "boolean":
        return st.sampled_from(["TRUE", "FALSE"])
    if column.type == "datetime":
        return st.sampled_from(
            ["'2026-03-05'", "NOW()", "NOW() - INTERVAL '3 days'", "'2030-01-01T00:00:00Z'"]
        )
    return st.lists(st.sampled_from(column.allowed_values or words), max_size=3).map(
        lambda items: "(" + ", ".join(f"'{w}'" for w in items) + ")"
    )


@st.composite
def typed_predicates(draw: st.DrawFn, resource: Resource) -> str:
    candidates = [c for c in resource.columns if c.filterable]
    if resource.text_columns_for_match and draw(st.integers(0, 9)) == 0:
        return f"MATCH('{draw(st.sampled_from(['en', 'GRAM', 'mine', MARKER]))}')"
    column = draw(st.sampled_from(candidates))
    name, value = column.name, draw(literal_for(column, [*WORDS, MARKER]))
    if column.is_array:
        operator = draw(st.sampled_from(["OVERLAP", "CONTAINS", "="]))
        return f"{name} {operator} {value}"
    forms = [f"{name} = {value}", f"{name} != {value}", f"{name} IN ({value}, {value})"]
    if column.sortable:
        forms += [f"{name} < {value}", f"{name} BETWEEN {value} AND {draw(literal_for(column))}"]
    if column.nullable:
        forms.append(f"{name} IS NOT NULL")
    if column.type in ("string", "uuid"):
        forms += [f"{name} LIKE '%e%'", f"{name} ILIKE 'E%'"]
    if column.type == "string" and not column.virtual:
        forms.append(f"LOWER({name}) = 'english'")
    return draw(st.sampled_from(forms))


@st.composite
def typed_conditions(draw: st.DrawFn, resource: Resource) -> str:
    parts = draw(st.lists(typed_predicates(resource), min_size=1, max_size=3))
    joiner = draw(st.sampled_from([" AND ", " OR "]))
    condition = joiner.join(f"({part})" for part in parts)
    return f"NOT ({condition})" if draw(st.booleans()) else condition


@st.composite
def typed_selects(draw: st.DrawFn) -> str:
    resource = draw(st.sampled_from(RESOURCES))
    sortable = [c.name for c in resource.columns if c.sortable]
    where = f" WHERE {draw(typed_conditions(resource))}" if draw(st.booleans()) else ""
    limit = f" LIMIT {draw(st.integers(1, 3))} OFFSET {draw(st.integers(0, 2))}"
    if draw(st.booleans()):
        key = draw(st.sampled_from(sortable))
        aggregate = draw(st.sampled_from(["COUNT(*)", f"MIN({key})", f"COUNT(DISTINCT {key})"]))
        having = draw(
            st.sampled_from(["", " HAVING COUNT(*) > 0", f" HAVING MAX({key}) IS NOT NULL"])
        )
        order = draw(st.sampled_from(["n DESC", "COUNT(*)", f"MAX({key}) DESC", key]))
        return (
            f"SELECT {key}, {aggregate} AS n FROM {resource.name}{where} GROUP BY {key}{having} "
            f"ORDER BY {order}{limit}"
        )
    readable = [c.name for c in resource.readable_columns]
    items = draw(
        st.one_of(
            st.just(["*"]), st.lists(st.sampled_from(readable), min_size=1, max_size=3, unique=True)
        )
    )
    order = draw(st.sampled_from(sortable))
    direction = draw(st.sampled_from(["", " DESC", " DESC NULLS FIRST"]))
    return (
        f"SELECT {', '.join(items)} FROM {resource.name}{where} ORDER BY {order}{direction}{limit}"
    )


@st.composite
def typed_writes(draw: st.DrawFn) -> str:
    resource = draw(st.sampled_from([r for r in RESOURCES if r.writable]))
    writable = list(resource.writable_columns)
    where = draw(typed_conditions(resource))
    kind = draw(st.integers(0, 2))
    if kind == 0:
        required = [c for c in writable if c.required]
        extra = draw(st.lists(st.sampled_from(writable), max_size=2, unique=True))
        chosen = list(dict.fromkeys([*required, *extra]))
        values = ", ".join(draw(literal_for(c)) for c in chosen)
        names = ", ".join(c.name for c in chosen)
        return f"INSERT INTO {resource.name} ({names}) VALUES ({values}) RETURNING *"
    if kind == 1:
        column = draw(st.sampled_from(writable))
        return (
            f"UPDATE {resource.name} SET {column.name} = {draw(literal_for(column))} WHERE {where}"
        )
    return f"DELETE FROM {resource.name} WHERE {where} RETURNING *"


statements = st.one_of(
    typed_selects(),
    typed_writes(),
    st.lists(st.one_of(typed_selects(), typed_writes()), min_size=2, max_size=3).map("; ".join),
    selects(),
    writes(),
    st.sampled_from(["SHOW TABLES", "DESCRIBE cards", "SHOW TABLES LIKE 'c%'", "DESC nope"]),
)
token_soup = st.lists(
    st.sampled_from(
        [
            "SELECT",
            "FROM",
            "WHERE",
            "cards",
            "(",
            ")",
            ",",
            ";",
            "'",
            '"',
            "*",
            "AND",
            "--",
            "/*",
            "1",
            "=",
            "tag",
            "ORDER",
            "BY",
            "LIMIT",
            "JOIN",
            "\\",
            "\x00",
            "é",
            "\n",
        ]
    ),
    max_size=25,
).map(" ".join)


@pytest.fixture
def tenants(workspace, other_workspace):
    """Data in both workspaces; the other one's texts carry MARKER so any leak is visible."""
    make_card(workspace, front_text="mine english", tags=["english", "grammar"])
    make_card(workspace, front_text="mine fast", effort_level="medium", tags=["a"])
    make_deck(workspace, name="my deck", tags=["english"])
    theirs = make_card(
        other_workspace, front_text=MARKER, back_text=MARKER, tags=[MARKER, "english"]
    )
    make_deck(other_workspace, name=MARKER, tags=[MARKER])
    return theirs


def snapshot(workspace) -> list[tuple]:
    cards = Card.objects.filter(workspace=workspace).order_by("id")
    decks = Deck.objects.filter(workspace=workspace).order_by("id")
    return [
        *cards.values_list("id", "front_text", "back_text", "tags", "updated_at", "deleted_at"),
        *decks.values_list("id", "name", "tags", "updated_at", "deleted_at"),
    ]


def check(response, theirs) -> None:
    assert response.status_code != 500, response.content
    assert response.status_code in (200, 400), response.content
    body = response.json()
    if body["ok"]:
        # The echoed sql may quote MARKER itself; everything else must not mention the tenant.
        shown = str({k: v for k, v in body["data"].items() if k not in ("sql", "normalizedSql")})
        assert MARKER not in shown and str(theirs.id) not in shown
        assert str(theirs.workspace_id) not in shown


def test_grammar_shaped_statements(api, tenants, other_workspace):
    before = snapshot(other_workspace)

    @PROPERTY_SETTINGS
    @given(statement=statements, dry_run=st.booleans())
    def run(statement: str, dry_run: bool) -> None:
        check(post_sql(api, statement, dry_run=dry_run), tenants)

    run()
    assert snapshot(other_workspace) == before


def test_random_text(api, tenants, other_workspace):
    before = snapshot(other_workspace)

    @PROPERTY_SETTINGS
    @given(text=st.one_of(st.text(max_size=200), token_soup))
    def run(text: str) -> None:
        response = post_sql(api, text)
        assert response.status_code != 500, response.content
        if response.json()["ok"]:
            check(response, tenants)

    run()
    assert snapshot(other_workspace) == before
