"""Syntax tree of the agent SQL dialect, as produced by ``dsl.language.parser.parse_batch``.

Every node is a frozen, slotted dataclass with structural equality. Each node also carries
``span: tuple[int, int]`` — start and end offsets into the *whole* submitted sql — as a
keyword-only field that is excluded from equality and repr, so tests can compare trees
without positions: ``Comparison("=", ColumnRef("reps"), NumberLit(Decimal(0)))``.

Names are already folded to lower case by the lexer; nothing here has been checked against
the resource registry (that is ``dsl.language.validator``'s job).

Values (right-hand sides, VALUES entries, SET values)
    ColumnRef(name)                 a bare or double-quoted identifier (``quoted`` tells which,
                                    ``spelling`` keeps the unfolded text)
    StringLit(value)                ``'text'`` with ``''`` already unescaped
    NumberLit(value: Decimal)       ``12``, ``-3``, ``.5``, ``1e3`` — exact, never rounded
    BoolLit(value), NullLit()
    ArrayLit(items)                 ``('a', 'b')``, ``()``, ``['a']``, ``ARRAY['a']``
                                    (``'{a,b}'`` stays a StringLit; the validator decides)
    Now(sign, interval, today)      ``NOW()`` / ``CURRENT_TIMESTAMP`` / ``CURRENT_DATE`` / ``TODAY()`` [``±`` ``INTERVAL '7 days'``]
                                    sign is 0 (no interval), +1 or -1; interval is the raw text
Expressions (select items, left operands, GROUP BY / ORDER BY keys)
    Star()                          ``*`` in a select list, ``COUNT(*)``, ``RETURNING *``
    FuncCall(name, arg, distinct)   name in count/sum/avg/min/max/date/lower/upper;
                                    arg is a ColumnRef, or Star for ``COUNT(*)``
Conditions (WHERE / HAVING)
    Comparison(op, left, right)     op in ``= != < <= > >=`` (``<>`` is stored as ``!=``)
    ArrayEquals(left, value)        ``tags = ('a', 'b')`` — set equality, ``= ()`` means empty
    In(left, values, negated)
    Between(left, low, high, negated)
    IsNull(left, negated)
    Like(left, pattern, negated, case_insensitive)      LIKE / ILIKE
    Overlap(left, value), Contains(left, value)         ``arr OVERLAP (…)`` / ``arr CONTAINS (…)``
    Any(value, column)              ``'v' = ANY(tags)``
    Match(text)                     ``MATCH('text')``
    Not(operand), And(operands), Or(operands)           And / Or are n-ary and flattened
Statement parts
    SelectItem(expr, alias), OrderItem(expr, descending, nulls_first),
    Assignment(column, value), Row(values)
Statements
    ShowTables(like), Describe(resource),
    Select(distinct, items, resource, unnest_alias, unnest_column, where, group_by, having,
           order_by, order_random, limit, offset),
    Insert(resource, columns, rows, returning), Update(resource, assignments, where, returning),
    Delete(resource, where, returning)
    Statements also carry ``resource_span`` (compare=False) for errors about the resource name.
Containers
    ParsedStatement(index, node, span, sql, normalized_sql), Batch(sql, statements, normalized_sql)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

Span = tuple[int, int]
NO_SPAN: Span = (0, 0)


@dataclass(frozen=True, slots=True)
class Node:
    span: Span = field(default=NO_SPAN, compare=False, repr=False, kw_only=True)


# Values ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ColumnRef(Node):
    name: str
    quoted: bool = field(default=False, compare=False)
    # The name as written, before folding, for hints such as "strings take single quotes".
    spelling: str | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class StringLit(Node):
    value: str


@dataclass(frozen=True, slots=True)
class NumberLit(Node):
    value: Decimal


@dataclass(frozen=True, slots=True)
class BoolLit(Node):
    value: bool


@dataclass(frozen=True, slots=True)
class NullLit(Node):
    pass


@dataclass(frozen=True, slots=True)
class ArrayLit(Node):
    items: tuple[Value, ...]


@dataclass(frozen=True, slots=True)
class Now(Node):
    sign: int = 0
    interval: str | None = None
    today: bool = False  # CURRENT_DATE / TODAY(): the start of the current learning day


Literal = StringLit | NumberLit | BoolLit | NullLit
Value = StringLit | NumberLit | BoolLit | NullLit | ArrayLit | Now | ColumnRef


# Expressions ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Star(Node):
    pass


@dataclass(frozen=True, slots=True)
class FuncCall(Node):
    name: str
    arg: ColumnRef | Star
    distinct: bool = False


Expr = ColumnRef | FuncCall


# Conditions -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Comparison(Node):
    op: str
    left: Expr
    right: Value


@dataclass(frozen=True, slots=True)
class ArrayEquals(Node):
    left: Expr
    value: ArrayLit


@dataclass(frozen=True, slots=True)
class In(Node):
    left: Expr
    values: tuple[Value, ...]
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Between(Node):
    left: Expr
    low: Value
    high: Value
    negated: bool = False


@dataclass(frozen=True, slots=True)
class IsNull(Node):
    left: Expr
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Like(Node):
    left: Expr
    pattern: Value
    negated: bool = False
    case_insensitive: bool = False


@dataclass(frozen=True, slots=True)
class Overlap(Node):
    left: Expr
    value: Value


@dataclass(frozen=True, slots=True)
class Contains(Node):
    left: Expr
    value: Value


@dataclass(frozen=True, slots=True)
class Any(Node):
    value: Value
    column: ColumnRef


@dataclass(frozen=True, slots=True)
class Match(Node):
    text: Value


@dataclass(frozen=True, slots=True)
class Not(Node):
    operand: Condition


@dataclass(frozen=True, slots=True)
class And(Node):
    operands: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class Or(Node):
    operands: tuple[Condition, ...]


Predicate = (
    Comparison | ArrayEquals | In | Between | IsNull | Like | Overlap | Contains | Any | Match
)
Condition = Predicate | Not | And | Or


# Statement parts ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SelectItem(Node):
    expr: Expr | Star
    alias: str | None = None
    alias_without_as: bool = field(default=False, compare=False)
    """``front_text back_text``: an alias written without AS (PostgreSQL's form), which is a
    missing comma when the alias names a column."""


@dataclass(frozen=True, slots=True)
class OrderItem(Node):
    expr: Expr
    descending: bool = False
    nulls_first: bool | None = None


@dataclass(frozen=True, slots=True)
class Assignment(Node):
    column: ColumnRef
    value: Value


@dataclass(frozen=True, slots=True)
class Row(Node):
    values: tuple[Value, ...]


Returning = tuple[ColumnRef | Star, ...]


# Statements -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShowTables(Node):
    like: str | None = None


@dataclass(frozen=True, slots=True)
class Describe(Node):
    resource: str
    resource_span: Span = field(default=NO_SPAN, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True, slots=True)
class Select(Node):
    distinct: bool = False
    items: tuple[SelectItem, ...] = ()
    resource: str = ""
    unnest_alias: str | None = None
    unnest_column: ColumnRef | None = None
    where: Condition | None = None
    group_by: tuple[Expr, ...] = ()
    having: Condition | None = None
    order_by: tuple[OrderItem, ...] = ()
    order_random: bool = False
    limit: int | None = None
    offset: int | None = None
    resource_span: Span = field(default=NO_SPAN, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True, slots=True)
class Insert(Node):
    resource: str
    columns: tuple[ColumnRef, ...]
    rows: tuple[Row, ...]
    returning: Returning | None = None
    resource_span: Span = field(default=NO_SPAN, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True, slots=True)
class Update(Node):
    resource: str
    assignments: tuple[Assignment, ...]
    where: Condition | None = None
    returning: Returning | None = None
    resource_span: Span = field(default=NO_SPAN, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True, slots=True)
class Delete(Node):
    resource: str
    where: Condition | None = None
    returning: Returning | None = None
    resource_span: Span = field(default=NO_SPAN, compare=False, repr=False, kw_only=True)


Statement = ShowTables | Describe | Select | Insert | Update | Delete


# Containers -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ParsedStatement:
    """One statement of a batch: ``index`` is 1-based, ``sql`` the statement's own raw text."""

    index: int
    node: Statement
    span: Span
    sql: str
    normalized_sql: str


@dataclass(frozen=True, slots=True)
class Batch:
    """A whole request: ``sql`` as submitted, ``normalized_sql`` the statements joined by "; "."""

    sql: str
    statements: tuple[ParsedStatement, ...]
    normalized_sql: str
