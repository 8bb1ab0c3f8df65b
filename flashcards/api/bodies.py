"""The request bodies (and query strings) of the agent routes as DRF serializers that both
validate and document them: the OpenAPI schema is generated from the same fields that check each
request, on REST and over MCP, so the published contract and the server cannot disagree.

Fields here are strict about JSON types (a string is never taken for a number or a boolean, null
is never taken for "absent"), state every limit the server applies, and leave to the service
functions only the rules a schema cannot state (a card that must exist, steps that must
increase). A body that breaks the schema is refused with 400 ``REQUEST_INVALID`` whose
``details.validationIssues`` lists every offending field (``validated``)."""

from __future__ import annotations

import math
import re
import uuid
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from flashcards.http.envelope import ApiError
from flashcards.models import REVIEW_GRADES
from flashcards.services import timestamps
from flashcards.services.scheduling import RESET_CONFIRMATION
from flashcards.services.sync import MAX_PLATFORM_LENGTH, MAX_PUSH_OPERATIONS
from flashcards.services.sync_feed import (
    MAX_BOOTSTRAP_LIMIT,
    MAX_CHANGE_ID,
    MAX_HISTORY_LIMIT,
    MAX_PULL_LIMIT,
)

MAX_PAGE = 100
# Component names of the bodies whose unknown keys are refused (ClosedSerializer), published with
# ``additionalProperties: false`` (flashcards.api.contract).
CLOSED_BODIES: set[str] = set()
MAX_IDEMPOTENCY_KEY = 200
WORKSPACE_ID_HELP = (
    "Optional: run against this workspace instead of the selected one (membership required)."
)
# Published as the pattern of a UUID string: the canonical 8-4-4-4-12 hexadecimal form.
UUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
_UUID = re.compile(UUID_PATTERN)
NOT_BLANK_PATTERN = r"\S"
# The dialect's MAX_SQL_BYTES (dsl.md §8) as characters: a longer text is always too long.
MAX_SQL_CHARS = 65_536
# An Idempotency-Key: 1-200 printable ASCII characters (dsl.runtime.idempotency checks with this).
IDEMPOTENCY_KEY_PATTERN = r"^[ -~]{1,200}$"


def invalid(message: str, field: str | None = None) -> ApiError:
    """400 REQUEST_INVALID for a request that breaks its schema, naming the offending field."""
    path = field or "body"
    return ApiError(
        "REQUEST_INVALID",
        message,
        details={
            "field": field,
            "validationIssues": [{"path": path, "code": "invalid_value", "message": message}],
        },
    )


def _issues(errors: Any, path: str) -> list[dict[str, str]]:
    if isinstance(errors, dict):
        return [
            issue
            for key, value in errors.items()
            for issue in _issues(value, key if path == "body" else f"{path}.{key}")
        ]
    if isinstance(errors, list) and errors and not isinstance(errors[0], str | dict | list):
        errors = [str(error) for error in errors]
    if isinstance(errors, list) and all(isinstance(error, str) for error in errors):
        return [{"path": path, "code": "invalid_value", "message": str(e)} for e in errors]
    if isinstance(errors, list):
        return [
            issue
            for index, value in enumerate(errors)
            for issue in _issues(value, f"{path}[{index}]")
        ]
    return [{"path": path, "code": "invalid_value", "message": str(errors)}]


def validated(serializer_class: type[serializers.Serializer], data: object) -> dict[str, Any]:
    """The body checked against its serializer, or 400 REQUEST_INVALID listing every issue."""
    if not isinstance(data, dict):
        raise invalid(
            "The request body must be a JSON object; see docs.discoveryUrl for each route's fields."
        )
    serializer = serializer_class(data=data)
    if serializer.is_valid():
        return dict(serializer.validated_data)
    issues = _issues(serializer.errors, "body")
    first = issues[0]
    named = first["path"].split(".")[0].split("[")[0]
    field = None if named in ("body", "non_field_errors") else named
    message = first["message"]
    if field is not None and not message.startswith(field):
        message = f"{field}: {message}"
    return _raise(message, field, issues)


