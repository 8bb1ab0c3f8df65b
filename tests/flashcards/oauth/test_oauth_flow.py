"""The MCP authorization flow end to end, the way a connector drives it: a real HTTP client against
the served app (uvicorn), the official `mcp` client for the tool calls. Nothing is mocked."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from dsl.models import QueryLog
from flashcards import services
from flashcards.models import ApiKey
from flashcards.oauth.models import Connection
from tests.factories import make_card
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
def learner(transactional_db, settings):
    user, personal = browser_user(settings)
    spanish = services.create_workspace(user, "Spanish")
    make_card(personal, front_text="personal card")
    make_card(spanish, front_text="hola")
    return user, personal, spanish


def mcp_calls(mcp_url: str, access_token: str, *calls: tuple[str, dict[str, Any]]) -> Any:
    """tools/list, then each call, through the official client with the token as Bearer."""

    async def main() -> Any:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {access_token}"})
        async with http, Client(streamable_http_client(mcp_url, http_client=http)) as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            results = [await client.call_tool(name, arguments) for name, arguments in calls]
            return tools, [result.structured_content for result in results]

    return asyncio.run(main())


def tools_list(mcp_url: str, access_token: str) -> httpx2.Response:
    return httpx2.post(
        mcp_url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={
            "Authorization": f"Bearer {access_token}",
            "Accept": "application/json, text/event-stream",
        },
    )


def test_a_connector_discovers_registers_authorizes_calls_refreshes_and_revokes(
    live_server_url,  # noqa: F811
    learner,
):
    user, _personal, spanish = learner
    connector = Connector(live_server_url, name="Claude")
    metadata = connector.discover()
    resource, server = metadata["resource"], metadata["server"]
    assert resource["resource"] == f"{live_server_url}/mcp"
    assert resource["authorization_servers"] == [live_server_url]
    assert resource["scopes_supported"] == ["mcp"]
    assert server["issuer"] == live_server_url
    assert server["authorization_endpoint"] == f"{live_server_url}/o/authorize/"
    assert server["token_endpoint"] == f"{live_server_url}/o/token/"
    assert server["registration_endpoint"] == f"{live_server_url}/o/register/"
    assert server["revocation_endpoint"] == f"{live_server_url}/o/revoke_token/"
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert server["response_types_supported"] == ["code"]
    assert set(server["grant_types_supported"]) == {"authorization_code", "refresh_token"}
    assert "none" in server["token_endpoint_auth_methods_supported"]
    # The root form describes the same resource.
    root = httpx2.get(f"{live_server_url}/.well-known/oauth-protected-resource").json()
    assert root == resource

    registered = connector.register()
    assert registered.status_code == 201, registered.text
    assert registered.json()["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in registered.json()

    browser = sign_in(live_server_url, user.username)
    page = browser.get(connector.authorize_url())
    assert page.status_code == 200
    assert "Claude" in page.text and "127.0.0.1:33418" in page.text
    assert "Spanish" in page.text and "Personal" in page.text

    answer = consent(
        browser, connector.authorize_url(), workspace=str(spanish.pk), label="Claude web"
    )
    params = redirect_params(answer)
    assert answer.headers["location"].startswith(connector.redirect_uri + "?")
    assert params["state"] == connector.state
    assert params["iss"] == live_server_url

    tokens = connector.exchange(params["code"])
    assert tokens.status_code == 200, tokens.text
    tokens = tokens.json()
    assert tokens["token_type"] == "Bearer" and tokens["scope"] == "mcp"
    assert tokens["refresh_token"] and tokens["expires_in"] > 0

    tools, [body] = mcp_calls(
        connector.mcp_url, tokens["access_token"], ("sql", {"sql": "SELECT front_text FROM cards"})
    )
    assert "sql" in tools and "sql_query" in tools
    assert body["ok"] is True and body["data"]["rows"] == [{"front_text": "hola"}]

    # The grant is an agent connection: an API-key row with its label, workspace, last use.
    connection = Connection.objects.select_related("api_key").get()
    key = connection.api_key
    assert (key.user, key.label, key.selected_workspace) == (user, "Claude web", spanish)
    assert key.last_used_at is not None
    log = QueryLog.objects.get(request_id=body["requestId"])
    assert (log.surface, log.api_key_id, log.workspace_id) == ("mcp", key.pk, spanish.pk)
    keys_page = browser.get("/account/api-keys/")
    assert "Claude web" in keys_page.text and "OAuth" in keys_page.text

    # Tokens are stored hashed: the database holds no copy of either.
    from oauth2_provider.models import AccessToken, RefreshToken

    assert not AccessToken.objects.filter(token=tokens["access_token"]).exists()
    assert not RefreshToken.objects.filter(token=tokens["refresh_token"]).exists()

    refreshed = connector.refresh(tokens["refresh_token"])
    assert refreshed.status_code == 200, refreshed.text
    refreshed = refreshed.json()
    assert refreshed["refresh_token"] != tokens["refresh_token"]  # rotated
    assert tools_list(connector.mcp_url, refreshed["access_token"]).status_code == 200
    reused = connector.refresh(tokens["refresh_token"])
    assert (reused.status_code, reused.json()["error"]) == (400, "invalid_grant")

    assert connector.revoke(refreshed["access_token"]).status_code == 200
    refused = tools_list(connector.mcp_url, refreshed["access_token"])
    assert refused.status_code == 401
    assert 'error="invalid_token"' in refused.headers["www-authenticate"]
    assert "resource_metadata=" in refused.headers["www-authenticate"]
    assert refused.json()["error"]["code"] == "AUTH_UNAUTHORIZED"


def test_the_sdks_own_oauth_client_connects_from_the_bare_url(
    live_server_url,  # noqa: F811
    learner,
):
    """mcp.client.auth.OAuthClientProvider, given only /mcp, discovers, registers, sends the user
    to the consent page (which this test approves as the signed-in user) and calls `sql`."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import (
        AuthorizationCodeResult,
        OAuthClientInformationFull,
        OAuthClientMetadata,
        OAuthToken,
    )

    user, personal, _spanish = learner
    browser = sign_in(live_server_url, user.username)
    answers: list[dict[str, str]] = []

    class Memory:
        tokens: OAuthToken | None = None
        client: OAuthClientInformationFull | None = None

        async def get_tokens(self) -> OAuthToken | None:
            return self.tokens

        async def set_tokens(self, tokens: OAuthToken) -> None:
            self.tokens = tokens

        async def get_client_info(self) -> OAuthClientInformationFull | None:
            return self.client

        async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
            self.client = client_info

    async def redirect_handler(url: str) -> None:
        answer = await asyncio.to_thread(consent, browser, url, workspace=str(personal.pk))
        answers.append(redirect_params(answer))

    async def callback_handler() -> AuthorizationCodeResult:
        params = answers.pop()
        return AuthorizationCodeResult(
            code=params["code"], state=params["state"], iss=params["iss"]
        )

    storage = Memory()
    auth = OAuthClientProvider(
        server_url=f"{live_server_url}/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="SDK client",
            redirect_uris=["http://127.0.0.1:33419/callback"],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )

    async def main() -> Any:
        http = create_mcp_http_client(auth=auth)
        async with (
            http,
            Client(streamable_http_client(f"{live_server_url}/mcp", http_client=http)) as client,
        ):
            return await client.call_tool("sql", {"sql": "SELECT front_text FROM cards"})

    result = asyncio.run(main())
    assert result.structured_content["data"]["rows"] == [{"front_text": "personal card"}]
    assert storage.tokens is not None and storage.tokens.refresh_token
    connection = Connection.objects.select_related("api_key").get()
    assert connection.application.name == "SDK client"
    assert connection.api_key.selected_workspace == personal


