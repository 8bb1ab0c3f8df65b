"""Validated plans (``dsl.language.plan``) → Django querysets, through the public queryset API only.

Everything here emits ``Q`` / ``F`` / lookups / aggregates on querysets; nothing writes SQL text
(the few database-specific pieces live in ``dsl.runtime.backends``). Every queryset starts from
``base_queryset``, the one place that scopes rows to the workspace and hides tombstones, before
any condition of the caller is added, so no statement can reach another workspace's rows.

Tags are answered from the indexed ``CardTag`` / ``DeckTag`` rows joined to ``Tag.key`` (the
lower-cased form), never by loading rows into Python. A SELECT that names ``tag`` (or UNNESTs
``tags``) runs over ``CardTag`` joined to its card: one row per (card, tag).
"""

from __future__ import annotations

import functools
import operator
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import reduce
from typing import Any, cast

from django.db.models import (
    Avg,
    Case,
    CharField,
    Count,
    Exists,
    Expression,
    F,
    FloatField,
    IntegerField,
    Max,
    Min,
    Model,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.expressions import OrderBy, Ref
from django.db.models.functions import Cast, Coalesce
from django.db.models.lookups import (
    Exact,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Range,
)

from dsl.language import plan as p
from dsl.runtime import backends
from dsl.runtime import clock as statement_clock
from dsl.schema import (
    BOOLEAN,
    INTEGER,
    NUMBER,
    STRING,
    UUID,
    Column,
    ColumnType,
    Resource,
)
from flashcards.models import (
    REVIEW_GRADES,
    Card,
    CardTag,
    Deck,
    DeckTag,
    ReviewEvent,
    Tag,
    Workspace,
)

MODELS: dict[str, type[Model]] = {
    "workspace": Workspace,
    "cards": Card,
    "decks": Deck,
    "review_events": ReviewEvent,
}

# Columns without a model field, and how each is computed (checked at start-up by dsl.checks).
EXPRESSION_COLUMNS: frozenset[tuple[str, str]] = frozenset(
    {("review_events", "review_grade"), ("cards", "tag")}
)


_COMPARISONS: dict[str, type] = {
    "=": Exact,
    "<": LessThan,
    "<=": LessThanOrEqual,
    ">": GreaterThan,
    ">=": GreaterThanOrEqual,
}
_AGGREGATES: dict[str, type] = {"count": Count, "sum": Sum, "avg": Avg, "min": Min, "max": Max}

# Output fields shared by the expressions built here: constructing a Field costs more than
# most of a compile (choices normalisation, validators), and these are never bound to a model.
_INTEGER = IntegerField()
_FLOAT = FloatField()
_CHAR = CharField()

# A condition that is always true, as a lookup so that negating it is always false.
_TRUE = Q(Exact(Value(1, output_field=_INTEGER), 1))


def base_queryset(
    resource: Resource,
    workspace: Workspace,
    *,
    tag_rows: bool = False,
    where: Q | None = None,
) -> QuerySet:
    """The rows of ``resource`` the workspace may see, narrowed by ``where``. THE entry point of
    every query: every queryset the dialect runs is a clone of the workspace's scope, and callers
    only ever narrow it. ``tag_rows`` gives one CardTag row per (live card, tag) instead.
    The queryset returned is a fresh clone: callers may refine it."""
    scope = _scope_queryset(resource.name, tag_rows, workspace.pk)
    return scope.all() if where is None else scope.filter(where)


@functools.lru_cache(maxsize=1024)
def _scope_queryset(name: str, tag_rows: bool, workspace_id: Any) -> QuerySet:
    """The scope filter of one workspace, built once per process: building it costs Django more
    than cloning it (docs/benchmarks.md §1). Never evaluated itself — ``base_queryset`` hands out
    clones only, so no rows are ever cached here."""
    if tag_rows:
        if name != "cards":
            raise ValueError("Only cards have tag rows.")
        # Tag rows exist for live cards only (flashcards.services keeps it so, migration 0005
        # cleared the rows of cards deleted before): a whole-workspace GROUP BY tag is answered
        # from the tag-row index alone, without joining the cards. Conditions on card columns
        # still join them (through ``card__…`` paths).
        return CardTag.objects.filter(workspace_id=workspace_id)
    if name == "workspace":
        return Workspace.objects.filter(pk=workspace_id)
    if name == "cards":
        return Card.objects.filter(workspace_id=workspace_id, deleted_at__isnull=True)
    if name == "decks":
        return Deck.objects.filter(workspace_id=workspace_id, deleted_at__isnull=True)
    if name == "review_events":
        return ReviewEvent.objects.filter(workspace_id=workspace_id)
    raise ValueError(f"Unknown resource {name!r}")


def fold_tag(value: str) -> str:
    """The comparison form of a tag value (Tag.key): NFC, lower case. Unlike tag_key it keeps
    surrounding spaces, which matter inside LIKE patterns."""
    return unicodedata.normalize("NFC", value).lower()


@dataclass(frozen=True)
class OutputColumn:
    key: str  # the output key of the row
    type: ColumnType  # for formatting (ColumnType.DATE for DATE(col) values)
    # A model field read as is: integers, numbers and booleans already arrive as int / float /
    # bool (after Django's converters), so the row formatter copies them without a call.
    plain_field: bool = False


@dataclass(frozen=True)
class CompiledSelect:
    """A ready queryset of tuples (not yet sliced) and how to turn each tuple into a row."""

    queryset: QuerySet
    columns: tuple[OutputColumn, ...]


class _Scope:
    """Where the columns of one statement live: on the resource's model, or — for tag rows — on
    the CardTag's card (prefix ``card__``) with ``tag`` itself on the CardTag's Tag."""

    def __init__(
        self, resource: Resource, workspace: Workspace, *, tag_rows: bool, now: datetime | None
    ) -> None:
        self.resource = resource
        self.workspace = workspace
        self.tag_rows = tag_rows
        self.prefix = "card__" if tag_rows else ""
        self.model = CardTag if tag_rows else MODELS[resource.name]
        self.now = now
        self.day = workspace.learning_day
        # The outer row's card / deck for correlated tag subqueries.
        self.owner_ref = "card" if tag_rows else "pk"

    def field(self, column: Column) -> Expression | F:
        return self.path(column.field or column.name)

    def path(self, name: str) -> F:
        """A field of the resource's rows (for tag rows, of the CardTag's card, a join away)."""
        return F(self.prefix + name)

    def id_field(self) -> str:
        id_column = self.resource.column(self.resource.id_column)
        assert id_column is not None and id_column.field is not None
        return id_column.field

    def id_path(self) -> str:
        return self.prefix + self.id_field()

    def id_expression(self) -> Expression | F:
        return self.path(self.id_field())

    def value(self, raw: Any) -> Any:
        if isinstance(raw, p.RelativeNow):
            if self.now is None:
                # Bound late: the moment is decided when the SQL is generated (dsl.runtime.clock).
                return statement_clock.StatementClock(statement_clock.OnDay(raw, self.day))
            return raw.resolve(self.now, self.day)
        return raw


def _is_tag(term: p.Term) -> bool:
    return isinstance(term, Column) and term.virtual


class GradeOf(Case):
    """``review_grade``: the grade name of a rating (a CASE over the rating column). It depends on
    the rating alone, so it groups by the rating: ``GROUP BY review_grade`` is
    ``GROUP BY rating`` in SQL, which an index on (workspace, rating) answers, and the CASE is
    computed for the four result rows instead of for every review (Django would otherwise group
    by the CASE itself, evaluated per row)."""

    def __init__(self, rating: Expression | F) -> None:
        super().__init__(
            *(
                When(Q(Exact(rating, index)), then=Value(grade, output_field=_CHAR))
                for index, grade in enumerate(REVIEW_GRADES)
            ),
            output_field=_CHAR,
        )
        self.rating = rating

    def get_group_by_cols(self) -> list[Any]:
        # Resolved, the first WHEN's condition is a WhereNode holding ``rating = 0``.
        condition = self.cases[0].condition
        lookup = getattr(condition, "children", [None])[0]
        rating = getattr(lookup, "lhs", None)
        columns: list[Any]
        if rating is None or not hasattr(rating, "get_group_by_cols"):
            columns = super().get_group_by_cols()
        else:
            columns = rating.get_group_by_cols()
        return columns


class DeterminedBy(Expression):
    """An expression of a grouping key (a tag's name read by its id, a case-folded key for the
    order): it has one value per group, so it groups by the key alone. Django would otherwise
    add the expression itself to GROUP BY, computed for every row. ``GROUP BY tag`` thus becomes
    ``GROUP BY tag_id`` over the tag rows alone — one integer per row, no join — with the tag's
    columns looked up once per group (docs/decisions.md)."""

    def __init__(self, column: Any, tag_id: Any) -> None:
        super().__init__(output_field=_CHAR)
        self.column, self.tag_id = column, tag_id

    def get_source_expressions(self) -> list[Any]:
        return [self.column, self.tag_id]

    def set_source_expressions(self, expressions: list[Any]) -> None:
        self.column, self.tag_id = expressions

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        sql, params = compiler.compile(self.column)
        return sql, params

    def get_group_by_cols(self) -> list[Any]:
        columns: list[Any] = self.tag_id.get_group_by_cols()
        return columns


def _determined_order(order: Any, key: Any) -> Any:
    """``order`` (an ascending / descending expression over a grouping key) grouped by the key."""
    if isinstance(order, OrderBy) and not isinstance(order.expression, Ref):
        return OrderBy(
            DeterminedBy(order.expression, key),
            descending=order.descending,
            nulls_first=order.nulls_first,
            nulls_last=order.nulls_last,
        )
    return order


def _grouped_tag(field: str) -> DeterminedBy:
    """The tag's ``field`` for a group of tag rows, by their tag id."""
    column = Subquery(Tag.objects.filter(pk=OuterRef("tag_id")).values(field)[:1])
    return DeterminedBy(column, F("tag_id"))


@functools.lru_cache(maxsize=8)
def _review_grade(rating: Expression | F) -> Case:
    """The grade of a rating, built once per rating expression: Django copies an expression
    before it resolves it, so one Case serves every query."""
    return GradeOf(rating)


def column_expression(scope: _Scope, column: Column) -> Expression | F:
    """The value of a column as an expression (the display spelling for ``tag``)."""
    if column.virtual:
        return F("tag__name")
    if column.name == "review_grade":
        return _review_grade(scope.path("rating"))
    return scope.field(column)


def term_expression(scope: _Scope, term: p.Term) -> Any:
    """The expression of a row-level term (aggregates are built by the grouped select)."""
    if isinstance(term, Column):
        return column_expression(scope, term)
    if isinstance(term, p.DateOf):
        return backends.learning_date(column_expression(scope, term.column), scope.day)
    if isinstance(term, p.CaseFold):
        function = backends.UnicodeLower if term.func == "lower" else backends.UnicodeUpper
        return function(column_expression(scope, term.column))
    raise TypeError(f"{term!r} is an aggregate; it only exists in grouped queries.")


def _aggregate(term: p.Aggregate, scope: _Scope, *, grouped: bool) -> Any:
    if term.column is None:
        return Count("*")
    column = term.column
    argument: Any = column_expression(scope, column)
    if term.func in ("min", "max"):
        # PostgreSQL has no MIN/MAX over uuid or boolean; both orders are the same everywhere
        # when taken over the canonical text and over 0/1.
        if column.type == UUID:
            argument = backends.UuidText(argument)
        elif column.type == BOOLEAN:
            argument = Cast(argument, _INTEGER)
        elif column.type == STRING:
            argument = backends.code_point_order(argument)
    aggregate = _AGGREGATES[term.func](argument, distinct=term.distinct)
    if term.func == "sum" and not grouped:
        # dsl.md §6.2: an aggregate query without GROUP BY has SUM → 0 over no rows.
        output = _FLOAT if column.type == NUMBER else _INTEGER
        return Coalesce(aggregate, Value(0, output_field=output), output_field=output)
    return aggregate


def output_type(term: p.Term) -> ColumnType:
    if isinstance(term, Column):
        return term.type
    if isinstance(term, p.DateOf):
        return ColumnType.DATE
    if isinstance(term, p.CaseFold):
        return STRING
    if term.func == "count":
        return INTEGER
    if term.func == "avg":
        return NUMBER
    assert term.column is not None
    return term.column.type


# Conditions ------------------------------------------------------------------------------------

Resolver = Callable[[p.Term], Any]


class _Conditions:
    """Compiles plan conditions to Q trees. ``resolve`` maps a term to its expression: the term
    itself in WHERE, the grouped query's annotations in HAVING."""

    def __init__(self, scope: _Scope, resolve: Resolver | None = None) -> None:
        self.scope = scope
        self.resolve = resolve or (lambda term: term_expression(scope, term))

    def compile(self, condition: p.Condition) -> Q:
        if isinstance(condition, p.AllOf):
            return reduce(operator.and_, map(self.compile, condition.conditions))
        if isinstance(condition, p.AnyOf):
            return reduce(operator.or_, map(self.compile, condition.conditions))
        if isinstance(condition, p.Negation):
            return ~self.compile(condition.condition)
        if isinstance(condition, p.TextMatch):
            return _text_match(self.scope, condition)
        if isinstance(condition, (p.ArrayOverlap, p.ArrayContains, p.ArraySetEquals)):
            return _array_condition(self.scope, condition)
        if isinstance(condition, p.Pattern):
            return self._pattern(condition)
        return self._scalar(condition)

    def _operand(self, term: p.Term) -> tuple[Any, Callable[[Any], Any]]:
        """The left-hand expression and how to prepare values for it. Tags compare on Tag.key
        with folded values, since tag comparisons ignore case."""
        if _is_tag(term):
            return F("tag__key"), fold_tag
        if isinstance(term, p.CaseFold) and _is_tag(term.column):
            return F("tag__key"), _identity
        return self.resolve(term), self.scope.value

    def _scalar(self, condition: Any) -> Q:
        term = condition.term
        if _is_review_grade(term) and (
            isinstance(condition, p.InList)
            or (isinstance(condition, p.Compare) and condition.op in ("=", "!="))
        ):
            return _review_grade_condition(self.scope, condition)
        expression, prepare = self._operand(term)
        if output_type(term) == INTEGER and any(
            isinstance(value, float) for value in _condition_values(condition)
        ):
            # A fractional or huge literal against an integer: compare exactly, as floats, rather
            # than let the integer field truncate the literal.
            expression = Cast(expression, _FLOAT)
        if isinstance(condition, p.Compare):
            if condition.op in ("=", "!="):
                q = Q(Exact(expression, prepare(condition.value)))
                return ~q if condition.op == "!=" else q
            lookup = _COMPARISONS[condition.op]
            return Q(lookup(_in_code_point_order(expression, term), prepare(condition.value)))
        if isinstance(condition, p.InList):
            q = Q(In(expression, [prepare(value) for value in condition.values]))
            return ~q if condition.negated else q
        if isinstance(condition, p.Range):
            bounds = (prepare(condition.low), prepare(condition.high))
            q = Q(Range(_in_code_point_order(expression, term), bounds))
            return ~q if condition.negated else q
        if isinstance(condition, p.NullCheck):
            q = Q(IsNull(expression, True))
            return ~q if condition.negated else q
        raise TypeError(f"Unexpected condition {condition!r}")

    def _pattern(self, condition: p.Pattern) -> Q:
        term = condition.term
        pattern, case_insensitive = condition.pattern, condition.case_insensitive
        expression, _ = self._operand(term)
        if _is_tag(term) or (isinstance(term, p.CaseFold) and _is_tag(term.column)):
            # Tag comparisons ignore case: the lower-cased key against a lower-cased pattern.
            pattern, case_insensitive = fold_tag(pattern), False
        elif output_type(term) == UUID:
            expression = backends.UuidText(expression)
        lookup = backends.like(expression, pattern, case_insensitive=case_insensitive)
        return ~Q(lookup) if condition.negated else Q(lookup)


def _condition_values(condition: Any) -> tuple[Any, ...]:
    if isinstance(condition, p.Compare):
        return (condition.value,)
    if isinstance(condition, p.InList):
        return condition.values
    if isinstance(condition, p.Range):
        return (condition.low, condition.high)
    return ()


def _identity(value: Any) -> Any:
    return value


def compile_condition(scope: _Scope, condition: p.Condition) -> Q:
    return _Conditions(scope).compile(condition)


def _in_code_point_order(expression: Any, term: p.Term) -> Any:
    """String inequalities use code point order on every database, like ORDER BY's tie-break."""
    if output_type(term) == STRING and not _is_tag(term):
        return backends.code_point_order(expression)
    return expression


def _is_review_grade(term: p.Term) -> bool:
    return isinstance(term, Column) and term.name == "review_grade"


def _review_grade_condition(scope: _Scope, condition: p.Compare | p.InList) -> Q:
    """review_grade = 'good' is rating = 2, which keeps the rating column's index usable."""
    if isinstance(condition, p.Compare):
        grades, negated = [condition.value], condition.op == "!="
    else:
        grades, negated = list(condition.values), condition.negated
    q = Q(In(scope.path("rating"), [REVIEW_GRADES.index(grade) for grade in grades]))
    return ~q if negated else q


def _tag_rows(scope: _Scope, **narrow: Any) -> tuple[QuerySet, str]:
    """The indexed tag rows of the outer row's card or deck, narrowed by the ``narrow`` lookups in
    the same ``filter()`` call, and the owner field's name.

    Correlated to the outer row, which the scope already holds to the workspace, so the rows are
    that card's or deck's own. Deliberately *without* a second workspace condition: PostgreSQL
    multiplies the selectivities of ``workspace_id = …`` and ``tag_id = …`` as if independent
    (a tag id belongs to one workspace), underestimates a common tag's rows ~40x and then builds
    the page from the tag side and sorts it — 29 ms instead of 0.35 ms for the paged SELECT at 10k
    cards (docs/benchmarks.md, "Second run")."""
    rows, owner = _tag_rows_of(scope.resource.name, scope.owner_ref, keyed=bool(narrow))
    return (rows.filter(**narrow) if narrow else rows.all()), owner


def _tag_model(resource_name: str) -> tuple[type[Model], str]:
    """The tag-row model of a resource with tags, and its field naming the owner row."""
    return (CardTag, "card") if resource_name == "cards" else (DeckTag, "deck")


@functools.lru_cache(maxsize=16)
def _tag_rows_of(resource_name: str, owner_ref: str, *, keyed: bool) -> tuple[QuerySet, str]:
    """The correlated tag rows of one resource, built once per process and narrowed by clones.
    ``keyed`` adds ``tag_key``, the joined Tag's key, so narrowing on it resolves no path and
    sets up no join again. Nothing here depends on the workspace or the statement."""
    model, owner = _tag_model(resource_name)
    rows = model.objects.filter(**{owner: OuterRef(owner_ref)})
    return (rows.alias(tag_key=F("tag__key")) if keyed else rows), owner


def _array_condition(
    scope: _Scope, condition: p.ArrayOverlap | p.ArrayContains | p.ArraySetEquals
) -> Q:
    column = condition.column
    if column.allowed_values is not None:
        return _enum_array_condition(scope, condition)
    keys = list(dict.fromkeys(fold_tag(value) for value in condition.values))
    if isinstance(condition, p.ArrayOverlap):
        return Q(Exists(_tag_rows(scope, tag_key__in=keys)[0])) if keys else ~_TRUE
    if isinstance(condition, p.ArrayContains):
        if not keys:
            return _TRUE
        rows, owner = _tag_rows(scope, tag_key__in=keys)
        hits = rows.values(owner).annotate(hits=Count("*"))
        return Q(Exists(hits.filter(hits=len(keys))))
    rows, owner = _tag_rows(scope)
    if not keys:
        return ~Q(Exists(rows))
    counts = rows.values(owner).annotate(
        total=Count("*"), hits=Count("pk", filter=Q(tag__key__in=keys))
    )
    return Q(Exists(counts.filter(total=len(keys), hits=len(keys))))


def _enum_array_condition(
    scope: _Scope, condition: p.ArrayOverlap | p.ArrayContains | p.ArraySetEquals
) -> Q:
    """Arrays of enum values (decks.effort_levels) are short JSON lists without a side table."""
    column = condition.column
    field = scope.prefix + (column.field or column.name)
    has = {value: Q(backends.json_array_has(field, value)) for value in column.allowed_values or ()}
    values = list(dict.fromkeys(condition.values))
    if isinstance(condition, p.ArrayOverlap):
        return reduce(operator.or_, (has[value] for value in values), ~_TRUE)
    if isinstance(condition, p.ArrayContains):
        return reduce(operator.and_, (has[value] for value in values), _TRUE)
    absent = [~has[value] for value in has if value not in values]
    return reduce(operator.and_, [*(has[value] for value in values), *absent], _TRUE)


def _text_match(scope: _Scope, condition: p.TextMatch) -> Q:
    """Case-insensitive substring over the resource's text columns, tags included."""
    parts = []
    for column in condition.columns:
        if column.is_array:
            parts.append(_tag_text_match(scope, fold_tag(condition.text)))
        else:
            pattern = backends.substring_pattern(condition.text)
            parts.append(Q(backends.like(scope.field(column), pattern, case_insensitive=True)))
    return reduce(operator.or_, parts)


def _tag_text_match(scope: _Scope, text: str) -> Q:
    """The row has a tag whose key contains ``text``: the workspace's tags containing it are
    found once (a handful of rows, never another workspace's), and each row the scan reads is
    checked against that set through the index of its own tag rows — so MATCH's cost follows the
    rows it reads, whether the text is a common tag or none, and never the size of other
    workspaces (backends.PerRowExists). The first EXISTS skips the per-row check altogether when
    no tag contains the text."""
    tags = Tag.objects.filter(workspace_id=scope.workspace.pk, key__contains=text)
    rows, _ = _tag_rows(scope)
    rows = rows.filter(backends.InSubqueryOnce(F("tag"), tags.values("pk")))
    return Q(Exists(tags)) & Q(backends.PerRowExists(rows))


# Ordering --------------------------------------------------------------------------------------


def _nullable(term: p.Term) -> bool:
    if isinstance(term, Column):
        return term.nullable
    if isinstance(term, p.Aggregate):
        return term.func != "count"
    return isinstance(term, p.DateOf) and term.column.nullable


def _order_terms(
    term: p.Term, expression: Any, key: p.OrderKey, *, grouped_tag: bool = False
) -> list[Any]:
    if _is_tag(term):
        # Case-insensitively by key, then by the spelling as a code point tie-break.
        parts: list[Any] = [F("tag__key"), backends.code_point_order(F("tag__name"))]
        if grouped_tag:
            parts = [
                _grouped_tag("key"),
                DeterminedBy(backends.code_point_order(_grouped_tag("name").column), F("tag_id")),
            ]
        return [part.desc() if key.descending else part.asc() for part in parts]
    return backends.order_by(
        expression,
        descending=key.descending,
        nulls_first=key.nulls_first,
        nullable=_nullable(term),
        # Grade names are lower-case ASCII: their case-insensitive order is their plain order, so
        # ordering needs no case-folding expression (which would also be grouped by).
        is_string=output_type(term) == STRING and not _is_review_grade(term),
    )


def _row_order(scope: _Scope, order_by: tuple[p.OrderKey, ...]) -> list[Any]:
    """The given order (or the resource's default), completed with the id ascending — and, for
    tag rows, the card's own tag order — so consecutive pages never overlap."""
    resource = scope.resource
    keys = list(order_by) or [
        p.OrderKey(resource.column(name), descending)  # type: ignore[arg-type]
        for name, descending in resource.default_order
    ]
    ordering: list[Any] = []
    for key in keys:
        ordering += _order_terms(key.term, term_expression(scope, key.term), key)
    id_column = resource.column(resource.id_column)
    if not any(key.term == id_column for key in keys):
        ordering.append(scope.id_expression().asc())
    if scope.tag_rows:
        ordering.append(F("position").asc())
    return ordering


# SELECT ----------------------------------------------------------------------------------------


def compile_select(
    plan: p.SelectPlan, workspace: Workspace, *, now: datetime | None
) -> CompiledSelect:
    """The rows of a SELECT as a queryset of tuples, ordered but not yet sliced. With ``now``
    None, NOW() stays a ``statement_clock.StatementClock``, so the queryset can be reused over time."""
    scope = _Scope(plan.resource, workspace, tag_rows=plan.explode_tags, now=now)
    where = None if plan.where is None else compile_condition(scope, plan.where)
    queryset = base_queryset(plan.resource, workspace, tag_rows=plan.explode_tags, where=where)
    if plan.grouped:
        return _grouped_select(scope, plan, queryset)
    columns = tuple(
        OutputColumn(item.name, output_type(item.term), _is_plain_field(item.term))
        for item in plan.items
    )
    ordering = ["?"] if plan.order_random else _row_order(scope, plan.order_by)
    selected = [_selected(scope, item.term) for item in plan.items]
    return CompiledSelect(queryset.order_by(*ordering).values_list(*selected), columns)


def _is_plain_field(term: p.Term) -> bool:
    return isinstance(term, Column) and term.field is not None and not term.virtual


def _selected(scope: _Scope, term: p.Term) -> Any:
    """What values_list() reads for a term: plain fields by path (cheaper than annotating an
    F() per column), computed terms as expressions."""
    if _is_tag(term):
        return "tag__name"
    if isinstance(term, Column) and term.field is not None:
        return scope.prefix + term.field
    return term_expression(scope, term)


def _grouped_select(scope: _Scope, plan: p.SelectPlan, queryset: QuerySet) -> CompiledSelect:
    """GROUP BY keys → values(), aggregates → annotate(), HAVING → filter on the annotations.
    Without keys, the aggregates make exactly one row, even over no rows."""
    keys = {term: f"g{i}" for i, term in enumerate(plan.group_by)}
    # Every aggregate the statement uses is annotated: Django orders and filters on aggregates
    # only through annotations; values_list() below selects just the items.
    used = [item.term for item in plan.items] + [key.term for key in plan.order_by]
    used += _condition_terms(plan.having)
    aggregates: dict[p.Aggregate, str] = {
        term: f"a{i}"
        for i, term in enumerate(dict.fromkeys(t for t in used if isinstance(t, p.Aggregate)))
    }
    # A review_grade key groups by the rating and is named after the aggregation (GradeOf).
    grades = {term: f"{name}_grade" for term, name in keys.items() if _is_review_grade(term)}
    # A tag key groups by the tag's id and is named after the aggregation (TagOf).
    tags = {term: f"{name}_tag" for term, name in keys.items() if _is_tag(term)}

    def grouped_by(term: p.Term) -> Any:
        if term in grades:
            return scope.path("rating")
        if term in tags:
            return F("tag_id")
        return term_expression(scope, term)

    if keys:
        queryset = queryset.values(**{name: grouped_by(term) for term, name in keys.items()})
    else:
        queryset = queryset.values(one=Value(1, output_field=_INTEGER))
    annotations = {
        name: _aggregate(term, scope, grouped=bool(keys)) for term, name in aggregates.items()
    }
    if keys and not annotations:
        # Django emits GROUP BY only for a values() followed by an aggregate; this one is never
        # selected (DISTINCT-only queries need the grouping all the same).
        annotations["rows"] = Count("*")
    queryset = queryset.annotate(**annotations)
    if grades:
        queryset = queryset.annotate(**{grades[term]: GradeOf(F(keys[term])) for term in grades})
    if tags:
        queryset = queryset.annotate(**{tags[term]: _grouped_tag("name") for term in tags})

    def resolve(term: p.Term) -> Any:
        if term in grades:
            return F(grades[term])
        if term in tags:
            return F(tags[term])
        if term in keys:
            return F(keys[term])
        if term in aggregates:
            return F(aggregates[term])
        return term_expression(scope, term)

    if plan.having is not None:
        queryset = queryset.filter(_Conditions(scope, resolve).compile(plan.having))
    selected_terms = [item.term for item in plan.items]
    # DISTINCT over fewer columns than the GROUP BY keys needs SQL DISTINCT; the order is then
    # completed with the selected keys only, as hidden ones would take part in the DISTINCT.
    hidden_keys = plan.distinct and any(term not in selected_terms for term in keys)
    if hidden_keys:
        queryset = queryset.distinct()
    ordering: list[Any] = ["?"] if plan.order_random else []
    if not plan.order_random:
        order_by = list(plan.order_by)
        completion = [t for t in keys if not hidden_keys or t in selected_terms]
        order_by += [p.OrderKey(t) for t in completion if all(k.term != t for k in order_by)]
        for key in order_by:
            terms = _order_terms(key.term, resolve(key.term), key, grouped_tag=key.term in tags)
            if key.term in keys and key.term not in tags:
                # Orders derived from a key (case folding) group by the key alone.
                terms = [_determined_order(term, F(keys[key.term])) for term in terms]
            ordering += terms
    selected = [
        grades.get(term) or tags.get(term) or keys.get(term) or aggregates[cast(p.Aggregate, term)]
        for term in selected_terms
    ]
    columns = tuple(OutputColumn(item.name, output_type(item.term)) for item in plan.items)
    return CompiledSelect(queryset.order_by(*ordering).values_list(*selected), columns)


def _condition_terms(condition: p.Condition | None) -> list[p.Term]:
    """Every term a condition mentions, in order."""
    if condition is None:
        return []
    if isinstance(condition, (p.AllOf, p.AnyOf)):
        return [term for part in condition.conditions for term in _condition_terms(part)]
    if isinstance(condition, p.Negation):
        return _condition_terms(condition.condition)
    term = getattr(condition, "term", None)
    return [term] if term is not None else []


# Writes ----------------------------------------------------------------------------------------


def matching_ids(
    resource: Resource, workspace: Workspace, condition: p.Condition, *, limit: int, now: datetime
) -> list[Any]:
    """Ids of the rows an UPDATE / DELETE targets, in the resource's default order, at most
    ``limit`` of them (callers ask for one more than they accept, to detect too many)."""
    scope = _Scope(resource, workspace, tag_rows=False, now=now)
    queryset = base_queryset(resource, workspace, where=compile_condition(scope, condition))
    ordered = queryset.order_by(*_row_order(scope, ()))
    return list(ordered.values_list(scope.id_path(), flat=True)[:limit])


def select_by_ids(
    resource: Resource, workspace: Workspace, columns: tuple[Column, ...], ids: list[Any]
) -> CompiledSelect:
    """RETURNING rows: tuples of (id, *columns) for the given ids, still scoped to the
    workspace; the caller puts them in the order of ``ids``."""
    scope = _Scope(resource, workspace, tag_rows=False, now=None)
    queryset = base_queryset(
        resource, workspace, where=Q(In(scope.id_expression(), ids))
    ).values_list(scope.id_path(), *(_selected(scope, column) for column in columns))
    return CompiledSelect(
        queryset, tuple(OutputColumn(c.name, c.type, _is_plain_field(c)) for c in columns)
    )
