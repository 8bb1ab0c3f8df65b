from __future__ import annotations

import pytest

from flashcards import services
from tests.factories import make_cards, make_deck

# Written only into the other tenant: seeing it in any returned row is a leak.
FOREIGN_MARKER = "zq-foreign-7f3a"


@pytest.fixture
def own_data(workspace):
    cards = make_cards(workspace, 5, tags=["english", "verbs"], effort_level="fast")
    services.submit_review(workspace, cards[0].pk, "good")
    make_deck(workspace, name="Mine", tags=["english"])
    return cards


@pytest.fixture
def foreign(other_workspace) -> set[str]:
    """Cards, a deck and a review in another workspace; returns every string that identifies
    them (ids and the marker)."""
    cards = make_cards(
        other_workspace,
        3,
        front_text=f"{FOREIGN_MARKER} front",
        back_text=f"{FOREIGN_MARKER} back",
        tags=["english", FOREIGN_MARKER],
    )
    deck = make_deck(other_workspace, name=f"{FOREIGN_MARKER} deck", tags=["english"])
    review = services.submit_review(other_workspace, cards[0].pk, "again")
    return {
        FOREIGN_MARKER,
        str(other_workspace.pk),
        str(deck.pk),
        str(review.review_event.pk),
        *(str(card.pk) for card in cards),
    }
