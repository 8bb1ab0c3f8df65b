"""Export / import (domain.md §7): the round trip, what an import restores, and every refusal —
each of which must leave the database exactly as it was."""

from __future__ import annotations

import copy
import io
import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from flashcards import services
from flashcards.models import (
    Card,
    CardTag,
    ChangeLog,
    Deck,
    DeckTag,
    Membership,
    ReviewEvent,
    Tag,
    Workspace,
)
from flashcards.rows import (
    CARD_COLUMNS,
    DECK_COLUMNS,
    REVIEW_EVENT_COLUMNS,
    WORKSPACE_COLUMNS,
)
from flashcards.services.transfer import (
    DEFAULT_OWNER,
    TransferError,
    export_workspace,
    import_workspace,
)
from tests.factories import UserFactory, make_card, make_cards, make_deck

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def populated(workspace):
    """A workspace with every kind of row, including tombstones that must not be exported."""
    workspace = services.update_scheduler_settings(
        workspace, {"desired_retention": 0.85, "learning_steps_minutes": [2, 15]}
    )
    cards = make_cards(workspace, 3, tags=["Grammar", "verbs"], effort_level="medium")
    plain = make_card(workspace, front_text="¿Qué tal?", back_text="How are you?", card_type="")
    gone = make_card(workspace, tags=["Obsolete"])
    services.submit_review(workspace, cards[0].id, 2, reviewed_at=T0, client_event_id="c-1")
    services.submit_review(workspace, gone.id, 3, reviewed_at=T0)
    services.submit_review(workspace, cards[0].id, 2, reviewed_at=T0 + timedelta(minutes=20))
    services.submit_review(workspace, cards[1].id, 0, reviewed_at=T0 + timedelta(hours=1))
    services.submit_review(workspace, cards[0].id, 0, reviewed_at=T0 + timedelta(days=4))
    services.delete_cards(workspace, [gone.id])
    make_deck(workspace, name="Verbs", tags=["VERBS"], effort_levels=["medium", "fast"])
    dropped = make_deck(workspace, name="Dropped")
    services.delete_decks(workspace, [dropped.id])
    return {"workspace": workspace, "cards": [*cards, plain], "gone": gone}


def counts() -> dict[str, int]:
    models = (Workspace, Card, Deck, ReviewEvent, ChangeLog, Tag, CardTag, DeckTag, Membership)
    return {m.__name__: m.objects.count() for m in models} | {
        "users": get_user_model().objects.count()
    }


def write(path: Path, data: object) -> str:
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def run_import(path: str, *args: str) -> str:
    out = io.StringIO()
    call_command("import_workspace", path, *args, stdout=out)
    return out.getvalue()


