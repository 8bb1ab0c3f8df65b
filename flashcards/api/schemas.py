"""OpenAPI shapes of the agent routes' bodies and envelope. Documentation only: the commands
validate bodies themselves (flashcards.api.commands) so REST and MCP give the same messages."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiExample, OpenApiResponse
from rest_framework import serializers

from flashcards.services import RESET_CONFIRMATION

WORKSPACE_ID_HELP = (
    "Optional: run against this workspace instead of the selected one (membership required)."
)


class ApiKeyScheme(OpenApiAuthenticationExtension):
    """Registers the API key header with drf-spectacular (subclassing registers it)."""

    target_class = "flashcards.api.authentication.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema: object) -> dict[str, str]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "'ApiKey fca_<8>_<26>' or 'Bearer fca_<8>_<26>'.",
        }


class ErrorSerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    details = serializers.DictField()


class DocsSerializer(serializers.Serializer):
    discoveryUrl = serializers.URLField()
    grammarUrl = serializers.URLField()


class EnvelopeSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    data = serializers.DictField()
    instructions = serializers.CharField()
    docs = DocsSerializer()
    requestId = serializers.UUIDField()
    error = ErrorSerializer(required=False)


class ReviewRequestSerializer(serializers.Serializer):
    card_id = serializers.UUIDField()
    rating = serializers.JSONField(help_text="0..3 or again / hard / good / easy.")
    reviewed_at = serializers.DateTimeField(
        required=False,
        help_text="ISO-8601; default now. Must not be before the card's last review.",
    )
    client_event_id = serializers.CharField(
        required=False,
        max_length=200,
        help_text="Idempotency key: a repeat returns the first result.",
    )
    review_event_id = serializers.UUIDField(required=False)
    workspace_id = serializers.UUIDField(required=False, help_text=WORKSPACE_ID_HELP)


class SchedulerSettingsRequestSerializer(serializers.Serializer):
    desired_retention = serializers.FloatField(required=False, help_text="0 < x < 1")
    learning_steps_minutes = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=1439), required=False
    )
    relearning_steps_minutes = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=1439), required=False
    )
    maximum_interval_days = serializers.IntegerField(required=False, min_value=1)
    enable_fuzz = serializers.BooleanField(required=False)
    workspace_id = serializers.UUIDField(required=False, help_text=WORKSPACE_ID_HELP)


class ResetProgressRequestSerializer(serializers.Serializer):
    confirmation = serializers.ChoiceField(choices=[RESET_CONFIRMATION])
    workspace_id = serializers.UUIDField(required=False, help_text=WORKSPACE_ID_HELP)


class WorkspaceCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)


def envelope(description: str) -> OpenApiResponse:
    return OpenApiResponse(response=EnvelopeSerializer, description=description)


ERROR_RESPONSES = {
    400: envelope("REQUEST_INVALID: bad JSON, a missing field or a wrong type."),
    401: envelope("AUTH_UNAUTHORIZED / AGENT_API_KEY_INVALID."),
    404: envelope("WORKSPACE_NOT_FOUND."),
    409: envelope("WORKSPACE_SELECTION_REQUIRED."),
    429: envelope("RATE_LIMITED, with a Retry-After header."),
}

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
