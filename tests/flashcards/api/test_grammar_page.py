from __future__ import annotations

import html

import pytest
from django.test import Client

from dsl.schema import RESOURCES
from tests.flashcards.api.helpers import assert_envelope_ok

pytestmark = pytest.mark.django_db

URL = "/v1/agent/grammar"


def test_the_page_is_html_without_auth_and_lists_the_whole_registry():
    # A browser's Accept; API clients get the JSON envelope every /v1/agent/* route answers with.
    browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    response = Client(HTTP_AUTHORIZATION="ApiKey wrong").get(URL, HTTP_ACCEPT=browser)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    page = html.unescape(response.content.decode())
    for resource in RESOURCES:
        assert f'id="{resource.name}"' in page
        for column in resource.columns:
            assert f"<code>{column.name}</code>" in page, (resource.name, column.name)
    for operator in ("OVERLAP", "CONTAINS", "ILIKE", "BETWEEN", "MATCH('text')", "= ANY(arr)"):
        assert operator in page
    assert "SELECT * FROM cards WHERE tags OVERLAP ('english')" in page
    assert "front_text is the prompt only" in page


@pytest.mark.parametrize(
    ("query", "accept"),
    [("?format=json", "text/html"), ("", "application/json"), ("", None), ("", "*/*")],
)
def test_the_reference_is_also_json(query, accept):
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    response = Client().get(URL + query, **headers)
    data = assert_envelope_ok(response)
    assert [r["table_name"] for r in data["resources"]] == [r.name for r in RESOURCES]
    cards = next(r for r in data["resources"] if r["table_name"] == "cards")
    registry = next(r for r in RESOURCES if r.name == "cards")
    assert cards["columns"] == [c.describe_row() for c in registry.columns]
    assert cards["default_order"] == "created_at DESC, card_id ASC"
    assert data["limits"]["rows_per_select"] == 100
    assert any("OVERLAP" in op["form"] for op in data["operators"])


def test_limits_on_the_page_follow_the_settings(settings):
    settings.FLASHCARDS_DSL = {"MAX_ROWS_PER_SELECT": 50}
    data = assert_envelope_ok(Client().get(URL + "?format=json"))
    assert data["limits"]["rows_per_select"] == 50
    assert any("LIMIT defaults to 50" in rule for rule in data["rules"])


def test_other_methods_get_a_405_envelope():
    response = Client().post(URL, {})
    body = response.json()
    assert response.status_code == 405
    assert body["ok"] is False
    assert body["error"]["code"] == "METHOD_NOT_ALLOWED"
