"""drf-spectacular postprocessing hook: request and response examples for the agent routes, built
from the resource registry so the OpenAPI document shows the same columns DESCRIBE does."""

from __future__ import annotations

from typing import Any

from dsl.reference import EXAMPLES
from dsl.resources import (
    BOOLEAN,
    DATETIME,
    INTEGER,
    INTEGER_ARRAY,
    JSON,
    NUMBER,
    STRING_ARRAY,
    UUID,
    Column,
    get_resource,
)

SAMPLE_UUID = "123e4567-e89b-42d3-a456-426614174000"
SAMPLE_TIME = "2026-03-05T10:00:00.000Z"
SAMPLE_BY_TYPE: dict[str, Any] = {
    UUID: SAMPLE_UUID,
    DATETIME: SAMPLE_TIME,
    INTEGER: 1,
    NUMBER: 0.9,
    BOOLEAN: True,
    JSON: {"version": 1, "source": {}},
    STRING_ARRAY: ["english"],
    INTEGER_ARRAY: [1, 10],
}
DOCS = {
    "discoveryUrl": "https://flashcards.example/v1/",
    "grammarUrl": "https://flashcards.example/v1/agent/grammar",
}


def sample_value(column: Column) -> Any:
    if column.allowed_values:
        first = column.allowed_values[0]
        return [first] if column.is_array else first
    if column.type in SAMPLE_BY_TYPE:
        return SAMPLE_BY_TYPE[column.type]
    return f"example {column.name.replace('_', ' ')}"


def sample_row(resource_name: str) -> dict[str, Any]:
    resource = get_resource(resource_name)
    assert resource is not None, resource_name
    return {column.name: sample_value(column) for column in resource.readable_columns}


def envelope(data: dict[str, Any], instructions: str) -> dict[str, Any]:
    return {
        "ok": True,
        "data": data,
        "instructions": instructions,
        "docs": DOCS,
        "requestId": "0b0e4a52-5d0f-4b5e-9a55-6f0f1d9c2a11",
    }


def select_example() -> dict[str, Any]:
    sql = "SELECT * FROM cards ORDER BY updated_at DESC LIMIT 1"
    return envelope(
        {
            "statementType": "select",
            "resource": "cards",
            "rows": [sample_row("cards")],
            "rowCount": 1,
            "limit": 1,
            "offset": 0,
            "hasMore": True,
            "sql": sql,
            "normalizedSql": sql,
            "warnings": [],
        },
        "More rows exist: repeat with OFFSET 1.",
    )


def insert_example() -> dict[str, Any]:
    sql = "INSERT INTO cards (front_text, back_text) VALUES ('hola', 'hello')"
    return envelope(
        {
            "statementType": "insert",
            "resource": "cards",
            "sql": sql,
            "normalizedSql": sql,
            "rows": [{"card_id": SAMPLE_UUID}],
            "affectedCount": 1,
            "rowsOmitted": False,
            "warnings": [],
        },
        "1 row inserted.",
    )


def _response_examples() -> dict[str, dict[str, Any]]:
    workspace = sample_row("workspace")
    return {
        "/v1/agent/sql": {"Select": select_example(), "Insert": insert_example()},
        "/v1/agent/sql/query": {"Select": select_example()},
        "/v1/agent/sql/execute": {"Insert": insert_example()},
        "/v1/agent/reviews": {
            "Review recorded": envelope(
                {"review_event": sample_row("review_events"), "card": sample_row("cards")},
                "Review recorded.",
            )
        },
        "/v1/agent/workspace/scheduler-settings": {
            "Settings saved": envelope(workspace, "Scheduler settings saved.")
        },
        "/v1/agent/workspaces": {
            "Workspaces": envelope(
                {
                    "workspaces": [{**workspace, "role": "owner", "selected": True}],
                    "selectedWorkspaceId": workspace["workspace_id"],
                    "limit": 100,
                    "hasMore": False,
                    "nextCursor": None,
                },
                "Statements run in the selected workspace.",
            )
        },
    }


def _set_examples(content: dict[str, Any], examples: dict[str, Any]) -> None:
    # Replaces view-level examples: the SQL views share one decorator, so its example would
    # otherwise show a SELECT on the write-only endpoint.
    media = content.setdefault("application/json", {})
    media["examples"] = {name: {"value": value} for name, value in examples.items()}


READ_KEYWORDS = ("SHOW", "DESCRIBE", "SELECT")


def add_examples(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """POSTPROCESSING_HOOKS entry."""
    paths = result.get("paths", {})
    for path, examples in _response_examples().items():
        for method, operation in paths.get(path, {}).items():
            ok = operation.get("responses", {}).get("200")
            if ok is None or (path == "/v1/agent/workspaces" and method != "get"):
                continue
            _set_examples(ok.setdefault("content", {}), examples)
    reads = {e[:60]: {"sql": e} for e in EXAMPLES if e.startswith(READ_KEYWORDS)}
    writes = {e[:60]: {"sql": e} for e in EXAMPLES if not e.startswith(READ_KEYWORDS)}
    for path, requests in (
        ("/v1/agent/sql", {**reads, **writes}),
        ("/v1/agent/sql/query", reads),
        ("/v1/agent/sql/execute", writes),
    ):
        body = paths.get(path, {}).get("post", {}).get("requestBody")
        if body is not None:
            _set_examples(body.setdefault("content", {}), requests)
    return result
