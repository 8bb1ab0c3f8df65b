"""``NOW()`` bound late: compiled SQL keeps a marker (``ClockParam``) where the statement reads
the clock, and each execution binds its own moment, so a statement that reads the clock is
compiled once and run many times (dsl.runtime.ready_sql). ``CURRENT_DATE`` binds the same way,
the start of the learning day being computed from each execution's moment (``OnDay``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import DateTimeField, Expression

from dsl.language.plan import RelativeNow
from flashcards.scheduling.day import LearningDay
from flashcards.services import now_ms

# What ``StatementClock`` renders as: a moment, or DEFERRED to leave a ``ClockParam`` marker in
# the parameters (for SQL compiled once and executed many times, see ``dsl.runtime.executor``).
DEFERRED = object()
_clock: ContextVar[Any] = ContextVar("dsl_statement_clock", default=None)
_DATETIME_FIELD = DateTimeField()


@contextmanager
def clock(moment: Any) -> Iterator[None]:
    """Render ``StatementClock`` expressions compiled inside as ``moment`` (or DEFERRED)."""
    token = _clock.set(moment)
    try:
        yield
    finally:
        _clock.reset(token)


@dataclass(frozen=True, slots=True)
class OnDay:
    """A ``RelativeNow`` with the workspace's learning day it is resolved in."""

    relative: RelativeNow
    day: LearningDay

    def resolve(self, moment: datetime) -> datetime:
        return self.relative.resolve(moment, self.day)


def _datetime_param(value: datetime, db: Any) -> Any:
    # What Django passes to the driver for a datetime compared with a DateTimeField.
    return _DATETIME_FIELD.get_db_prep_value(value, db, prepared=False)


class ClockParam:
    """The marker a deferred ``StatementClock`` leaves among the query parameters."""

    __slots__ = ("relative",)

    def __init__(self, relative: Any) -> None:
        self.relative = relative

    def bind(self, moment: datetime, db: Any) -> Any:
        return _datetime_param(self.relative.resolve(moment), db)

    def __repr__(self) -> str:
        return f"ClockParam({self.relative!r})"


class StatementClock(Expression):
    """``NOW()`` (± an interval) as a query parameter decided when the SQL is generated: the
    moment of ``clock()``, else the current time (a queryset evaluated outside the executor)."""

    output_field = DateTimeField()

    def __init__(self, relative: Any) -> None:
        super().__init__()
        self.relative = relative

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        moment = _clock.get()
        if moment is DEFERRED:
            return "%s", [ClockParam(self.relative)]
        return "%s", [_datetime_param(self.relative.resolve(moment or now_ms()), connection)]


def bind_clock(
    params: Sequence[Any], positions: Sequence[int], moment: datetime, db: Any = connection
) -> list[Any]:
    """The parameters of deferred SQL with each clock marker replaced by ``moment``'s value."""
    bound = list(params)
    for position in positions:
        bound[position] = bound[position].bind(moment, db)
    return bound
