"""The workspace back to Anki: the .apkg export imported by the official ``anki`` package, every
card compared (text, deck, tags, review history, FSRS memory state and due)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from flashcards.models import Card, ReviewEvent
from tests.fixtures.anki_studied import studied_package

pytest.importorskip("anki")


def _import_into_anki(tmp_path, data: bytes):
    from anki.collection import Collection, ImportAnkiPackageRequest
    from anki.import_export_pb2 import ImportAnkiPackageOptions

    path = tmp_path / "export.apkg"
    path.write_bytes(data)
    col = Collection(str(tmp_path / "target" / "collection.anki2"))
    col.set_config("fsrs", True)
    col.import_anki_package(
        ImportAnkiPackageRequest(
            package_path=str(path),
            options=ImportAnkiPackageOptions(with_scheduling=True, with_deck_configs=True),
        )
    )
    return col


def _anki_due(col, card) -> datetime | None:
    if card.type == 0:
        return None
    if card.queue == 1:
        return datetime.fromtimestamp(card.due, tz=UTC)
    return datetime.fromtimestamp(
        col.sched.day_cutoff + (card.due - col.sched.today - 1) * 86_400, tz=UTC
    )


def test_the_apkg_export_imports_into_anki_with_every_card(api, upload, workspace, tmp_path):
    (tmp_path / "target").mkdir()
    package = studied_package(tmp_path / "source")
    assert upload(package.path)[0] == 200
    response = api.get(f"/v1/workspaces/{workspace.pk}/exports/cards.apkg")
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="cards.apkg"'
    data = b"".join(response.streaming_content)
    col = _import_into_anki(tmp_path, data)
    try:
        ours = {c.front_text: c for c in Card.objects.filter(workspace=workspace)}
        seen = set()
        for cid in col.find_cards(""):
            card = col.get_card(cid)
            note = card.note()
            mine = ours[note["Front"]]
            seen.add(note["Front"])
            assert note["Back"] == mine.back_text
            assert sorted(note.tags) == sorted(t.replace(" ", "_") for t in mine.tags)
            assert col.decks.name(card.did) == "Spanish::Numbers"
            assert card.reps == mine.reps and card.lapses == mine.lapses
            reviews = col.db.scalar("SELECT count() FROM revlog WHERE cid = ?", cid)
            assert reviews == ReviewEvent.objects.filter(card=mine).count()
            if mine.fsrs_card_state == "new":
                assert card.type == 0
                continue
            state = {1: "learning", 2: "review", 3: "relearning"}[card.type]
            assert state == mine.fsrs_card_state, note["Front"]
            assert card.memory_state is not None
            assert card.memory_state.stability == pytest.approx(mine.fsrs_stability, abs=1e-3)
            assert card.memory_state.difficulty == pytest.approx(mine.fsrs_difficulty, abs=1e-2)
            assert _anki_due(col, card) == mine.due_at, note["Front"]
        assert seen == set(ours)
    finally:
        col.close()


def test_export_of_another_workspace_is_refused(api, workspace, tmp_path):
    from flashcards.services import create_workspace
    from tests.factories import UserFactory

    other = create_workspace(UserFactory(username="bob"), "Bob's")
    response = api.get(f"/v1/workspaces/{other.pk}/exports/cards.apkg")
    assert response.status_code in (403, 404)
