"""The dialect's part of the OpenAPI document, as drf-spectacular postprocessing hooks, all built
from the resource registry so the document shows the same columns DESCRIBE does:

- ``add_contract``: the row components (``CardRow`` … one per resource, typed from its columns),
  the ``data`` of the SQL endpoints (``SqlData``, one shape per statement type, dsl.md §2.1-§2.3),
  the dialect's error codes in the ``ErrorCode`` enum, the grammar page and ``/mcp``;
- ``add_examples``: request and response examples of the agent routes.
"""

from __future__ import annotations

from typing import Any

from dsl.language.errors import QUERY_INVALID_SQL, QUERY_RESULT_TOO_LARGE, QUERY_TIMEOUT
from dsl.schema import (
    BOOLEAN,
    DATETIME,
    INTEGER,
    INTEGER_ARRAY,
    JSON,
    NUMBER,
    STRING_ARRAY,
    UUID,
    Column,
    Resource,
    get_resource,
)
from dsl.surfaces.mcp.server import MCP_PATH
from dsl.surfaces.reference import EXAMPLES
from flashcards.api.bodies import UUID_PATTERN
from flashcards.api.contract import HEADERS
from flashcards.api.contract import JSON as JSON_MEDIA
from flashcards.api.schemas import ROW_COMPONENTS, nullable, obj, ref

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


# The contract ------------------------------------------------------------------------------------

DIALECT_ERROR_CODES = (QUERY_INVALID_SQL, QUERY_RESULT_TOO_LARGE, QUERY_TIMEOUT)
_TYPE_SCHEMAS: dict[str, dict[str, Any]] = {
    UUID: {"type": "string", "format": "uuid", "pattern": UUID_PATTERN},
    DATETIME: {"type": "string", "format": "date-time"},
    INTEGER: {"type": "integer"},
    NUMBER: {"type": "number"},
    BOOLEAN: {"type": "boolean"},
    JSON: {"type": "object", "additionalProperties": True},
    STRING_ARRAY: {"type": "array", "items": {"type": "string"}},
    INTEGER_ARRAY: {"type": "array", "items": {"type": "integer"}},
}


def column_schema(column: Column) -> dict[str, Any]:
    """A column's values as JSON Schema: its type (dsl.md §2.4), allowed values, nullability."""
    schema = dict(_TYPE_SCHEMAS.get(column.type, {"type": "string"}))
    if column.allowed_values:
        if column.is_array:
            schema["items"] = {"type": "string", "enum": list(column.allowed_values)}
        else:
            schema["enum"] = list(column.allowed_values)
    schema["description"] = column.description
    return nullable(schema) if column.nullable else schema


def row_schema(resource: Resource) -> dict[str, Any]:
    """The ``SELECT *`` row of a resource."""
    return obj({column.name: column_schema(column) for column in resource.readable_columns})


_STRINGS = {"type": "array", "items": {"type": "string"}}
_ROWS = {"type": "array", "items": {"type": "object", "additionalProperties": True}}
_ECHO = {"sql": {"type": "string"}, "normalizedSql": {"type": "string"}}
_DRY_RUN = {"dryRun": {"type": "boolean", "enum": [True]}}
_READ = {
    "statementType": {"type": "string", "enum": ["select", "show_tables", "describe"]},
    "resource": nullable({"type": "string"}),
    "rows": _ROWS,
    "rowCount": {"type": "integer", "minimum": 0},
    "limit": nullable({"type": "integer", "minimum": 0}),
    "offset": nullable({"type": "integer", "minimum": 0}),
    "hasMore": {"type": "boolean"},
    "warnings": _STRINGS,
}
_WRITE = {
    "statementType": {"type": "string", "enum": ["insert", "update", "delete"]},
    "resource": {"type": "string"},
    "rows": _ROWS,
    "affectedCount": {"type": "integer", "minimum": 0},
    "rowsOmitted": {"type": "boolean"},
    "warnings": _STRINGS,
}


def _with(fields: dict[str, Any], *extra: dict[str, Any], optional: dict[str, Any]) -> dict:
    properties = {**fields}
    for more in extra:
        properties.update(more)
    schema = obj({**properties, **optional}, required=tuple(properties))
    return schema


def sql_data_schema() -> dict[str, Any]:
    """``data`` of the SQL endpoints: one statement read or written, or a batch (dsl.md §2)."""
    batch = _with(
        {
            "statementType": {"type": "string", "enum": ["batch"]},
            "resource": nullable({"type": "string"}),
            "statements": {
                "type": "array",
                "items": {
                    "oneOf": [_with(_READ, optional={}), _with(_WRITE, optional={})],
                },
            },
            "statementCount": {"type": "integer", "minimum": 1},
            "affectedCountTotal": nullable({"type": "integer", "minimum": 0}),
            "rowsOmitted": {"type": "boolean"},
            "warnings": _STRINGS,
        },
        _ECHO,
        optional=_DRY_RUN,
    )
    return {
        "oneOf": [
            _with(_READ, _ECHO, optional=_DRY_RUN),
            _with(_WRITE, _ECHO, optional=_DRY_RUN),
            batch,
        ]
    }


