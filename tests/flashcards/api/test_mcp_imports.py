"""The import_cards and export_cards MCP tools through the SDK's own client."""

from __future__ import annotations

import base64
import csv
import io

from flashcards.models import Card, ReviewEvent
from tests.factories import make_card
from tests.fixtures.anki_packages import official_package
from tests.flashcards.api.test_mcp import call
from tests.flashcards.interchange.test_apkg_surfaces import _fronts


def test_import_cards_from_csv_text_previews_then_imports(live_server_url, api_key, workspace):
    text = "front_text,back_text,tags\nhola,hello,es;greet\n"
    preview = call(
        live_server_url,
        api_key.plaintext,
        "import_cards",
        {"content": text, "filename": "w.csv", "dry_run": True},
    )
    assert preview["ok"] is True and preview["data"]["cards"]["created"] == 1
    assert Card.objects.count() == 0
    body = call(live_server_url, api_key.plaintext, "import_cards", {"content": text})
    assert body["ok"] is True
    card = Card.objects.get(workspace=workspace)
    assert (card.front_text, card.tags) == ("hola", ["es", "greet"])


def test_import_cards_from_base64_anki_package(live_server_url, api_key, workspace, tmp_path):
    package = official_package(tmp_path, "apkg")
    body = call(
        live_server_url,
        api_key.plaintext,
        "import_cards",
        {
            "content": base64.b64encode(package.path.read_bytes()).decode(),
            "filename": "deck.apkg",
            "encoding": "base64",
        },
    )
    assert body["ok"] is True, body
    assert body["data"]["cards"]["created"] == 5
    assert ReviewEvent.objects.filter(workspace=workspace).count() == 10


def test_import_errors_are_envelopes_with_is_error(live_server_url, api_key, workspace):
    body = call(
        live_server_url,
        api_key.plaintext,
        "import_cards",
        {"content": "question,answer\nx,y\n", "filename": "bad.csv"},
    )
    assert body["ok"] is False
    assert body["error"]["details"]["reason"] == "bad_header"
    body = call(
        live_server_url,
        api_key.plaintext,
        "import_cards",
        {"content": "%%%", "filename": "d.apkg", "encoding": "base64"},
    )
    assert body["ok"] is False and body["error"]["details"]["field"] == "content"


def test_export_cards_pages_through_the_csv(live_server_url, api_key, workspace, other_workspace):
    for i in range(3):
        make_card(workspace, front_text=f"card {i}")
    make_card(other_workspace, front_text="theirs")
    first = call(live_server_url, api_key.plaintext, "export_cards", {"limit": 2, "format": "tsv"})
    assert first["data"]["hasMore"] is True and first["data"]["rowCount"] == 2
    second = call(live_server_url, api_key.plaintext, "export_cards", {"limit": 2, "offset": 2})
    assert second["data"]["hasMore"] is False
    rows = list(csv.DictReader(io.StringIO(first["data"]["text"]), delimiter="\t"))
    rows += list(csv.DictReader(io.StringIO(second["data"]["text"])))
    assert sorted(r["front_text"] for r in rows) == ["card 0", "card 1", "card 2"]


def test_the_mcp_tool_returns_the_package(
    live_server_url, api_key, workspace, other_workspace, tmp_path
):
    make_card(workspace, front_text="mine")
    make_card(other_workspace, front_text="theirs")
    body = call(live_server_url, api_key.plaintext, "export_cards", {"format": "apkg"})
    assert body["ok"] is True and body["data"]["filename"] == "cards.apkg"
    assert _fronts(base64.b64decode(body["data"]["content"]), tmp_path) == ["mine"]
    refused = call(
        live_server_url,
        api_key.plaintext,
        "export_cards",
        {"format": "apkg", "resource": "review_events"},
    )
    assert refused["ok"] is False
