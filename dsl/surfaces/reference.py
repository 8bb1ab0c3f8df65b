"""The dialect's reference for humans and models: the grammar page, the MCP tool descriptions and
the OpenAPI examples are all rendered from this module, whose schema part comes from the resource
registry (the same source as SHOW TABLES and DESCRIBE), so the docs cannot drift from the checker.

The statement forms, operators and rules below transcribe dsl.md §4 and §6 to §8; the limits are read
from ``dsl_settings`` so an operator's overrides show up in the docs too."""

from __future__ import annotations

from typing import Any

from dsl.schema import RESOURCES, Resource
from dsl.settings import dsl_settings

STATEMENTS: tuple[str, ...] = (
    "SHOW TABLES [LIKE '<pattern>']",
    "DESCRIBE <resource> | DESC <resource> | SHOW COLUMNS FROM <resource>",
    "SELECT [DISTINCT] <items> FROM <resource> [UNNEST tags AS <alias>] [WHERE <condition>] "
    "[GROUP BY <items>] [HAVING <condition>] [ORDER BY <items> | ORDER BY RANDOM()] "
    "[LIMIT <n>] [OFFSET <n>]",
    "INSERT INTO <resource> (<col>, …) VALUES (<value>, …)[, (…)]… [RETURNING * | <col>, …]",
    "UPDATE <resource> SET <col> = <value>[, …] WHERE <condition> [RETURNING * | <col>, …]",
    "DELETE FROM <resource> WHERE <condition> [RETURNING * | <col>, …]",
)

OPERATORS: tuple[tuple[str, str, str], ...] = (
    ("col = v, !=, <>, <, <=, >, >=", "scalar columns", "typed comparison"),
    ("col [NOT] IN (v, …)", "scalar columns", "at most {max_in} values; () is an error"),
    ("col [NOT] BETWEEN a AND b", "scalar columns", "inclusive"),
    ("col IS [NOT] NULL", "nullable columns", "= NULL is an error: use IS NULL"),
    (
        "col [NOT] LIKE 'p', col [NOT] ILIKE 'p'",
        "string and uuid columns",
        "% any run, _ one character; LIKE is case-sensitive, ILIKE is not",
    ),
    ("LOWER(col) / UPPER(col) on the left of =, !=, IN, LIKE", "string columns", ""),
    ("arr OVERLAP (v, …)", "string[] columns", "holds at least one of the values"),
    ("arr CONTAINS (v, …)", "string[] columns", "holds all of the values"),
    ("arr = (v, …)", "string[] columns", "same set, order ignored; = () means empty"),
    ("'v' = ANY(arr)", "string[] columns", "same as arr OVERLAP ('v')"),
    (
        "MATCH('text')",
        "cards, decks",
        "case-insensitive substring search over the resource's text columns",
    ),
    ("NOT c, c AND c, c OR c, (c)", "conditions", "NOT binds tighter than AND, AND than OR"),
)

SELECT_ITEMS: tuple[str, ...] = (
    "* (alone), a column, col AS alias",
    "COUNT(*), COUNT(col), COUNT(DISTINCT col), SUM(col), AVG(col), MIN(col), MAX(col) [AS alias]",
    "DATE(datetime_col) [AS alias] — the UTC calendar date",
    "GROUP BY columns, tag, DATE(col) or aliases; HAVING may use aggregates and aliases",
    "ORDER BY col | alias | aggregate | DATE(col) [ASC|DESC] [NULLS FIRST|LAST], or RANDOM() alone",
)

LITERALS: tuple[str, ...] = (
    "strings in single quotes ('it''s'); double quotes are for identifiers",
    "numbers 12, -3, 0.5, 1e3; TRUE / FALSE; NULL",
    "datetimes: '2026-03-05', '2026-03-05T10:00:00Z', NOW(), NOW() - INTERVAL '7 days'",
    "arrays: ('a', 'b'), (), ['a', 'b'], ARRAY['a', 'b'], '{a,b}'",
)

NOT_SUPPORTED = (
    "JOIN (query one resource, then filter the other with card_id IN (…)), subqueries, WITH, "
    "UNION / INTERSECT / EXCEPT, window functions, INSERT … SELECT, UPDATE … FROM, DDL, "
    "transaction control, GRANT, SELECT without FROM."
)

EXAMPLES: tuple[str, ...] = (
    "SHOW TABLES",
    "DESCRIBE cards",
    "SELECT * FROM cards WHERE tags OVERLAP ('english') AND effort_level IN ('fast', 'medium') "
    "ORDER BY updated_at DESC LIMIT 20 OFFSET 0",
    "SELECT card_id, front_text, due_at FROM cards WHERE due_at <= NOW() ORDER BY due_at LIMIT 20",
    "SELECT tag, COUNT(*) AS card_count FROM cards GROUP BY tag ORDER BY card_count DESC LIMIT 20",
    "SELECT review_grade, COUNT(*) AS total_reviews FROM review_events GROUP BY review_grade",
    "INSERT INTO cards (front_text, back_text, tags) VALUES ('hola', 'hello', ('spanish'))",
    "INSERT INTO decks (name, effort_levels, tags) VALUES ('Grammar', ('medium', 'long'), "
    "('english', 'grammar'))",
    "UPDATE cards SET back_text = 'Updated answer', tags = ('english', 'verbs') "
    "WHERE card_id = '123e4567-e89b-42d3-a456-426614174000'",
    "DELETE FROM cards WHERE card_id IN ('123e4567-e89b-42d3-a456-426614174000')",
)


