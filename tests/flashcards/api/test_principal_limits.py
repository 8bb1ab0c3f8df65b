"""Rate limits per principal on every surface (issue #20 item 2): a user's keys, OAuth
connections and console session share one AGENT_RATE_LIMIT budget, the console is limited like
REST, and at most AGENT_CONCURRENT_STATEMENTS statements of one user run at once. Each refusal is
a 429 RATE_LIMITED naming the limit, with Retry-After."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client, override_settings
from rest_framework.test import APIClient

from dsl.models import QueryLog
from flashcards import services
from flashcards.http.throttling import statement_slot
from tests.flashcards.api.helpers import assert_envelope_error, assert_envelope_ok

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_counters():
    cache.clear()
    yield
    cache.clear()


def keyed(plaintext: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"ApiKey {plaintext}")
    return client


@override_settings(AGENT_RATE_LIMIT=3)
def test_two_keys_of_one_user_share_one_budget(user, workspace, other_user, other_workspace):
    _, first = services.create_api_key(user, "one", workspace=workspace)
    _, second = services.create_api_key(user, "two", workspace=workspace)
    _, others = services.create_api_key(other_user, "other", workspace=other_workspace)
    for client in (keyed(first), keyed(second), keyed(first)):
        assert_envelope_ok(client.post("/v1/agent/sql", {"sql": "SHOW TABLES"}, format="json"))
    response = keyed(second).post("/v1/agent/sql", {"sql": "SHOW TABLES"}, format="json")
    error = assert_envelope_error(response, 429, "RATE_LIMITED")
    assert "at most 3 requests per minute for this user" in error["message"]
    assert error["details"]["limit"] == "AGENT_RATE_LIMIT"
    assert int(response["Retry-After"]) == error["details"]["retryAfterSeconds"] >= 1
    assert f"retry in {response['Retry-After']} seconds" in error["message"]
    # Another user's budget is their own.
    assert_envelope_ok(keyed(others).post("/v1/agent/sql", {"sql": "SHOW TABLES"}, format="json"))


@override_settings(AGENT_RATE_LIMIT=2)
def test_the_console_is_rate_limited_and_shares_the_users_budget(user, workspace):
    _, plaintext = services.create_api_key(user, "one", workspace=workspace)
    browser = Client()
    browser.force_login(user)
    assert browser.post("/console/", {"sql": "SHOW TABLES"}).status_code == 200
    assert_envelope_ok(keyed(plaintext).get("/v1/agent/me"))
    refused = browser.post("/console/", {"sql": "SHOW TABLES"})
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    page = refused.content.decode()
    assert "RATE_LIMITED" in page and "at most 2 requests per minute for this user" in page
    logged = QueryLog.objects.filter(surface="console").order_by("created_at").last()
    assert logged.status_code == 429


@override_settings(AGENT_RATE_LIMIT=2)
def test_the_browsable_api_spends_the_same_budget(user, workspace):
    browser = APIClient()
    browser.force_login(user)
    for _ in range(2):
        assert browser.post("/v1/agent/sql", {"sql": "SHOW TABLES"}).status_code == 200
    error = assert_envelope_error(
        browser.post("/v1/agent/sql", {"sql": "SHOW TABLES"}), 429, "RATE_LIMITED"
    )
    assert error["details"]["limit"] == "AGENT_RATE_LIMIT"


class _As:
    def __init__(self, user):
        self.user = user
        self.auth = None


@override_settings(AGENT_CONCURRENT_STATEMENTS=1)
def test_one_user_holds_at_most_the_concurrent_bound(
    user, workspace, api_key, other_user, other_workspace
):
    """A statement of the user is in flight (its slot held, as by a running request on another
    thread): the next one of any of their keys or their console is refused, another user's runs."""
    _, others = services.create_api_key(other_user, "other", workspace=other_workspace)
    browser = Client()
    browser.force_login(user)
    with statement_slot(_As(user)):
        response = keyed(api_key.plaintext).post(
            "/v1/agent/sql", {"sql": "SHOW TABLES"}, format="json"
        )
        error = assert_envelope_error(response, 429, "RATE_LIMITED")
        assert "at most 1 of this user's statements run at the same time" in error["message"]
        assert error["details"]["limit"] == "AGENT_CONCURRENT_STATEMENTS"
        assert response["Retry-After"] == "1"
        console = browser.post("/console/", {"sql": "SHOW TABLES"})
        assert console.status_code == 429 and console["Retry-After"] == "1"
        assert_envelope_ok(
            keyed(others).post("/v1/agent/sql", {"sql": "SHOW TABLES"}, format="json")
        )
    # Released: the user runs again.
    assert_envelope_ok(
        keyed(api_key.plaintext).post("/v1/agent/sql", {"sql": "SHOW TABLES"}, format="json")
    )