def run_export(workspace_id: object, path: str) -> str:
    out = io.StringIO()
    call_command("export_workspace", str(workspace_id), path, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def remove_workspace(workspace: Workspace) -> None:
    """A hard delete (cascade): what an operator does before restoring a backup in place."""
    Workspace.objects.filter(pk=workspace.pk).delete()


# ---------------------------------------------------------------- export


def test_export_has_the_select_star_shape_and_only_live_rows(populated):
    workspace = populated["workspace"]
    data = export_workspace(workspace)
    assert list(data) == ["format", "workspace", "cards", "decks", "review_events"]
    assert data["format"] == 1
    assert tuple(data["workspace"]) == WORKSPACE_COLUMNS
    assert data["workspace"]["learning_steps_minutes"] == [2, 15]
    assert all(tuple(row) == CARD_COLUMNS for row in data["cards"])
    assert all(tuple(row) == DECK_COLUMNS for row in data["decks"])
    assert all(tuple(row) == REVIEW_EVENT_COLUMNS for row in data["review_events"])
    ids = [r["card_id"] for r in data["cards"]]
    assert sorted(ids) == sorted(str(c.id) for c in populated["cards"])
    assert [(r["created_at"], r["card_id"]) for r in data["cards"]] == sorted(
        (r["created_at"], r["card_id"]) for r in data["cards"]
    )
    assert [r["name"] for r in data["decks"]] == ["Verbs"]
    events = data["review_events"]
    assert [(e["rating"], e["review_grade"]) for e in events] == [
        (2, "good"),
        (2, "good"),
        (0, "again"),
        (0, "again"),
    ]
    assert {e["card_id"] for e in events} == {str(c.id) for c in populated["cards"][:2]}
    assert events[0]["client_event_id"] == "c-1"
    assert events[0]["reviewed_at_client"] == "2026-03-01T09:00:00.000Z"
    first = next(r for r in data["cards"] if r["card_id"] == str(populated["cards"][0].id))
    assert first["tags"] == ["Grammar", "verbs"]
    assert first["fsrs_card_state"] == "relearning"
    assert first["fsrs_last_reviewed_at"] == "2026-03-05T09:00:00.000Z"
    assert data["decks"][0]["tags"] == ["verbs"]


def test_export_command_writes_the_same_document(populated, tmp_path):
    workspace = populated["workspace"]
    path = tmp_path / "out.json"
    message = run_export(workspace.pk, str(path))
    assert "4 cards, 1 decks, 4 review events" in message
    assert json.loads(path.read_text(encoding="utf-8")) == export_workspace(workspace)


def test_export_to_stdout(populated):
    out = io.StringIO()
    call_command(
        "export_workspace", str(populated["workspace"].pk), "-", stdout=out, stderr=io.StringIO()
    )
    assert json.loads(out.getvalue()) == export_workspace(populated["workspace"])


@pytest.mark.parametrize("workspace_id", ["not-a-uuid", str(uuid.uuid4())])
def test_export_of_an_unknown_workspace_fails(db, tmp_path, workspace_id):
    with pytest.raises(CommandError):
        run_export(workspace_id, str(tmp_path / "x.json"))
    assert not (tmp_path / "x.json").exists()


# ---------------------------------------------------------------- round trip


def test_export_import_export_gives_the_same_file(populated, tmp_path):
    workspace = populated["workspace"]
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    run_export(workspace.pk, str(first))
    remove_workspace(workspace)
    assert not Card.objects.exists()

    message = run_import(str(first), "--owner", "alice")

    assert "4 cards, 1 decks, 4 review events" in message
    run_export(workspace.pk, str(second))
    assert second.read_bytes() == first.read_bytes()


def test_import_restores_ids_timestamps_schedules_and_order(populated):
    workspace = populated["workspace"]
    data = export_workspace(workspace)
    originals = {c.id: c for c in Card.objects.filter(workspace=workspace, deleted_at__isnull=True)}
    sequences = list(
        ReviewEvent.objects.filter(workspace=workspace, card__deleted_at__isnull=True)
        .order_by("sequence")
        .values_list("id", flat=True)
    )
    remove_workspace(workspace)

    report = import_workspace(data, "alice")

    assert (report.cards, report.decks, report.review_events) == (4, 1, 4)
    assert report.changes == 1 + 4 + 1 + 4
    restored = Workspace.objects.get(pk=workspace.pk)
    assert restored.desired_retention == 0.85
    assert restored.last_change_id == report.changes
    assert restored.last_review_sequence == 4
    for card in Card.objects.filter(workspace=restored):
        original = originals[card.id]
        for field in (
            "front_text",
            "tags",
            "created_at",
            "updated_at",
            "due_at",
            "reps",
            "lapses",
            "fsrs_card_state",
            "fsrs_step_index",
            "fsrs_stability",
            "fsrs_difficulty",
            "fsrs_last_reviewed_at",
            "fsrs_scheduled_days",
            "metadata",
        ):
            assert getattr(card, field) == getattr(original, field), field
        assert card.client_updated_at == card.updated_at
    events = list(ReviewEvent.objects.filter(workspace=restored).order_by("sequence"))
    assert [e.id for e in events] == sequences
    assert [e.sequence for e in events] == [1, 2, 3, 4]


def test_import_writes_indexed_tags_and_membership(populated):
    workspace = populated["workspace"]
    data = export_workspace(workspace)
    remove_workspace(workspace)
    import_workspace(data, "alice")
    card = Card.objects.get(pk=populated["cards"][0].id)
    assert list(
        CardTag.objects.filter(card=card).order_by("position").values_list("tag__name", flat=True)
    ) == ["Grammar", "verbs"]
    deck = Deck.objects.get(workspace_id=workspace.pk)
    assert list(DeckTag.objects.filter(deck=deck).values_list("tag__name", flat=True)) == ["verbs"]
    assert sorted(Tag.objects.filter(workspace_id=workspace.pk).values_list("name", flat=True)) == [
        "Grammar",
        "verbs",
    ]
    membership = Membership.objects.get(workspace_id=workspace.pk)
    assert (membership.user.username, membership.role) == ("alice", "owner")


def test_import_records_a_change_for_every_entity_in_dependency_order(populated):
    workspace = populated["workspace"]
    data = export_workspace(workspace)
    remove_workspace(workspace)
    import_workspace(data, "alice")
    log = list(
        ChangeLog.objects.filter(workspace_id=workspace.pk)
        .order_by("change_id")
        .values_list("change_id", "entity_type", "entity_id", "action")
    )
    assert [entry[0] for entry in log] == list(range(1, 11))
    assert [entry[1] for entry in log] == [
        "workspace_scheduler_settings",
        *["card"] * 4,
        "deck",
        *["review_event"] * 4,
    ]
    assert [entry[2] for entry in log[1:5]] == [r["card_id"] for r in data["cards"]]
    assert {entry[3] for entry in log if entry[1] == "review_event"} == {"append"}


def test_the_restored_workspace_keeps_working(populated):
    workspace = populated["workspace"]
    data = export_workspace(workspace)
    remove_workspace(workspace)
    import_workspace(data, "alice")
    restored = Workspace.objects.get(pk=workspace.pk)
    card_id = populated["cards"][0].id
    result = services.submit_review(restored, card_id, 2)
    assert result.review_event.sequence == 5
    assert result.card.reps == 4
    services.create_cards(restored, [{"front_text": "new", "back_text": "", "tags": ["GRAMMAR"]}])
    assert Card.objects.get(workspace=restored, front_text="new").tags == ["Grammar"]
    # A repeat of an imported agent review is recognised by its client_event_id.
    repeat = services.submit_review(restored, card_id, 3, client_event_id="c-1")
    assert not repeat.created


def test_owner_is_created_if_missing_and_defaults_to_admin(populated):
    workspace = populated["workspace"]
    data = export_workspace(workspace)
    remove_workspace(workspace)
    report = import_workspace(data, None)
    assert report.owner == DEFAULT_OWNER and report.owner_created
    admin = get_user_model().objects.get(username=DEFAULT_OWNER)
    assert not admin.has_usable_password()
    assert services.member_workspaces(admin).get().pk == workspace.pk


def test_first_tag_spelling_in_file_order_wins(db, populated):
    workspace = populated["workspace"]
    data = export_workspace(workspace)
    remove_workspace(workspace)
    data["cards"][0]["tags"] = ["ENGLISH", " grammar "]
    data["cards"][1]["tags"] = ["english", "Idioms", "IDIOMS"]
    data["decks"][0]["tags"] = ["Idioms"]
    import_workspace(data, "alice")
    assert Card.objects.get(pk=data["cards"][1]["card_id"]).tags == ["ENGLISH", "Idioms"]
    assert Card.objects.get(pk=data["cards"][0]["card_id"]).tags == ["ENGLISH", "grammar"]


STAMP = "2026-01-02T03:04:05.678Z"


def fixture_document(cards: int, reviews_per_card: int = 0) -> dict:
    """A hand-built file, as a fixture generator would write it."""
    card_rows = []
    for i in range(cards):
        reviewed = reviews_per_card > 0
        card_rows.append(
            {
                "card_id": str(uuid.uuid4()),
                "front_text": f"Card {i}",
                "back_text": "",
                "card_type": "basic",
                "tags": [f"t{i % 7}"],
                "effort_level": "fast",
                "metadata": {"version": 1, "source": {"kind": "fixture"}},
                "due_at": STAMP if reviewed else None,
                "created_at": STAMP,
                "updated_at": STAMP,
                "reps": reviews_per_card,
                "lapses": 0,
                "fsrs_card_state": "review" if reviewed else "new",
                "fsrs_step_index": None,
                "fsrs_scheduled_days": 3 if reviewed else None,
                "fsrs_stability": 3.5 if reviewed else None,
                "fsrs_difficulty": 5.0 if reviewed else None,
                "fsrs_last_reviewed_at": STAMP if reviewed else None,
            }
        )
    events = [
        {
            "review_event_id": str(uuid.uuid4()),
            "card_id": row["card_id"],
            "client_event_id": f"{row['card_id']}-{n}",
            "rating": 2,
            "review_grade": "good",
            "reviewed_at_client": STAMP,
            "reviewed_at_server": STAMP,
        }
        for row in card_rows
        for n in range(reviews_per_card)
    ]
    return {
        "format": 1,
        "workspace": {
            "workspace_id": str(uuid.uuid4()),
            "name": "Fixture",
            "created_at": STAMP,
            "algorithm": "fsrs-6",
            "desired_retention": 0.9,
            "learning_steps_minutes": [1, 10],
            "relearning_steps_minutes": [10],
            "maximum_interval_days": 36500,
            "enable_fuzz": True,
        },
        "cards": card_rows,
        "decks": [
            {
                "deck_id": str(uuid.uuid4()),
                "name": "All",
                "effort_levels": [],
                "tags": [],
                "created_at": STAMP,
                "updated_at": STAMP,
            }
        ],
        "review_events": events,
    }


def test_a_large_file_crosses_the_batch_size(db, tmp_path):
    """More rows than one insert batch: every row lands, with its change entry."""
    count = 1205
    data = fixture_document(count)
    workspace_id = data["workspace"]["workspace_id"]
    message = run_import(write(tmp_path / "big.json", data), "--owner", "fixture-loader")
    assert f"{count} cards" in message
    assert Card.objects.filter(workspace_id=workspace_id).count() == count
    assert CardTag.objects.filter(workspace_id=workspace_id).count() == count
    assert ChangeLog.objects.filter(workspace_id=workspace_id).count() == count + 2
    exported = export_workspace(Workspace.objects.get(pk=workspace_id))
    assert sorted(r["card_id"] for r in exported["cards"]) == sorted(
        r["card_id"] for r in data["cards"]
    )


def test_import_uses_bulk_statements(db, django_assert_max_num_queries):
    """600 cards, 1,200 review events and their change entries in a few dozen statements (SQLite
    caps rows per INSERT by its parameter limit; PostgreSQL needs fewer)."""
    data = fixture_document(600, reviews_per_card=2)
    with django_assert_max_num_queries(80):
        report = import_workspace(data, "loader")
    assert (report.cards, report.review_events, report.changes) == (600, 1200, 1 + 600 + 1 + 1200)
    sequences = ReviewEvent.objects.filter(workspace_id=report.workspace_id).order_by("sequence")
    assert [str(e.id) for e in sequences] == [e["review_event_id"] for e in data["review_events"]]


# ---------------------------------------------------------------- refusals


@pytest.fixture
def document(populated):
    """A valid export whose workspace is gone, ready to be broken in one place. Cards are put
    in creation order (cards created in one call share a created_at, so the export orders them
    by id): cards[0] is relearning, cards[1] learning, cards[2] and cards[3] are new."""
    workspace = populated["workspace"]
    data = export_workspace(workspace)
    order = [str(c.id) for c in populated["cards"]]
    data["cards"].sort(key=lambda row: order.index(row["card_id"]))
    remove_workspace(workspace)
    return data


def broken(data: dict, edit) -> dict:
    data = copy.deepcopy(data)
    edit(data)
    return data


def set_path(*path, value):
    def edit(data):
        target = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return edit


def delete_path(*path):
    def edit(data):
        target = data
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return edit


BAD_DOCUMENTS = [
    ("format 2", set_path("format", value=2), "unsupported format"),
    ("format as text", set_path("format", value="1"), "unsupported format"),
    ("format true", set_path("format", value=True), "unsupported format"),
    ("no decks key", delete_path("decks"), "Missing top-level key(s): decks"),
    ("extra key", set_path("extra", value=[]), "Unknown top-level key(s): extra"),
    ("cards not a list", set_path("cards", value={}), "cards: must be a JSON array"),
    ("row not an object", set_path("cards", 1, value="card"), "cards[1]: must be a JSON object"),
    ("missing column", delete_path("cards", 2, "tags"), "cards[2]: missing column(s) tags"),
    ("unknown column", set_path("decks", 0, "deleted_at", value=None), "decks[0]: unknown"),
    ("empty front", set_path("cards", 1, "front_text", value="  "), "cards[1].front_text"),
    ("bad effort", set_path("cards", 0, "effort_level", value="slow"), "cards[0].effort_level"),
    ("bad tags", set_path("cards", 0, "tags", value="a,b"), "cards[0].tags"),
    ("bad card id", set_path("cards", 3, "card_id", value="nope"), "cards[3].card_id"),
    ("bad timestamp", set_path("cards", 0, "created_at", value="yesterday"), "cards[0].created_at"),
    (
        "naive timestamp",
        set_path("cards", 0, "updated_at", value="2026-03-01T09:00:00"),
        "cards[0].updated_at",
    ),
    (
        "timestamp before year 1 in UTC",
        set_path("cards", 0, "created_at", value="0001-01-01T00:00:00+01:00"),
        "cards[0].created_at",
    ),
    (
        "new card with stability",
        set_path("cards", 3, "fsrs_stability", value=1.5),
        "cards[3].fsrs_stability: must be null when fsrs_card_state is 'new'",
    ),
    (
        "review card without difficulty",
        set_path("cards", 0, "fsrs_difficulty", value=None),
        "cards[0].fsrs_difficulty: must not be null",
    ),
    (
        "relearning card without step",
        set_path("cards", 0, "fsrs_step_index", value=None),
        "cards[0].fsrs_step_index",
    ),
    ("unknown state", set_path("cards", 0, "fsrs_card_state", value="done"), "fsrs_card_state"),
    ("negative reps", set_path("cards", 0, "reps", value=-1), "cards[0].reps"),
    ("float reps", set_path("cards", 0, "reps", value=1.5), "cards[0].reps"),
    ("zero stability", set_path("cards", 0, "fsrs_stability", value=0), "cards[0].fsrs_stability"),
    ("metadata not object", set_path("cards", 0, "metadata", value=[]), "cards[0].metadata"),
    (
        "nul in metadata",
        set_path("cards", 0, "metadata", "x", value="a\x00"),
        "cards[0].metadata.x",
    ),
    ("surrogate", set_path("cards", 1, "back_text", value="\ud83d"), "cards[1].back_text"),
    ("nan", set_path("workspace", "desired_retention", value=float("nan")), "desired_retention"),
    ("duplicate card id", None, "appears more than once"),
    ("deck name empty", set_path("decks", 0, "name", value=""), "decks[0].name"),
    ("deck effort", set_path("decks", 0, "effort_levels", value=["x"]), "decks[0].effort_levels"),
    ("rating 4", set_path("review_events", 0, "rating", value=4), "review_events[0].rating"),
    (
        "rating text",
        set_path("review_events", 0, "rating", value="good"),
        "review_events[0].rating",
    ),
    (
        "grade disagrees",
        set_path("review_events", 1, "review_grade", value="easy"),
        "review_events[1].review_grade: must be 'good' to agree with rating 2",
    ),
    (
        "event of unknown card",
        set_path("review_events", 2, "card_id", value=str(uuid.uuid4())),
        "review_events[2].card_id",
    ),
    (
        "duplicate client event id",
        set_path("review_events", 3, "client_event_id", value="c-1"),
        "review_events[3].client_event_id",
    ),
    ("empty client event id", set_path("review_events", 0, "client_event_id", value=""), "client"),
    ("blank client event id", set_path("review_events", 0, "client_event_id", value=" "), "client"),
    ("retention 2", set_path("workspace", "desired_retention", value=2), "workspace.desired_"),
    ("bad steps", set_path("workspace", "learning_steps_minutes", value=[10, 1]), "learning_steps"),
    ("algorithm", set_path("workspace", "algorithm", value="sm2"), "workspace.algorithm"),
    ("workspace name", set_path("workspace", "name", value=" "), "workspace.name"),
    ("workspace id", set_path("workspace", "workspace_id", value=7), "workspace.workspace_id"),
]


def _duplicate_card_id(data):
    data["cards"][2]["card_id"] = data["cards"][0]["card_id"]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [(edit or _duplicate_card_id, expected) for _, edit, expected in BAD_DOCUMENTS],
    ids=[name for name, _, _ in BAD_DOCUMENTS],
)
def test_a_bad_file_is_refused_with_its_location_and_nothing_is_written(
    document, tmp_path, edit, expected
):
    before = counts()
    path = write(tmp_path / "bad.json", broken(document, edit))
    with pytest.raises(CommandError) as exc:
        run_import(path, "--owner", "newcomer")
    assert expected in str(exc.value)
    assert str(exc.value).startswith("Nothing imported:")
    assert counts() == before


