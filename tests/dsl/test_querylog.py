"""The query log: exactly one row per request, success or failure, and a read-only admin."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from dsl.models import QueryLog
from flashcards import services
from tests.factories import UserFactory, make_cards
from tests.support.envelope import QUERY_URL, SQL_URL, post_sql

pytestmark = pytest.mark.django_db


def only_log() -> QueryLog:
    (log,) = QueryLog.objects.all()
    return log


def test_successful_read(sql, api_key, user, workspace):
    make_cards(workspace, 3)
    response = sql("SELECT card_id FROM cards LIMIT 2")
    log = only_log()
    assert (log.outcome, log.reason, log.status_code) == ("ok", "", 200)
    assert (log.statement_types, log.resources) == ("select", "cards")
    assert (log.rows_returned, log.rows_affected) == (2, 0)
    assert (log.api_key, log.user, log.workspace) == (api_key, user, workspace)
    assert log.surface == "rest" and log.sql == "SELECT card_id FROM cards LIMIT 2"
    assert log.request_id == response.json()["requestId"] == response["X-Request-Id"]
    assert log.result_size == len(response.content.decode())
    assert log.duration_ms > 0 and log.dry_run is False


def test_batch_with_writes(sql, workspace):
    make_cards(workspace, 1)
    sql(
        "INSERT INTO decks (name) VALUES ('a'), ('b'); SELECT * FROM cards; "
        "UPDATE cards SET back_text = 'x' WHERE reps = 0",
        dry_run=True,
    )
    log = only_log()
    assert log.statement_types == "insert,select,update"
    assert log.resources == "decks,cards"
    assert (log.rows_affected, log.rows_returned, log.dry_run) == (3, 1, True)


def test_invalid_sql(sql):
    sql("SELECT fron_text FROM cards")
    log = only_log()
    assert (log.outcome, log.reason, log.status_code) == (
        "QUERY_INVALID_SQL",
        "unknown_column",
        400,
    )
    assert "fron_text" in log.error_message and log.statement_types == "select"


def test_wrong_endpoint_and_execution_failures(api, workspace):
    post_sql(api, "DELETE FROM cards WHERE reps = 0", url=QUERY_URL)
    make_cards(workspace, 100)
    make_cards(workspace, 1)
    post_sql(api, "UPDATE cards SET back_text = 'x' WHERE reps = 0")
    reasons = list(QueryLog.objects.order_by("id").values_list("reason", flat=True))
    assert reasons == ["wrong_endpoint", "too_many_rows"]


@pytest.mark.parametrize(
    ("header", "outcome"),
    [(None, "AUTH_UNAUTHORIZED"), ("ApiKey fca_broken", "AGENT_API_KEY_INVALID")],
)
def test_refused_before_the_dialect(db, header, outcome):
    client = APIClient()
    if header:
        client.credentials(HTTP_AUTHORIZATION=header)
    response = post_sql(client, "SHOW TABLES")
    log = only_log()
    assert (log.outcome, log.status_code) == (outcome, 401)
    assert log.api_key is None and log.user is None
    assert log.request_id == response["X-Request-Id"]


def test_bad_body_and_selection_required(api, user, workspace, client_for):
    api.generic("POST", SQL_URL, "{not json", content_type="application/json")
    services.create_workspace(user, "Second")
    _, plaintext = services.create_api_key(user, "unselected")
    post_sql(client_for(plaintext), "SHOW TABLES")
    outcomes = list(QueryLog.objects.order_by("id").values_list("outcome", "status_code"))
    assert outcomes == [("REQUEST_INVALID", 400), ("WORKSPACE_SELECTION_REQUIRED", 409)]
    assert QueryLog.objects.order_by("id").last().sql == "SHOW TABLES"


def test_replay_is_logged(api, workspace):
    headers = {"Idempotency-Key": "k"}
    post_sql(api, "INSERT INTO decks (name) VALUES ('d')", headers=headers)
    post_sql(api, "INSERT INTO decks (name) VALUES ('d')", headers=headers)
    first, second = QueryLog.objects.order_by("id")
    assert second.reason == "idempotent_replay" and second.request_id == first.request_id


def test_the_key_is_never_stored(api_key, sql):
    sql("SHOW TABLES")
    secret = api_key.plaintext.split("_")[-1]
    values = QueryLog.objects.values_list()
    assert all(secret not in str(value) for row in values for value in row)


class TestAdmin:
    @pytest.fixture
    def admin_client(self, client, sql, workspace):
        sql("SELECT * FROM cards")
        sql("SELECT nope FROM cards")
        superuser = UserFactory(username="root", is_staff=True, is_superuser=True)
        client.force_login(superuser)
        return client

    def test_list_and_filters_render(self, admin_client):
        base = "/admin/dsl/querylog/"
        for query in (
            "",
            "?outcome=ok",
            "?reason=unknown_column",
            "?statement_type=select",
            "?surface=rest",
            "?q=nope",
        ):
            response = admin_client.get(base + query)
            assert response.status_code == 200, query
        assert b"nope" in admin_client.get(base + "?q=nope").content

    def test_detail_shows_sql_and_error_read_only(self, admin_client):
        log = QueryLog.objects.get(outcome="QUERY_INVALID_SQL")
        response = admin_client.get(f"/admin/dsl/querylog/{log.pk}/change/")
        assert response.status_code == 200
        assert b"SELECT nope" in response.content and b"Unknown column" in response.content
        assert b'name="_save"' not in response.content

    def test_no_add_change_or_delete(self, admin_client):
        log = QueryLog.objects.get(outcome="ok")
        assert admin_client.get("/admin/dsl/querylog/add/").status_code == 403
        response = admin_client.post(f"/admin/dsl/querylog/{log.pk}/change/", {"sql": "x"})
        assert response.status_code == 403
        assert (
            admin_client.post(f"/admin/dsl/querylog/{log.pk}/delete/", {"post": "yes"}).status_code
            == 403
        )
        assert QueryLog.objects.filter(pk=log.pk, sql="SELECT * FROM cards").exists()


def test_a_body_refused_as_too_large_is_logged(api):
    """The 413 is answered by middleware before the view, and still gets its query-log row."""
    before = QueryLog.objects.count()
    payload = json.dumps({"sql": "SHOW TABLES", "pad": "x" * (257 * 1024)})
    response = api.generic("POST", "/v1/agent/sql", payload, content_type="application/json")
    assert response.status_code == 413
    assert QueryLog.objects.count() == before + 1
    row = QueryLog.objects.latest("pk")
    assert row.request_id == response.json()["requestId"]
    assert row.outcome == "REQUEST_TOO_LARGE"