# dsl.md §10, "the examples every build must run", as written there: the query console offers
# them one click away (tests/dsl/test_examples.py runs each).
HEADLINE_EXAMPLES: tuple[str, ...] = (
    "SELECT * FROM cards WHERE tags OVERLAP ('english') AND effort_level IN ('fast', 'medium') "
    "ORDER BY updated_at DESC LIMIT 20 OFFSET 0",
    "UPDATE cards SET back_text = 'Updated answer' "
    "WHERE card_id = '123e4567-e89b-42d3-a456-426614174000'",
    "SELECT tag, COUNT(*) AS card_count FROM cards GROUP BY tag ORDER BY card_count DESC "
    "LIMIT 20 OFFSET 0",
    "SELECT rating, COUNT(*) AS reviews FROM review_events GROUP BY rating ORDER BY reviews DESC "
    "LIMIT 10 OFFSET 0",
    "SELECT review_grade, COUNT(*) AS total_reviews FROM review_events GROUP BY review_grade "
    "ORDER BY total_reviews DESC LIMIT 10 OFFSET 0",
    "SELECT * FROM cards WHERE tags OVERLAP ('english', 'grammar') AND effort_level IN "
    "('fast', 'medium') ORDER BY updated_at DESC LIMIT 20 OFFSET 0",
    "INSERT INTO decks (name, effort_levels, tags) VALUES ('Grammar', ('medium', 'long'), "
    "('english', 'grammar'))",
    "UPDATE cards SET back_text = 'Updated answer', tags = ('english', 'verbs') "
    "WHERE card_id = '123e4567-e89b-42d3-a456-426614174000'",
    "DELETE FROM cards WHERE card_id IN ('123e4567-e89b-42d3-a456-426614174000', "
    "'123e4567-e89b-42d3-a456-426614174001')",
)


def limits() -> dict[str, int | float]:
    return {
        "rows_per_select": dsl_settings.MAX_ROWS_PER_SELECT,
        "rows_per_write_statement": dsl_settings.MAX_ROWS_PER_WRITE,
        "statements_per_request": dsl_settings.MAX_STATEMENTS,
        "sql_bytes": dsl_settings.MAX_SQL_BYTES,
        "statement_timeout_seconds": dsl_settings.STATEMENT_TIMEOUT_SECONDS,
        "values_per_in_list": dsl_settings.MAX_IN_VALUES,
    }


def rules() -> tuple[str, ...]:
    rows = dsl_settings.MAX_ROWS_PER_SELECT
    writes = dsl_settings.MAX_ROWS_PER_WRITE
    return (
        "Every statement runs in the selected workspace; there is no workspace column to filter on.",
        f"LIMIT defaults to {rows}; a larger LIMIT is lowered to {rows} with a warning. "
        "Page with OFFSET while data.hasMore is true.",
        "A card's front_text is the prompt only; back_text is the answer.",
        f"INSERT takes at most {writes} rows; UPDATE and DELETE need a WHERE that matches at most "
        f"{writes} rows (narrow it or page by id).",
        "DELETE is a soft delete: the row disappears from every read; its review events stay.",
        "Tags are trimmed, case-insensitive and keep the first spelling used in the workspace.",
        "Reviews, scheduler settings and progress resets are explicit commands, not SQL writes.",
        "Several statements separated by ';' form a batch; a batch with a write is atomic.",
    )


def operator_rows() -> list[dict[str, str]]:
    max_in = f"{dsl_settings.MAX_IN_VALUES:,}"
    return [
        {"form": form, "applies_to": applies, "meaning": meaning.format(max_in=max_in)}
        for form, applies, meaning in OPERATORS
    ]


def resource_reference(resource: Resource) -> dict[str, Any]:
    order = ", ".join(
        f"{name} {'DESC' if desc else 'ASC'}" for name, desc in resource.default_order
    )
    return {
        "table_name": resource.name,
        "writable": resource.writable,
        "description": resource.description,
        "default_order": order,
        "explicit_command": resource.explicit_command_hint,
        "columns": [column.describe_row() for column in resource.columns],
    }


def reference() -> dict[str, Any]:
    """The whole reference as JSON-ready data (the grammar page's ?format=json)."""
    return {
        "statements": list(STATEMENTS),
        "resources": [resource_reference(r) for r in RESOURCES],
        "operators": operator_rows(),
        "select_items": list(SELECT_ITEMS),
        "literals": list(LITERALS),
        "not_supported": NOT_SUPPORTED,
        "rules": list(rules()),
        "limits": limits(),
        "examples": list(EXAMPLES),
    }


def column_summary(resource: Resource, *, writable_only: bool = False) -> str:
    parts = []
    for column in resource.columns:
        if writable_only and not column.writable:
            continue
        flags: list[str] = [column.type]
        if column.allowed_values:
            flags.append("one of " + "/".join(column.allowed_values))
        if column.nullable:
            flags.append("nullable")
        if column.writable:
            flags.append("writable")
        if column.virtual:
            flags.append("virtual")
        parts.append(f"{column.name} ({', '.join(flags)})")
    return "; ".join(parts)


def schema_summary(*, writable_only: bool = False) -> str:
    """One line per resource with its columns: compact enough for a tool description."""
    lines = []
    for resource in RESOURCES:
        if writable_only and not resource.writable:
            continue
        access = "read/write" if resource.writable else "read-only"
        lines.append(
            f"- {resource.name} ({access}): {resource.description} Columns: "
            f"{column_summary(resource, writable_only=writable_only)}."
        )
    return "\n".join(lines)
