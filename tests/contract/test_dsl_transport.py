"""dsl.md §1 Transport: the three endpoints, the body, dry runs, Idempotency-Key, size limits, auth
and workspace selection."""

from __future__ import annotations

import uuid

import pytest
from rest_framework.test import APIClient

from flashcards import services
from tests.factories import make_card, make_cards
from tests.support.envelope import (
    EXECUTE_URL,
    QUERY_URL,
    SQL_URL,
    check_envelope,
    post_sql,
)

pytestmark = pytest.mark.django_db

INSERT = "INSERT INTO cards (front_text, back_text) VALUES ('Hola', 'Hello')"


def count_cards(rows) -> int:
    return rows("SELECT COUNT(*) AS n FROM cards")[0]["n"]


# "POST /v1/agent/sql — Reads and writes. A batch may mix them; a batch with any write runs in
# one transaction."


def test_sql_endpoint_runs_reads_writes_and_mixed_batches(ok, rows):
    assert ok("SELECT * FROM cards")["statementType"] == "select"
    assert ok(INSERT)["statementType"] == "insert"
    data = ok(f"{INSERT}; SELECT front_text FROM cards")
    assert [s["statementType"] for s in data["statements"]] == ["insert", "select"]
    assert data["statements"][1]["rows"] == [{"front_text": "Hola"}, {"front_text": "Hola"}]


def test_a_batch_with_a_write_is_one_transaction(sql, rows):
    response = sql(f"{INSERT}; INSERT INTO cards (front_text, back_text) VALUES ('', 'x')")
    assert response.status_code == 400
    assert count_cards(rows) == 0


# "POST /v1/agent/sql/query — Reads only (SHOW TABLES, DESCRIBE / SHOW COLUMNS, SELECT). A write →
# 400, reason wrong_endpoint, message naming /v1/agent/sql/execute."


@pytest.mark.parametrize(
    "statement",
    [
        "SHOW TABLES",
        "DESCRIBE cards",
        "DESC decks",
        "SHOW COLUMNS FROM workspace",
        "SELECT * FROM cards",
    ],
)
def test_query_endpoint_runs_every_read(ok, statement):
    assert ok(statement, url=QUERY_URL)["statementType"] in {"show_tables", "describe", "select"}


@pytest.mark.parametrize(
    "statement",
    [
        INSERT,
        "UPDATE cards SET back_text = 'x' WHERE reps = 0",
        "DELETE FROM cards WHERE reps = 0",
        f"SELECT * FROM cards; {INSERT}",
    ],
)
def test_query_endpoint_refuses_writes_naming_execute(fails, rows, statement):
    error = fails(statement, url=QUERY_URL)
    assert error["code"] == "QUERY_INVALID_SQL"
    assert error["details"]["reason"] == "wrong_endpoint"
    assert "/v1/agent/sql/execute" in error["message"]
    assert count_cards(rows) == 0


# "POST /v1/agent/sql/execute — Writes only (INSERT, UPDATE, DELETE). A read → 400, reason
# wrong_endpoint, naming /v1/agent/sql/query."


def test_execute_endpoint_runs_writes(ok, workspace):
    card = make_card(workspace)
    assert ok(INSERT, url=EXECUTE_URL)["affectedCount"] == 1
    update = f"UPDATE cards SET back_text = 'y' WHERE card_id = '{card.id}'"
    assert ok(update, url=EXECUTE_URL)["affectedCount"] == 1
    delete = f"DELETE FROM cards WHERE card_id = '{card.id}'"
    assert ok(delete, url=EXECUTE_URL)["affectedCount"] == 1


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT * FROM cards",
        "SHOW TABLES",
        "DESCRIBE cards",
        "SHOW COLUMNS FROM cards",
        f"{INSERT}; SHOW TABLES",
    ],
)
def test_execute_endpoint_refuses_reads_naming_query(fails, rows, statement):
    error = fails(statement, url=EXECUTE_URL)
    assert error["details"]["reason"] == "wrong_endpoint"
    assert "/v1/agent/sql/query" in error["message"]
    assert count_cards(rows) == 0


