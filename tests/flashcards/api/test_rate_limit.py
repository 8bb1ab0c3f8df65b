from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import override_settings
from rest_framework.test import APIClient

from flashcards import services
from flashcards.api.throttling import WINDOW_SECONDS, consume
from tests.flashcards.api.helpers import assert_envelope_error, assert_envelope_ok

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_counters():
    cache.clear()
    yield
    cache.clear()


@override_settings(AGENT_RATE_LIMIT=3)
def test_the_fourth_request_in_a_minute_is_429_with_retry_after(api):
    for _ in range(3):
        assert_envelope_ok(api.get("/v1/agent/me"))
    response = api.get("/v1/agent/me")
    error = assert_envelope_error(response, 429, "RATE_LIMITED")
    retry_after = int(response["Retry-After"])
    assert 1 <= retry_after <= WINDOW_SECONDS
    assert error["details"]["retryAfterSeconds"] == retry_after


@override_settings(AGENT_RATE_LIMIT=2)
def test_every_agent_route_spends_the_same_budget(api):
    assert_envelope_ok(api.get("/v1/agent/workspaces"))
    assert_envelope_ok(
        api.post("/v1/agent/workspace/scheduler-settings", {"enable_fuzz": False}, format="json")
    )
    response = api.post("/v1/agent/sql", {"sql": "SHOW TABLES"}, format="json")
    assert_envelope_error(response, 429, "RATE_LIMITED")


@override_settings(AGENT_RATE_LIMIT=2)
def test_each_key_has_its_own_budget(api, user, workspace, client_for):
    _, second = services.create_api_key(user, "second", workspace=workspace)
    for _ in range(2):
        assert_envelope_ok(api.get("/v1/agent/me"))
    assert_envelope_error(api.get("/v1/agent/me"), 429, "RATE_LIMITED")
    assert_envelope_ok(client_for(second).get("/v1/agent/me"))


@override_settings(AGENT_RATE_LIMIT=1)
def test_anonymous_discovery_is_not_limited(db):
    client = APIClient()
    for _ in range(5):
        assert_envelope_ok(client.get("/v1/"))


@override_settings(AGENT_RATE_LIMIT=0)
def test_zero_disables_the_limit(api):
    for _ in range(30):
        assert_envelope_ok(api.get("/v1/agent/me"))


@override_settings(AGENT_RATE_LIMIT=2)
def test_the_window_resets_after_a_minute():
    start = 1_000 * WINDOW_SECONDS + 10.0
    assert consume("key:test", now=start) is None
    assert consume("key:test", now=start + 1) is None
    wait = consume("key:test", now=start + 2)
    assert wait == pytest.approx(WINDOW_SECONDS - 12)
    assert consume("key:test", now=start + WINDOW_SECONDS) is None
