"""Issue #21, OAuth through the served application: revoked connections stay revoked, codes are
single-use and stored hashed, registration is bounded and held to its rules on every write path,
and errors for a client nobody approved are shown here, never redirected."""

from __future__ import annotations

from datetime import timedelta

import httpx2
import pytest
from django.test import override_settings
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, Grant

from flashcards.oauth.models import Connection
from tests.flashcards.api.conftest import live_server_url  # noqa: F401  (fixture)
from tests.flashcards.oauth.connector import (
    Connector,
    browser_user,
    connect,
    consent,
    form_fields,
    redirect_params,
    sign_in,
)


@pytest.fixture
def user(transactional_db, settings):
    return browser_user(settings)[0]


@pytest.fixture
def registered(live_server_url, user):  # noqa: F811
    connector = Connector(live_server_url)
    connector.discover()
    assert connector.register().status_code == 201
    return connector, sign_in(live_server_url, user.username)


def mcp_status(url: str, token: str) -> int:
    return httpx2.post(
        url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
    ).status_code


def revoke_on_the_keys_page(browser: httpx2.Client, key_id: str) -> None:
    page = browser.get("/account/api-keys/")
    token = form_fields(page.text)["csrfmiddlewaretoken"]
    response = browser.post(
        f"/account/api-keys/{key_id}/revoke", data={"csrfmiddlewaretoken": token}
    )
    assert response.status_code in (200, 302), response.text


def test_revoking_a_connection_revokes_its_tokens_and_reapproval_revives_none(registered):
    connector, browser = registered
    tokens = connect(connector, browser)
    assert mcp_status(connector.mcp_url, tokens["access_token"]) == 200
    connection = Connection.objects.select_related("api_key").get()
    revoke_on_the_keys_page(browser, connection.api_key.key_id)
    assert mcp_status(connector.mcp_url, tokens["access_token"]) == 401
    assert not AccessToken.objects.filter(user__isnull=False).exists()
    # The same client approved again: a new connection row, and the old tokens stay dead.
    params = redirect_params(consent(browser, connector.authorize_url()))
    fresh = connector.exchange(params["code"]).json()
    assert mcp_status(connector.mcp_url, fresh["access_token"]) == 200
    assert mcp_status(connector.mcp_url, tokens["access_token"]) == 401
    reused = connector.refresh(tokens["refresh_token"])
    assert (reused.status_code, reused.json()["error"]) == (400, "invalid_grant")


def test_tokens_are_bound_to_the_connection_row_they_were_issued_under(registered):
    connector, browser = registered
    tokens = connect(connector, browser)
    connection = Connection.objects.get()
    # A token older than its connection row (issued under an earlier one) is refused.
    Connection.objects.filter(pk=connection.pk).update(
        created_at=timezone.now() + timedelta(minutes=1)
    )
    assert mcp_status(connector.mcp_url, tokens["access_token"]) == 401
    assert connector.refresh(tokens["refresh_token"]).status_code == 400


def test_a_reused_code_revokes_the_tokens_issued_from_it(registered):
    connector, browser = registered
    connector_tokens = connect(connector, browser)  # approve once
    params = redirect_params(consent(browser, connector.authorize_url()))
    verifier = connector.verifier
    first = connector.exchange(params["code"], verifier)
    assert first.status_code == 200
    tokens = first.json()
    assert mcp_status(connector.mcp_url, tokens["access_token"]) == 200
    again = connector.exchange(params["code"], verifier)
    assert (again.status_code, again.json()["error"]) == (400, "invalid_grant")
    assert mcp_status(connector.mcp_url, tokens["access_token"]) == 401
    assert connector.refresh(tokens["refresh_token"]).status_code == 400
    assert connector_tokens  # issued earlier, from another code


