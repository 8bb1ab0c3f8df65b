from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from flashcards import services
from flashcards.models import Card, ReviewEvent
from tests.factories import make_cards
from tests.flashcards.api.helpers import assert_envelope_error, assert_envelope_ok, select_rows

pytestmark = pytest.mark.django_db

URL = "/v1/agent/workspace/reset-progress"


def review_all(workspace, cards):
    for card in cards:
        services.submit_review(workspace, card.pk, 2)


def test_reset_puts_every_card_back_to_new_and_keeps_reviews(api, workspace):
    cards = make_cards(workspace, 3)
    review_all(workspace, cards)
    data = assert_envelope_ok(api.post(URL, {"confirmation": "reset all progress"}, format="json"))
    assert data == {"workspace_id": str(workspace.pk), "cardsReset": 3}
    for card in Card.objects.filter(workspace=workspace):
        assert (card.fsrs_card_state, card.reps, card.due_at, card.fsrs_stability) == (
            "new",
            0,
            None,
            None,
        )
    assert ReviewEvent.objects.filter(workspace=workspace).count() == 3


@pytest.mark.parametrize(
    "body", [{}, {"confirmation": "yes"}, {"confirmation": "RESET ALL PROGRESS"}, ["reset"]]
)
def test_reset_needs_the_exact_confirmation(api, workspace, body):
    cards = make_cards(workspace, 1)
    review_all(workspace, cards)
    response = api.post(URL, body, format="json")
    assert_envelope_error(response, 400, "REQUEST_INVALID")
    assert Card.objects.get().reps == 1


def test_reset_never_touches_another_workspace(api, workspace, other_workspace):
    mine, theirs = make_cards(workspace, 1), make_cards(other_workspace, 1)
    review_all(workspace, mine)
    review_all(other_workspace, theirs)
    assert_envelope_ok(api.post(URL, {"confirmation": "reset all progress"}, format="json"))
    assert Card.objects.get(pk=theirs[0].pk).reps == 1
    foreign = {"confirmation": "reset all progress", "workspace_id": str(other_workspace.pk)}
    assert_envelope_error(api.post(URL, foreign, format="json"), 404, "WORKSPACE_NOT_FOUND")
    assert Card.objects.get(pk=theirs[0].pk).reps == 1


def test_reset_without_credentials_is_401(workspace):
    response = APIClient().post(URL, {"confirmation": "reset all progress"}, format="json")
    assert_envelope_error(response, 401, "AUTH_UNAUTHORIZED")


def test_the_reset_is_visible_to_the_dialect_at_once(api, workspace):
    review_all(workspace, make_cards(workspace, 2))
    assert_envelope_ok(api.post(URL, {"confirmation": "reset all progress"}, format="json"))
    rows = select_rows(
        api, "SELECT fsrs_card_state, COUNT(*) AS n FROM cards GROUP BY fsrs_card_state"
    )
    assert rows == [{"fsrs_card_state": "new", "n": 2}]
    assert select_rows(api, "SELECT COUNT(*) AS n FROM review_events") == [{"n": 2}]
