"""The import and export routes through the real ASGI app (uvicorn): the upload limit of its own
in both body-limit layers, and the export streamed by the server as it is read."""

from __future__ import annotations

import csv
import io

import httpx2
import pytest
from django.test import override_settings

from flashcards.models import Card
from tests.factories import make_cards
from tests.flashcards.api.test_body_limit import raw_exchange


@pytest.mark.slow
def test_an_upload_over_256_kib_reaches_the_import_route(live_server_url, api_key, workspace):
    rows = "".join(f"front {i} {'x' * 400},back {i}\n" for i in range(1500))
    content = ("front_text,back_text\n" + rows).encode()
    assert len(content) > 512 * 1024
    response = httpx2.post(
        f"{live_server_url}/v1/workspaces/{workspace.pk}/imports",
        headers={"Authorization": f"ApiKey {api_key.plaintext}"},
        files={"file": ("big.csv", content, "text/csv")},
        timeout=60,
    )
    assert response.status_code == 200, response.text[:500]
    assert response.json()["data"]["cards"]["created"] == 1500
    assert Card.objects.filter(workspace=workspace).count() == 1500


@pytest.mark.slow
def test_a_declared_upload_over_the_import_limit_is_refused_before_it_is_sent(
    live_server_url, api_key, workspace
):
    with override_settings(FLASHCARDS_IMPORTS={"max_upload_bytes": 1024 * 1024}):
        head = (
            f"POST /v1/workspaces/{workspace.pk}/imports HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: ApiKey {api_key.plaintext}\r\n"
            "Content-Type: multipart/form-data; boundary=x\r\n"
            f"Content-Length: {2 * 1024 * 1024}\r\n\r\n"
        ).encode()
        status, body = raw_exchange(live_server_url, head, [b"--x\r\n"])
    assert status == 413, body
    assert body["error"]["details"]["limitBytes"] == 1024 * 1024
    assert "1 MiB" in body["error"]["message"]


@pytest.mark.slow
def test_the_export_streams_over_http(live_server_url, api_key, workspace):
    for start in range(0, 1200, 100):
        make_cards(workspace, 100, back_text=f"batch {start}")
    with httpx2.stream(
        "GET",
        f"{live_server_url}/v1/workspaces/{workspace.pk}/exports/cards.csv",
        headers={"Authorization": f"ApiKey {api_key.plaintext}", "Accept": "text/csv"},
        timeout=60,
    ) as response:
        assert response.status_code == 200
        assert "content-length" not in response.headers
        chunks = list(response.iter_raw())
    rows = list(csv.DictReader(io.StringIO(b"".join(chunks).decode())))
    assert len(rows) == 1200
    assert len({r["card_id"] for r in rows}) == 1200
