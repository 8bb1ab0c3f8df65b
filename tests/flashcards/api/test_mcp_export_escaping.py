"""Issue #21: export_cards over MCP escapes formula cells unless raw, and refuses an offset
beyond what SQL can count with a 400 naming the field."""

from __future__ import annotations

from tests.factories import make_card
from tests.flashcards.api.test_mcp import call


def test_an_export_page_over_mcp_escapes_unless_raw(live_server_url, api_key, workspace):
    make_card(workspace, front_text="=1+1", back_text="b")
    body = call(live_server_url, api_key.plaintext, "export_cards", {})
    assert "'=1+1" in body["data"]["text"]
    body = call(live_server_url, api_key.plaintext, "export_cards", {"raw": True})
    assert "'=1+1" not in body["data"]["text"] and "=1+1" in body["data"]["text"]


def test_an_export_offset_beyond_64_bits_is_a_400_naming_offset(
    live_server_url, api_key, workspace
):
    body = call(live_server_url, api_key.plaintext, "export_cards", {"offset": 2**63})
    assert body["ok"] is False
    assert body["error"]["code"] == "REQUEST_INVALID"
    assert body["error"]["details"]["field"] == "offset"
