"""The OpenAPI shapes of what the agent routes answer: the success envelope of each operation with
its ``data`` typed (rows by reference to the row components, which dsl.surfaces.openapi builds from the
resource registry), and the API-key security scheme. Request bodies are flashcards.api.bodies;
the error statuses, headers and error codes every route shares are added by
flashcards.api.contract."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiExample, OpenApiResponse

from flashcards.api.bodies import UUID_PATTERN
from flashcards.services import RESET_CONFIRMATION


class ApiKeyScheme(OpenApiAuthenticationExtension):
    """Registers the API key header with drf-spectacular (subclassing registers it)."""

    target_class = "flashcards.http.authentication.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema: object) -> dict[str, str]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "'ApiKey fca_<8>_<26>' or 'Bearer fca_<8>_<26>'.",
        }


def ref(component: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{component}"}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        return {"allOf": [schema], "nullable": True}
    return {**schema, "nullable": True}


def obj(properties: dict[str, Any], *, required: tuple[str, ...] | None = None) -> dict[str, Any]:
    """An object with these properties, all required unless told otherwise."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties if required is None else required),
    }


STRING = {"type": "string"}
INTEGER = {"type": "integer"}
BOOLEAN = {"type": "boolean"}
UUID = {"type": "string", "format": "uuid", "pattern": UUID_PATTERN}
TIMESTAMP = {"type": "string", "format": "date-time"}

# Rows in the dialect's SELECT * shape; dsl.surfaces.openapi defines each from the resource registry.
ROW_COMPONENTS = {
    "cards": "CardRow",
    "decks": "DeckRow",
    "review_events": "ReviewEventRow",
    "workspace": "WorkspaceRow",
}
CARD_ROW = ref("CardRow")
WORKSPACE_ROW = ref("WorkspaceRow")
REVIEW_EVENT_ROW = ref("ReviewEventRow")


def envelope(description: str, data: dict[str, Any]) -> OpenApiResponse:
    """The success envelope (dsl.md §2) of one operation, its ``data`` shaped by ``data``."""
    return OpenApiResponse(
        response=obj(
            {
                "ok": {"type": "boolean", "enum": [True]},
                "data": data,
                "instructions": STRING,
                "docs": ref("Docs"),
                "requestId": ref("RequestId"),
            }
        ),
        description=description,
    )


ME = obj(
    {
        "user": obj(
            {
                "user_id": INTEGER,
                "username": STRING,
                "email": nullable(STRING),
            }
        ),
        "workspace": nullable(WORKSPACE_ROW),
        "apiKey": nullable(
            obj(
                {
                    "label": STRING,
                    "key_id": STRING,
                    "created_at": TIMESTAMP,
                    "last_used_at": nullable(TIMESTAMP),
                }
            )
        ),
        "authentication": {"type": "string", "enum": ["api_key", "session"]},
        "learningDay": nullable(
            obj(
                {
                    "time_zone": STRING,
                    "day_starts_at_hour": INTEGER,
                    "current_learning_day": {"type": "string", "format": "date"},
                    "current_learning_day_started_at": TIMESTAMP,
                    "server_time": TIMESTAMP,
                }
            )
        ),
    }
)
WORKSPACES = obj(
    {
        "workspaces": {
            "type": "array",
            "items": {
                "allOf": [
                    WORKSPACE_ROW,
                    obj(
                        {
                            "role": nullable({"type": "string", "enum": ["owner", "member"]}),
                            "selected": BOOLEAN,
                        }
                    ),
                ]
            },
        },
        "selectedWorkspaceId": nullable(UUID),
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
        "hasMore": BOOLEAN,
        "nextCursor": nullable(STRING),
    }
)
SELECTED_WORKSPACE = obj({"workspace": WORKSPACE_ROW})
REVIEW = obj({"review_event": REVIEW_EVENT_ROW, "card": CARD_ROW})
RESET = obj({"workspace_id": UUID, "cardsReset": {"type": "integer", "minimum": 0}})
PUSH = obj(
    {
        "operations": {
            "type": "array",
            "items": obj(
                {
                    "operation_id": nullable(STRING),
                    "entity_type": nullable(STRING),
                    "entity_id": nullable(STRING),
                    "status": {
                        "type": "string",
                        "enum": ["applied", "ignored", "duplicate", "rejected"],
                    },
                    "resulting_change_id": nullable(INTEGER),
                    "error": nullable(STRING),
                }
            ),
        }
    }
)
_ENTITY = {"type": "object", "additionalProperties": True}
PULL = obj(
    {
        "changes": {"type": "array", "items": _ENTITY},
        "next_change_id": {"type": "integer", "minimum": 0},
        "has_more": BOOLEAN,
    }
)
BOOTSTRAP = obj(
    {
        "entries": {"type": "array", "items": _ENTITY},
        "next_cursor": nullable(STRING),
        "has_more": BOOLEAN,
        "next_change_id": {"type": "integer", "minimum": 0},
    }
)
HISTORY = obj(
    {
        "review_events": {"type": "array", "items": _ENTITY},
        "next_sequence": {"type": "integer", "minimum": 0},
        "has_more": BOOLEAN,
    }
)
# A route's URL is absolute, or a template with {workspace_id} in it.
ROUTE = obj({"method": STRING, "url": STRING, "description": STRING})
URL = {"type": "string", "format": "uri"}
DISCOVERY = obj(
    {
        "service": obj({"name": STRING, "version": STRING}),
        "authentication": {"type": "object", "additionalProperties": {"type": "string"}},
        "routes": {"type": "object", "additionalProperties": ROUTE},
        "mcp": obj(
            {
                "url": URL,
                "transport": STRING,
                "authentication": STRING,
                "tools": {"type": "array", "items": STRING},
            }
        ),
        "grammarUrl": URL,
        "openapiUrl": URL,
        "instructions": STRING,
    }
)
# The SQL endpoints' data (dsl.md §2.1-§2.3); dsl.surfaces.openapi defines it from the executor's shapes.
SQL_DATA = ref("SqlData")

REVIEW_EXAMPLE = OpenApiExample(
    "Good answer",
    value={"card_id": "123e4567-e89b-42d3-a456-426614174000", "rating": "good"},
    request_only=True,
)
SETTINGS_EXAMPLE = OpenApiExample(
    "Higher retention",
    value={"desired_retention": 0.92, "learning_steps_minutes": [1, 10, 60]},
    request_only=True,
)
RESET_EXAMPLE = OpenApiExample(
    "Reset", value={"confirmation": RESET_CONFIRMATION}, request_only=True
)