def _raise(message: str, field: str | None, issues: list[dict[str, str]]) -> Any:
    raise ApiError("REQUEST_INVALID", message, details={"field": field, "validationIssues": issues})


# --- strict JSON fields ----------------------------------------------------------------------


class StrictString(serializers.CharField):
    """A JSON string, never a number or a boolean converted to one."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBoolean(serializers.BooleanField):
    """JSON true or false only."""

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class StrictInteger(serializers.IntegerField):
    """A JSON number with no fraction (``5`` or ``5.0``), never a string or a boolean."""

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        if isinstance(data, float) and not (math.isfinite(data) and data.is_integer()):
            self.fail("invalid")
        return super().to_internal_value(int(data))


class QueryInteger(serializers.IntegerField):
    """A whole number in a query string: decimal digits only."""

    def to_internal_value(self, data: Any) -> int:
        if not isinstance(data, str) or not data.isascii() or not data.isdigit():
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictNumber(serializers.FloatField):
    """A finite JSON number, never a string or a boolean."""

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        if not math.isfinite(data):
            self.fail("invalid")
        return super().to_internal_value(data)


@extend_schema_field({"type": "string", "format": "uuid", "pattern": UUID_PATTERN})
class StrictUuid(serializers.Field):
    """A UUID in its canonical 8-4-4-4-12 text; returned as that text, lower-cased."""

    default_error_messages = {
        "invalid": "Must be a UUID such as 123e4567-e89b-42d3-a456-426614174000."
    }

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str) or not _UUID.match(data):
            self.fail("invalid")
        return str(uuid.UUID(data))

    def to_representation(self, value: Any) -> str:
        return str(value)


# The years the scheduler can work with, as a pattern (an offset can still move a moment on the
# first or last day out of range: then the refusal says so as a rule, details.reason).
YEARS_PATTERN = r"^(19[7-9][0-9]|[2-8][0-9]{3})-"


@extend_schema_field(
    {
        "type": "string",
        "format": "date-time",
        "pattern": YEARS_PATTERN,
        "description": "ISO-8601 between 1970-01-01 and 8999-12-31 (UTC); a time without an "
        "offset is UTC, a date alone is midnight UTC.",
    }
)
class Timestamp(serializers.Field):
    """An ISO-8601 moment (flashcards.services.timestamps) within the scheduler's years."""

    default_error_messages = {
        "invalid": "Must be an ISO-8601 timestamp, e.g. 2026-03-05T10:00:00Z.",
        "range": "Must be between 1970-01-01 and 8999-12-31 (UTC).",
    }

    def to_internal_value(self, data: Any) -> Any:
        parsed = timestamps.parse_timestamp(data)
        if parsed is None:
            self.fail("invalid")
            raise AssertionError("fail() raises")
        if not timestamps.EARLIEST_TIMESTAMP <= parsed < timestamps.LATEST_TIMESTAMP:
            raise ApiError(
                "REQUEST_INVALID",
                f"{self.field_name}: {self.error_messages['range']}",
                details={"field": self.field_name, "reason": "out_of_range"},
            )
        return parsed

    def to_representation(self, value: Any) -> str | None:
        return timestamps.format_timestamp(value)


# A grade in any letter case, surrounded by any spaces (the same expression checks and documents).
GRADE_PATTERN = (
    "^[ \\t\\n\\r]*("
    + "|".join("".join(f"[{c.upper()}{c}]" for c in grade) for grade in REVIEW_GRADES)
    + ")[ \\t\\n\\r]*$"
)
_GRADE = re.compile(GRADE_PATTERN)


