"""Two tenants: every service called with workspace A leaves workspace B's rows exactly as they
were, whatever ids it is handed."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flashcards import services
from flashcards.models import Card, ChangeLog, Deck, ReviewEvent, Tag, Workspace
from flashcards.rows import card_row, deck_row, workspace_row
from flashcards.services import NotFoundError
from flashcards.services.transfer import export_workspace
from tests.factories import make_cards, make_deck

T0 = datetime(2026, 3, 5, 10, 0, tzinfo=UTC)


def snapshot(workspace: Workspace) -> dict[str, object]:
    """Everything a tenant owns, in a comparable form."""
    workspace = Workspace.objects.get(pk=workspace.pk)
    return {
        "workspace": workspace_row(workspace),
        "counters": (workspace.last_change_id, workspace.last_review_sequence),
        "cards": [
            (card_row(c), c.deleted_at)
            for c in Card.objects.filter(workspace=workspace).order_by("id")
        ],
        "decks": [
            (deck_row(d), d.deleted_at)
            for d in Deck.objects.filter(workspace=workspace).order_by("id")
        ],
        "events": list(ReviewEvent.objects.filter(workspace=workspace).values().order_by("id")),
        "changes": ChangeLog.objects.filter(workspace=workspace).count(),
        "tags": list(Tag.objects.filter(workspace=workspace).values_list("key", "name")),
    }


@pytest.fixture
def tenants(workspace, other_workspace):
    mine = make_cards(workspace, 2, tags=["Shared"])
    theirs = make_cards(other_workspace, 2, tags=["SHARED"])
    services.submit_review(other_workspace, theirs[0].id, 2, reviewed_at=T0)
    my_deck = make_deck(workspace)
    their_deck = make_deck(other_workspace, tags=["shared"])
    return {
        "a": workspace,
        "b": other_workspace,
        "my_cards": mine,
        "their_cards": theirs,
        "my_deck": my_deck,
        "their_deck": their_deck,
    }


def test_card_writes_with_the_other_tenants_ids_are_no_ops(tenants):
    a, b = tenants["a"], tenants["b"]
    their_ids = [c.id for c in tenants["their_cards"]]
    before = snapshot(b)
    assert services.update_cards(a, their_ids, {"front_text": "pwned", "tags": ["x"]}) == []
    assert services.delete_cards(a, their_ids) == []
    assert snapshot(b) == before


def test_mixed_id_lists_touch_only_the_own_rows(tenants):
    a, b = tenants["a"], tenants["b"]
    mine, theirs = tenants["my_cards"][0], tenants["their_cards"][0]
    before = snapshot(b)
    updated = services.update_cards(a, [theirs.id, mine.id], {"back_text": "ok"})
    assert [c.id for c in updated] == [mine.id]
    deleted = services.delete_cards(a, [mine.id, theirs.id])
    assert [c.id for c in deleted] == [mine.id]
    assert snapshot(b) == before


def test_deck_writes_with_the_other_tenants_ids_are_no_ops(tenants):
    a, b = tenants["a"], tenants["b"]
    their_deck = tenants["their_deck"]
    before = snapshot(b)
    assert services.update_decks(a, [their_deck.id], {"name": "pwned"}) == []
    assert services.delete_decks(a, [their_deck.id]) == []
    assert snapshot(b) == before


def test_reviewing_the_other_tenants_card_is_not_found(tenants):
    a, b = tenants["a"], tenants["b"]
    before = snapshot(b)
    with pytest.raises(NotFoundError):
        services.submit_review(a, tenants["their_cards"][1].id, 3)
    with pytest.raises(NotFoundError):
        services.get_live_card(a, tenants["their_cards"][0].id)
    assert snapshot(b) == before
    assert not ReviewEvent.objects.filter(workspace=a).exists()


def test_settings_and_reset_stay_in_their_workspace(tenants):
    a, b = tenants["a"], tenants["b"]
    before = snapshot(b)
    services.update_scheduler_settings(a, {"desired_retention": 0.7, "enable_fuzz": False})
    services.reset_progress(a, services.RESET_CONFIRMATION)
    assert snapshot(b) == before


def test_creating_in_a_does_not_affect_b_spellings_or_numbers(tenants):
    a, b = tenants["a"], tenants["b"]
    before = snapshot(b)
    services.create_cards(a, [{"front_text": "q", "back_text": "", "tags": ["NEW", "shared"]}])
    services.create_decks(a, [{"name": "d", "tags": ["new"]}])
    assert snapshot(b) == before


def test_export_holds_only_the_own_rows(tenants):
    data = export_workspace(tenants["a"])
    their_ids = {str(c.id) for c in tenants["their_cards"]} | {str(tenants["their_deck"].id)}
    exported = {r["card_id"] for r in data["cards"]} | {r["deck_id"] for r in data["decks"]}
    assert exported == {str(c.id) for c in tenants["my_cards"]} | {str(tenants["my_deck"].id)}
    assert not exported & their_ids
    assert data["review_events"] == []


def test_membership_guards_workspace_lookup_and_key_selection(tenants, user):
    b = tenants["b"]
    with pytest.raises(NotFoundError):
        services.get_member_workspace(user, b.pk)
    with pytest.raises(NotFoundError):
        services.create_api_key(user, "x", workspace=b)
    key, _ = services.create_api_key(user, "x")
    with pytest.raises(NotFoundError):
        services.select_key_workspace(key, b.pk)
    with pytest.raises(NotFoundError):
        services.select_user_workspace(user, b.pk)
    assert list(services.member_workspaces(user)) == [tenants["a"]]


OPERATIONS = st.sampled_from(["update_card", "delete_card", "update_deck", "delete_deck", "review"])


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    steps=st.lists(
        st.tuples(OPERATIONS, st.lists(st.integers(min_value=0, max_value=5), max_size=4)),
        max_size=6,
    )
)
def test_any_sequence_of_writes_in_a_never_changes_b(tenants, steps):
    """Ids are drawn from both tenants; whatever the mix, B stays byte-for-byte the same."""
    a, b = tenants["a"], tenants["b"]
    pool = [
        *(c.id for c in tenants["my_cards"]),
        *(c.id for c in tenants["their_cards"]),
        tenants["my_deck"].id,
        tenants["their_deck"].id,
    ]
    before = snapshot(b)
    for operation, picks in steps:
        ids = [pool[i] for i in picks]
        if operation == "update_card":
            services.update_cards(a, ids, {"back_text": "x", "tags": ["Shared", "y"]})
        elif operation == "delete_card":
            services.delete_cards(a, ids)
        elif operation == "update_deck":
            services.update_decks(a, ids, {"tags": ["shared"]})
        elif operation == "delete_deck":
            services.delete_decks(a, ids)
        else:
            for card_id in ids:
                with contextlib.suppress(NotFoundError):
                    services.submit_review(a, card_id, 2)
    assert snapshot(b) == before


def test_tag_rows_never_cross_workspaces(tenants):
    """The dialect's tag-row scope is the workspace's tag rows alone (no join to the cards), so a
    tag row must always belong to its card's workspace and to a live card: every write path keeps
    it so. A tag row pointing across workspaces would leak the other tenant's tags into
    GROUP BY tag."""
    from django.db.models import F

    from flashcards.models import CardTag, DeckTag

    a = tenants["a"]
    their_ids = [c.id for c in tenants["their_cards"]]
    mine = [c.id for c in tenants["my_cards"]]
    services.update_cards(a, their_ids + mine, {"tags": ["moved", "Shared"]})
    services.delete_cards(a, their_ids + mine[:1])
    services.update_decks(a, [tenants["their_deck"].id], {"tags": ["stolen"]})
    assert not CardTag.objects.exclude(workspace_id=F("card__workspace_id")).exists()
    assert not DeckTag.objects.exclude(workspace_id=F("deck__workspace_id")).exists()
    assert not CardTag.objects.filter(card__deleted_at__isnull=False).exists()
    from dsl.runtime.service import run_sql

    outcome = run_sql(
        sql="SELECT tag, COUNT(*) AS n FROM cards GROUP BY tag",
        workspace=a, user=None, api_key=None, surface="rest", mode="read",
        dry_run=False, request_id="isolation", docs={},
    )  # fmt: skip
    assert outcome.body["data"]["rows"] == [{"tag": "moved", "n": 1}, {"tag": "Shared", "n": 1}]