@pytest.mark.parametrize("text", ["", "{", "[1, 2", "not json", "\ufeff{}"])
def test_a_file_that_is_not_json_is_refused(db, tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    before = counts()
    with pytest.raises(CommandError) as exc:
        run_import(str(path))
    assert "not valid JSON" in str(exc.value)
    assert counts() == before


@pytest.mark.parametrize("data", [[], "text", 1, None])
def test_a_document_that_is_not_an_object_is_refused(db, tmp_path, data):
    with pytest.raises(CommandError) as exc:
        run_import(write(tmp_path / "x.json", data))
    assert "JSON object" in str(exc.value)


def test_missing_and_non_utf8_files_are_refused(db, tmp_path):
    with pytest.raises(CommandError) as exc:
        run_import(str(tmp_path / "missing.json"))
    assert "Cannot read" in str(exc.value)
    path = tmp_path / "latin1.json"
    path.write_bytes('{"x": "caf\xe9"}'.encode("latin-1"))
    with pytest.raises(CommandError) as exc:
        run_import(str(path))
    assert "not UTF-8" in str(exc.value)


def test_an_existing_workspace_id_is_refused(populated, tmp_path):
    workspace = populated["workspace"]
    data = export_workspace(workspace)
    before = counts()
    with pytest.raises(CommandError) as exc:
        run_import(write(tmp_path / "again.json", data))
    assert f"workspace {workspace.pk} already exists" in str(exc.value)
    assert counts() == before


@pytest.mark.parametrize(
    ("key", "column", "index"),
    [("cards", "card_id", 2), ("decks", "deck_id", 0), ("review_events", "review_event_id", 1)],
)
def test_an_id_present_in_another_workspace_is_refused(document, tmp_path, key, column, index):
    other = services.create_workspace(UserFactory(), "Other")
    card = make_card(other)
    deck = make_deck(other)
    event = services.submit_review(other, card.id, 2).review_event
    taken = {"cards": card.id, "decks": deck.id, "review_events": event.id}[key]
    data = broken(document, set_path(key, index, column, value=str(taken)))
    before = counts()
    with pytest.raises(CommandError) as exc:
        run_import(write(tmp_path / "clash.json", data))
    assert f"{key}[{index}].{column}: {taken} already exists in another workspace" in str(exc.value)
    assert counts() == before


def test_an_invalid_owner_name_is_refused(document, tmp_path):
    before = counts()
    with pytest.raises(CommandError) as exc:
        run_import(write(tmp_path / "x.json", document), "--owner", "no spaces allowed!")
    assert "--owner" in str(exc.value)
    assert counts() == before


def test_import_service_raises_transfer_errors(db):
    with pytest.raises(TransferError):
        import_workspace({"format": 1}, "x")
