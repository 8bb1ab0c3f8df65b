"""Habits, Writes: ON CONFLICT, INSERT OR REPLACE, REPLACE INTO, MERGE, INSERT without columns, TRUNCATE."""

from __future__ import annotations

from dsl.habits.base import Habit, h

ROWS: tuple[Habit, ...] = (
    h(
        "writes",
        "on conflict|duplicate",
        "There is no upsert ({1:upper} {2:upper}): INSERT always creates new rows with new ids.",
        "Insert without it ({fix}), and change existing rows with UPDATE {resource} SET ... WHERE {id_column} = '<id>'",
        rewrite="{before}",
        fallback="Change existing rows with UPDATE {resource} SET ... WHERE {id_column} = '<id>', and create new ones with INSERT",
    ),
    h(
        "writes",
        "insert or replace|ignore|abort|fail|rollback",
        "INSERT OR {3:upper} is not supported: INSERT always creates new rows with new ids.",
        "Write {fix}",
        replace="INSERT",
        at=1,
    ),
    h(
        "writes",
        "insert ignore|overwrite",
        "INSERT {2:upper} is not supported: INSERT always creates new rows with new ids.",
        "Write {fix}",
        replace="INSERT",
        at=1,
    ),
    h(
        "writes",
        "replace|upsert into",
        "{1:upper} INTO is not supported: INSERT creates new rows, UPDATE changes existing ones.",
        "Write {fix}",
        replace="INSERT INTO",
        clauses="-",
    ),
    h(
        "writes",
        "merge into? #any",
        "MERGE is not supported: INSERT creates new rows, UPDATE changes existing ones.",
        "Write INSERT INTO {3:resource_name} (...) VALUES (...) for new rows and UPDATE {3:resource_name} SET ... WHERE ... for existing ones",
        fallback="Write INSERT INTO cards (...) VALUES (...) for new rows and UPDATE cards SET ... WHERE ... for existing ones",
    ),
    h(
        "writes",
        "into #word values",
        "INSERT needs an explicit column list.",
        "Name the columns, e.g. {fix}",
        replace="INTO {2} ({required_columns}) VALUES",
        at=2,
        fallback="Name the columns: INSERT INTO {2} ({required_columns}) VALUES (...)",
    ),
    h(
        "writes",
        "into #word set",
        "INSERT ... SET is MySQL's; here INSERT takes a column list and VALUES.",
        "Write INSERT INTO {2} ({required_columns}) VALUES (...)",
        at=2,
    ),
    h(
        "writes",
        "default values",
        "DEFAULT VALUES is not supported: a new row needs its required columns.",
        "Write INSERT INTO {resource} ({required_columns}) VALUES (...)",
    ),
    h(
        "writes",
        "delete from? #word using",
        "DELETE ... USING is not supported: a statement reads one resource.",
        "Look up the ids with a SELECT first, then DELETE FROM {resource} WHERE {id_column} IN ('<id>', ...)",
        at=3,
    ),
    h(
        "writes",
        "truncate table? #word",
        "TRUNCATE is not supported; rows are removed with DELETE ... WHERE (at most 100 per statement).",
        "Write DELETE FROM {3:resource_name} WHERE ... for the rows you mean, e.g. DELETE FROM {3:resource_name} WHERE {3:id_of} IN ('<id>', ...)",
        fallback="Write DELETE FROM cards WHERE card_id IN ('<id>', ...)",
    ),
)
