"""Re-import respects edits made here: an unchanged Anki note keeps the card's edit; when both
sides changed, the newer change wins; the report lists each such card."""

from __future__ import annotations

from datetime import UTC, datetime

from flashcards.models import Card
from flashcards.services import timestamps
from flashcards.services.content import update_cards
from tests.conftest import SteppedClock
from tests.fixtures.anki_packages import genanki_package


def _peru(workspace):
    return Card.objects.get(workspace=workspace, front_text="capital of Peru")


def test_an_edit_made_here_survives_the_same_package_again(upload, workspace, tmp_path):
    package = genanki_package(tmp_path)
    assert upload(package.path)[0] == 200
    card = _peru(workspace)
    update_cards(workspace, [card.id], {"back_text": "Lima (edited here)"})
    status, body = upload(package.path)
    assert status == 200, body
    card.refresh_from_db()
    assert card.back_text == "Lima (edited here)"
    assert body["data"]["edits"] == [
        {
            "note": card.metadata["source"]["note_id"],
            "card": card.metadata["source"]["card_id"],
            "card_id": str(card.id),
            "kept": "kept_edit_made_here",
        }
    ]
    assert body["data"]["cards"]["updated"] == 0


def test_when_both_changed_the_newer_change_wins(upload, workspace, tmp_path):
    assert upload(genanki_package(tmp_path / "a").path)[0] == 200
    card = _peru(workspace)
    # Edited here in the past (before the Anki note's new modification time): Anki wins.
    with timestamps.clock(SteppedClock(datetime(2026, 3, 10, 10, 0, tzinfo=UTC))):
        update_cards(workspace, [card.id], {"back_text": "Lima (old edit here)"})
    newer_in_anki = genanki_package(tmp_path / "b", peru="Lima, on the coast")
    status, body = upload(newer_in_anki.path)
    assert status == 200, body
    card.refresh_from_db()
    assert card.back_text.startswith("Lima, on the coast")
    assert [e["kept"] for e in body["data"]["edits"]] == ["source_newer"]
    # Now edited here after Anki's change, and Anki changes again (an older mtime): ours wins.
    with timestamps.clock(SteppedClock(datetime(2099, 1, 1, tzinfo=UTC))):
        update_cards(workspace, [card.id], {"back_text": "Lima (newest, here)"})
    older = genanki_package(tmp_path / "c", peru="Lima, the capital")
    status, body = upload(older.path)
    assert status == 200, body
    card.refresh_from_db()
    assert card.back_text == "Lima (newest, here)"
    assert [e["kept"] for e in body["data"]["edits"]] == ["edit_made_here_newer"]


def test_a_change_in_anki_alone_still_updates(upload, workspace, tmp_path):
    assert upload(genanki_package(tmp_path / "a").path)[0] == 200
    status, body = upload(genanki_package(tmp_path / "b", peru="Lima, Perú").path)
    assert status == 200
    assert body["data"]["edits"] == [] and body["data"]["cards"]["updated"] == 1
    assert _peru(workspace).back_text.startswith("Lima, Perú")
