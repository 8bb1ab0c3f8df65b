"""A connector's side of the MCP authorization flow, over real HTTP against the served app: what
claude.ai or ChatGPT does, step by step, so tests can stop at any step or change one."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from dataclasses import dataclass, field
from html import unescape
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2

PASSWORD = "correct horse battery staple"
CALLBACK = "http://127.0.0.1:33418/callback"
_INPUT = re.compile(r"<input[^>]*>")
_ATTR = re.compile(r'(\w+)="([^"]*)"')


def browser_user(settings, username: str = "learner"):
    """A user who can sign in to the live server's pages (plain http on loopback: the session and
    CSRF cookies must travel without TLS), with a Personal workspace; returns (user, Personal)."""
    from flashcards import services
    from tests.factories import UserFactory

    settings.SESSION_COOKIE_SECURE = False
    settings.CSRF_COOKIE_SECURE = False
    user = UserFactory(username=username)
    user.set_password(PASSWORD)
    user.save()
    return user, services.create_workspace(user, "Personal")


def form_fields(html: str) -> dict[str, str]:
    """Named <input> values of a page (hidden fields and the CSRF token)."""
    fields = {}
    for tag in _INPUT.findall(html):
        attrs = dict(_ATTR.findall(tag))
        if "name" in attrs:
            fields[attrs["name"]] = unescape(attrs.get("value", ""))
    return fields


def sign_in(base_url: str, username: str, password: str = PASSWORD) -> httpx2.Client:
    """A browser session: the product's own login form, its CSRF cookie and session cookie."""
    browser = httpx2.Client(base_url=base_url)
    page = browser.get("/api-auth/login/")
    assert page.status_code == 200
    fields = form_fields(page.text)
    response = browser.post(
        "/api-auth/login/",
        data={
            "csrfmiddlewaretoken": fields["csrfmiddlewaretoken"],
            "username": username,
            "password": password,
            "next": "/account/api-keys/",
        },
    )
    assert response.status_code == 302, response.text
    return browser


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
    return verifier, challenge.decode()


@dataclass
class Connector:
    base_url: str
    redirect_uri: str = CALLBACK
    name: str = "Test connector"
    http: httpx2.Client = field(default_factory=httpx2.Client)
    metadata: dict[str, Any] = field(default_factory=dict)
    client_id: str = ""
    verifier: str = ""
    state: str = ""

    @property
    def mcp_url(self) -> str:
        return f"{self.base_url}/mcp"

    def discover(self) -> dict[str, Any]:
        """From a 401 of /mcp to both metadata documents, as the MCP authorization spec says."""
        refused = self.http.post(
            self.mcp_url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream"},
        )
        assert refused.status_code == 401
        challenge = refused.headers["www-authenticate"]
        match = re.search(r'resource_metadata="([^"]+)"', challenge)
        assert challenge.startswith("Bearer ") and match, challenge
        resource = self.http.get(match.group(1))
        assert resource.status_code == 200
        issuer = resource.json()["authorization_servers"][0]
        server = self.http.get(f"{issuer}/.well-known/oauth-authorization-server")
        assert server.status_code == 200
        self.metadata = {"resource": resource.json(), "server": server.json()}
        return self.metadata

    def register(self, **overrides: Any) -> httpx2.Response:
        body = {
            "client_name": self.name,
            "redirect_uris": [self.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            **overrides,
        }
        response = self.http.post(self.metadata["server"]["registration_endpoint"], json=body)
        if response.status_code == 201:
            self.client_id = response.json()["client_id"]
        return response

    def authorize_url(self, **overrides: str) -> str:
        self.verifier, challenge = pkce()
        self.state = secrets.token_urlsafe(16)
        params = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "state": self.state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": self.metadata["resource"]["resource"],
            "scope": "mcp",
            **overrides,
        }
        return f"{self.metadata['server']['authorization_endpoint']}?{urlencode(params)}"

    def token(self, **data: str) -> httpx2.Response:
        return self.http.post(
            self.metadata["server"]["token_endpoint"], data={"client_id": self.client_id, **data}
        )

    def exchange(self, code: str, verifier: str | None = None) -> httpx2.Response:
        return self.token(
            grant_type="authorization_code",
            code=code,
            redirect_uri=self.redirect_uri,
            code_verifier=verifier or self.verifier,
            resource=self.metadata["resource"]["resource"],
        )

    def refresh(self, refresh_token: str) -> httpx2.Response:
        return self.token(grant_type="refresh_token", refresh_token=refresh_token)

    def revoke(self, token: str) -> httpx2.Response:
        return self.http.post(
            self.metadata["server"]["revocation_endpoint"],
            data={"client_id": self.client_id, "token": token},
        )


def consent(
    browser: httpx2.Client, authorize_url: str, *, approve: bool = True, **choices: str
) -> httpx2.Response:
    """The signed-in user opens the consent page and approves (or denies); the answer is the
    authorization server's redirect back to the client."""
    page = browser.get(authorize_url)
    assert page.status_code == 200, page.text
    fields = form_fields(page.text)
    fields.pop("allow", None)
    fields.update(choices)
    if "workspace" not in fields:
        fields["workspace"] = re.search(r'<option value="([^"]+)"', page.text).group(1)
    if approve:
        fields["allow"] = "Authorize"
    return browser.post(urlsplit(authorize_url).path, data=fields)


def redirect_params(response: httpx2.Response) -> dict[str, str]:
    assert response.status_code == 302, response.text
    location = response.headers["location"]
    return {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}


def connect(connector: Connector, browser: httpx2.Client, **choices: str) -> dict[str, Any]:
    """Discovery through token exchange; returns the token response."""
    connector.discover()
    assert connector.register().status_code == 201
    params = redirect_params(consent(browser, connector.authorize_url(), **choices))
    response = connector.exchange(params["code"])
    assert response.status_code == 200, response.text
    return response.json()
