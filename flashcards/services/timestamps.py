"""Time as the product keeps it: one clock (injectable: tests pin it instead of sleeping), UTC
timestamps truncated to the millisecond, their one published format, and the one ISO-8601 parser
every surface uses (the dialect's datetime literals, command and sync bodies, imports)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import overload

from django.utils import timezone as dj_timezone

# Earliest and latest moments a caller may give: the scheduler adds up to a century of interval,
# so later moments could not be scheduled.
EARLIEST_TIMESTAMP = datetime(1970, 1, 1, tzinfo=UTC)
LATEST_TIMESTAMP = datetime(9000, 1, 1, tzinfo=UTC)

_clock: Callable[[], datetime] = dj_timezone.now


def now() -> datetime:
    """The current moment (aware, UTC) from the product's clock."""
    return _clock()


def epoch_seconds() -> float:
    """The current moment as seconds since the epoch (the rate limiter's windows)."""
    return _clock().timestamp()


@contextmanager
def clock(read: Callable[[], datetime]) -> Iterator[None]:
    """Use ``read`` as the product's clock inside (tests: a fixed or stepped moment)."""
    global _clock
    previous = _clock
    _clock = read
    try:
        yield
    finally:
        _clock = previous


def truncate_ms(value: datetime) -> datetime:
    """Timestamps are kept to the millisecond, like the clients that sync with us."""
    if dj_timezone.is_naive(value):
        value = value.replace(tzinfo=UTC)
    value = value.astimezone(UTC)
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def now_ms() -> datetime:
    return truncate_ms(now())


@overload
def format_timestamp(value: datetime) -> str: ...
@overload
def format_timestamp(value: None) -> None: ...
@overload
def format_timestamp(value: datetime | None) -> str | None: ...
def format_timestamp(value: datetime | None) -> str | None:
    """UTC ISO-8601 with milliseconds and a Z, the format of every timestamp we publish."""
    if value is None:
        return None
    # isoformat always writes four-digit years (strftime's %Y drops the zeros of years < 1000).
    return truncate_ms(value).replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


def parse_timestamp(text: object, *, require_offset: bool = False) -> datetime | None:
    """ISO-8601 date or date-time (Python's ``fromisoformat`` forms, surrounding spaces ignored) as
    an aware UTC datetime, not truncated; a date alone is midnight and a time without an offset is
    UTC, unless ``require_offset``. None when ``text`` is not such a string or names no moment
    datetime can hold in UTC."""
    if not isinstance(text, str) or not 8 <= len(text.strip()) <= 40:
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None if require_offset else moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except (OverflowError, ValueError):
        return None