def test_wrong_endpoint_in_a_batch_names_the_statement(fails):
    error = fails(f"SELECT * FROM cards; {INSERT}", url=QUERY_URL)
    assert error["details"]["statementIndex"] == 2
    assert error["message"].startswith("Statement 2 failed: ")


# "Request body: {"sql": "<string>", "dry_run": false}. sql must be a non-empty string (after
# trimming). Unknown keys are ignored."


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"sql": ""},
        {"sql": "   \n\t "},
        {"sql": None},
        {"sql": 42},
        {"sql": ["SELECT * FROM cards"]},
        {"sql": {"text": "SELECT * FROM cards"}},
        {"query": "SELECT * FROM cards"},
    ],
)
def test_sql_missing_empty_or_not_a_string_is_request_invalid(api, body):
    response = api.post(SQL_URL, body, format="json")
    envelope = check_envelope(response)
    assert response.status_code == 400
    assert envelope["error"]["code"] == "REQUEST_INVALID"


@pytest.mark.parametrize("raw", ["not json", "[1, 2]", '"SELECT 1"', "{"])
def test_a_body_that_is_not_a_json_object_is_request_invalid(api, raw):
    response = api.post(SQL_URL, raw, content_type="application/json")
    envelope = check_envelope(response)
    assert response.status_code == 400
    assert envelope["error"]["code"] == "REQUEST_INVALID"


def test_unknown_body_keys_are_ignored(ok):
    data = ok("SELECT * FROM cards", limit=5, extra={"a": 1}, sqlx="DROP")
    assert data["statementType"] == "select"


# "dry_run: true runs everything exactly as usual inside a transaction, returns the normal
# response with data.dryRun: true, and rolls back. Nothing is written, no change-log entry
# survives."


def test_dry_run_write_reports_and_rolls_back(api, ok, rows, workspace):
    before = api.post(
        f"/v1/workspaces/{workspace.id}/sync/pull", {"after_change_id": 0}, format="json"
    ).json()["data"]
    data = ok(f"{INSERT} RETURNING front_text", dry_run=True)
    assert data["dryRun"] is True
    assert list(data)[-1] == "dryRun"
    assert data["rows"] == [{"front_text": "Hola"}] and data["affectedCount"] == 1
    assert count_cards(rows) == 0
    after = api.post(
        f"/v1/workspaces/{workspace.id}/sync/pull", {"after_change_id": 0}, format="json"
    ).json()["data"]
    assert after["changes"] == before["changes"]
    assert after["next_change_id"] == before["next_change_id"]


def test_dry_run_read_has_dry_run_true(ok):
    data = ok("SELECT * FROM cards", dry_run=True)
    assert data["dryRun"] is True
    assert ok("SHOW TABLES", dry_run=True)["dryRun"] is True


def test_without_dry_run_there_is_no_dry_run_key(ok):
    assert "dryRun" not in ok("SELECT * FROM cards")
    assert "dryRun" not in ok(INSERT)
    assert "dryRun" not in ok("SELECT * FROM cards", dry_run=False)


def test_dry_run_batch_marks_only_the_top_level(ok, rows):
    data = ok(f"{INSERT}; SELECT COUNT(*) AS n FROM cards", dry_run=True)
    assert data["dryRun"] is True
    assert all("dryRun" not in entry for entry in data["statements"])
    # Later statements saw the insert inside the rolled-back transaction.
    assert data["statements"][1]["rows"] == [{"n": 1}]
    assert count_cards(rows) == 0


def test_dry_run_update_and_delete_change_nothing(ok, rows, workspace):
    card = make_card(workspace, back_text="old")
    ok(f"UPDATE cards SET back_text = 'new' WHERE card_id = '{card.id}'", dry_run=True)
    ok(f"DELETE FROM cards WHERE card_id = '{card.id}'", dry_run=True)
    assert rows("SELECT back_text FROM cards") == [{"back_text": "old"}]


