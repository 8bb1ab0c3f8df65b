"""Helpers of the domain.md contract tests: principals are made the documented way (`manage.py
create_api_key`), every request goes through the real URLconf, and every check is on the returned
envelope (dsl.md §2)."""

from __future__ import annotations

import io
from typing import Any

from django.core.management import call_command
from rest_framework.test import APIClient

from tests.support.envelope import check_envelope, data_of, error_of

DEFAULT_SETTINGS = {
    "algorithm": "fsrs-6",
    "desired_retention": 0.9,
    "learning_steps_minutes": [1, 10],
    "relearning_steps_minutes": [10],
    "maximum_interval_days": 36500,
    "enable_fuzz": True,
    "time_zone": "UTC",
    "day_starts_at_hour": 0,
}
WORKSPACE_COLUMNS = [
    "workspace_id",
    "name",
    "created_at",
    "algorithm",
    "desired_retention",
    "learning_steps_minutes",
    "relearning_steps_minutes",
    "maximum_interval_days",
    "enable_fuzz",
    "time_zone",
    "day_starts_at_hour",
]
CARD_COLUMNS = [
    "card_id",
    "front_text",
    "back_text",
    "card_type",
    "tags",
    "effort_level",
    "metadata",
    "due_at",
    "created_at",
    "updated_at",
    "reps",
    "lapses",
    "fsrs_card_state",
    "fsrs_step_index",
    "fsrs_scheduled_days",
    "fsrs_stability",
    "fsrs_difficulty",
    "fsrs_last_reviewed_at",
]
REVIEW_EVENT_COLUMNS = [
    "review_event_id",
    "card_id",
    "client_event_id",
    "rating",
    "review_grade",
    "reviewed_at_client",
    "reviewed_at_server",
]


def create_key(username: str, *options: str) -> tuple[str, str]:
    """Run `manage.py create_api_key --user USERNAME …`; returns (full output, the key), the key
    being the last line as the spec promises."""
    out = io.StringIO()
    call_command("create_api_key", "--user", username, *options, stdout=out)
    output = out.getvalue()
    return output, output.rstrip("\n").splitlines()[-1]


def client_with(key: str, scheme: str = "ApiKey") -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"{scheme} {key}")
    return client


def agent(username: str, *options: str) -> APIClient:
    """A client holding a fresh key of `username` (created with `Personal` if new)."""
    return client_with(create_key(username, *options)[1])


def envelope(response: Any) -> dict[str, Any]:
    """The shared §2 check, and this suite's stricter docs URLs (the test client's host)."""
    body = check_envelope(response)
    assert body["docs"]["discoveryUrl"] == "http://testserver/v1/"
    assert body["docs"]["grammarUrl"].startswith("http://testserver/")
    return body


def ok(response: Any, status: int = 200) -> dict[str, Any]:
    """The `data` of a successful response."""
    envelope(response)
    return data_of(response, status)


def fail(response: Any, status: int, code: str) -> dict[str, Any]:
    """The `error` of a failed response with this status and code."""
    envelope(response)
    return error_of(response, status, code)


def sql(client: APIClient, statement: str) -> dict[str, Any]:
    return ok(client.post("/v1/agent/sql", {"sql": statement}, format="json"))


def rows(client: APIClient, statement: str) -> list[dict[str, Any]]:
    return sql(client, statement)["rows"]


def insert_card(client: APIClient, front: str = "Hola", back: str = "Hello", **extra: str) -> str:
    """INSERT one card through the dialect; returns its card_id."""
    columns = ["front_text", "back_text", *extra]
    values = [front, back, *extra.values()]
    literals = ", ".join("'" + v.replace("'", "''") + "'" for v in values)
    data = sql(client, f"INSERT INTO cards ({', '.join(columns)}) VALUES ({literals})")
    return data["rows"][0]["card_id"]


def review(client: APIClient, **body: Any) -> Any:
    return client.post("/v1/agent/reviews", body, format="json")


def workspace_row(client: APIClient) -> dict[str, Any]:
    [row] = rows(client, "SELECT * FROM workspace")
    return row
