"""Card services: every invariant of domain.md §2, sync stamps, the change log and query counts."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from flashcards import services
from flashcards.models import Card, CardTag, ChangeLog, ReviewEvent, Tag
from flashcards.services import DomainError, WriteContext
from tests.factories import make_card, make_cards, make_workspace


def card_tags(card: Card) -> list[str]:
    """The indexed tag rows of a card, in position order."""
    return list(
        CardTag.objects.filter(card=card).order_by("position").values_list("tag__name", flat=True)
    )


def changes_of(workspace) -> list[tuple[int, str, str, str]]:
    return list(
        ChangeLog.objects.filter(workspace=workspace)
        .order_by("change_id")
        .values_list("change_id", "entity_type", "entity_id", "action")
    )


# ---------------------------------------------------------------- create: field invariants


def test_create_trims_text_and_applies_defaults(workspace):
    card = services.create_cards(workspace, [{"front_text": "  Hola \n", "back_text": "\tHello "}])[
        0
    ]
    card.refresh_from_db()
    assert (card.front_text, card.back_text) == ("Hola", "Hello")
    assert card.card_type == "basic"
    assert card.effort_level == "fast"
    assert card.tags == []
    assert card.fsrs_card_state == "new"
    assert card.due_at is None
    assert card.metadata["version"] == 1


@pytest.mark.parametrize("card_type", ["", "   ", None])
def test_blank_card_type_becomes_basic(workspace, card_type):
    card = make_card(workspace, card_type=card_type)
    card.refresh_from_db()
    assert card.card_type == "basic"


def test_card_type_is_trimmed_and_kept(workspace):
    card = make_card(workspace, card_type="  cloze ")
    card.refresh_from_db()
    assert card.card_type == "cloze"


def test_card_type_longer_than_its_column_is_refused(workspace):
    with pytest.raises(DomainError) as exc:
        make_card(workspace, card_type="x" * 101)
    assert exc.value.field == "card_type"
    assert not Card.objects.filter(workspace=workspace).exists()


@pytest.mark.parametrize("front", ["", "   ", "\n\t"])
def test_empty_front_text_is_refused(workspace, front):
    with pytest.raises(DomainError) as exc:
        make_card(workspace, front_text=front)
    assert exc.value.field == "front_text"
    assert not Card.objects.exists()


def test_back_text_may_be_empty(workspace):
    card = make_card(workspace, back_text="   ")
    card.refresh_from_db()
    assert card.back_text == ""


@pytest.mark.parametrize("missing", ["front_text", "back_text"])
def test_front_and_back_are_required_on_create(workspace, missing):
    row = {"front_text": "Q", "back_text": "A"}
    del row[missing]
    with pytest.raises(DomainError) as exc:
        services.create_cards(workspace, [row])
    assert exc.value.field == missing


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("front_text", None),
        ("front_text", 12),
        ("back_text", None),
        ("back_text", ["a"]),
        ("front_text", "nul\x00byte"),
        ("front_text", "lone \ud800 surrogate"),
        ("front_text", "x" * 20_001),
    ],
)
def test_bad_text_values_are_refused(workspace, field, value):
    row = {"front_text": "Q", "back_text": "A", field: value}
    with pytest.raises(DomainError) as exc:
        services.create_cards(workspace, [row])
    assert exc.value.field == field
    assert not Card.objects.exists()


@pytest.mark.parametrize("effort", ["fast", "medium", "long"])
def test_effort_levels_are_accepted(workspace, effort):
    assert make_card(workspace, effort_level=effort).effort_level == effort


@pytest.mark.parametrize("effort", ["FAST", "slow", "", None, 1])
def test_effort_level_outside_the_enum_is_refused(workspace, effort):
    with pytest.raises(DomainError) as exc:
        make_card(workspace, effort_level=effort)
    assert exc.value.field == "effort_level"


@pytest.mark.parametrize("column", ["reps", "card_id", "due_at", "metadata", "deleted_at"])
def test_read_only_columns_are_refused(workspace, column):
    with pytest.raises(DomainError) as exc:
        services.create_cards(workspace, [{"front_text": "Q", "back_text": "A", column: 1}])
    assert exc.value.code == "read_only_column"
    assert "front_text" in exc.value.message  # names the writable columns


# ---------------------------------------------------------------- tags


def test_tags_are_trimmed_nfc_normalised_and_deduplicated_in_order(workspace):
    decomposed = "Cafe\u0301"  # "Café" as e + combining accent
    card = make_card(
        workspace, tags=["  verbs ", "", "Spanish", "  ", decomposed, "SPANISH", "café", "verbs"]
    )
    card.refresh_from_db()
    assert card.tags == ["verbs", "Spanish", "Caf\u00e9"]
    assert card_tags(card) == card.tags


@pytest.mark.parametrize("tags", ["spanish", [1], [["nested"]], {"a": 1}, ["x" * 256]])
def test_malformed_tags_are_refused(workspace, tags):
    with pytest.raises(DomainError) as exc:
        make_card(workspace, tags=tags)
    assert exc.value.field == "tags"


def test_more_than_100_distinct_tags_are_refused(workspace):
    with pytest.raises(DomainError):
        make_card(workspace, tags=[f"t{i}" for i in range(101)])
    assert make_card(workspace, tags=[f"t{i}" for i in range(100)]).tags[-1] == "t99"


def test_first_spelling_wins_across_the_workspace(workspace):
    first = make_card(workspace, tags=["Grammar"])
    second = make_card(workspace, tags=["GRAMMAR", "verbs"])
    second.refresh_from_db()
    assert second.tags == ["Grammar", "verbs"]
    assert card_tags(second) == ["Grammar", "verbs"]
    assert list(Tag.objects.filter(workspace=workspace).values_list("name", flat=True)) == [
        "Grammar",
        "verbs",
    ]
    assert first.tags == ["Grammar"]


def test_first_spelling_survives_deletion_of_the_card_that_introduced_it(workspace):
    first = make_card(workspace, tags=["PyThOn"])
    services.delete_cards(workspace, [first.id])
    later = make_card(workspace, tags=["python"])
    later.refresh_from_db()
    assert later.tags == ["PyThOn"]


def test_spelling_within_one_batch_follows_row_order(workspace):
    cards = make_cards(workspace, 2, tags=["x"])
    services.update_cards(workspace, [cards[1].id], {"tags": ["Travel"]})
    new = services.create_cards(
        workspace,
        [
            {"front_text": "a", "back_text": "", "tags": ["Spanish"]},
            {"front_text": "b", "back_text": "", "tags": ["spanish", "TRAVEL"]},
        ],
    )
    assert [c.tags for c in new] == [["Spanish"], ["Spanish", "Travel"]]


def test_tag_spellings_are_per_workspace(workspace, other_workspace):
    make_card(workspace, tags=["English"])
    theirs = make_card(other_workspace, tags=["ENGLISH"])
    theirs.refresh_from_db()
    assert theirs.tags == ["ENGLISH"]


# ---------------------------------------------------------------- bulk limit


def test_at_most_100_rows_per_create(workspace):
    rows = [{"front_text": f"q{i}", "back_text": ""} for i in range(101)]
    with pytest.raises(DomainError) as exc:
        services.create_cards(workspace, rows)
    assert exc.value.code == "too_many_rows"
    assert not Card.objects.exists()
    assert len(services.create_cards(workspace, rows[:100])) == 100


def test_at_most_100_ids_per_update_and_delete(workspace):
    ids = [uuid.uuid4() for _ in range(101)]
    for call in (
        lambda: services.update_cards(workspace, ids, {"back_text": "x"}),
        lambda: services.delete_cards(workspace, ids),
    ):
        with pytest.raises(DomainError) as exc:
            call()
        assert exc.value.code == "too_many_rows"


def test_one_bad_row_writes_nothing(workspace):
    rows = [{"front_text": "ok", "back_text": ""}, {"front_text": " ", "back_text": ""}]
    with pytest.raises(DomainError):
        services.create_cards(workspace, rows)
    assert not Card.objects.exists()
    assert not ChangeLog.objects.exists()


# ---------------------------------------------------------------- update


def test_update_changes_only_the_given_fields_and_stamps_sync_metadata(workspace):
    card = make_card(workspace, tags=["a"], effort_level="long")
    before = Card.objects.get(pk=card.pk)
    context = WriteContext(
        replica_id="phone-1",
        operation_id="op-42",
        client_updated_at=datetime(2026, 3, 5, 10, 0, 0, 123456, tzinfo=UTC),
    )
    [updated] = services.update_cards(
        workspace, [card.id], {"back_text": "  new back "}, context=context
    )
    card.refresh_from_db()
    assert card.back_text == "new back"
    assert (card.front_text, card.tags, card.effort_level) == ("Front 0", ["a"], "long")
    assert card.updated_at >= before.updated_at
    assert card.updated_at.microsecond % 1000 == 0
    assert card.client_updated_at == datetime(2026, 3, 5, 10, 0, 0, 123000, tzinfo=UTC)
    assert card.last_modified_by_replica_id == "phone-1"
    assert card.last_operation_id == "op-42"
    assert updated.back_text == "new back"


def test_update_rewrites_the_indexed_tags(workspace):
    card = make_card(workspace, tags=["a", "b"])
    services.update_cards(workspace, [card.id], {"tags": ["c", "A"]})
    card.refresh_from_db()
    assert card.tags == ["c", "a"]
    assert card_tags(card) == ["c", "a"]


def test_update_validates_like_create(workspace):
    card = make_card(workspace)
    for changes in ({"front_text": " "}, {"effort_level": "huge"}, {"reps": 3}, {}):
        with pytest.raises(DomainError):
            services.update_cards(workspace, [card.id], changes)
    card.refresh_from_db()
    assert card.front_text == "Front 0"
    assert len(changes_of(workspace)) == 1


def test_update_ignores_unknown_and_deleted_ids_and_returns_rows_in_id_order(workspace):
    a, b, c = make_cards(workspace, 3)
    services.delete_cards(workspace, [c.id])
    result = services.update_cards(
        workspace, [b.id, uuid.uuid4(), c.id, a.id, b.id], {"back_text": "x"}
    )
    assert [r.id for r in result] == [b.id, a.id]
    c.refresh_from_db()
    assert c.back_text == "Back 2"


def test_update_with_a_malformed_id_is_a_domain_error(workspace):
    with pytest.raises(DomainError) as exc:
        services.update_cards(workspace, ["not-a-uuid"], {"back_text": "x"})
    assert exc.value.field == "card_id"


# ---------------------------------------------------------------- delete


def test_delete_is_soft_and_keeps_review_events(workspace):
    card = make_card(workspace)
    services.submit_review(workspace, card.id, 2)
    [deleted] = services.delete_cards(workspace, [card.id])
    assert deleted.deleted_at is None  # the row as it was just before deletion
    card.refresh_from_db()
    assert card.deleted_at is not None
    assert card.updated_at == card.deleted_at
    assert ReviewEvent.objects.filter(card=card).count() == 1
    assert changes_of(workspace)[-1][1:] == ("card", str(card.id), "delete")


def test_deleting_twice_is_a_no_op(workspace):
    card = make_card(workspace)
    services.delete_cards(workspace, [card.id])
    count = ChangeLog.objects.count()
    assert services.delete_cards(workspace, [card.id]) == []
    assert ChangeLog.objects.count() == count


def test_deleted_cards_cannot_be_fetched_or_updated(workspace):
    card = make_card(workspace)
    services.delete_cards(workspace, [card.id])
    with pytest.raises(services.NotFoundError):
        services.get_live_card(workspace, card.id)
    assert services.update_cards(workspace, [card.id], {"back_text": "x"}) == []


# ---------------------------------------------------------------- change log


def test_exactly_one_change_per_written_card_with_increasing_numbers(workspace):
    cards = make_cards(workspace, 3)
    services.update_cards(workspace, [cards[0].id, cards[2].id], {"back_text": "x"})
    services.delete_cards(workspace, [cards[1].id])
    log = changes_of(workspace)
    assert [entry[0] for entry in log] == [1, 2, 3, 4, 5, 6]
    assert [(e[2], e[3]) for e in log] == [
        (str(cards[0].id), "upsert"),
        (str(cards[1].id), "upsert"),
        (str(cards[2].id), "upsert"),
        (str(cards[0].id), "upsert"),
        (str(cards[2].id), "upsert"),
        (str(cards[1].id), "delete"),
    ]
    workspace.refresh_from_db()
    assert workspace.last_change_id == 6


def test_change_numbers_are_per_workspace(workspace, other_workspace):
    make_cards(workspace, 2)
    make_cards(other_workspace, 1)
    make_cards(workspace, 1)
    assert [e[0] for e in changes_of(workspace)] == [1, 2, 3]
    assert [e[0] for e in changes_of(other_workspace)] == [1]


def test_change_entries_carry_the_write_context(workspace):
    context = WriteContext(replica_id="web-7", operation_id="op-1")
    card = services.create_cards(
        workspace, [{"front_text": "q", "back_text": ""}], context=context
    )[0]
    entry = ChangeLog.objects.get(workspace=workspace, entity_id=str(card.id))
    assert (entry.replica_id, entry.operation_id) == ("web-7", "op-1")
    card.refresh_from_db()
    assert card.client_updated_at == card.updated_at  # no client timestamp: the server's


def test_writes_to_a_deleted_workspace_are_refused(db):
    workspace = make_workspace()
    workspace.deleted_at = services.now_ms()
    workspace.save(update_fields=["deleted_at"])
    with pytest.raises(services.NotFoundError):
        make_card(workspace)


# ---------------------------------------------------------------- query counts


def _rows(count: int) -> list[dict[str, object]]:
    return [
        {"front_text": f"q{i}", "back_text": "a", "tags": ["shared", f"own-{i}"]}
        for i in range(count)
    ]


def test_query_count_does_not_grow_with_rows(workspace, django_assert_max_num_queries):
    services.create_cards(workspace, _rows(2))  # warm-up: tags "shared" exists
    with django_assert_max_num_queries(20):
        cards = services.create_cards(workspace, _rows(100))
    ids = [c.id for c in cards]
    with django_assert_max_num_queries(20):
        services.update_cards(workspace, ids, {"tags": ["x", "y"], "back_text": "b"})
    with django_assert_max_num_queries(12):
        services.delete_cards(workspace, ids)
    assert Card.objects.filter(workspace=workspace, deleted_at__isnull=False).count() == 100
