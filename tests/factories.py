"""factory-boy factories. Content rows are created through the service functions, as in
production, so tests never hold data the product itself could not have written."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model

from flashcards import services
from flashcards.models import Workspace


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")


def make_workspace(user=None, name: str = "Personal") -> Workspace:
    return services.create_workspace(user or UserFactory(), name)


def make_cards(workspace: Workspace, count: int = 1, **fields):
    rows = []
    for i in range(count):
        row = {"front_text": f"Front {i}", "back_text": f"Back {i}"}
        row.update(fields)
        rows.append(row)
    return services.create_cards(workspace, rows)


def make_card(workspace: Workspace, **fields):
    return make_cards(workspace, 1, **fields)[0]


def make_deck(workspace: Workspace, **fields):
    row = {"name": "Deck"}
    row.update(fields)
    return services.create_decks(workspace, [row])[0]
