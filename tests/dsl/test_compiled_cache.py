"""The compiled-queryset cache (dsl.executor._compiled_select) must never carry rows or scope from
one request to the next: the same SQL from two workspaces returns each its own rows, a repeat
sees writes made in between, and clock-reading statements are compiled afresh."""

from __future__ import annotations

from datetime import timedelta

import pytest

import dsl.executor
from flashcards import services
from tests.factories import make_card

SQL = "SELECT front_text FROM cards WHERE tags OVERLAP ('cache') ORDER BY front_text"


def _rows(client, sql=SQL):
    response = client.post("/v1/agent/sql", {"sql": sql}, format="json")
    assert response.status_code == 200, response.json()
    return [row["front_text"] for row in response.json()["data"]["rows"]]


@pytest.mark.django_db
def test_same_sql_in_two_workspaces_returns_each_its_own_rows(
    api, workspace, other_user, other_workspace, client_for
):
    make_card(workspace, front_text="mine", tags=["cache"])
    make_card(other_workspace, front_text="theirs", tags=["cache"])
    _, other_key = services.create_api_key(other_user, "other", workspace=other_workspace)
    other = client_for(other_key)
    for _ in range(3):
        assert _rows(api) == ["mine"]
        assert _rows(other) == ["theirs"]


@pytest.mark.django_db
def test_a_repeat_sees_writes_made_in_between(api, workspace):
    make_card(workspace, front_text="first", tags=["cache"])
    assert _rows(api) == ["first"]
    make_card(workspace, front_text="second", tags=["cache"])
    assert _rows(api) == ["first", "second"]


@pytest.mark.django_db
def test_clock_reading_statements_are_not_reused(api, workspace, monkeypatch):
    card = make_card(workspace, front_text="due soon")
    services.submit_review(workspace, card.id, "again")
    sql = "SELECT front_text FROM cards WHERE due_at <= NOW()"
    assert _rows(api, sql) == []
    later = services.now_ms() + timedelta(hours=1)
    monkeypatch.setattr(dsl.executor, "now_ms", lambda: later)
    assert _rows(api, sql) == ["due soon"]
