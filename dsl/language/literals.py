"""SQL literal text -> typed values: intervals, PostgreSQL array text, datetimes, integers and
numbers, UUIDs. Pure conversions that answer None for text that is not such a literal; dsl.language.validator
decides what a literal must be and explains a mismatch."""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from decimal import Decimal

from dsl.language.plan import RelativeNow
from flashcards.services.timestamps import parse_timestamp

# The largest integer a column holds (64-bit), and so the largest integer literal.
INT64 = 2**63 - 1

_INTERVAL_RE = re.compile(
    r"\s*([+-]?\d{1,9})\s*(minutes?|mins?|hours?|days?|weeks?|months?|years?)\s*", re.IGNORECASE
)
_UNIT_NAMES = {
    "min": "minutes",
    "mins": "minutes",
    "minute": "minutes",
    "hour": "hours",
    "day": "days",
    "week": "weeks",
    "month": "months",
    "year": "years",
}


def parse_interval(text: str) -> RelativeNow | None:
    match = _INTERVAL_RE.fullmatch(text)
    if match is None:
        return None
    unit = match.group(2).lower()
    return RelativeNow(int(match.group(1)), _UNIT_NAMES.get(unit, unit))


def parse_array_text(text: str) -> tuple[str, ...] | None:
    """PostgreSQL's ``'{a,b}'`` / ``'{"a b",c}'`` text form, or None when it is not one."""
    if len(text) < 2 or text[0] != "{" or text[-1] != "}":
        return None
    body = text[1:-1]
    items: list[str] = []
    if not body.strip():
        return ()
    i, length = 0, len(body)
    while i <= length:
        while i < length and body[i] == " ":
            i += 1
        if i < length and body[i] == '"':
            i += 1
            chars: list[str] = []
            while i < length and body[i] != '"':
                if body[i] == "\\" and i + 1 < length:
                    i += 1
                chars.append(body[i])
                i += 1
            if i >= length:
                return None
            i += 1
            item = "".join(chars)
            while i < length and body[i] == " ":
                i += 1
        else:
            end = body.find(",", i)
            end = length if end < 0 else end
            item = body[i:end].strip()
            if not item or '"' in item or "{" in item:
                return None
            i = end
        items.append(item)
        if i < length and body[i] != ",":
            return None
        i += 1
    return tuple(items)


def datetime_literal(text: str) -> datetime | None:
    """An ISO-8601 date or date-time (flashcards.services.timestamps, the product's one parser)."""
    return parse_timestamp(text)


def uuid_literal(text: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(text)
    except ValueError:
        return None


def integer_literal(value: Decimal) -> int | float | None:
    """A number compared with an integer column: an int when whole, else the float it is (the
    compiler then compares the column as a float); None beyond 64 bits."""
    if value.copy_abs() > INT64:
        return None
    if value == value.to_integral_value():
        return int(value)
    return float(value)


def number_literal(value: Decimal) -> float | None:
    number = float(value)
    return None if number in (float("inf"), float("-inf")) else number