def test_authorization_codes_are_stored_hashed(registered):
    connector, browser = registered
    connect(connector, browser)
    params = redirect_params(consent(browser, connector.authorize_url()))
    assert Grant.objects.exists()
    assert not Grant.objects.filter(code=params["code"]).exists()
    assert all(code.startswith("sha256:") for code in Grant.objects.values_list("code", flat=True))


@pytest.mark.parametrize("challenge", ["abc", "a" * 42, "a" * 129, "a" * 42 + "!"])
def test_a_code_challenge_outside_43_to_128_characters_is_refused(registered, challenge):
    connector, browser = registered
    connect(connector, browser)
    params = redirect_params(browser.get(connector.authorize_url(code_challenge=challenge)))
    assert params["error"] == "invalid_request"
    assert "43 to 128" in params["error_description"]


@pytest.mark.parametrize(
    "overrides",
    [{"code_challenge_method": "plain"}, {"resource": "https://other.example/mcp"}],
)
def test_errors_for_a_client_nobody_approved_are_shown_here(registered, overrides):
    connector, browser = registered
    page = browser.get(connector.authorize_url(**overrides))
    assert page.status_code == 400
    assert "location" not in page.headers
    assert "This connection cannot be made" in page.text
    denied = consent(browser, connector.authorize_url(), approve=False)
    assert denied.status_code in (400, 403) and "location" not in denied.headers


# ---------------------------------------------------------------- registration


def test_registration_is_limited_per_address(registered):
    connector, _browser = registered
    with override_settings(OAUTH_REGISTRATIONS_PER_ADDRESS=3):
        from django.core.cache import cache

        cache.clear()
        codes = [connector.register().status_code for _ in range(4)]
    assert codes == [201, 201, 201, 429]


def test_a_public_client_gets_no_secret_to_hash(registered):
    connector, _browser = registered
    application = Application.objects.get(client_id=connector.client_id)
    assert application.client_type == "public"
    assert application.client_secret == ""


def test_unapproved_registrations_are_purged_within_minutes(registered):
    connector, _browser = registered
    old = connector.client_id
    Application.objects.filter(client_id=old).update(created=timezone.now() - timedelta(minutes=16))
    assert connector.register().status_code == 201
    assert not Application.objects.filter(client_id=old).exists()


def test_registration_access_tokens_expire(registered):
    connector, _browser = registered
    token = AccessToken.objects.get(application__client_id=connector.client_id, user=None)
    assert token.expires <= timezone.now() + timedelta(hours=1, minutes=1)


def test_a_redirect_uri_with_whitespace_is_refused(registered):
    connector, _browser = registered
    response = connector.register(redirect_uris=["https://good.example/cb http://evil.example/cb"])
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_redirect_uri"


@pytest.mark.parametrize(
    "change",
    [
        {"redirect_uris": ["http://evil.example/cb"]},
        {"redirect_uris": ["https://a.example/cb http://evil.example/cb"]},
        {"grant_types": ["client_credentials"]},
    ],
)
def test_rfc7592_updates_follow_the_registration_rules(live_server_url, user, change):  # noqa: F811
    connector = Connector(live_server_url)
    connector.discover()
    registered = connector.register().json()
    body = {
        "client_name": "Test connector",
        "redirect_uris": [connector.redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        **change,
    }
    response = httpx2.put(
        registered["registration_client_uri"],
        json=body,
        headers={"Authorization": f"Bearer {registered['registration_access_token']}"},
    )
    assert response.status_code == 400, response.text
    application = Application.objects.get(client_id=connector.client_id)
    assert application.redirect_uris == connector.redirect_uri
    assert application.authorization_grant_type == "authorization-code"


def test_the_keys_page_shows_the_host_the_user_approved(registered):
    connector, browser = registered
    connect(connector, browser)
    Application.objects.filter(client_id=connector.client_id).update(
        redirect_uris="https://elsewhere.example/cb"
    )
    page = browser.get("/account/api-keys/").text
    assert "127.0.0.1:33418" in page and "elsewhere.example" not in page
