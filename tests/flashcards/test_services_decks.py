"""Deck services: the saved filter's invariants, tags shared with cards, soft delete, change log."""

from __future__ import annotations

import uuid

import pytest

from flashcards import services
from flashcards.models import ChangeLog, Deck, DeckTag, Tag
from flashcards.services import DomainError, WriteContext
from tests.factories import make_card, make_deck


def deck_tags(deck: Deck) -> list[str]:
    return list(
        DeckTag.objects.filter(deck=deck).order_by("position").values_list("tag__name", flat=True)
    )


def test_create_applies_defaults_and_trims_the_name(workspace):
    [deck] = services.create_decks(workspace, [{"name": "  Spanish  "}])
    deck.refresh_from_db()
    assert deck.name == "Spanish"
    assert (deck.effort_levels, deck.tags) == ([], [])
    assert deck.deleted_at is None
    assert deck.created_at == deck.updated_at


@pytest.mark.parametrize("name", ["", "  ", None, 3, "x" * 501])
def test_bad_names_are_refused(workspace, name):
    with pytest.raises(DomainError) as exc:
        services.create_decks(workspace, [{"name": name}])
    assert exc.value.field == "name"
    assert not Deck.objects.exists()


def test_name_is_required(workspace):
    with pytest.raises(DomainError) as exc:
        services.create_decks(workspace, [{"tags": ["a"]}])
    assert exc.value.field == "name"


def test_effort_levels_are_validated_and_deduplicated(workspace):
    deck = make_deck(workspace, effort_levels=["long", "fast", "long"])
    deck.refresh_from_db()
    assert deck.effort_levels == ["long", "fast"]
    for bad in (["slow"], "fast", [None], ["FAST"]):
        with pytest.raises(DomainError) as exc:
            make_deck(workspace, effort_levels=bad)
        assert exc.value.field == "effort_levels"


def test_tags_normalised_and_share_spelling_with_cards(workspace):
    make_card(workspace, tags=["Grammar"])
    deck = make_deck(workspace, tags=[" grammar ", "", "Verbs", "VERBS", "E\u0301t\u00e9"])
    deck.refresh_from_db()
    assert deck.tags == ["Grammar", "Verbs", "\u00c9t\u00e9"]
    assert deck_tags(deck) == deck.tags
    assert Tag.objects.filter(workspace=workspace).count() == 3


@pytest.mark.parametrize("column", ["deck_id", "created_at", "deleted_at", "workspace"])
def test_read_only_columns_are_refused(workspace, column):
    with pytest.raises(DomainError) as exc:
        services.create_decks(workspace, [{"name": "d", column: "x"}])
    assert exc.value.code == "read_only_column"


def test_at_most_100_decks_per_call(workspace):
    with pytest.raises(DomainError) as exc:
        services.create_decks(workspace, [{"name": f"d{i}"} for i in range(101)])
    assert exc.value.code == "too_many_rows"
    assert not Deck.objects.exists()
    ids = [uuid.uuid4() for _ in range(101)]
    with pytest.raises(DomainError):
        services.update_decks(workspace, ids, {"name": "x"})
    with pytest.raises(DomainError):
        services.delete_decks(workspace, ids)


def test_update_stamps_sync_metadata_and_rewrites_tags(workspace):
    deck = make_deck(workspace, tags=["a"])
    context = WriteContext(replica_id="tablet", operation_id="op-9")
    [updated] = services.update_decks(
        workspace, [deck.id], {"tags": ["b", "A"], "name": " New "}, context=context
    )
    deck.refresh_from_db()
    assert (deck.name, deck.tags) == ("New", ["b", "a"])
    assert deck_tags(deck) == ["b", "a"]
    assert (deck.last_modified_by_replica_id, deck.last_operation_id) == ("tablet", "op-9")
    assert updated.name == "New"


def test_update_refuses_empty_changes_and_bad_values(workspace):
    deck = make_deck(workspace)
    for changes in ({}, {"name": ""}, {"effort_levels": ["x"]}, {"tags": "a"}):
        with pytest.raises(DomainError):
            services.update_decks(workspace, [deck.id], changes)
    deck.refresh_from_db()
    assert deck.name == "Deck"


def test_delete_is_soft_and_recorded_once(workspace):
    deck = make_deck(workspace)
    services.delete_decks(workspace, [deck.id])
    deck.refresh_from_db()
    assert deck.deleted_at is not None
    assert services.delete_decks(workspace, [deck.id]) == []
    assert services.update_decks(workspace, [deck.id], {"name": "x"}) == []
    log = list(
        ChangeLog.objects.filter(workspace=workspace)
        .order_by("change_id")
        .values_list("change_id", "entity_type", "action")
    )
    assert log == [(1, "deck", "upsert"), (2, "deck", "delete")]


def test_change_numbers_continue_across_cards_and_decks(workspace):
    make_card(workspace)
    make_deck(workspace)
    make_card(workspace)
    numbers = list(
        ChangeLog.objects.filter(workspace=workspace)
        .order_by("change_id")
        .values_list("change_id", "entity_type")
    )
    assert numbers == [(1, "card"), (2, "deck"), (3, "card")]


def test_query_count_does_not_grow_with_rows(workspace, django_assert_max_num_queries):
    rows = [
        {"name": f"d{i}", "tags": ["t", f"own-{i}"], "effort_levels": ["fast"]} for i in range(100)
    ]
    with django_assert_max_num_queries(20):
        decks = services.create_decks(workspace, rows)
    ids = [d.id for d in decks]
    with django_assert_max_num_queries(20):
        services.update_decks(workspace, ids, {"tags": ["x"]})
    with django_assert_max_num_queries(12):
        services.delete_decks(workspace, ids)
    assert not Deck.objects.filter(workspace=workspace, deleted_at__isnull=True).exists()
