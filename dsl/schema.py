"""The dialect's view of the published schema: the registry of flashcards.schema under the names
dsl modules import, plus what only the language needs (lookup by resource name, the hints for
model fields that are deliberately not columns).

The columns themselves are defined once, in ``flashcards.schema`` (the domain package, so the
serializers and services read them too without importing ``dsl``); dsl modules keep importing
them from here.
"""

from __future__ import annotations

from flashcards.schema import (
    BOOLEAN,
    DATETIME,
    INTEGER,
    INTEGER_ARRAY,
    JSON,
    NUMBER,
    NUMERIC_TYPES,
    RESOURCES,
    STRING,
    STRING_ARRAY,
    UUID,
    Column,
    ColumnType,
    Resource,
)

__all__ = [
    "BOOLEAN",
    "DATETIME",
    "INTEGER",
    "INTEGER_ARRAY",
    "INTERNAL_FIELDS",
    "JSON",
    "NUMBER",
    "NUMERIC_TYPES",
    "RESOURCES",
    "RESOURCE_NAMES",
    "STRING",
    "STRING_ARRAY",
    "UUID",
    "Column",
    "ColumnType",
    "Resource",
    "get_resource",
]

_BY_NAME: dict[str, Resource] = {r.name: r for r in RESOURCES}

RESOURCE_NAMES: tuple[str, ...] = tuple(_BY_NAME)

_SYNC_HINT = "Sync metadata is internal and not a column; drop it from the statement."

INTERNAL_FIELDS: dict[str, str] = {
    "workspace_id": (
        "Every statement already runs in the selected workspace; drop the workspace condition."
    ),
    "deleted_at": "Deleted rows are never visible, so the condition can be dropped.",
    "is_deleted": "Deleted rows are never visible, so the condition can be dropped.",
    "deleted": "Deleted rows are never visible, so the condition can be dropped.",
    "client_updated_at": _SYNC_HINT,
    "client_created_at": _SYNC_HINT,
    "client_deleted_at": _SYNC_HINT,
    "replica_id": _SYNC_HINT,
    "last_replica_id": _SYNC_HINT,
    "operation_id": _SYNC_HINT,
    "last_operation_id": _SYNC_HINT,
    "sequence": _SYNC_HINT,
    "server_sequence": _SYNC_HINT,
    "change_sequence": _SYNC_HINT,
    "sync_version": _SYNC_HINT,
    "version": _SYNC_HINT,
    "user_id": "Rows belong to the selected workspace; there is no user column.",
    "owner_id": "Rows belong to the selected workspace; there is no owner column.",
}
"""Model fields that are deliberately not columns, with the hint naming one should give."""


def get_resource(name: str) -> Resource | None:
    return _BY_NAME.get(name)
