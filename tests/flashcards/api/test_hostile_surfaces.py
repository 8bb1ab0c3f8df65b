"""Issue #21, through the served application: GET /mcp opens no event stream, /mcp refusals
are JSON-RPC, and X-Forwarded-Proto counts only from FORWARDED_ALLOW_IPS."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest


def _request(base: str, method: str, path: str, headers=None, body=None, timeout=5.0):
    parts = urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        headers = {k.lower(): v for k, v in response.getheaders()}
        if headers.get("content-type", "").startswith("text/event-stream"):
            return response.status, headers, b""  # an open stream: never read to its end
        return response.status, headers, response.read()
    finally:
        connection.close()


def test_get_mcp_with_a_valid_key_is_405_not_an_endless_stream(live_server_url, api_key):
    headers = {
        "Authorization": f"Bearer {api_key.plaintext}",
        "Accept": "text/event-stream",
    }
    status, response_headers, body = _request(live_server_url, "GET", "/mcp", headers)
    assert not response_headers["content-type"].startswith("text/event-stream")
    assert status == 405
    assert response_headers["content-type"].startswith("application/json")
    assert json.loads(body)["error"]["code"] == -32000
    assert response_headers["allow"] == "POST"


def test_get_mcp_without_a_key_is_still_the_401_challenge(live_server_url):
    status, headers, _ = _request(live_server_url, "GET", "/mcp")
    assert status == 401 and "www-authenticate" in headers


@pytest.mark.parametrize("content_type", [None, "text/plain"])
def test_mcp_without_a_json_content_type_is_a_json_rpc_error(
    live_server_url, api_key, content_type
):
    headers = {
        "Authorization": f"Bearer {api_key.plaintext}",
        "Accept": "application/json, text/event-stream",
    }
    if content_type:
        headers["Content-Type"] = content_type
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    status, response_headers, raw = _request(live_server_url, "POST", "/mcp", headers, body)
    assert 400 <= status < 500
    assert response_headers["content-type"].startswith("application/json")
    error = json.loads(raw)
    assert error["jsonrpc"] == "2.0" and error["error"]["code"] == -32600
    assert "Content-Type" in error["error"]["message"]


def test_a_direct_client_cannot_choose_the_scheme(monkeypatch, transactional_db):
    from tests.flashcards.api.conftest import _live_server

    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "10.255.255.1")
    server = _live_server(proxy_headers=False)
    base = next(server)
    try:
        status, _, body = _request(
            base,
            "GET",
            "/.well-known/oauth-protected-resource/mcp",
            {"X-Forwarded-Proto": "https"},
        )
        assert status == 200
        assert json.loads(body)["resource"].startswith("http://"), body
    finally:
        server.close()


def test_a_trusted_proxy_still_sets_the_scheme(transactional_db, monkeypatch):
    from tests.flashcards.api.conftest import _live_server

    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "127.0.0.1")
    server = _live_server(proxy_headers=False)
    base = next(server)
    try:
        status, _, body = _request(
            base,
            "GET",
            "/.well-known/oauth-protected-resource/mcp",
            {"X-Forwarded-Proto": "https"},
        )
        assert status == 200
        assert json.loads(body)["resource"].startswith("https://"), body
    finally:
        server.close()
