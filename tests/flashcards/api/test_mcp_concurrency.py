"""MCP tool calls of different users run side by side (issue #20 item 3): a slow call of one user
does not delay another user's call. Through the real /mcp endpoint (uvicorn, the SDK's client).

The slow call is made slow deterministically: the statement's executor waits on an event the test
sets only after the other user's call has finished, so with one process-wide thread for every call
the other call could not finish and the test fails on its timeout instead of passing by luck."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from dsl.runtime import service
from flashcards import services
from tests.flashcards.api.test_mcp import call

pytestmark = pytest.mark.django_db(transaction=True)


def test_another_users_call_finishes_while_a_slow_call_runs(
    live_server_url, api_key, workspace, other_user, other_workspace, monkeypatch
):
    _, other_key = services.create_api_key(other_user, "other", workspace=other_workspace)
    started, release = threading.Event(), threading.Event()
    real = service.execute_batch

    def held_for_alice(text: str, target: Any, **kwargs: Any) -> Any:
        if target.pk == workspace.pk:
            started.set()
            if not release.wait(timeout=20):
                raise AssertionError("the slow call was never released")
        return real(text, target, **kwargs)

    monkeypatch.setattr(service, "execute_batch", held_for_alice)
    slow: dict[str, Any] = {}

    def alice() -> None:
        slow["body"] = call(live_server_url, api_key.plaintext, "sql_query", {"sql": "SHOW TABLES"})

    thread = threading.Thread(target=alice, daemon=True)
    thread.start()
    try:
        assert started.wait(timeout=10), "alice's call never reached the executor"
        # Alice's call is now holding its thread. Mallory's must not wait for it.
        other = threading.Thread(
            target=lambda: slow.setdefault(
                "other", call(live_server_url, other_key, "list_workspaces", {})
            ),
            daemon=True,
        )
        other.start()
        other.join(timeout=10)
        assert not other.is_alive(), "another user's list_workspaces waited for the slow call"
        assert slow["other"]["ok"] is True
        assert [w["name"] for w in slow["other"]["data"]["workspaces"]] == ["Other"]
        assert "body" not in slow  # the slow call really was still running
    finally:
        release.set()
        thread.join(timeout=20)
    assert slow["body"]["ok"] is True