def test_api_keys_keep_working_beside_oauth(live_server_url, learner):  # noqa: F811
    user, personal, _spanish = learner
    _key, plaintext = services.create_api_key(user, "cli", workspace=personal)
    response = tools_list(f"{live_server_url}/mcp", plaintext)
    assert response.status_code == 200
    rest = httpx2.get(
        f"{live_server_url}/v1/agent/me", headers={"Authorization": f"ApiKey {plaintext}"}
    )
    assert rest.status_code == 200
    assert ApiKey.objects.filter(oauth_connection__isnull=True).count() == 1


def test_every_401_from_mcp_names_the_resource_metadata(live_server_url, learner):  # noqa: F811
    for header in (None, "Bearer fca_bad", "Basic abc", "Bearer not-a-token"):
        headers = {"Accept": "application/json, text/event-stream"}
        if header:
            headers["Authorization"] = header
        response = httpx2.post(f"{live_server_url}/mcp", json={}, headers=headers)
        assert response.status_code == 401, header
        challenge = response.headers["www-authenticate"]
        assert re.fullmatch(
            r'Bearer (error="invalid_token",error_description="[^"]*",)?'
            rf'resource_metadata="{live_server_url}/.well-known/oauth-protected-resource/mcp"',
            challenge,
        ), challenge
        assert response.json()["ok"] is False


def test_a_connection_has_an_api_keys_rate_limit(live_server_url, learner, settings):  # noqa: F811
    from django.core.cache import cache

    user, _personal, _spanish = learner
    tokens = connect(Connector(live_server_url), sign_in(live_server_url, user.username))
    settings.AGENT_RATE_LIMIT = 2
    cache.clear()
    try:
        _tools, bodies = mcp_calls(
            f"{live_server_url}/mcp",
            tokens["access_token"],
            *[("list_workspaces", {})] * 3,
        )
    finally:
        cache.clear()
    assert [b["ok"] for b in bodies] == [True, True, False]
    assert bodies[2]["error"]["code"] == "RATE_LIMITED"
