from __future__ import annotations

import pytest

from tests.flashcards.sync.helpers import SyncClient


@pytest.fixture
def sync(api, workspace) -> SyncClient:
    """The sync routes of `workspace`, called with its owner's API key."""
    return SyncClient(api, workspace.pk)
