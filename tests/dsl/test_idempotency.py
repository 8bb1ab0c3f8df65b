"""Idempotency-Key on the SQL endpoints (dsl.md §1)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dsl.models import IdempotencyRecord
from flashcards import services
from flashcards.models import Card
from tests.support.envelope import EXECUTE_URL, check_envelope, post_sql

pytestmark = pytest.mark.django_db

INSERT = "INSERT INTO cards (front_text, back_text) VALUES ('q', 'a')"


def send(client, sql=INSERT, key="key-1", **kwargs):
    return post_sql(client, sql, headers={"Idempotency-Key": key}, **kwargs)


def test_repeat_replays_the_stored_response_without_executing(api, workspace):
    first = send(api)
    first_body = check_envelope(first)
    assert first.status_code == 200 and "Idempotent-Replayed" not in first
    second = send(api)
    assert second.status_code == 200
    assert second["Idempotent-Replayed"] == "true"
    assert second.json() == first_body
    assert second["X-Request-Id"] == first_body["requestId"]
    assert Card.objects.filter(workspace=workspace).count() == 1


def test_same_key_different_body_is_409(api, workspace):
    send(api)
    response = send(api, sql="INSERT INTO cards (front_text, back_text) VALUES ('other', 'a')")
    body = check_envelope(response)
    assert response.status_code == 409 and body["error"]["code"] == "IDEMPOTENCY_KEY_REUSED"
    response = send(api, dry_run=True)
    assert response.status_code == 409
    response = post_sql(api, INSERT, url=EXECUTE_URL, headers={"Idempotency-Key": "key-1"})
    assert response.status_code == 409
    assert Card.objects.filter(workspace=workspace).count() == 1


def test_keys_are_per_api_key(api, user, workspace, client_for):
    _, plaintext = services.create_api_key(user, "second", workspace=workspace)
    send(api)
    response = send(client_for(plaintext))
    assert response.status_code == 200 and "Idempotent-Replayed" not in response
    assert Card.objects.filter(workspace=workspace).count() == 2


def test_records_expire_after_24_hours(api, workspace):
    send(api)
    IdempotencyRecord.objects.update(
        created_at=IdempotencyRecord.objects.get().created_at - timedelta(hours=25)
    )
    response = send(api)
    assert response.status_code == 200 and "Idempotent-Replayed" not in response
    assert Card.objects.filter(workspace=workspace).count() == 2


def test_failures_are_not_stored(api, workspace):
    response = send(api, sql="INSERT INTO cards (front_text, back_text) VALUES ('', 'a')")
    assert response.status_code == 400
    assert not IdempotencyRecord.objects.exists()
    response = send(api, sql="INSERT INTO cards (front_text, back_text) VALUES ('', 'a')")
    assert response.status_code == 400 and "Idempotent-Replayed" not in response


def test_dry_runs_are_not_stored(api, workspace):
    send(api, dry_run=True)
    assert not IdempotencyRecord.objects.exists()


@pytest.mark.parametrize("key", ["", "x" * 201, "tab\there"])
def test_invalid_keys(api, key):
    response = send(api, key=key)
    body = check_envelope(response)
    assert response.status_code == 400 and body["error"]["code"] == "REQUEST_INVALID"
    assert not IdempotencyRecord.objects.exists()


def test_one_key_in_two_workspaces_of_one_user_does_not_collide(api, user, workspace):
    """Issue #20: idempotency is keyed by principal and workspace. The same key and body sent
    after selecting another workspace is a new request there, not a replay of the first
    workspace's response (which would report a write that the second workspace never got)."""
    second = services.create_workspace(user, "Second")
    first = send(api)
    assert first.status_code == 200
    selected = api.post(f"/v1/agent/workspaces/{second.pk}/select")
    assert selected.status_code == 200, selected.json()
    again = send(api)
    assert again.status_code == 200 and "Idempotent-Replayed" not in again
    assert Card.objects.filter(workspace=workspace).count() == 1
    assert Card.objects.filter(workspace=second).count() == 1
    # Each workspace's record replays its own response.
    replay = send(api)
    assert replay["Idempotent-Replayed"] == "true"
    assert replay.json()["requestId"] == again.json()["requestId"]
    assert IdempotencyRecord.objects.count() == 2
