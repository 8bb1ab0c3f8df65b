"""Builders for sync push operations and a thin client over the four sync routes."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from rest_framework.test import APIClient

BASE_TIME = datetime(2026, 3, 5, 10, 0, tzinfo=UTC)


def ts(minutes: float = 0) -> str:
    """A client timestamp `minutes` after a fixed base, in the published format."""
    value = BASE_TIME + timedelta(minutes=minutes)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def new_id() -> str:
    return str(uuid.uuid4())


def operation(
    entity_type: str,
    entity_id: str,
    payload: dict[str, Any],
    *,
    at: str,
    op_id: str | None = None,
    action: str = "upsert",
) -> dict[str, Any]:
    return {
        "operation_id": op_id or new_id(),
        "entity_type": entity_type,
        "entity_id": entity_id,
        "action": action,
        "client_updated_at": at,
        "payload": payload,
    }


def card_op(card_id: str, *, at: str, op_id: str | None = None, **payload: Any) -> dict[str, Any]:
    payload.setdefault("front_text", "Hola")
    payload.setdefault("back_text", "Hello")
    return operation("card", card_id, payload, at=at, op_id=op_id)


def deck_op(deck_id: str, *, at: str, op_id: str | None = None, **payload: Any) -> dict[str, Any]:
    payload.setdefault("name", "Spanish")
    return operation("deck", deck_id, payload, at=at, op_id=op_id)


def review_op(
    card_id: str, *, at: str, event_id: str | None = None, op_id: str | None = None, **payload: Any
) -> dict[str, Any]:
    body = {
        "card_id": card_id,
        "client_event_id": new_id(),
        "rating": 2,
        "reviewed_at_client": at,
        **payload,
    }
    return operation(
        "review_event", event_id or new_id(), body, at=at, op_id=op_id, action="append"
    )


class SyncClient:
    """Posts to /v1/workspaces/{id}/sync/… through the real URLconf."""

    def __init__(self, client: APIClient, workspace_id: object) -> None:
        self.client = client
        self.base = f"/v1/workspaces/{workspace_id}/sync"

    def post(self, route: str, body: object):
        return self.client.post(f"{self.base}/{route}", body, format="json")

    def _data(self, route: str, body: dict[str, Any]) -> dict[str, Any]:
        response = self.post(route, body)
        assert response.status_code == 200, response.json()
        assert response.json()["ok"] is True
        return response.json()["data"]

    def push(
        self, operations: list[dict[str, Any]], *, installation_id: str = "phone-1"
    ) -> list[dict[str, Any]]:
        body = {"installation_id": installation_id, "platform": "ios", "operations": operations}
        return self._data("push", body)["operations"]

    def push_one(self, op: dict[str, Any], *, installation_id: str = "phone-1") -> dict[str, Any]:
        [result] = self.push([op], installation_id=installation_id)
        return result

    def pull(self, after: int = 0, limit: int | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"after_change_id": after}
        if limit is not None:
            body["limit"] = limit
        return self._data("pull", body)

    def bootstrap(self, cursor: str | None = None, limit: int | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"cursor": cursor}
        if limit is not None:
            body["limit"] = limit
        return self._data("bootstrap", body)

    def history(self, after: int = 0, limit: int | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"after_sequence": after}
        if limit is not None:
            body["limit"] = limit
        return self._data("review-history/pull", body)
