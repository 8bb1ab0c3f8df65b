import pytest


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/v1/agent/nope", "/v1/agent/sql/explain", "/v1/whatever"])
def test_unknown_api_path_is_an_envelope(client, path):
    response = client.get(path)
    assert response.status_code == 404
    body = response.json()
    assert body["ok"] is False
    assert body["error"]["code"] == "NOT_FOUND"
    assert body["docs"]["discoveryUrl"].endswith("/v1/")
    assert response["X-Request-Id"] == body["requestId"]


@pytest.mark.django_db
def test_unknown_page_outside_the_api_stays_html(client):
    response = client.get("/definitely-not-here")
    assert response.status_code == 404
    assert not response["Content-Type"].startswith("application/json")
