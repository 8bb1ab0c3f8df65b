"""Output rows (dsl.md §2.4): a value tuple from the database becomes a row in published formats
(uuid and datetime text, dates, numbers), converting only the columns that need it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import Any
from uuid import UUID as UUIDType

from dsl.runtime import compiler
from dsl.schema import BOOLEAN, DATETIME, INTEGER, NUMBER, UUID, ColumnType
from flashcards.services import format_timestamp
from flashcards.services.timestamps import parse_timestamp

_ZERO = timedelta(0)


def published_uuid(value: Any) -> str:
    # UUID objects print in lower case already; other values (text) are normalised.
    return str(value) if type(value) is UUIDType else str(value).lower()


def _date(value: date) -> str:
    return value.isoformat()


def _integer(value: Any) -> int:
    return value if type(value) is int else int(value)


def _number(value: Any) -> float:
    return value if type(value) is float else float(value)


def _boolean(value: Any) -> bool:
    return bool(value)


def _datetime(value: datetime) -> str | None:
    # The database hands back aware UTC datetimes; isoformat is the fast path to the published
    # form (it truncates to milliseconds, as format_timestamp does).
    if value.utcoffset() == _ZERO:
        return value.isoformat(timespec="milliseconds")[:-6] + "Z"
    return format_timestamp(value)


_FORMATTERS: dict[ColumnType, Callable[[Any], Any]] = {
    UUID: published_uuid,
    DATETIME: _datetime,
    ColumnType.DATE: _date,
    INTEGER: _integer,
    NUMBER: _number,
    BOOLEAN: _boolean,
}


def published_timestamp(text: str) -> str | None:
    """A timestamptz as PostgreSQL's text → the published form (UTC, milliseconds truncated, Z),
    exactly what ``format_timestamp`` makes of the same moment. In the UTC session time zone Django
    sets, with DateStyle ISO (which psycopg needs anyway), the text is "2026-11-30 00:08:04.144+00"
    — the fraction has 0 to 6 digits, trailing zeros dropped — so slicing is enough."""
    if text[-3:] == "+00" and text[4:5] == "-" and text[10:11] == " ":
        if text[19:20] == ".":
            return f"{text[:10]}T{text[11:19]}.{text[20:-3][:3]:0<3}Z"
        if len(text) == 22:
            return f"{text[:10]}T{text[11:19]}.000Z"
    # Any other shape (a year past 9999, another time zone): go through a datetime.
    return format_timestamp(datetime.fromisoformat(text))


# PostgreSQL's text of a uuid is already the published form.
_TEXT_STAMP_FORMATTERS = {
    key: value for key, value in _FORMATTERS.items() if key not in (UUID, DATETIME)
} | {DATETIME: published_timestamp}

# Published as the Python type the driver (with Django's converters) returns for a model field.
_NATIVE_TYPES = frozenset({INTEGER, NUMBER, BOOLEAN})


def naive_utc_datetime(value: Any) -> str:
    # SQLite's driver hands back a naive datetime (Django stores UTC there); the published form
    # without building an aware copy first. Text (a value the driver did not convert) is parsed.
    moment = value if type(value) is datetime else parse_timestamp(str(value))
    if moment is None:
        raise ValueError(f"not a timestamp: {value!r}")
    if moment.tzinfo is not None:
        return format_timestamp(moment)
    return moment.isoformat(timespec="milliseconds") + "Z"


def uuid_hex(value: Any) -> str:
    # SQLite stores a uuid as its 32 hex digits.
    text = str(value).lower()
    if len(text) != 32:
        return str(UUIDType(text))
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def row_formatter(
    columns: tuple[compiler.OutputColumn, ...],
    *,
    stamps_as_text: bool = False,
    overrides: dict[int, Callable[[Any], Any]] | None = None,
) -> Callable[[tuple[Any, ...]], dict[str, Any]]:
    """Turns a value tuple into an output row (dsl.md §2.4): keys in item order, values in their
    published formats, None as null. Values that need no conversion (texts, JSON, most numbers)
    are copied by ``dict(zip(...))`` in C; only the converted columns cost Python per row.
    ``stamps_as_text``: uuid and datetime values arrive as PostgreSQL's text
    (``ready_sql.fetch_rows``)."""
    formatters = _TEXT_STAMP_FORMATTERS if stamps_as_text else _FORMATTERS
    overrides = overrides or {}
    keys = tuple(column.key for column in columns)
    last = {key: index for index, key in enumerate(keys)}  # a repeated key keeps its last value
    converted = tuple(
        (index, column.key, convert)
        for index, column in enumerate(columns)
        if (convert := overrides.get(index) or formatters.get(column.type)) is not None
        and last[column.key] == index
        and (index in overrides or not (column.plain_field and column.type in _NATIVE_TYPES))
    )

    def format_row(values: tuple[Any, ...]) -> dict[str, Any]:
        row = dict(zip(keys, values, strict=True))
        for index, key, convert in converted:
            value = values[index]
            if value is not None:
                row[key] = convert(value)
        return row

    return format_row
