"""domain.md §6: API keys are also created "from a logged-in user's page". A user signs in with a
password, creates a key (shown once), uses it on the agent API, and revokes it."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.contract.domain_support import client_with, create_key, fail, ok

pytestmark = pytest.mark.django_db

PAGE = "/account/api-keys/"
KEY = re.compile(r"fca_[0-9A-HJKMNP-TV-Z]{8}_[0-9A-HJKMNP-TV-Z]{26}")


@pytest.fixture
def browser() -> Client:
    get_user_model().objects.create_user("reader", password="a long enough passphrase")
    client = Client()
    response = client.post(
        "/api-auth/login/",
        {"username": "reader", "password": "a long enough passphrase", "next": PAGE},
    )
    assert response.status_code == 302 and response["Location"] == PAGE
    return client


def workspace_choices(page: str) -> list[str]:
    return re.findall(r'<option value="([0-9a-f-]{36})"', page)


def test_anonymous_visitors_are_sent_to_the_login_page():
    response = Client().get(PAGE)
    assert response.status_code == 302
    assert response["Location"].startswith("/api-auth/login/")


def test_a_user_creates_a_key_that_is_shown_once_and_works(browser):
    page = browser.get(PAGE)
    assert page.status_code == 200
    [personal] = workspace_choices(page.content.decode())
    # Post/redirect/get: the key is shown on the GET the POST redirects to, and only there.
    posted = browser.post(PAGE, {"label": "my laptop", "workspace": personal})
    assert posted.status_code == 302 and posted["Location"] == PAGE
    response = browser.get(PAGE)
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    [key] = KEY.findall(response.content.decode())
    me = ok(client_with(key).get("/v1/agent/me"))
    assert me["user"]["username"] == "reader"
    assert me["apiKey"]["label"] == "my laptop"
    assert me["workspace"]["workspace_id"] == personal
    assert me["workspace"]["name"] == "Personal"
    # Shown once: the page lists the key afterwards without its secret.
    again = browser.get(PAGE).content.decode()
    assert "my laptop" in again and key not in again and not KEY.findall(again)


def test_the_key_can_target_any_of_the_users_workspaces(browser):
    _, cli_key = create_key("reader")
    second = ok(
        client_with(cli_key).post("/v1/agent/workspaces", {"name": "Second"}, format="json")
    )["workspace"]["workspace_id"]
    assert second in workspace_choices(browser.get(PAGE).content.decode())
    response = browser.post(PAGE, {"label": "second", "workspace": second}, follow=True)
    [key] = KEY.findall(response.content.decode())
    assert ok(client_with(key).get("/v1/agent/me"))["workspace"]["workspace_id"] == second


def test_another_users_workspace_cannot_be_chosen(browser):
    _, stranger_key = create_key("stranger")
    foreign = ok(client_with(stranger_key).get("/v1/agent/me"))["workspace"]["workspace_id"]
    response = browser.post(PAGE, {"label": "sneaky", "workspace": foreign})
    assert response.status_code == 200
    assert not KEY.findall(response.content.decode())
    assert not get_user_model().objects.get(username="reader").api_keys.exists()


@pytest.mark.parametrize("label", ["", "   ", "x" * 121])
def test_a_label_outside_1_to_120_characters_is_refused(browser, label):
    [personal] = workspace_choices(browser.get(PAGE).content.decode())
    response = browser.post(PAGE, {"label": label, "workspace": personal})
    assert response.status_code == 200
    assert not KEY.findall(response.content.decode())
    assert not get_user_model().objects.get(username="reader").api_keys.exists()


def test_a_user_revokes_their_key_and_it_fails_with_401(browser):
    [personal] = workspace_choices(browser.get(PAGE).content.decode())
    [key] = KEY.findall(
        browser.post(PAGE, {"label": "temp", "workspace": personal}, follow=True).content.decode()
    )
    key_id = key.split("_")[1]
    response = browser.post(f"{PAGE}{key_id}/revoke")
    assert response.status_code == 302 and response["Location"] == PAGE
    fail(client_with(key).get("/v1/agent/me"), 401, "AGENT_API_KEY_INVALID")
    assert "revoked" in browser.get(PAGE).content.decode()


def test_another_users_key_cannot_be_revoked(browser):
    _, key = create_key("victim")
    key_id = key.split("_")[1]
    assert browser.post(f"{PAGE}{key_id}/revoke").status_code == 404
    ok(client_with(key).get("/v1/agent/me"))


def test_revoking_needs_a_post(browser):
    [personal] = workspace_choices(browser.get(PAGE).content.decode())
    posted = browser.post(PAGE, {"label": "k", "workspace": personal}, follow=True)
    [key] = KEY.findall(posted.content.decode())
    # A GET only asks for confirmation (a form that POSTs); the key keeps working.
    confirm = browser.get(f"{PAGE}{key.split('_')[1]}/revoke")
    assert confirm.status_code == 200 and 'method="post"' in confirm.content.decode()
    ok(client_with(key).get("/v1/agent/me"))


def test_the_page_needs_a_csrf_token():
    get_user_model().objects.create_user("careful", password="a long enough passphrase")
    client = Client(enforce_csrf_checks=True)
    client.login(username="careful", password="a long enough passphrase")
    assert client.post(PAGE, {"label": "x"}).status_code == 403
