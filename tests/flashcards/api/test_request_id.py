"""Request ids: a configured trusted proxy's X-Request-Id is kept (envelope, response header,
query log), anyone else's is ignored, and every log line written during a request carries its id
(flashcards.http.request_id)."""

from __future__ import annotations

import io
import json
import logging
import logging.config
import urllib.request
import uuid

import pytest
from django.conf import settings
from django.db import OperationalError
from django.test import override_settings

from dsl.models import QueryLog

pytestmark = pytest.mark.django_db

EDGE_ID = "edge-7f3a9c1e.42"


def _sql(api, peer: str, **headers):
    return api.post(
        "/v1/agent/sql", {"sql": "SHOW TABLES"}, format="json", headers=headers, REMOTE_ADDR=peer
    )


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


@override_settings(TRUSTED_PROXY_IPS=["10.0.0.0/8"])
def test_a_trusted_proxys_request_id_is_kept_everywhere(api):
    response = _sql(api, "10.1.2.3", **{"X-Request-Id": EDGE_ID})
    assert response.status_code == 200
    assert response.json()["requestId"] == EDGE_ID
    assert response["X-Request-Id"] == EDGE_ID
    assert QueryLog.objects.get().request_id == EDGE_ID


@pytest.mark.parametrize(
    ("peer", "inbound"),
    [
        ("192.0.2.7", EDGE_ID),  # not a trusted proxy
        ("10.1.2.3", "has spaces in it"),
        ("10.1.2.3", "x" * 65),
        ("10.1.2.3", "line\\nbreak"),
    ],
)
@override_settings(TRUSTED_PROXY_IPS=["10.0.0.0/8"])
def test_other_request_ids_are_ignored(api, peer, inbound):
    response = _sql(api, peer, **{"X-Request-Id": inbound})
    request_id = response.json()["requestId"]
    assert request_id != inbound and _is_uuid(request_id)
    assert response["X-Request-Id"] == request_id


def test_without_trusted_proxies_no_inbound_id_is_kept(api):
    response = _sql(api, "127.0.0.1", **{"X-Request-Id": EDGE_ID})
    assert _is_uuid(response.json()["requestId"])


@override_settings(TRUSTED_PROXY_IPS=["10.0.0.1"], REQUEST_ID_HEADER="X-Edge-Request")
def test_the_header_name_is_configurable(api):
    response = _sql(api, "10.0.0.1", **{"X-Edge-Request": EDGE_ID})
    assert response.json()["requestId"] == EDGE_ID


def test_every_log_line_of_a_request_carries_its_id(api, monkeypatch):
    from flashcards.api import commands

    def outage(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(commands, "me", outage)
    stream = io.StringIO()
    config = settings.LOGGING
    handler = logging.StreamHandler(stream)
    handler.addFilter(logging.config.DictConfigurator(config).configure_filter(
        config["filters"]["request_id"]
    ))  # fmt: skip
    handler.setFormatter(logging.Formatter(config["formatters"]["line"]["format"]))
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        response = api.get("/v1/agent/me")
    finally:
        root.removeHandler(handler)
    assert response.status_code == 503
    request_id = response.json()["requestId"]
    lines = [line for line in stream.getvalue().splitlines() if line]
    assert lines and all(f"[{request_id}]" in line for line in lines), lines


def test_a_log_line_outside_a_request_says_so():
    from flashcards.http.request_id import RequestIdFilter

    record = logging.LogRecord("x", logging.WARNING, __file__, 1, "m", None, None)
    assert RequestIdFilter().filter(record) and record.request_id == "-"


def _get(url: str, headers: dict[str, str]) -> tuple[dict, str]:
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read()), response.headers["X-Request-Id"]


@override_settings(TRUSTED_PROXY_IPS=["127.0.0.1"])
def test_behind_a_forwarding_proxy_the_connections_own_peer_decides(served_url):
    """As `manage.py serve` runs it: the proxy on 127.0.0.1 forwards a client's address, and its
    request id is still recognised as the proxy's."""
    body, header = _get(
        f"{served_url}/v1/",
        {"X-Request-Id": EDGE_ID, "X-Forwarded-For": "203.0.113.9"},
    )
    assert body["requestId"] == EDGE_ID == header


@override_settings(TRUSTED_PROXY_IPS=["203.0.113.0/24"])
def test_a_forwarded_client_address_is_never_taken_for_the_proxy(served_url):
    body, _ = _get(
        f"{served_url}/v1/",
        {"X-Request-Id": EDGE_ID, "X-Forwarded-For": "203.0.113.9"},
    )
    assert _is_uuid(body["requestId"])
