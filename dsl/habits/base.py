"""The habit row type, and the words every family shares (the clock's names, interval units)."""

from __future__ import annotations

from dataclasses import dataclass, field

CLOCK_WORDS = frozenset(
    {
        "now",
        "current_timestamp",
        "current_date",
        "current_time",
        "getdate",
        "getutcdate",
        "sysdate",
        "sysdatetime",
        "sysutcdatetime",
        "systimestamp",
        "localtimestamp",
        "localtime",
        "curdate",
        "curtime",
        "utc_timestamp",
        "utc_date",
        "clock_timestamp",
        "statement_timestamp",
        "transaction_timestamp",
        "today",
    }
)

INTERVAL_UNITS = {
    **dict.fromkeys(("minute", "minutes", "min", "mins", "mi", "n"), "minutes"),
    **dict.fromkeys(("hour", "hours", "hh", "h"), "hours"),
    **dict.fromkeys(("day", "days", "dd", "d", "dy", "dayofyear", "y"), "days"),
    **dict.fromkeys(("week", "weeks", "wk", "ww", "w"), "weeks"),
    **dict.fromkeys(("month", "months", "mm", "m", "mon", "mons"), "months"),
    **dict.fromkeys(("year", "years", "yy", "yyyy", "yr", "yrs"), "years"),
}

ANY = None  # ``clauses`` value: the row fits anywhere


@dataclass(frozen=True, slots=True)
class Habit:
    family: str
    match: tuple[str, ...]
    message: str
    advice: str
    replace: tuple[str, ...] = ()
    rewrite: tuple[str, ...] = ()
    condition: str | None = None
    """A condition the rewrite adds to the statement's WHERE (``FILTER (WHERE c)`` → ``WHERE c``)."""
    fallback: str | None = None
    at: int = 0
    clauses: frozenset[str | None] | None = None
    statements: frozenset[str] | None = None
    when_reason: frozenset[str] | None = None
    reason: str | None = None
    """None: a construct the parser stops at is ``unsupported_syntax`` at the row's ``at``, while
    a validation error (a specific reason) keeps its reason and position and only gets the
    row's explanation; ``"keep"`` keeps the original reason always; a code is used as it is."""
    suggest: tuple[str, ...] = ()
    overrides: bool = False
    """Explain this habit even when the original error points earlier in the statement."""
    example: str = ""
    """A statement this row explains (tests/dsl/test_habit_examples.py sends each one through the
    endpoint and checks that this row, and no other, taught its error)."""
    tags: tuple[str, ...] = field(default=())
    """``first_step``: the rewrite is a read to run first, never a corrected statement;
    ``at_error``: the row explains only an error that points where the row does; ``example``:
    the rewrite is an example, never correctedSql; ``own_hint``: the row's advice replaces the
    validator's hint instead of following it."""


def h(
    family: str,
    match: str,
    message: str,
    advice: str,
    *,
    replace: str | tuple[str, ...] = (),
    rewrite: str | tuple[str, ...] = (),
    condition: str | None = None,
    fallback: str | None = None,
    at: int = 0,
    clauses: str | None = None,
    statements: str | None = None,
    when_reason: str | None = None,
    reason: str | None = None,
    suggest: str | tuple[str, ...] = (),
    overrides: bool = False,
    tags: tuple[str, ...] = (),
    example: str = "",
) -> Habit:

    def _tuple(value: str | tuple[str, ...]) -> tuple[str, ...]:
        return (value,) if isinstance(value, str) else value

    def _set(value: str | None) -> frozenset[str | None] | None:
        if value is None:
            return None
        return frozenset(None if v == "-" else v for v in value.split())

    return Habit(
        family=family,
        match=tuple(match.split()),
        message=message,
        advice=advice,
        replace=_tuple(replace),
        rewrite=_tuple(rewrite),
        condition=condition,
        fallback=fallback,
        at=at,
        clauses=_set(clauses),
        statements=frozenset(statements.split()) if statements else None,
        when_reason=frozenset(when_reason.split()) if when_reason else None,
        reason=reason,
        suggest=_tuple(suggest),
        overrides=overrides,
        tags=tags,
        example=example,
    )


CLOCK_NAMES = "|".join(sorted((CLOCK_WORDS | {"unix_timestamp"}) - {"now", "current_timestamp"}))
ANY_CLOCK = "|".join(sorted(CLOCK_WORDS | {"unix_timestamp"}))
VALUE_CLAUSES = "select where having set values order group"
READ_FIRST = "SELECT {id_column}, {1} FROM {resource} WHERE {where}"
