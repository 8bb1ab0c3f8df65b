"""CORS over real HTTP (issue 11): off by default; with CORS_ALLOWED_ORIGINS, preflights from an
allowed origin get 200 and the headers before any authentication, on /v1/ and /mcp alike; other
origins get no Access-Control-Allow-Origin."""

from __future__ import annotations

import httpx2
import pytest

from tests.flashcards.api.conftest import live_server_url  # noqa: F401  (fixture)

ALLOWED = "https://app.example.com"
OTHER = "https://evil.example.net"
PATHS = ("/v1/agent/sql", "/v1/", "/mcp")


def preflight(base: str, path: str, origin: str, headers: str = "authorization, content-type"):
    return httpx2.request(
        "OPTIONS",
        base + path,
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": headers,
        },
    )


@pytest.fixture
def cors_on(settings):
    settings.CORS_ALLOWED_ORIGINS = [ALLOWED]


@pytest.mark.parametrize("path", PATHS)
def test_off_by_default_no_cors_headers(live_server_url, path):  # noqa: F811
    response = preflight(live_server_url, path, ALLOWED)
    assert "access-control-allow-origin" not in response.headers
    # Nothing answered the preflight for CORS: it reached the route like any OPTIONS request
    # (the discovery document needs no key, the others do).
    assert response.status_code == (200 if path == "/v1/" else 401)


@pytest.mark.parametrize("path", PATHS)
def test_a_preflight_from_an_allowed_origin_is_answered_before_auth(
    cors_on,
    live_server_url,  # noqa: F811
    path,
):
    response = preflight(
        live_server_url,
        path,
        ALLOWED,
        "authorization, content-type, idempotency-key, mcp-session-id, mcp-protocol-version",
    )
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == ALLOWED
    allowed = {h.strip() for h in response.headers["access-control-allow-headers"].split(",")}
    assert {
        "authorization",
        "content-type",
        "idempotency-key",
        "x-request-id",
        "mcp-session-id",
        "mcp-protocol-version",
    } <= allowed
    assert "POST" in response.headers["access-control-allow-methods"]
    assert "access-control-allow-credentials" not in response.headers


@pytest.mark.parametrize("path", PATHS)
def test_another_origin_gets_no_allow_origin(cors_on, live_server_url, path):  # noqa: F811
    response = preflight(live_server_url, path, OTHER)
    assert "access-control-allow-origin" not in response.headers


def test_answers_expose_the_api_headers(cors_on, live_server_url):  # noqa: F811
    response = httpx2.post(
        f"{live_server_url}/v1/agent/sql", json={"sql": "SHOW TABLES"}, headers={"Origin": ALLOWED}
    )
    assert response.status_code == 401  # no key: the failure is still readable by the page
    assert response.headers["access-control-allow-origin"] == ALLOWED
    exposed = {h.strip() for h in response.headers["access-control-expose-headers"].split(",")}
    assert {"X-Request-Id", "Retry-After", "Idempotent-Replayed"} <= exposed
    assert response.headers["x-request-id"]


def test_mcp_answers_carry_the_headers_too(cors_on, live_server_url, api_key):  # noqa: F811
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {
        "Origin": ALLOWED,
        "Authorization": f"Bearer {api_key.plaintext}",
        "Accept": "application/json, text/event-stream",
    }
    response = httpx2.post(f"{live_server_url}/mcp", json=ping, headers=headers)
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == ALLOWED
    assert "Mcp-Session-Id" in response.headers["access-control-expose-headers"]
    other = httpx2.post(f"{live_server_url}/mcp", json=ping, headers={**headers, "Origin": OTHER})
    assert other.status_code == 200 and "access-control-allow-origin" not in other.headers