@extend_schema_field(
    {
        "oneOf": [
            {"type": "integer", "minimum": 0, "maximum": 3},
            {"type": "string", "pattern": GRADE_PATTERN},
        ],
        "description": "0..3 or again / hard / good / easy (any letter case).",
    }
)
class Rating(serializers.Field):
    default_error_messages = {"invalid": "Must be 0..3 or one of again, hard, good, easy."}

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, str):
            match = _GRADE.match(data)
            if match is None:
                self.fail("invalid")
                raise AssertionError("fail() raises")
            return REVIEW_GRADES.index(match.group(1).lower())
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        if isinstance(data, float) and not data.is_integer():
            self.fail("invalid")
        if not 0 <= data <= 3:
            self.fail("invalid")
        return int(data)

    def to_representation(self, value: Any) -> Any:
        return value


# Text with something besides whitespace and no NUL character (which no database stores): what
# the service functions accept for names and ids (check_storable), stated as one expression.
TEXT_PATTERN = "^[^\\u0000]*\\S[^\\u0000]*$"
_TEXT = re.compile(TEXT_PATTERN)


class Text(StrictString):
    """A non-blank string without NUL characters, at most ``max_length`` long."""

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        if not _TEXT.match(value):
            raise serializers.ValidationError("Must not be blank nor hold a NUL character.")
        return value


def text_schema(max_length: int) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": max_length, "pattern": TEXT_PATTERN}


def text(max_length: int, **kwargs: Any) -> Text:
    """A ``Text`` field published with its pattern and limits."""
    field_class = extend_schema_field(text_schema(max_length))(
        type(f"Text{max_length}", (Text,), {})
    )
    return field_class(max_length=max_length, **kwargs)


def workspace_id_field() -> StrictUuid:
    return StrictUuid(required=False, help_text=WORKSPACE_ID_HELP)


def workspace_id_of(data: object) -> str | None:
    """The body's ``workspace_id`` checked on its own, before the rest of the body: the
    workspace is decided first (a key without a selection gets its 409 whatever the body)."""
    if not isinstance(data, dict) or "workspace_id" not in data:
        return None
    return validated(_WorkspaceSelector, {"workspace_id": data["workspace_id"]})["workspace_id"]


