"""Issue #21, pages and API shapes through the Django test client: deep JSON cursors are 400s
naming the cursor, every answer under /v1/ is the envelope, every HTML page carries a
Content-Security-Policy, and sign-in is throttled per account and per address."""

from __future__ import annotations

import base64

import pytest
from django.core.cache import cache
from django.test import Client, override_settings

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _deep_cursor(depth: int = 5000) -> str:
    raw = "[" * depth + "]" * depth
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def test_a_deep_json_cursor_on_bootstrap_is_a_400_naming_cursor(api, workspace):
    response = api.post(
        f"/v1/workspaces/{workspace.pk}/sync/bootstrap",
        {"cursor": _deep_cursor()},
        format="json",
    )
    assert response.status_code == 400, response.content[:300]
    assert response.json()["error"]["details"]["field"] == "cursor"


def test_a_deep_json_cursor_on_the_workspace_list_is_a_400_naming_cursor(api):
    response = api.get("/v1/agent/workspaces", {"cursor": _deep_cursor()})
    assert response.status_code == 400, response.content[:300]
    assert response.json()["error"]["details"]["field"] == "cursor"


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [("GET", "/v1", 301), ("POST", "/v1/docs", 405), ("DELETE", "/v1/docs", 405)],
)
def test_what_django_answers_under_v1_is_the_envelope(client, method, path, status):
    response = client.generic(method, path)
    assert response.status_code == status
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["ok"] is False and body["error"]["code"]
    if status == 301:
        assert response["Location"] == "/v1/"


@pytest.mark.parametrize(
    "path",
    ["/", "/v1/docs", "/api-auth/login/", "/admin/login/", "/definitely-not-here"],
)
def test_every_html_page_has_a_content_security_policy(client, path):
    response = client.get(path)
    assert response["Content-Type"].startswith("text/html")
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "object-src 'none'" in policy
    assert "unsafe-eval" not in policy and "frame-ancestors 'none'" in policy


def test_the_swagger_page_has_no_inline_script(client):
    html = client.get("/v1/docs").content.decode()
    assert "<script>" not in html
    script = client.get("/v1/docs?script=")
    assert script.status_code == 200
    assert "SwaggerUIBundle" in script.content.decode()


@pytest.mark.parametrize("path", ["/admin/login/", "/api-auth/login/"])
@pytest.mark.parametrize("kind", ["account", "address"])
def test_sign_in_is_throttled_with_a_clear_message(path, kind):
    cache.clear()
    user = UserFactory(username="victim", is_staff=True)
    user.set_password("right-password")
    user.save()
    client = Client()
    with override_settings(LOGIN_FAILURES_PER_ACCOUNT=5, LOGIN_FAILURES_PER_ADDRESS=8):
        attempts = 5 if kind == "account" else 8
        for i in range(attempts):
            username = "victim" if kind == "account" else f"nobody{i}"
            response = client.post(path, {"username": username, "password": "wrong"})
            assert response.status_code == 200  # the form again, with its error
        # Now even the right password is refused, with the reason.
        response = client.post(path, {"username": "victim", "password": "right-password"})
        assert response.status_code == 429
        assert "Too many failed sign-in attempts" in response.content.decode()
        assert int(response["Retry-After"]) > 0
        assert "_auth_user_id" not in client.session
        if kind == "account":
            # Another account from the same address is not blocked by this account's failures.
            other = UserFactory(username="bystander", is_staff=True)
            other.set_password("pw-of-bystander")
            other.save()
            response = client.post(path, {"username": "bystander", "password": "pw-of-bystander"})
            assert response.status_code == 302
    cache.clear()


def test_a_good_sign_in_is_not_throttled():
    cache.clear()
    user = UserFactory(username="fine", is_staff=True)
    user.set_password("right-password")
    user.save()
    response = Client().post("/api-auth/login/", {"username": "fine", "password": "right-password"})
    assert response.status_code == 302
