"""What a validated statement is: the plan and its terms, values and conditions (built by
dsl.language.validator, read by dsl.runtime.compiler and dsl.runtime.executor).

Plan shape — everything is a frozen dataclass with structural equality (hashable unless it holds
a dict), so the compiler can use terms as dictionary keys.

Terms (what an item, key or condition operand refers to)
    Column                          from ``dsl.schema``; the virtual ``cards.tag`` (virtual=True)
                                    also stands for an UNNEST alias
    Aggregate(func, column, distinct)
                                    func in count/sum/avg/min/max; column None for COUNT(*)
    DateOf(column)                  DATE(datetime column), the learning day of the workspace
    CaseFold(func, column)          LOWER(col) / UPPER(col); only in conditions
Values (already converted)
    str, int, float, bool, None, uuid.UUID, datetime (aware, UTC), tuple (arrays, IN lists) and
    RelativeNow(amount, unit, today) for NOW() / CURRENT_TIMESTAMP / CURRENT_DATE [± INTERVAL],
    resolved at execution time with ``.resolve(now, learning_day)``.
Conditions
    Compare(term, op, value)        op in = != < <= > >= (scalar; '= NULL' never gets here)
    InList(term, values, negated)   values: non-empty tuple
    Range(term, low, high, negated) BETWEEN, inclusive
    NullCheck(term, negated)        IS [NOT] NULL
    Pattern(term, pattern, negated, case_insensitive)     LIKE / ILIKE
    ArrayOverlap(column, values), ArrayContains(column, values), ArraySetEquals(column, values)
                                    string[] columns; ``'v' = ANY(col)`` becomes ArrayOverlap
    TextMatch(text, columns)        MATCH('text') over the resource's text columns
    AllOf(conditions), AnyOf(conditions), Negation(condition)
                                    trees are at most ``Limits.max_nesting`` deep
Statements
    ShowTablesPlan(resources)       already filtered by LIKE, in SHOW TABLES order
    DescribePlan(resource)
    SelectPlan(resource, items, star, distinct, explode_tags, unnest_alias, where, grouped,
               group_by, having, order_by, order_random, limit, offset)
        items       OutputItem(name, term): ``SELECT *`` expanded to the readable columns in
                    DESCRIBE order (+ the UNNEST alias last); names are output keys
        explode_tags  one row per (card, tag): ``tag`` or UNNEST named anywhere
        grouped     any aggregate, GROUP BY, DISTINCT or HAVING; group_by then holds the keys
                    (the select items themselves for DISTINCT without GROUP BY)
        order_by    OrderKey(term, descending, nulls_first|None) as written — aliases resolved
                    to their item's term; the executor completes it with defaults and the id
        limit/offset  raw values or None (the executor applies defaults and the 100 cap)
    InsertPlan(resource, columns, rows, returning)   rows: tuples of values in column order
    UpdatePlan(resource, assignments, where, returning)   assignments: (Column, value) pairs
    DeletePlan(resource, where, returning)
        returning   None, or the Columns to return (``*`` expanded to the readable columns)
Every plan has ``statement_type`` (select, show_tables, describe, insert, update, delete) and
``is_write``.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from dsl.schema import Column, Resource
from flashcards.scheduling.day import UTC_DAY, LearningDay

# Plan: terms -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Aggregate:
    func: str
    column: Column | None
    distinct: bool = False


@dataclass(frozen=True, slots=True)
class DateOf:
    column: Column


@dataclass(frozen=True, slots=True)
class CaseFold:
    func: str
    column: Column


Term = Column | Aggregate | DateOf | CaseFold

# Plan: values ----------------------------------------------------------------------------------

INTERVAL_UNITS = ("minutes", "hours", "days", "weeks", "months", "years")
_DATETIME_MIN = datetime.min.replace(tzinfo=UTC)
_DATETIME_MAX = datetime.max.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class RelativeNow:
    """``NOW()`` shifted by ``amount`` ``unit`` (negative for ``-``); resolved per execution.
    ``today`` marks ``CURRENT_DATE`` / ``TODAY()``: the start of the current learning day, whose
    days, weeks, months and years move on the workspace's wall clock (a day may last 23 or 25
    hours)."""

    amount: int = 0
    unit: str = "days"
    today: bool = False

    def resolve(self, now: datetime, day: LearningDay | None = None) -> datetime:
        try:
            if self.today:
                return self._from_day_start(now, day or UTC_DAY)
            if self.unit in ("months", "years"):
                return _add_months(now, self.amount * (12 if self.unit == "years" else 1))
            return now + timedelta(**{self.unit: self.amount})
        except (OverflowError, ValueError):
            return _DATETIME_MAX if self.amount > 0 else _DATETIME_MIN

    def _from_day_start(self, now: datetime, day: LearningDay) -> datetime:
        today = day.date_of(now)
        if self.unit in ("minutes", "hours"):
            return day.start(today) + timedelta(**{self.unit: self.amount})
        if self.unit in ("months", "years"):
            months = self.amount * (12 if self.unit == "years" else 1)
            shifted = _add_months(datetime.combine(today, datetime.min.time()), months).date()
        else:
            shifted = today + timedelta(**{self.unit: self.amount})
        return day.start(shifted)


def _add_months(moment: datetime, months: int) -> datetime:
    # Clamps the day like PostgreSQL: 2026-01-31 + 1 month = 2026-02-28.
    index = moment.year * 12 + moment.month - 1 + months
    year, month = divmod(index, 12)
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day)


# Plan: conditions ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Compare:
    term: Term
    op: str
    value: Any


@dataclass(frozen=True, slots=True)
class InList:
    term: Term
    values: tuple[Any, ...]
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Range:
    term: Term
    low: Any
    high: Any
    negated: bool = False


@dataclass(frozen=True, slots=True)
class NullCheck:
    term: Term
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Pattern:
    term: Term
    pattern: str
    negated: bool = False
    case_insensitive: bool = False


@dataclass(frozen=True, slots=True)
class ArrayOverlap:
    column: Column
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ArrayContains:
    column: Column
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ArraySetEquals:
    column: Column
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TextMatch:
    text: str
    columns: tuple[Column, ...]


@dataclass(frozen=True, slots=True)
class AllOf:
    conditions: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    conditions: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class Negation:
    condition: Condition


Condition = (
    Compare
    | InList
    | Range
    | NullCheck
    | Pattern
    | ArrayOverlap
    | ArrayContains
    | ArraySetEquals
    | TextMatch
    | AllOf
    | AnyOf
    | Negation
)

# Plan: statements ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OutputItem:
    name: str
    term: Term


@dataclass(frozen=True, slots=True)
class OrderKey:
    term: Term
    descending: bool = False
    nulls_first: bool | None = None


@dataclass(frozen=True, slots=True)
class ShowTablesPlan:
    statement_type: ClassVar[str] = "show_tables"
    is_write: ClassVar[bool] = False
    resources: tuple[Resource, ...]


@dataclass(frozen=True, slots=True)
class DescribePlan:
    statement_type: ClassVar[str] = "describe"
    is_write: ClassVar[bool] = False
    resource: Resource


@dataclass(frozen=True, slots=True)
class SelectPlan:
    statement_type: ClassVar[str] = "select"
    is_write: ClassVar[bool] = False
    resource: Resource
    items: tuple[OutputItem, ...]
    star: bool = False
    distinct: bool = False
    explode_tags: bool = False
    unnest_alias: str | None = None
    where: Condition | None = None
    grouped: bool = False
    group_by: tuple[Term, ...] = ()
    having: Condition | None = None
    order_by: tuple[OrderKey, ...] = ()
    order_random: bool = False
    limit: int | None = None
    offset: int | None = None


@dataclass(frozen=True, slots=True)
class InsertPlan:
    statement_type: ClassVar[str] = "insert"
    is_write: ClassVar[bool] = True
    resource: Resource
    columns: tuple[Column, ...]
    rows: tuple[tuple[Any, ...], ...]
    returning: tuple[Column, ...] | None = None

    def row_dicts(self) -> list[dict[str, Any]]:
        names = [c.name for c in self.columns]
        return [dict(zip(names, row, strict=True)) for row in self.rows]


@dataclass(frozen=True, slots=True)
class UpdatePlan:
    statement_type: ClassVar[str] = "update"
    is_write: ClassVar[bool] = True
    resource: Resource
    assignments: tuple[tuple[Column, Any], ...]
    where: Condition
    returning: tuple[Column, ...] | None = None


@dataclass(frozen=True, slots=True)
class DeletePlan:
    statement_type: ClassVar[str] = "delete"
    is_write: ClassVar[bool] = True
    resource: Resource
    where: Condition
    returning: tuple[Column, ...] | None = None


Plan = ShowTablesPlan | DescribePlan | SelectPlan | InsertPlan | UpdatePlan | DeletePlan