# "Header Idempotency-Key: <1-200 printable chars> ... a repeat of the same key by the same API key
# within 24 hours returns the stored response of the first execution without executing again, with
# header Idempotent-Replayed: true; the stored body comes back unchanged, its original requestId
# included. The same key with a different body → 409 IDEMPOTENCY_KEY_REUSED."


def test_idempotent_replay_returns_the_first_response_unchanged(api, rows):
    headers = {"Idempotency-Key": "create-hola-1"}
    first = post_sql(api, INSERT, headers=headers)
    second = post_sql(api, INSERT, headers=headers)
    assert first.status_code == second.status_code == 200
    assert second.json() == first.json()
    assert second["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first
    assert second["X-Request-Id"] == first.json()["requestId"]
    assert count_cards(rows) == 1


def test_idempotent_replay_also_works_on_execute(api, rows):
    headers = {"Idempotency-Key": "k" * 200}
    first = post_sql(api, INSERT, url=EXECUTE_URL, headers=headers)
    second = post_sql(api, INSERT, url=EXECUTE_URL, headers=headers)
    assert second.json() == first.json() and second["Idempotent-Replayed"] == "true"
    assert count_cards(rows) == 1


def test_same_key_with_a_different_body_is_409(api, rows):
    headers = {"Idempotency-Key": "abc"}
    assert post_sql(api, INSERT, headers=headers).status_code == 200
    response = post_sql(api, INSERT.replace("Hola", "Adiós"), headers=headers)
    body = check_envelope(response)
    assert response.status_code == 409
    assert body["error"]["code"] == "IDEMPOTENCY_KEY_REUSED"
    assert count_cards(rows) == 1


def test_a_dry_run_does_not_consume_its_idempotency_key(api, rows):
    # Decision (docs/decisions.md): only executions that committed are stored, so a dry run
    # never blocks or answers the real run that follows it with the same key.
    headers = {"Idempotency-Key": "abc"}
    assert post_sql(api, INSERT, headers=headers, dry_run=True).status_code == 200
    real = post_sql(api, INSERT, headers=headers, dry_run=False)
    assert real.status_code == 200 and "Idempotent-Replayed" not in real
    again = post_sql(api, INSERT, headers=headers, dry_run=False)
    assert again["Idempotent-Replayed"] == "true" and again.json() == real.json()
    assert count_cards(rows) == 1


def test_a_committed_key_refuses_the_same_body_elsewhere(api, rows):
    headers = {"Idempotency-Key": "one-request"}
    assert post_sql(api, INSERT, headers=headers).status_code == 200
    assert post_sql(api, INSERT, headers=headers, dry_run=True).status_code == 409
    assert post_sql(api, INSERT, url=EXECUTE_URL, headers=headers).status_code == 409
    assert count_cards(rows) == 1


def test_a_failed_request_is_not_stored_under_its_key(api, rows):
    # Decision (docs/decisions.md): a refused request wrote nothing, so retrying it with the same
    # key runs again (and can succeed once the cause is gone).
    headers = {"Idempotency-Key": "retry-me"}
    bad = "INSERT INTO cards (front_text, back_text) VALUES ('', 'x')"
    assert post_sql(api, bad, headers=headers).status_code == 400
    again = post_sql(api, bad, headers=headers)
    assert again.status_code == 400 and "Idempotent-Replayed" not in again


def test_idempotency_keys_belong_to_one_api_key(api, client_for, user, workspace, rows):
    _, other_plaintext = services.create_api_key(user, "second", workspace=workspace)
    headers = {"Idempotency-Key": "shared"}
    post_sql(api, INSERT, headers=headers)
    response = post_sql(client_for(other_plaintext), INSERT, headers=headers)
    assert response.status_code == 200 and "Idempotent-Replayed" not in response
    assert count_cards(rows) == 2


@pytest.mark.parametrize("key", ["", "x" * 201, "tab\there"])
def test_an_invalid_idempotency_key_is_request_invalid(api, rows, key):
    # Decision (docs/decisions.md): a key that is not 1-200 printable characters is refused with
    # 400 REQUEST_INVALID before anything runs.
    response = post_sql(api, INSERT, headers={"Idempotency-Key": key})
    body = check_envelope(response)
    assert response.status_code == 400
    assert body["error"]["code"] == "REQUEST_INVALID"
    assert "Idempotency-Key" in body["error"]["message"]
    assert count_cards(rows) == 0


# "Bodies over 256 KiB → 413 REQUEST_TOO_LARGE. A sql string over 65,536 bytes → 400
# QUERY_INVALID_SQL, reason too_long."


def test_a_body_over_256_kib_is_413(api):
    sql = "SELECT * FROM cards -- " + "x" * (256 * 1024)
    response = post_sql(api, sql)
    body = check_envelope(response)
    assert response.status_code == 413
    assert body["error"]["code"] == "REQUEST_TOO_LARGE"


def test_a_body_of_exactly_256_kib_is_not_too_large(api):
    payload_prefix = '{"sql": "SELECT * FROM cards -- '
    payload = payload_prefix + "x" * (256 * 1024 - len(payload_prefix) - 2) + '"}'
    assert len(payload.encode()) == 256 * 1024
    response = api.post(SQL_URL, payload, content_type="application/json")
    # The sql itself is over 65,536 bytes: a 400, not a 413.
    assert response.status_code == 400
    assert response.json()["error"]["details"]["reason"] == "too_long"


def test_sql_over_65536_bytes_is_too_long(fails):
    base = "SELECT * FROM cards -- "
    error = fails(base + "x" * (65_537 - len(base)))
    assert error["code"] == "QUERY_INVALID_SQL"
    assert error["details"]["reason"] == "too_long"


def test_sql_of_exactly_65536_bytes_is_accepted(ok):
    # A write, because a read echoes its sql into an envelope capped at 48,000 characters (§8).
    base = "DELETE FROM cards WHERE reps = 0 -- "
    assert ok(base + "x" * (65_536 - len(base)))["affectedCount"] == 0


def test_the_sql_limit_counts_utf8_bytes_not_characters(fails, ok):
    base = "SELECT * FROM cards -- "
    # 2 bytes per "é": fewer than 65,536 characters but more than 65,536 bytes.
    error = fails(base + "é" * 33_000)
    assert error["details"]["reason"] == "too_long"
    assert ok("DELETE FROM cards WHERE reps = 0 -- " + "é" * 32_000)["affectedCount"] == 0


# "Auth: Authorization: ApiKey fca_<8 chars>_<26 chars> (also accepted: Bearer fca_…) ... parsing
# ignores case, spaces and -."


def _raw_client(header: str | None) -> APIClient:
    client = APIClient()
    if header is not None:
        client.credentials(HTTP_AUTHORIZATION=header)
    return client


def _spaced(plaintext: str) -> str:
    key_id, secret = plaintext[4:12], plaintext[13:]
    return f"fca_{key_id[:4]}-{key_id[4:]}_{secret[:5]} {secret[5:13]}-{secret[13:]}"


@pytest.mark.parametrize(
    "form",
    [
        lambda k: f"ApiKey {k}",
        lambda k: f"Bearer {k}",
        lambda k: f"apikey {k.lower()}",
        lambda k: f"bearer {k.upper()}",
        lambda k: f"ApiKey {_spaced(k)}",
        lambda k: f"ApiKey {_spaced(k).lower()}",
    ],
)
def test_every_documented_key_form_authenticates(api_key, form):
    response = post_sql(_raw_client(form(api_key.plaintext)), "SELECT * FROM cards")
    assert response.status_code == 200, response.json()


@pytest.mark.parametrize(
    "header",
    [
        None,
        "ApiKey fca_AAAAAAAA_AAAAAAAAAAAAAAAAAAAAAAAAAA",
        "ApiKey nonsense",
        "Basic dXNlcjpwYXNz",
    ],
)
def test_missing_or_bad_credentials_are_401(db, header):
    response = post_sql(_raw_client(header), "SELECT * FROM cards")
    body = check_envelope(response)
    assert response.status_code == 401
    assert body["error"]["code"] in {"AUTH_UNAUTHORIZED", "AGENT_API_KEY_INVALID"}


def test_a_revoked_key_is_401(api_key):
    services.revoke_api_key(api_key)
    response = post_sql(_raw_client(f"ApiKey {api_key.plaintext}"), "SELECT * FROM cards")
    assert response.status_code == 401
    assert check_envelope(response)["error"]["code"] in {
        "AUTH_UNAUTHORIZED",
        "AGENT_API_KEY_INVALID",
    }


def test_a_wrong_secret_with_a_real_key_id_is_401(api_key):
    plaintext = api_key.plaintext
    wrong = plaintext[:-1] + ("0" if plaintext[-1] != "0" else "1")
    response = post_sql(_raw_client(f"ApiKey {wrong}"), "SELECT * FROM cards")
    assert response.status_code == 401


# "A logged-in Django session also works (the browsable API), acting on the user's selected
# workspace."


def test_a_session_acts_on_the_users_selected_workspace(user, workspace):
    make_card(workspace, front_text="mine")
    services.select_user_workspace(user, workspace.id)
    client = APIClient()
    client.force_login(user)
    response = post_sql(client, "SELECT front_text FROM cards")
    assert response.status_code == 200, response.json()
    assert response.json()["data"]["rows"] == [{"front_text": "mine"}]


# "Every statement runs in the workspace selected for the API key (see domain.md §6). No selection
# and several workspaces → 409 WORKSPACE_SELECTION_REQUIRED."


def test_statements_run_in_the_keys_selected_workspace(user, workspace, client_for):
    second = services.create_workspace(user, "Second")
    make_card(workspace, front_text="first")
    make_card(second, front_text="second")
    _, plaintext = services.create_api_key(user, "k2", workspace=second)
    response = post_sql(client_for(plaintext), "SELECT front_text FROM cards")
    assert response.json()["data"]["rows"] == [{"front_text": "second"}]


def test_no_selection_and_several_workspaces_is_409(user, workspace, client_for):
    services.create_workspace(user, "Second")
    _, plaintext = services.create_api_key(user, "unselected")
    response = post_sql(client_for(plaintext), "SELECT * FROM cards")
    body = check_envelope(response)
    assert response.status_code == 409
    assert body["error"]["code"] == "WORKSPACE_SELECTION_REQUIRED"


def test_another_workspaces_rows_are_never_returned(ok, rows, other_workspace, workspace):
    theirs = make_cards(other_workspace, 3, tags=["english"])
    make_card(workspace, front_text="mine", tags=["english"])
    assert rows("SELECT front_text FROM cards") == [{"front_text": "mine"}]
    assert rows(f"SELECT * FROM cards WHERE card_id = '{theirs[0].id}'") == []
    data = ok(f"UPDATE cards SET back_text = 'x' WHERE card_id = '{theirs[0].id}'")
    assert data["affectedCount"] == 0
    data = ok(f"DELETE FROM cards WHERE card_id = '{theirs[1].id}'")
    assert data["affectedCount"] == 0
    assert rows("SELECT tag, COUNT(*) AS n FROM cards GROUP BY tag") == [{"tag": "english", "n": 1}]


def test_the_request_id_is_a_uuid_on_every_response(api, db):
    responses = [
        post_sql(api, "SELECT * FROM cards"),
        post_sql(api, "SELEC * FROM cards"),
        post_sql(api, ""),
        post_sql(_raw_client(None), "SELECT * FROM cards"),
        post_sql(api, "SELECT * FROM cards -- " + "x" * 300_000),
    ]
    for response in responses:
        body = check_envelope(response)
        assert str(uuid.UUID(body["requestId"])) == body["requestId"]
    assert len({r["X-Request-Id"] for r in responses}) == len(responses)
