"""The number of SQL queries a request costs does not grow with the number of rows: filtering,
tags, grouping and paging happen in the database."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from tests.factories import make_cards
from tests.support.envelope import post_sql

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_time_limit():
    """These tests count queries, not time (the time limit has its own tests in test_timeout.py):
    on a PostgreSQL test database that the whole suite has churned, a read of a few hundred cards
    was seen to exceed the 5 s limit and fail for a reason this test does not measure."""
    with override_settings(FLASHCARDS_DSL={"STATEMENT_TIMEOUT_SECONDS": 120}):
        yield


# Auth, workspace, (PostgreSQL: statement timeout), the statement itself, the query log.
MAX_READ_QUERIES = 8

READS = [
    "SELECT card_id, tags FROM cards WHERE tags OVERLAP ('t1') ORDER BY front_text LIMIT 100",
    "SELECT card_id, tag FROM cards WHERE tags CONTAINS ('t1', 't2') LIMIT 100",
    "SELECT tag, COUNT(*) AS n FROM cards WHERE MATCH('front') GROUP BY tag ORDER BY n DESC",
    "SELECT * FROM cards UNNEST tags AS t WHERE t ILIKE 'T%' AND tags = ('t1', 't2')",
]


def queries_for(api, statement: str) -> int:
    api.post("/v1/agent/sql", {"sql": "SHOW TABLES"}, format="json")  # warm the auth refresh
    with CaptureQueriesContext(connection) as captured:
        response = post_sql(api, statement)
    assert response.status_code == 200, response.json()
    return len(captured)


@pytest.mark.parametrize("statement", READS)
def test_reads_cost_a_constant_number_of_queries(api, workspace, statement):
    make_cards(workspace, 5, tags=["t1", "t2"])
    few = queries_for(api, statement)
    for _ in range(3):
        make_cards(workspace, 100, tags=["t1", "t2", "t3"])
    many = queries_for(api, statement)
    assert few == many <= MAX_READ_QUERIES


def test_select_with_tags_stays_within_budget(api, workspace, django_assert_max_num_queries):
    make_cards(workspace, 100, tags=["t1", "t2"])
    api.post("/v1/agent/sql", {"sql": "SHOW TABLES"}, format="json")
    with django_assert_max_num_queries(MAX_READ_QUERIES):
        response = post_sql(api, "SELECT card_id, tags, tag FROM cards LIMIT 100")
    assert len(response.json()["data"]["rows"]) == 100


def test_bulk_writes_cost_a_constant_number_of_queries(api, workspace):
    def insert(prefix: str, count: int) -> int:
        values = ", ".join(f"('{prefix}{i}', 'a', ('x', 'y'))" for i in range(count))
        statement = f"INSERT INTO cards (front_text, back_text, tags) VALUES {values} RETURNING *"
        return queries_for(api, statement)

    def update(prefix: str) -> int:
        return queries_for(
            api,
            f"UPDATE cards SET tags = ('z') WHERE front_text LIKE '{prefix}%' RETURNING card_id, tags",
        )

    # Warm up once so that both measured calls reuse the tags x, y and z (creating a tag costs
    # queries of its own, whatever the number of rows).
    insert("warm", 1)
    update("warm")
    # SQLite caps a statement at 999 parameters, so Django splits a 100-row bulk insert into a
    # few statements there; the count stays bounded by the 100-row cap on INSERT.
    few, many = insert("a", 2), insert("b", 100)
    assert few <= many <= few + 4
    assert update("a") == update("b")


@pytest.fixture
def _query_log_elsewhere(monkeypatch):
    """The query log is written by a background thread when served (tests/dsl/
    test_querylog_writer.py); here its rows are dropped so only the request's own queries count."""
    from dsl.runtime.querylog_writer import writer

    monkeypatch.setattr(writer, "submit", lambda row: None)


@pytest.mark.django_db(transaction=True)
def test_a_repeated_read_by_a_known_key_costs_one_round_trip(api, workspace, _query_log_elsewhere):
    """The key, its user and its workspace come from the per-process cache, the statement from
    the prepared caches: the request's only query is its own."""
    make_cards(workspace, 30, tags=["t1"])
    statement = "SELECT card_id, front_text FROM cards WHERE tags OVERLAP ('t1') LIMIT 20"
    post_sql(api, statement)
    post_sql(api, statement)
    with CaptureQueriesContext(connection) as captured:
        response = post_sql(api, statement)
    assert response.status_code == 200
    queries = [q["sql"] for q in captured.captured_queries]
    assert len(queries) == 1, queries


@pytest.mark.django_db(transaction=True)
def test_dialect_writes_take_no_savepoints(api, workspace, _query_log_elsewhere):
    """A request's statements share one transaction and one fate, so the write services called
    inside it open no savepoints of their own (flashcards.services.all_or_nothing)."""
    make_cards(workspace, 20)
    with CaptureQueriesContext(connection) as captured:
        response = post_sql(
            api,
            "UPDATE cards SET back_text = 'edited' WHERE front_text LIKE '%'; "
            "INSERT INTO cards (front_text, back_text) VALUES ('a', 'b'); "
            "DELETE FROM cards WHERE front_text = 'a'",
        )
    assert response.status_code == 200, response.json()
    assert not [q for q in captured.captured_queries if "SAVEPOINT" in q["sql"].upper()]
