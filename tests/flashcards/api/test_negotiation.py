"""No 500 from content negotiation (issue 11): over every route of the URL resolver, an unknown
``?format=`` and an ``Accept`` no renderer satisfies. Under /v1/ the answer is a 404 / 406
envelope with advice about the format; elsewhere (admin, console, login) anything but a 5xx."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

pytestmark = pytest.mark.django_db

SAMPLE = str(uuid.UUID(int=7))
ROUTE_PARAM = re.compile(r"<(?:\w+:)?\w+>")
REGEX_GROUP = re.compile(r"\(\?P<\w+>[^)]*\)")


def _concrete(pattern: object) -> str:
    text = str(pattern)
    if text.startswith("^") or text.endswith("$"):
        text = REGEX_GROUP.sub(SAMPLE, text).lstrip("^").rstrip("$").replace("\\", "")
        text = re.sub(r"\?$|/\?", "/", text)
        return text.replace("//", "/")
    return ROUTE_PARAM.sub(SAMPLE, text)


def every_path(patterns: list | None = None, prefix: str = "/") -> Iterator[str]:
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(entry, URLResolver):
            yield from every_path(entry.url_patterns, prefix + _concrete(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + _concrete(entry.pattern)


PATHS = sorted(set(every_path()))
API_PATHS = [p for p in PATHS if p.startswith("/v1/")]


def test_the_walk_sees_every_surface():
    for expected in ("/", "/console/", "/v1/", "/v1/agent/sql", "/v1/docs", "/v1/openapi.json"):
        assert expected in PATHS
    assert f"/v1/workspaces/{SAMPLE}/sync/push" in PATHS
    assert any(p.startswith("/admin/") for p in PATHS)


def _assert_format_advice(response, status: int) -> None:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["ok"] is False
    assert "request body" not in body["instructions"]
    if status == 404:
        assert body["error"]["details"]["reason"] == "unknown_format"
        assert "format" in body["instructions"]
    else:
        assert body["error"]["details"]["reason"] == "not_acceptable"
        assert "Accept" in body["instructions"]


@pytest.mark.parametrize("path", API_PATHS)
def test_an_unknown_format_is_a_404_envelope_on_every_api_route(path):
    response = Client(raise_request_exception=False).get(path + "?format=yaml")
    _assert_format_advice(response, 404)


@pytest.mark.parametrize("path", [p for p in API_PATHS if p != "/v1/agent/grammar"])
def test_negotiation_comes_before_the_method_check_on_drf_routes(path):
    # The grammar page is GET-only and says so first (a 405 envelope).
    response = Client(raise_request_exception=False).post(path + "?format=yaml")
    _assert_format_advice(response, 404)


@pytest.mark.parametrize("path", [p for p in API_PATHS if p != "/v1/agent/grammar"])
def test_an_unsatisfiable_accept_is_a_406_envelope_on_every_drf_route(path):
    response = Client(raise_request_exception=False).get(path, HTTP_ACCEPT="application/yaml")
    _assert_format_advice(response, 406)


def test_the_grammar_page_falls_back_to_json_for_any_accept():
    # Not a DRF view: it answers JSON unless the client names text/html (docs/decisions.md).
    response = Client().get("/v1/agent/grammar", HTTP_ACCEPT="application/yaml")
    assert response.status_code == 200 and response.json()["ok"] is True


@pytest.mark.parametrize("path", PATHS)
def test_no_route_answers_a_5xx_to_odd_formats(path, admin_user):
    anonymous = Client(raise_request_exception=False)
    staff = Client(raise_request_exception=False)
    staff.force_login(admin_user)
    for client in (anonymous, staff):
        for query, accept in (("?format=yaml", "*/*"), ("?format=xml", "text/csv"), ("", "x/y")):
            response = client.get(path + query, HTTP_ACCEPT=accept)
            assert response.status_code < 500, (path, query, accept, response.status_code)
