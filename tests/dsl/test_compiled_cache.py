"""The compiled-SELECT cache (dsl.runtime.reads.ready_select) must never carry rows, scope or time from
one request to the next: the same SQL from two workspaces returns each its own rows, a repeat
sees writes made in between, and a statement that reads the clock is reused with each request's
own moment bound to NOW()."""

from __future__ import annotations

from datetime import timedelta

import pytest

import dsl.runtime.reads
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
def test_clock_reading_statements_are_reused_with_each_requests_moment(api, workspace, monkeypatch):
    card = make_card(workspace, front_text="due soon")
    services.submit_review(workspace, card.id, "again")
    sql = "SELECT front_text FROM cards WHERE due_at <= NOW()"
    assert _rows(api, sql) == []
    cached = len(dsl.runtime.reads._ready)
    later = services.now_ms() + timedelta(hours=1)
    monkeypatch.setattr(dsl.runtime.executor, "now_ms", lambda: later)
    assert _rows(api, sql) == ["due soon"]
    assert len(dsl.runtime.reads._ready) == cached  # the same compiled SQL, a new moment


@pytest.mark.django_db
@pytest.mark.parametrize(
    "condition, hours_later, expected",
    [
        ("due_at <= NOW() + INTERVAL '2 hours'", 0, ["due soon"]),
        ("due_at BETWEEN NOW() - INTERVAL '1 day' AND NOW()", 0, []),
        ("due_at BETWEEN NOW() - INTERVAL '1 day' AND NOW()", 1, ["due soon"]),
        ("NOT due_at > NOW()", 1, ["due soon"]),
        ("due_at > NOW() OR due_at IS NULL", 1, ["not due"]),
    ],
)
def test_every_clock_form_is_bound_per_request(
    api, workspace, monkeypatch, condition, hours_later, expected
):
    card = make_card(workspace, front_text="due soon")
    services.submit_review(workspace, card.id, "again")  # due in a few minutes
    make_card(workspace, front_text="not due")  # new: due_at is NULL
    sql = f"SELECT front_text FROM cards WHERE {condition} ORDER BY front_text"
    _rows(api, sql)  # compiled and cached at the real moment
    later = services.now_ms() + timedelta(hours=hours_later)
    monkeypatch.setattr(dsl.runtime.executor, "now_ms", lambda: later)
    assert _rows(api, sql) == expected


@pytest.mark.django_db
def test_having_against_the_clock_is_bound_per_request(api, workspace, monkeypatch):
    card = make_card(workspace, front_text="x")
    services.submit_review(workspace, card.id, "good")
    sql = (
        "SELECT card_id, COUNT(*) AS n FROM review_events GROUP BY card_id "
        "HAVING MAX(reviewed_at_server) > NOW() - INTERVAL '1 hour'"
    )
    response = api.post("/v1/agent/sql", {"sql": sql}, format="json")
    assert response.json()["data"]["rowCount"] == 1
    later = services.now_ms() + timedelta(hours=2)
    monkeypatch.setattr(dsl.runtime.executor, "now_ms", lambda: later)
    response = api.post("/v1/agent/sql", {"sql": sql}, format="json")
    assert response.json()["data"]["rowCount"] == 0


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-30 00:08:04.144+00",
        "2026-11-30 00:08:04+00",
        "2026-11-30 00:08:04.1+00",
        "2026-11-30 00:08:04.12+00",
        "2026-11-30 00:08:04.123999+00",
        "2026-11-30 00:08:04.000001+00",
        "0001-01-01 00:00:00+00",
        "9999-12-31 23:59:59.999999+00",
        "2026-11-30 01:08:04.5+01",  # another session time zone: through a datetime
    ],
)
def test_postgresql_timestamp_text_is_published_like_a_datetime(text):
    from datetime import datetime

    from dsl.runtime.rows import published_timestamp

    assert published_timestamp(text) == services.format_timestamp(datetime.fromisoformat(text))


@pytest.mark.django_db
def test_select_star_rows_match_the_django_formatted_rows(api, workspace):
    """The ready path (PostgreSQL: uuid / timestamptz as text) formats exactly like the
    queryset path used for RETURNING rows."""
    card = make_card(workspace, front_text="same", back_text="answer", tags=["a", "b"])
    services.submit_review(workspace, card.id, "good")
    selected = _select_star(api)
    response = api.post(
        "/v1/agent/sql",
        {"sql": f"UPDATE cards SET back_text = 'answer' WHERE card_id = '{card.id}' RETURNING *"},
        format="json",
    )
    assert response.status_code == 200, response.json()
    returned = response.json()["data"]["rows"][0]
    assert {k: v for k, v in selected.items() if k != "updated_at"} == {
        k: v for k, v in returned.items() if k != "updated_at"
    }
    assert selected["due_at"].endswith("Z") and len(selected["due_at"]) == 24


def _select_star(api):
    response = api.post("/v1/agent/sql", {"sql": "SELECT * FROM cards"}, format="json")
    assert response.status_code == 200, response.json()
    return response.json()["data"]["rows"][0]
