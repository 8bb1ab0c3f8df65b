from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import settings as hypothesis_settings
from rest_framework.test import APIClient

from flashcards import services
from flashcards.http import throttling
from flashcards.services import key_cache, timestamps
from tests.factories import UserFactory

pytest_plugins = ["tests.support.fixtures"]

# Property tests: the same cases on every CI run (a failure there is reproducible from its log), new
# random cases on a developer's machine and in `make fuzz`. HYPOTHESIS_PROFILE overrides the choice.
hypothesis_settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
hypothesis_settings.register_profile("dev")
hypothesis_settings.register_profile("fuzz", derandomize=False)
hypothesis_settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") == "true" else "dev")
)


@pytest.fixture(autouse=True)
def _fresh_process_caches():
    """Per-process caches outlive a test's rolled-back database: start each test without them."""
    key_cache.keys.clear()
    key_cache.forget_generation()
    throttling.reset_local_allowances()
    yield
    key_cache.keys.clear()
    key_cache.forget_generation()
    throttling.reset_local_allowances()


class SteppedClock:
    """The product's clock in a test (flashcards.services.timestamps.clock): it stands at
    ``moment`` and moves only when told, or by ``step`` on every reading."""

    def __init__(self, moment: datetime, step: timedelta = timedelta(0)) -> None:
        self.moment = moment
        self.step = step

    def __call__(self) -> datetime:
        current = self.moment
        self.moment += self.step
        return current

    def advance(self, by: timedelta) -> None:
        self.moment += by


@pytest.fixture
def frozen_clock():
    """The product's clock, stopped at 2026-03-10 10:00:00 UTC (a minute's start); tests move it
    with ``advance`` instead of sleeping."""
    stepped = SteppedClock(datetime(2026, 3, 10, 10, 0, tzinfo=UTC))
    with timestamps.clock(stepped):
        yield stepped


@pytest.fixture
def user(db):
    return UserFactory(username="alice")


@pytest.fixture
def workspace(user):
    return services.create_workspace(user, "Personal")


@pytest.fixture
def api_key(user, workspace):
    key, plaintext = services.create_api_key(user, "test", workspace=workspace)
    key.plaintext = plaintext
    return key


@pytest.fixture
def client_for():
    """An APIClient authenticated with the given plaintext API key."""

    def make(plaintext: str) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"ApiKey {plaintext}")
        return client

    return make


@pytest.fixture
def api(api_key, client_for) -> APIClient:
    return client_for(api_key.plaintext)


@pytest.fixture
def other_user(db):
    return UserFactory(username="mallory")


@pytest.fixture
def other_workspace(other_user):
    """A second tenant whose rows must never leak into `workspace`."""
    return services.create_workspace(other_user, "Other")
