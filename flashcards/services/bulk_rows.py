"""Plain INSERTs of many rows for the bulk writes of imports and of the change log: the one step
below Django's public API in the write path, kept here with its own tests
(tests/flashcards/test_bulk_rows.py).

Why: ``QuerySet.bulk_create`` builds a model instance per row and compiles one statement per
batch — on SQLite a batch is only 999 parameters, so a card (27 columns) goes 37 to a statement —
and that, not the database, was most of the time of a 50,000-note import (docs/benchmarks.md §7).
Here each value is converted by its field's ``get_db_prep_save``, exactly what ``bulk_create``
does before binding, and the rows go to the database with ``executemany`` on SQLite (one prepared
statement), with ``COPY ... FROM STDIN`` on PostgreSQL for 500 rows or more, and as multi-row
``VALUES`` otherwise. No signals, no ``pre_save`` (so no ``auto_now``:
the models written here have none), no defaults: callers pass every column but an auto id.
Checked against Django 5.2."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import chain, islice
from typing import Any

from django.db import connections, router
from django.db.models import Model

ROWS_PER_STATEMENT = 1000
# Parameters per multi-row INSERT (PostgreSQL allows 65,535).
MAX_PARAMS = 32_000
# From this many rows on, PostgreSQL gets them through COPY.
COPY_FROM_ROWS = 500


def insert_rows(model: type[Model], columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
    """INSERT ``rows`` (values in the order of ``columns``, attnames such as ``card_id``) into
    ``model``'s table; returns the number of rows."""
    connection = connections[router.db_for_write(model)]
    fields = [model._meta.get_field(name) for name in columns]
    quote = connection.ops.quote_name
    head = (
        f"INSERT INTO {quote(model._meta.db_table)} "
        f"({', '.join(quote(field.column) for field in fields)}) VALUES "
    )
    one = "(" + ", ".join(["%s"] * len(fields)) + ")"

    def prepared(row: Sequence[Any]) -> list[Any]:
        return [
            field.get_db_prep_save(value, connection)
            for field, value in zip(fields, row, strict=True)
        ]

    count = 0
    pending = iter(rows)
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            # One statement prepared once, every row bound in C: SQLite's own bulk path.
            while chunk := [prepared(row) for row in islice(pending, ROWS_PER_STATEMENT)]:
                cursor.executemany(head + one, chunk)
                count += len(chunk)
            return count
        first = list(islice(pending, COPY_FROM_ROWS))
        if connection.vendor == "postgresql" and len(first) == COPY_FROM_ROWS:
            # COPY streams the rows, each value dumped by psycopg as for a query. Below the
            # threshold (every ordinary write) a plain INSERT goes through Django's cursor
            # wrappers like any other statement.
            columns_sql = ", ".join(quote(field.column) for field in fields)
            statement = f"COPY {quote(model._meta.db_table)} ({columns_sql}) FROM STDIN"
            with cursor.cursor.copy(statement) as copy:
                for row in chain(first, pending):
                    copy.write_row(prepared(row))
                    count += 1
            return count
        per_statement = max(1, min(ROWS_PER_STATEMENT, MAX_PARAMS // len(fields)))
        remaining = chain(first, pending)
        while batch := list(islice(remaining, per_statement)):
            params = [value for row in batch for value in prepared(row)]
            cursor.execute(head + ", ".join([one] * len(batch)), params)
            count += len(batch)
    return count
