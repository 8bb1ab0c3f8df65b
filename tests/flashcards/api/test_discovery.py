from __future__ import annotations

from urllib.parse import urlparse

import pytest
from django.conf import settings
from django.urls import Resolver404, resolve
from rest_framework.test import APIClient

from tests.flashcards.api.helpers import assert_envelope_ok

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/v1/", "/v1/agent", "/v1/agent/"])
def test_discovery_needs_no_auth_and_names_the_service(path):
    data = assert_envelope_ok(APIClient().get(path))
    assert data["service"] == {"name": settings.SERVICE_NAME, "version": settings.SERVICE_VERSION}
    assert "ApiKey fca_" in data["authentication"]["format"]
    assert data["mcp"]["url"] == "http://testserver/mcp"
    assert data["grammarUrl"] == "http://testserver/v1/agent/grammar"


def test_discovery_ignores_a_bad_authorization_header():
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="ApiKey not-a-key")
    assert_envelope_ok(client.get("/v1/"))


def test_instructions_teach_the_first_steps_and_the_card_contract():
    data = assert_envelope_ok(APIClient().get("/v1/"))
    text = data["instructions"]
    for phrase in ("SHOW TABLES", "DESCRIBE", "100", "front_text", "back_text", "prompt"):
        assert phrase in text


PUBLISHED_PATHS = {
    "discovery": ("GET", "/v1/"),
    "agent_discovery": ("GET", "/v1/agent"),
    "grammar": ("GET", "/v1/agent/grammar"),
    "sql": ("POST", "/v1/agent/sql"),
    "sql_query": ("POST", "/v1/agent/sql/query"),
    "sql_execute": ("POST", "/v1/agent/sql/execute"),
    "me": ("GET", "/v1/agent/me"),
    "list_workspaces": ("GET", "/v1/agent/workspaces"),
    "create_workspace": ("POST", "/v1/agent/workspaces"),
    "select_workspace": ("POST", "/v1/agent/workspaces/{workspace_id}/select"),
    "submit_review": ("POST", "/v1/agent/reviews"),
    "scheduler_settings": ("POST", "/v1/agent/workspace/scheduler-settings"),
    "reset_progress": ("POST", "/v1/agent/workspace/reset-progress"),
    "openapi": ("GET", "/v1/openapi.json"),
    "sync_push": ("POST", "/v1/workspaces/{workspace_id}/sync/push"),
}


def test_every_route_is_listed_at_its_published_absolute_url():
    routes = assert_envelope_ok(APIClient().get("/v1/"))["routes"]
    for name, (method, path) in PUBLISHED_PATHS.items():
        assert routes[name]["method"] == method, name
        assert routes[name]["url"] == f"http://testserver{path}", name
    for name, route in routes.items():
        assert route["description"], name
        try:
            resolve(urlparse(route["url"]).path.replace("{workspace_id}", "x"))
        except Resolver404:
            pytest.fail(f"discovery lists {name} at {route['url']}, which is not mounted")
