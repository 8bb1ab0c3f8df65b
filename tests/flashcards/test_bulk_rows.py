"""insert_rows writes exactly what bulk_create would: the same values read back through the ORM,
on whichever database the suite runs."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from flashcards.models import Card, ChangeLog, ReviewEvent
from flashcards.services.bulk_rows import insert_rows
from tests.factories import make_card

AT = datetime(2026, 3, 5, 10, 0, 0, 123000, tzinfo=UTC)


def _card(workspace, **fields) -> Card:
    values = {
        "id": uuid.uuid4(),
        "workspace": workspace,
        "front_text": "ünï 'quoted' %s ?",
        "back_text": "b\nc",
        "tags": ["a", "B c"],
        "metadata": {"version": 1, "source": {"kind": "test", "n": [1, 2.5, None, True]}},
        "created_at": AT,
        "updated_at": AT,
        "client_updated_at": AT,
        "last_modified_by_replica_id": "server",
        "last_operation_id": "op",
    }
    values.update(fields)
    return Card(**values)


def test_rows_read_back_as_bulk_create_writes_them(workspace):
    columns = tuple(f.attname for f in Card._meta.concrete_fields)
    mine = [_card(workspace) for _ in range(3)]
    theirs = [_card(workspace) for _ in range(3)]
    assert insert_rows(Card, columns, ([getattr(c, a) for a in columns] for c in mine)) == 3
    Card.objects.bulk_create(theirs)
    for written, reference in zip(mine, theirs, strict=True):
        got = Card.objects.get(pk=written.pk)
        want = Card.objects.get(pk=reference.pk)
        for name in columns:
            if name != "id":
                assert getattr(got, name) == getattr(want, name), name
    assert Card.objects.get(pk=mine[0].pk).due_at is None


def test_many_rows_span_several_statements(workspace):
    card = make_card(workspace)
    columns = tuple(f.attname for f in ReviewEvent._meta.concrete_fields)
    rows = [
        (uuid.uuid4(), workspace.pk, card.pk, f"e{i}", "server", i % 4, AT, AT, 1000 + i)
        for i in range(2500)
    ]
    assert insert_rows(ReviewEvent, columns, rows) == 2500
    assert ReviewEvent.objects.filter(card=card).count() == 2500
    assert set(ReviewEvent.objects.values_list("rating", flat=True)) == {0, 1, 2, 3}


def test_auto_ids_are_left_to_the_database(workspace):
    columns = ("workspace_id", "change_id", "entity_type", "entity_id", "action", "replica_id")
    rows = [(workspace.pk, 10_000 + i, "card", "x", "upsert", "r") for i in range(3)]
    insert_rows(ChangeLog, (*columns, "operation_id", "recorded_at"), [(*r, "o", AT) for r in rows])
    ids = list(ChangeLog.objects.filter(change_id__gte=10_000).values_list("id", flat=True))
    assert len(set(ids)) == 3


def test_a_few_rows_are_one_plain_statement(workspace):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    card = make_card(workspace)
    columns = tuple(f.attname for f in ReviewEvent._meta.concrete_fields)
    rows = [
        (uuid.uuid4(), workspace.pk, card.pk, f"f{i}", "server", 1, AT, AT, 5000 + i)
        for i in range(5)
    ]
    with CaptureQueriesContext(connection) as queries:
        insert_rows(ReviewEvent, columns, rows)
    assert len(queries) == 1 and "INSERT INTO" in queries[0]["sql"]
    assert ReviewEvent.objects.filter(card=card).count() == 5