class ClosedSerializer(serializers.Serializer):
    """A body whose unknown keys are refused; published with ``additionalProperties: false``."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        CLOSED_BODIES.add(cls.__name__.removesuffix("Serializer"))

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(self.initial_data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError(
                {
                    unknown[0]: f"Unknown field(s) {', '.join(unknown)}; known: "
                    f"{', '.join(self.fields)}."
                }
            )
        return attrs


class _WorkspaceSelector(serializers.Serializer):
    workspace_id = workspace_id_field()


# --- the agent commands (domain.md §4) ---------------------------------------------------------


class ReviewRequestSerializer(serializers.Serializer):
    card_id = StrictUuid()
    rating = Rating()
    reviewed_at = Timestamp(
        required=False, help_text="Default now. Must not be before the card's last review."
    )
    client_event_id = text(
        200, required=False, help_text="Idempotency key: a repeat returns the first result."
    )
    review_event_id = StrictUuid(required=False)
    workspace_id = workspace_id_field()


@extend_schema_field(
    {
        "type": "number",
        "minimum": 0,
        "exclusiveMinimum": True,
        "maximum": 1,
        "exclusiveMaximum": True,
        "description": "Strictly between 0 and 1, e.g. 0.9.",
    }
)
class Retention(StrictNumber):
    def to_internal_value(self, data: Any) -> float:
        value = super().to_internal_value(data)
        if not 0 < value < 1:
            raise serializers.ValidationError("Must be strictly between 0 and 1, e.g. 0.9.")
        return value


class SchedulerSettingsRequestSerializer(ClosedSerializer):
    desired_retention = Retention(required=False)
    learning_steps_minutes = serializers.ListField(
        child=StrictInteger(min_value=1, max_value=1439),
        required=False,
        min_length=1,
        help_text="Whole minutes, strictly increasing.",
    )
    relearning_steps_minutes = serializers.ListField(
        child=StrictInteger(min_value=1, max_value=1439),
        required=False,
        min_length=1,
        help_text="Whole minutes, strictly increasing.",
    )
    maximum_interval_days = StrictInteger(required=False, min_value=1, max_value=36500)
    enable_fuzz = StrictBoolean(required=False)
    # Blank and unknown names are the domain's to refuse (one message naming an example zone).
    time_zone = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        help_text="IANA time zone name of the learner's day, e.g. Europe/Madrid; default UTC.",
    )
    day_starts_at_hour = StrictInteger(
        required=False,
        min_value=0,
        max_value=23,
        help_text="Local hour at which a learning day starts (Anki's default is 4); default 0.",
    )
    workspace_id = workspace_id_field()


_CONFIRM = (
    f'confirmation must be exactly "{RESET_CONFIRMATION}"; this puts every card back to new '
    "(review events are kept)."
)


@extend_schema_field({"type": "string", "enum": [RESET_CONFIRMATION]})
class Confirmation(serializers.Field):
    default_error_messages = {"invalid": _CONFIRM, "required": _CONFIRM, "null": _CONFIRM}

    def to_internal_value(self, data: Any) -> str:
        if data != RESET_CONFIRMATION or not isinstance(data, str):
            self.fail("invalid")
        return data

    def to_representation(self, value: Any) -> Any:
        return value


class ResetProgressRequestSerializer(serializers.Serializer):
    confirmation = Confirmation()
    workspace_id = workspace_id_field()


class WorkspaceCreateSerializer(serializers.Serializer):
    name = text(200, help_text='E.g. "Spanish".')


class WorkspaceListQuerySerializer(serializers.Serializer):
    limit = QueryInteger(required=False, min_value=1, max_value=MAX_PAGE, help_text="Default 100.")
    cursor = StrictString(required=False, min_length=1, help_text="nextCursor of the last page.")


@extend_schema_field(
    {
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_SQL_CHARS,
        "pattern": NOT_BLANK_PATTERN,
        "description": "One statement or several separated by ';' (at most 64 KiB of UTF-8).",
    }
)
class SqlText(StrictString):
    pass


class SqlRequestSerializer(serializers.Serializer):
    """The JSON body of the SQL endpoints (the dialect checks ``sql`` itself: dsl.runtime.service)."""

    sql = SqlText()
    dry_run = StrictBoolean(required=False, default=False, help_text="Run, report, roll back.")
    workspace_id = workspace_id_field()


# --- sync (domain.md §5) -----------------------------------------------------------------------


class PushOperationSerializer(serializers.Serializer):
    operation_id = text(200)
    entity_type = StrictString()
    entity_id = StrictString()
    action = StrictString()
    client_updated_at = StrictString()
    payload = serializers.JSONField(required=False, allow_null=True)


class PushRequestSerializer(serializers.Serializer):
    installation_id = text(200)
    platform = text(MAX_PLATFORM_LENGTH)
    operations = serializers.ListField(
        child=serializers.DictField(), max_length=MAX_PUSH_OPERATIONS
    )


class PullRequestSerializer(serializers.Serializer):
    after_change_id = StrictInteger(min_value=0, max_value=MAX_CHANGE_ID, required=False)
    limit = StrictInteger(min_value=1, max_value=MAX_PULL_LIMIT, required=False)


class BootstrapRequestSerializer(serializers.Serializer):
    cursor = StrictString(required=False, allow_null=True, min_length=1)
    limit = StrictInteger(min_value=1, max_value=MAX_BOOTSTRAP_LIMIT, required=False)


class HistoryRequestSerializer(serializers.Serializer):
    after_sequence = StrictInteger(min_value=0, max_value=MAX_CHANGE_ID, required=False)
    limit = StrictInteger(min_value=1, max_value=MAX_HISTORY_LIMIT, required=False)
