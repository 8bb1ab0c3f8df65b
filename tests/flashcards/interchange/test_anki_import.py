"""Anki packages built by the official anki library (every layout it exports) and by genanki,
imported through the real HTTP route: every card, tag, review event and rebuilt FSRS state."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from flashcards import services
from flashcards.models import Card, ChangeLog, ReviewEvent
from flashcards.scheduling import rebuild_schedule
from flashcards.services.scheduling import workspace_scheduler_settings
from flashcards.services.sync_feed import pull_changes
from tests.fixtures.anki_packages import genanki_package, official_package

LAYOUTS = [("apkg", False), ("apkg", True), ("colpkg", False), ("colpkg", True)]
EXPECTED_MEMBERS = {
    ("apkg", False): ("collection.anki21b", 18, "latest"),
    ("apkg", True): ("collection.anki21", 11, "legacy 2"),
    ("colpkg", False): ("collection.anki21b", 18, "latest"),
    ("colpkg", True): ("collection.anki21", 11, "legacy 2"),
}


def _answers(log):
    return [(ease - 1, datetime.fromtimestamp(ms / 1000, tz=UTC)) for ms, ease, kind in log if ease]


def _check_cards(workspace, package, report):
    cards = list(Card.objects.filter(workspace=workspace).order_by("metadata__source__card_id"))
    assert len(cards) == len(package.cards)
    got = sorted(((c.front_text, c.back_text, c.card_type, c.tags) for c in cards), key=repr)
    want = sorted(((e.front, e.back, e.card_type, e.tags) for e in package.cards), key=repr)
    assert got == want
    settings = workspace_scheduler_settings(workspace)
    for expected in package.cards:
        card = next(
            c
            for c in cards
            if (c.front_text, c.back_text, c.card_type)
            == (expected.front, expected.back, expected.card_type)
        )
        source = card.metadata["source"]
        assert source["kind"] == "anki" and source["file"] == package.path.name
        assert source.get("media", []) == expected.media
        events = list(ReviewEvent.objects.filter(card=card).order_by("sequence"))
        answers = _answers(expected.log)
        assert [(e.rating, e.reviewed_at_client) for e in events] == answers
        # The state is what the product's own scheduler computes from that history.
        schedule = rebuild_schedule(settings, answers)
        assert (
            card.fsrs_card_state,
            card.due_at,
            card.reps,
            card.lapses,
            card.fsrs_step_index,
            card.fsrs_stability,
            card.fsrs_difficulty,
            card.fsrs_last_reviewed_at,
            card.fsrs_scheduled_days,
        ) == (
            schedule.state,
            schedule.due_at,
            schedule.reps,
            schedule.lapses,
            schedule.step_index,
            schedule.stability,
            schedule.difficulty,
            schedule.last_reviewed_at,
            schedule.scheduled_days,
        )
    return cards


@pytest.mark.parametrize(("kind", "legacy"), LAYOUTS)
def test_official_anki_packages_import_every_card_tag_review_and_state(
    upload, workspace, tmp_path, kind, legacy
):
    package = official_package(tmp_path, kind, legacy)
    status, body = upload(package.path)
    assert status == 200, body
    report = body["data"]
    member, schema, version = EXPECTED_MEMBERS[(kind, legacy)]
    assert report["anki"]["collection"] == member
    assert report["anki"]["schemaVersion"] == schema
    assert report["anki"]["packageVersion"] == version
    assert report["format"] == kind and report["written"] is True
    assert report["cards"] == {
        "created": 5,
        "updated": 0,
        "unchanged": 0,
        "skipped": 0,
        "rejected": 0,
    }
    assert report["reviewEvents"] == {"created": 10, "alreadyPresent": 0}
    assert report["anki"]["reviewLog"] == {"entries": 11, "skipped": 1}
    assert report["media"]["referenced"] == ["cat.jpg", "paris.mp3"]
    assert report["media"]["inPackage"] == 2 and report["media"]["missing"] == []
    cards = _check_cards(workspace, package, report)
    lapsed = next(c for c in cards if c.front_text == "hablar\n(verb)")
    assert lapsed.lapses == 1 and lapsed.reps == 6
    # One change per card and per review event, so syncing clients receive all of it.
    changes = ChangeLog.objects.filter(workspace=workspace)
    assert changes.filter(entity_type="card").count() == 5
    assert changes.filter(entity_type="review_event").count() == 10
    page = pull_changes(workspace, 0, 500)
    assert {c["entity_type"] for c in page.changes} == {"card", "review_event"}
    assert len(page.changes) == 15


def test_genanki_package_imports_basic_reversed_cloze_and_media(upload, workspace, tmp_path):
    package = genanki_package(tmp_path)
    status, body = upload(package.path)
    assert status == 200, body
    report = body["data"]
    assert report["anki"]["collection"] == "collection.anki2"
    assert report["anki"]["packageVersion"] == "legacy 1"
    assert report["media"]["referenced"] == ["lima.png"]
    _check_cards(workspace, package, report)
    assert all(c.fsrs_card_state == "new" for c in Card.objects.filter(workspace=workspace))


def test_reimporting_the_same_package_creates_nothing_twice(upload, workspace, tmp_path):
    package = official_package(tmp_path, "apkg")
    assert upload(package.path)[0] == 200
    before = (Card.objects.count(), ReviewEvent.objects.count(), ChangeLog.objects.count())
    status, body = upload(package.path)
    assert status == 200
    assert body["data"]["cards"]["created"] == 0
    assert body["data"]["cards"]["unchanged"] == 5
    assert body["data"]["reviewEvents"] == {"created": 0, "alreadyPresent": 10}
    assert (Card.objects.count(), ReviewEvent.objects.count(), ChangeLog.objects.count()) == before


def test_an_edited_note_updates_its_card_and_keeps_its_id(upload, workspace, tmp_path):
    assert upload(genanki_package(tmp_path / "a").path)[0] == 200
    card = Card.objects.get(workspace=workspace, front_text="capital of Peru")
    edited = genanki_package(tmp_path / "b", peru="Lima, on the coast")
    status, body = upload(edited.path)
    assert status == 200
    assert body["data"]["cards"]["updated"] == 1 and body["data"]["cards"]["unchanged"] == 4
    card.refresh_from_db()
    assert card.back_text == "Lima, on the coast\n[image:lima.png]"
    assert Card.objects.filter(workspace=workspace).count() == 5


def test_reimport_replays_reviews_made_here_with_the_imported_ones(upload, workspace, tmp_path):
    package = official_package(tmp_path, "apkg")
    assert upload(package.path)[0] == 200
    card = Card.objects.get(workspace=workspace, front_text="perro")
    services.submit_review(workspace, card.pk, 2, reviewed_at=datetime(2026, 4, 1, tzinfo=UTC))
    # The same package again: nothing new, the local review and its state are kept.
    status, body = upload(package.path)
    assert status == 200 and body["data"]["cards"]["unchanged"] == 5
    card.refresh_from_db()
    assert card.reps == 1


def test_dry_run_reports_and_writes_nothing(upload, workspace, tmp_path):
    package = official_package(tmp_path, "colpkg")
    status, body = upload(package.path, dry_run="true")
    assert status == 200
    assert body["data"]["dryRun"] is True and body["data"]["written"] is False
    assert body["data"]["cards"]["created"] == 5
    assert [item["action"] for item in body["data"]["items"]] == ["created"] * 5
    assert {"note", "card"} <= set(body["data"]["items"][0])
    assert Card.objects.count() == 0 and ReviewEvent.objects.count() == 0
    assert ChangeLog.objects.filter(workspace=workspace).count() == 0
    assert "Dry run" in body["instructions"]


def test_field_mapping_picks_the_front_and_back(upload, workspace, tmp_path):
    package = genanki_package(tmp_path)
    status, body = upload(package.path, field_mapping='{"Basic (genanki)": ["Back", "Front"]}')
    assert status == 200, body
    assert Card.objects.filter(front_text="Lima\n[image:lima.png]", back_text="capital of Peru")


def test_field_mapping_errors_name_the_valid_choices(upload, workspace, tmp_path):
    package = genanki_package(tmp_path)
    status, body = upload(package.path, field_mapping='{"Basic (genanki)": ["Recto", "Back"]}')
    assert status == 400
    assert body["error"]["details"]["reason"] == "bad_field_mapping"
    assert "Front, Back" in body["error"]["message"]
    status, body = upload(package.path, field_mapping='{"Nope": ["Front", "Back"]}')
    assert status == 400 and "Basic (genanki)" in body["error"]["message"]
    assert Card.objects.count() == 0


def test_two_workspaces_import_the_same_package_without_collisions(
    upload, workspace, other_workspace, other_user, tmp_path
):
    package = genanki_package(tmp_path)
    assert upload(package.path)[0] == 200
    services.add_member(workspace.memberships.first().user, other_workspace)
    assert upload(package.path, workspace_id=other_workspace.pk)[0] == 200
    mine = set(Card.objects.filter(workspace=workspace).values_list("pk", flat=True))
    theirs = set(Card.objects.filter(workspace=other_workspace).values_list("pk", flat=True))
    assert len(mine) == len(theirs) == 5 and not mine & theirs


def test_a_workspace_of_someone_else_is_not_found(upload, other_workspace, tmp_path):
    status, body = upload(genanki_package(tmp_path).path, workspace_id=other_workspace.pk)
    assert status == 404 and body["error"]["code"] == "WORKSPACE_NOT_FOUND"
    assert Card.objects.count() == 0


def test_new_anki_reviews_are_replayed_with_the_ones_made_here(upload, workspace, tmp_path):
    import sqlite3
    import zipfile

    from tests.fixtures.anki_packages import DAY_MS, synthetic_collection

    def package(name: str, drop_last_review: bool):
        path = tmp_path / f"{name}.anki2"
        synthetic_collection(path, 1)
        if drop_last_review:
            db = sqlite3.connect(path)
            db.execute("DELETE FROM revlog WHERE id = (SELECT max(id) FROM revlog)")
            db.commit()
            db.close()
        out = tmp_path / f"{name}.apkg"
        with zipfile.ZipFile(out, "w") as archive:
            archive.write(path, "collection.anki2")
        return out

    assert upload(package("before", True))[0] == 200
    card = Card.objects.get(workspace=workspace)
    base = 1_700_000_000_000
    local_at = datetime.fromtimestamp((base + 10 * DAY_MS) / 1000, tz=UTC)
    services.submit_review(workspace, card.pk, "hard", reviewed_at=local_at)
    status, body = upload(package("after", False))
    assert status == 200
    assert body["data"]["reviewEvents"] == {"created": 1, "alreadyPresent": 2}
    assert body["data"]["cards"]["updated"] == 1
    card.refresh_from_db()
    history = [
        (0, datetime.fromtimestamp(base / 1000, tz=UTC)),
        (2, datetime.fromtimestamp((base + 7 * DAY_MS) / 1000, tz=UTC)),
        (1, local_at),
        (2, datetime.fromtimestamp((base + 14 * DAY_MS) / 1000, tz=UTC)),
    ]
    expected = rebuild_schedule(workspace_scheduler_settings(workspace), history)
    assert (card.reps, card.due_at, card.fsrs_stability, card.fsrs_difficulty) == (
        expected.reps,
        expected.due_at,
        expected.stability,
        expected.difficulty,
    )
    assert ChangeLog.objects.filter(entity_type="review_event").count() == 4
