"""Requests refused by their shape answer 400, never a 500 or Django's HTML page under /v1/: a Host
not in ALLOWED_HOSTS, JSON nested 60,000 deep (the OAuth registration endpoint included), 1,200
url-encoded fields on the import route (DATA_UPLOAD_MAX_NUMBER_FIELDS)."""

from __future__ import annotations

import json

import pytest

from tests.reliability.helpers import envelope, refused

pytestmark = pytest.mark.django_db


def test_a_disallowed_host_gets_the_envelope_under_v1(client):
    response = client.get("/v1/", HTTP_HOST="evil.example")
    error = refused(response, 400, "REQUEST_INVALID", "disallowed_host")
    assert "evil.example" not in json.dumps(envelope(response))
    assert "Host" in error["message"]


def test_a_disallowed_host_elsewhere_is_still_a_400(client):
    assert client.get("/console/", HTTP_HOST="evil.example").status_code == 400


def test_deep_json_to_the_oauth_registration_endpoint_is_a_400(client):
    body = "[" * 60_000 + "]" * 60_000
    response = client.generic("POST", "/o/register/", body, content_type="application/json")
    assert response.status_code == 400, response.content[:500]
    assert response["Content-Type"].startswith("application/json")


def test_deep_json_to_the_sql_endpoint_is_a_400(client, api_key):
    key = api_key.plaintext
    body = '{"sql": ' + "[" * 60_000 + "]" * 60_000 + "}"
    response = client.generic(
        "POST",
        "/v1/agent/sql",
        body,
        content_type="application/json",
        headers={"Authorization": f"ApiKey {key}"},
    )
    assert response.status_code in (400, 413), response.content[:500]
    envelope(response)


def test_too_many_url_encoded_fields_on_the_import_route_is_a_400(client, api_key, workspace):
    key = api_key.plaintext
    body = "&".join(f"f{n}=x" for n in range(1_200))
    response = client.generic(
        "POST",
        f"/v1/workspaces/{workspace.pk}/imports",
        body,
        content_type="application/x-www-form-urlencoded",
        headers={"Authorization": f"ApiKey {key}"},
    )
    refused(response, 400, "REQUEST_INVALID", "too_many_fields")
