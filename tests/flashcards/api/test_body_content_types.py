"""Bodies sent without `Content-Type: application/json` are read as JSON anyway; a body that is
not JSON is a 400 REQUEST_INVALID envelope, never a 415 or a 500."""

import json

import pytest


@pytest.mark.django_db
@pytest.mark.parametrize("content_type", ["text/plain", "application/octet-stream", ""])
def test_json_body_without_json_content_type_runs(api, content_type):
    response = api.generic(
        "POST", "/v1/agent/sql", json.dumps({"sql": "SHOW TABLES"}), content_type=content_type
    )
    assert response.status_code == 200, response.content
    assert response.json()["data"]["statementType"] == "show_tables"


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/v1/agent/sql", "/v1/agent/reviews", "/v1/agent/workspaces"])
def test_non_json_body_is_request_invalid(api, path):
    response = api.generic("POST", path, "sql=SHOW TABLES", content_type="text/plain")
    assert response.status_code == 400
    body = response.json()
    assert body["ok"] is False
    assert body["error"]["code"] == "REQUEST_INVALID"