def _grammar_path() -> dict[str, Any]:
    headers = {"X-Request-Id": HEADERS["X-Request-Id"]}
    return {
        "get": {
            "operationId": "grammar",
            "summary": "The dialect's reference: resources, columns, operators, limits, examples.",
            "description": "JSON envelope by default; an HTML page for Accept: text/html or "
            "?format=html. No authentication.",
            "security": [{}],
            "parameters": [
                {
                    "name": "format",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "string", "enum": ["json", "html"]},
                }
            ],
            "responses": {
                "200": {
                    "description": "The reference.",
                    "headers": headers,
                    "content": {
                        JSON_MEDIA: {
                            "schema": obj(
                                {
                                    "ok": {"type": "boolean", "enum": [True]},
                                    "data": {"type": "object", "additionalProperties": True},
                                    "instructions": {"type": "string"},
                                    "docs": ref("Docs"),
                                    "requestId": ref("RequestId"),
                                }
                            )
                        },
                        "text/html": {"schema": {"type": "string"}},
                    },
                },
                **{
                    str(status): {
                        "description": description,
                        "headers": headers,
                        "content": {JSON_MEDIA: {"schema": ref("ErrorEnvelope")}},
                    }
                    for status, description in (
                        (404, "NOT_FOUND: an unknown ?format=."),
                        (405, "METHOD_NOT_ALLOWED: the page is read with GET."),
                    )
                },
            },
        }
    }


def _mcp_path() -> dict[str, Any]:
    json_rpc = {
        "type": "object",
        "required": ["jsonrpc", "method"],
        "properties": {
            "jsonrpc": {"type": "string", "enum": ["2.0"]},
            "id": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "method": {"type": "string"},
            "params": {"type": "object", "additionalProperties": True},
        },
    }
    answer = {"type": "object", "additionalProperties": True}
    return {
        "post": {
            "operationId": "mcp",
            "summary": "The MCP server (Streamable HTTP, stateless, JSON responses): the tools "
            "sql, sql_query, sql_execute, submit_review, list_workspaces, select_workspace.",
            "description": "JSON-RPC 2.0 as the Model Context Protocol defines it, authenticated "
            "with 'Authorization: Bearer <API key or OAuth access token>'; Accept must name "
            "application/json and text/event-stream. A tool's result is the REST envelope "
            "(isError on failure). See docs/mcp.md.",
            "security": [{"ApiKey": []}],
            "requestBody": {"required": True, "content": {JSON_MEDIA: {"schema": json_rpc}}},
            "responses": {
                "200": {
                    "description": "The JSON-RPC response.",
                    "content": {JSON_MEDIA: {"schema": answer}},
                },
                "202": {"description": "A notification or response was accepted."},
                "400": {
                    "description": "Not a JSON-RPC message.",
                    "content": {JSON_MEDIA: {"schema": answer}},
                },
                "401": {
                    "description": "No or an invalid key/token: the envelope, and the OAuth "
                    "challenge in WWW-Authenticate.",
                    "headers": {"WWW-Authenticate": HEADERS["WWW-Authenticate"]},
                    "content": {JSON_MEDIA: {"schema": ref("ErrorEnvelope")}},
                },
                "406": {
                    "description": "Accept does not name application/json and text/event-stream."
                },
                "413": {
                    "description": "REQUEST_TOO_LARGE: the body is over 256 KiB.",
                    "content": {JSON_MEDIA: {"schema": ref("ErrorEnvelope")}},
                },
                "415": {"description": "The body is not application/json."},
            },
        }
    }


def add_contract(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """POSTPROCESSING_HOOKS entry, after flashcards.api.contract.add_contract."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    for name, component in ROW_COMPONENTS.items():
        resource = get_resource(name)
        assert resource is not None, name
        schemas[component] = row_schema(resource)
    schemas["SqlData"] = sql_data_schema()
    codes = schemas.get("ErrorCode", {"type": "string", "enum": []})
    codes["enum"] = sorted({*codes["enum"], *DIALECT_ERROR_CODES})
    schemas["ErrorCode"] = codes
    paths = result.setdefault("paths", {})
    paths["/v1/agent/grammar"] = _grammar_path()
    paths[MCP_PATH] = _mcp_path()
    return result
