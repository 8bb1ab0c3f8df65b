"""The query log's background writer (dsl.runtime.querylog_writer): rows leave the request path, are
stored in batches, and none is lost — not when the queue is full, not when the database refuses a
batch (a refused row is logged by request id), not at shutdown (flush)."""

from __future__ import annotations

import logging
import threading
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from dsl.models import QueryLog
from dsl.runtime import querylog_writer
from dsl.runtime.querylog_writer import QueryLogWriter

pytestmark = pytest.mark.django_db(transaction=True)


def _row(request_id: str, **fields) -> QueryLog:
    return QueryLog(
        created_at=timezone.now(),
        surface="rest",
        sql="SHOW TABLES",
        outcome="ok",
        status_code=200,
        request_id=request_id,
        **fields,
    )


@pytest.fixture
def async_log(settings):
    settings.QUERY_LOG_ASYNC = True
    writer = QueryLogWriter()
    yield writer
    writer.flush()


def test_the_request_path_runs_no_query_and_every_row_arrives(async_log):
    with CaptureQueriesContext(connection) as captured:
        for n in range(300):
            async_log.submit(_row(f"r{n}"))
    assert captured.captured_queries == []
    assert async_log.flush()
    assert QueryLog.objects.count() == 300
    assert set(QueryLog.objects.values_list("request_id", flat=True)) == {
        f"r{n}" for n in range(300)
    }
    assert async_log.stats.written == 300 and async_log.stats.failed == 0


def test_a_full_queue_writes_on_the_request_path_and_says_so(
    async_log, settings, monkeypatch, caplog
):
    settings.QUERY_LOG_QUEUE_SIZE = 1
    settings.QUERY_LOG_FLUSH_SECONDS = 0  # the writer takes one row, then stalls on it
    release = threading.Event()
    insert_many = querylog_writer._insert_many

    def slow_in_the_writer(rows):
        if threading.current_thread().name == "query-log-writer":
            release.wait(10)
        return insert_many(rows)

    monkeypatch.setattr(querylog_writer, "_insert_many", slow_in_the_writer)
    with caplog.at_level(logging.WARNING, logger="dsl.runtime.querylog_writer"):
        async_log.submit(_row("first"))  # taken by the writer, which now stalls
        for _ in range(100):  # until the writer holds it and the queue is empty again
            if async_log._queue.empty():
                break
            threading.Event().wait(0.01)
        for n in range(5):
            async_log.submit(_row(f"more{n}"))
    # One fits the queue, four overflow: written by their requests, never dropped.
    assert async_log.stats.overflowed == 4
    assert QueryLog.objects.filter(request_id__startswith="more").count() == 4
    assert "query-log queue is full" in caplog.text
    release.set()
    assert async_log.flush()
    assert QueryLog.objects.count() == 6


def test_a_refused_batch_is_written_row_by_row_and_the_refused_row_is_logged(async_log, caplog):
    missing_workspace = uuid.uuid4()  # a foreign key the database refuses
    rows = [_row("good1"), _row("bad", workspace_id=missing_workspace), _row("good2")]
    with caplog.at_level(logging.ERROR, logger="dsl.runtime.querylog_writer"):
        querylog_writer.write_rows(rows, async_log.stats)
    assert set(QueryLog.objects.values_list("request_id", flat=True)) == {"good1", "good2"}
    assert async_log.stats.failed == 1 and async_log.stats.written == 2
    assert "request bad" in caplog.text


def test_the_synchronous_mode_writes_before_returning(settings):
    settings.QUERY_LOG_ASYNC = False
    writer = QueryLogWriter()
    writer.submit(_row("now"))
    assert QueryLog.objects.filter(request_id="now").exists()
    assert writer._thread is None


def test_the_batch_insert_stores_what_the_orm_stores(async_log, api_key, workspace, user):
    """Every field of a row written by the batch insert reads back as the ORM's own create."""
    fields = {
        "api_key_id": api_key.pk,
        "user_id": user.pk,
        "workspace_id": workspace.pk,
        "statement_types": "select,update",
        "resources": "cards",
        "reason": "too_long",
        "error_message": "Ünïcode ✓",
        "rows_returned": 7,
        "rows_affected": 2,
        "duration_ms": 1.25,
        "result_size": 1234,
        "dry_run": True,
    }
    querylog_writer.write_rows([_row("batched", **fields)])
    orm_row = _row("orm", **fields)
    orm_row.save()
    batched, orm = (
        QueryLog.objects.filter(request_id=name).values().get() for name in ("batched", "orm")
    )
    for row in (batched, orm):
        del row["id"], row["request_id"], row["created_at"]
    assert batched == orm
