"""Every way the authorization flow can be refused, each with its documented OAuth error (RFC 6749
§4.1.2.1 / §5.2, RFC 6750 §3.1, RFC 7591 §3.2.2, RFC 8707 §2) and never a 500."""

from __future__ import annotations

from datetime import timedelta

import httpx2
import pytest
from django.test import override_settings
from django.utils import timezone
from oauth2_provider.models import AccessToken

from flashcards.oauth.models import Connection
from tests.flashcards.api.conftest import live_server_url  # noqa: F401  (fixture)
from tests.flashcards.oauth.connector import (
    Connector,
    browser_user,
    connect,
    consent,
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


def code_for(connector: Connector, browser: httpx2.Client) -> str:
    return redirect_params(consent(browser, connector.authorize_url()))["code"]


def mcp_status(url: str, token: str) -> httpx2.Response:
    return httpx2.post(
        url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
    )


def assert_oauth_error(response: httpx2.Response, status: int, error: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"] == error, response.text


def test_a_wrong_code_verifier_is_invalid_grant(registered):
    connector, browser = registered
    code = code_for(connector, browser)
    assert_oauth_error(connector.exchange(code, verifier="x" * 64), 400, "invalid_grant")


def test_a_code_works_once(registered):
    connector, browser = registered
    code = code_for(connector, browser)
    assert connector.exchange(code).status_code == 200
    assert_oauth_error(connector.exchange(code), 400, "invalid_grant")


def test_a_plain_or_missing_pkce_challenge_is_refused(registered):
    connector, browser = registered
    connect(connector, browser)  # approved once: errors go back to the client (issue #21)
    for overrides in ({"code_challenge_method": "plain"}, {"code_challenge": ""}):
        page = browser.get(connector.authorize_url(**overrides))
        params = redirect_params(page)
        assert params["error"] == "invalid_request", params
        assert params["state"] == connector.state


def test_an_unregistered_redirect_uri_is_never_redirected_to(registered):
    connector, browser = registered
    page = browser.get(connector.authorize_url(redirect_uri="https://evil.example/callback"))
    assert page.status_code == 400
    assert "invalid_request" in page.text
    assert "location" not in page.headers


def test_registration_refuses_redirect_uris_other_than_https_or_loopback(registered):
    connector, _browser = registered
    for uri in ("http://evil.example/cb", "javascript:alert(1)", "ftp://x.example/cb", 42):
        assert_oauth_error(connector.register(redirect_uris=[uri]), 400, "invalid_redirect_uri")
    assert_oauth_error(connector.register(redirect_uris=[]), 400, "invalid_redirect_uri")
    for uri in ("https://claude.ai/api/mcp/auth_callback", "http://localhost:6274/cb"):
        assert connector.register(redirect_uris=[uri]).status_code == 201


def test_registration_refuses_other_grant_types(registered):
    connector, _browser = registered
    for grant in ("client_credentials", "password", "implicit"):
        response = connector.register(grant_types=[grant])
        assert_oauth_error(response, 400, "invalid_client_metadata")


def test_registrations_nobody_approved_are_capped(registered):
    connector, _browser = registered
    with override_settings(OAUTH_MAX_REGISTRATIONS=2):
        assert connector.register().status_code == 201
        refused = connector.register()
        assert_oauth_error(refused, 429, "temporarily_unavailable")
        assert refused.headers["retry-after"]


def test_a_denied_consent_redirects_with_access_denied(registered):
    connector, browser = registered
    connect(connector, browser)  # approved once: errors go back to the client (issue #21)
    before = Connection.objects.count()
    params = redirect_params(consent(browser, connector.authorize_url(), approve=False))
    assert params["error"] == "access_denied"
    assert params["state"] == connector.state
    assert Connection.objects.count() == before


def test_a_resource_other_than_mcp_is_invalid_target(registered):
    connector, browser = registered
    connect(connector, browser)  # approved once: errors go back to the client (issue #21)
    page = browser.get(connector.authorize_url(resource="https://other.example/mcp"))
    params = redirect_params(page)
    assert params["error"] == "invalid_target"
    code = code_for(connector, browser)
    response = connector.token(
        grant_type="authorization_code",
        code=code,
        redirect_uri=connector.redirect_uri,
        code_verifier=connector.verifier,
        resource="https://other.example/mcp",
    )
    assert_oauth_error(response, 400, "invalid_target")


def test_a_token_for_another_audience_is_refused(live_server_url, user):  # noqa: F811
    """Issued for http://localhost:<port>/mcp, presented at http://127.0.0.1:<port>/mcp."""
    other_host = live_server_url.replace("127.0.0.1", "localhost")
    connector = Connector(other_host)
    tokens = connect(connector, sign_in(other_host, user.username))
    assert mcp_status(f"{other_host}/mcp", tokens["access_token"]).status_code == 200
    refused = mcp_status(f"{live_server_url}/mcp", tokens["access_token"])
    assert refused.status_code == 401
    assert 'error="invalid_token"' in refused.headers["www-authenticate"]
    assert refused.json()["error"]["details"]["oauthError"] == "invalid_token"


def test_an_expired_token_is_refused(registered):
    connector, browser = registered
    tokens = connector.exchange(code_for(connector, browser)).json()
    AccessToken.objects.update(expires=timezone.now() - timedelta(seconds=1))
    refused = mcp_status(connector.mcp_url, tokens["access_token"])
    assert refused.status_code == 401
    assert 'error="invalid_token"' in refused.headers["www-authenticate"]
    assert "expired" in refused.json()["error"]["message"]
    # The refresh token still gets a new one.
    assert connector.refresh(tokens["refresh_token"]).status_code == 200


def test_revoking_the_connection_on_the_key_page_ends_its_tokens(registered):
    connector, browser = registered
    tokens = connector.exchange(code_for(connector, browser)).json()
    key = Connection.objects.get().api_key
    page = browser.get("/account/api-keys/")
    csrf = browser.cookies["csrftoken"]
    revoked = browser.post(
        f"/account/api-keys/{key.key_id}/revoke", data={"csrfmiddlewaretoken": csrf}
    )
    assert page.status_code == 200 and revoked.status_code == 302
    assert mcp_status(connector.mcp_url, tokens["access_token"]).status_code == 401
    assert_oauth_error(connector.refresh(tokens["refresh_token"]), 400, "invalid_grant")


def test_a_registration_token_is_no_mcp_token(registered):
    connector, _browser = registered
    response = connector.register()
    refused = mcp_status(connector.mcp_url, response.json()["registration_access_token"])
    assert refused.status_code in (401, 403)
    assert refused.json()["ok"] is False


def test_the_consent_page_asks_a_signed_out_user_to_sign_in_first(registered):
    connector, _browser = registered
    url = connector.authorize_url()
    response = httpx2.get(url)
    assert response.status_code == 302
    location = response.headers["location"]
    assert location.startswith("/api-auth/login/?next=/o/authorize/")


def test_the_client_name_is_shown_as_text(live_server_url, user):  # noqa: F811
    connector = Connector(live_server_url, name="<script>alert(1)</script>")
    connector.discover()
    assert connector.register().status_code == 201
    page = sign_in(live_server_url, user.username).get(connector.authorize_url())
    assert "<script>alert(1)</script>" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
