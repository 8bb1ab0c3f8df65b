"""Semantic validation of parsed statements against the resource registry (dsl.md §5-§7, §9).

``validate(parsed_statement) -> Plan`` checks one ``ast.ParsedStatement`` and returns a plan in
which every name is resolved and every literal converted; ``validate_batch(batch)`` does it for a
whole request and marks errors with their statement index. Failures raise ``DslError`` with the
§9 reason, the offset of the offending node, a hint and, for unknown names, suggestions.

The plan types are dsl.language.plan; literal text becomes values in dsl.language.literals; this module holds the
checks only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from dsl import habits
from dsl.language import ast, literals
from dsl.language.errors import DslError, closest_names, did_you_mean
from dsl.language.parser import DEFAULT_LIMITS, Limits
from dsl.language.plan import (
    INTERVAL_UNITS,
    Aggregate,
    AllOf,
    AnyOf,
    ArrayContains,
    ArrayOverlap,
    ArraySetEquals,
    CaseFold,
    Compare,
    Condition,
    DateOf,
    DeletePlan,
    DescribePlan,
    InList,
    InsertPlan,
    Negation,
    NullCheck,
    OrderKey,
    OutputItem,
    Pattern,
    Plan,
    Range,
    RelativeNow,
    SelectPlan,
    ShowTablesPlan,
    Term,
    TextMatch,
    UpdatePlan,
)
from dsl.schema import (
    BOOLEAN,
    DATETIME,
    INTEGER,
    INTERNAL_FIELDS,
    JSON,
    NUMBER,
    NUMERIC_TYPES,
    RESOURCE_NAMES,
    RESOURCES,
    STRING,
    STRING_ARRAY,
    UUID,
    Column,
    ColumnType,
    Resource,
    get_resource,
)
from dsl.settings import dsl_settings

# Errors ----------------------------------------------------------------------------------------

_UUID_EXAMPLE = "'123e4567-e89b-42d3-a456-426614174000'"
_EXAMPLES: dict[str, str] = {
    UUID: _UUID_EXAMPLE,
    STRING: "'text'",
    INTEGER: "3",
    NUMBER: "0.9",
    BOOLEAN: "TRUE",
    DATETIME: "'2026-03-05T10:00:00Z'",
    STRING_ARRAY: "('tag1', 'tag2')",
}


def _fail(
    message: str, reason: str, node: ast.Node | None, hint: str | None = None, **extra: Any
) -> DslError:
    return DslError(
        message,
        reason=reason,
        offset=node.span[0] if node is not None else None,
        hint=hint,
        **extra,
    )


def _example(term_type: str, allowed: tuple[str, ...] | None) -> str:
    if allowed:
        return f"'{allowed[0]}'"
    example: str = _EXAMPLES.get(term_type, "'text'")
    return example


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _display(node: ast.Node) -> str:
    """A short rendering of a value node for messages."""
    if isinstance(node, ast.StringLit):
        text = node.value if len(node.value) <= 40 else node.value[:37] + "..."
        return f"'{text}'"
    if isinstance(node, ast.NumberLit):
        text = str(node.value)
        return text if len(text) <= 40 else text[:37] + "..."
    if isinstance(node, ast.BoolLit):
        return "TRUE" if node.value else "FALSE"
    if isinstance(node, ast.NullLit):
        return "NULL"
    if isinstance(node, ast.ArrayLit):
        return (
            "("
            + ", ".join(_display(i) for i in node.items[:5])
            + (", ...)" if len(node.items) > 5 else ")")
        )
    if isinstance(node, ast.ColumnRef):
        return f'"{node.name}"' if node.quoted else node.name
    if isinstance(node, ast.Now):
        return (
            "NOW()"
            if node.interval is None
            else f"NOW() {'+' if node.sign > 0 else '-'} INTERVAL '{node.interval}'"
        )
    return "value"


# Literal conversion ----------------------------------------------------------------------------


class _TermInfo:
    """Type facts about a term, for operator and literal checks."""

    __slots__ = ("allowed", "column", "name", "type")

    def __init__(
        self, name: str, type_: str, allowed: tuple[str, ...] | None, column: Column | None
    ) -> None:
        self.name = name
        self.type = type_
        self.allowed = allowed
        self.column = column


def _term_info(term: Term) -> _TermInfo:
    if isinstance(term, Column):
        return _TermInfo(
            term.name, term.type, term.allowed_values if not term.is_array else None, term
        )
    if isinstance(term, CaseFold):
        return _TermInfo(f"{term.func.upper()}({term.column.name})", STRING, None, term.column)
    if isinstance(term, DateOf):
        return _TermInfo(f"DATE({term.column.name})", ColumnType.DATE, None, term.column)
    column = term.column
    label = f"{term.func.upper()}({'*' if column is None else column.name})"
    if term.func == "count":
        return _TermInfo(label, INTEGER, None, None)
    if term.func == "avg":
        return _TermInfo(label, NUMBER, None, None)
    assert column is not None
    return _TermInfo(label, column.type, column.allowed_values, None)


def _convert_scalar(info: _TermInfo, node: ast.Value, *, check_enum: bool = True) -> Any:
    """A literal for a scalar term, converted, or a DslError naming the term and its type."""
    kind = info.type
    if isinstance(node, ast.ColumnRef):
        raise _value_is_name(info, node)
    if isinstance(node, ast.NullLit):
        column = info.column
        never_null = column is not None and not column.nullable and info.name == column.name
        empty = _empty_value(column) if never_null and column is not None else None
        raise _fail(
            f"NULL is not a value to compare {info.name} with.",
            "type_mismatch",
            node,
            f"Use {info.name} IS NULL or {info.name} IS NOT NULL."
            if not never_null
            else f"{info.name} is never NULL; "
            + (f"an empty one is {empty}." if empty else "drop the condition."),
        )
    if isinstance(node, ast.ArrayLit):
        raise _mismatch(info, node, "a list")
    if kind in (STRING, UUID):
        if not isinstance(node, ast.StringLit):
            raise _mismatch(info, node)
        if kind == UUID:
            found = literals.uuid_literal(node.value)
            if found is None:
                raise _mismatch(info, node, "not a valid UUID")
            return found
        if check_enum and info.allowed is not None and node.value not in info.allowed:
            raise _bad_enum(info, node)
        return node.value
    if kind == INTEGER:
        if not isinstance(node, ast.NumberLit):
            words = habits.VALUE_SYNONYMS.get(info.name, {})
            if isinstance(node, ast.StringLit) and node.value.lower() in words:
                number = words[node.value.lower()]
                raise _fail(
                    f"'{node.value}' does not fit {info.name}, which is an integer "
                    f"({', '.join(f'{n} {w}' for w, n in words.items())}).",
                    "type_mismatch",
                    node,
                    f"Write {info.name} = {number}, or compare the word: review_grade = "
                    f"'{node.value.lower()}'.",
                )
            raise _mismatch(info, node)
        # Integers take numbers (dsl.md §6.1): reps < 0.5 compares as PostgreSQL would.
        integer = literals.integer_literal(node.value)
        if integer is None:
            raise _mismatch(info, node, "out of range")
        return integer
    if kind == NUMBER:
        if not isinstance(node, ast.NumberLit):
            raise _mismatch(info, node)
        value = literals.number_literal(node.value)
        if value is None:
            raise _mismatch(info, node, "out of range")
        return value
    if kind == BOOLEAN:
        if not isinstance(node, ast.BoolLit):
            raise _mismatch(info, node)
        return node.value
    if kind == DATETIME:
        if isinstance(node, ast.Now):
            if node.interval is None:
                return RelativeNow(today=node.today)
            shift = literals.parse_interval(node.interval)
            if shift is None:
                raise _fail(
                    f"INTERVAL '{node.interval}' is not an interval.",
                    "type_mismatch",
                    node,
                    f"Write an amount and a unit ({', '.join(INTERVAL_UNITS)}), "
                    "e.g. NOW() - INTERVAL '7 days'.",
                )
            return RelativeNow(node.sign * shift.amount, shift.unit, today=node.today)
        if isinstance(node, ast.StringLit):
            moment = literals.datetime_literal(node.value)
            if moment is not None:
                return moment
        raise _mismatch(info, node)
    raise _mismatch(info, node)


def _check_nullable(term: Term, node: ast.IsNull) -> None:
    """IS [NOT] NULL applies to nullable columns only (dsl.md §6.1): on any other column it
    would silently match no row (or every row), which is never what the caller meant."""
    column = term.column if isinstance(term, DateOf) else term
    if not isinstance(column, Column) or column.nullable:
        return
    test = "IS NOT NULL" if node.negated else "IS NULL"
    name = column.name
    meaning = habits.NULL_MEANINGS.get(name)
    if column.is_array:
        fix = f"NOT {name} = ()" if node.negated else f"{name} = ()"
        hint = f"{name} is never NULL and an empty list is written (): write {fix}."
    elif column.virtual:
        fix = "NOT tags = ()" if node.negated else "tags = ()"
        hint = (
            f"tag is never NULL: a card without tags has no tag rows; find such cards with {fix}."
        )
    elif meaning is not None:
        fix = f"NOT {meaning}" if node.negated else meaning
        hint = f"{name} is never NULL; what you mean is probably {fix}."
    elif column.type == STRING and not node.negated:
        fix = f"{name} = ''"
        hint = f"{name} is never NULL; test for empty text with {fix}, or drop the condition."
    else:
        hint = f"{name} is never NULL, so {test} never narrows anything: drop the condition."
    raise _fail(
        f"{name} is never NULL, so {name} {test} is not a useful test.",
        "type_mismatch",
        node,
        hint,
    )


def _mismatch(info: _TermInfo, node: ast.Node, why: str | None = None) -> DslError:
    shown = _display(node)
    detail = f" ({why})" if why else ""
    if isinstance(node, ast.Now):
        return _fail(
            f"{shown} is a datetime but {info.name} is {info.type}.",
            "type_mismatch",
            node,
            f"Compare {info.name} with {_article(info.type)} {info.type} literal, "
            f"e.g. {info.name} = {_example(info.type, info.allowed)}.",
        )
    example = _example(info.type, info.allowed)
    if info.type == "boolean":
        example = _meant_boolean(node)
    one_of = ""
    if info.allowed:  # an enum: every allowed value, always (dsl.md §6.1)
        one_of = " (one of " + ", ".join(f"'{v}'" for v in info.allowed) + ")"
    return _fail(
        f"{shown} does not fit {info.name}, which is {info.type}{detail}.",
        "type_mismatch",
        node,
        f"Use {_article(info.type)} {info.type} literal{one_of}, e.g. {info.name} = {example}.",
    )


_FALSE_SPELLINGS = frozenset({"0", "false", "f", "no", "n", "off"})
_TRUE_SPELLINGS = frozenset({"1", "true", "t", "yes", "y", "on"})


def _meant_boolean(node: ast.Node) -> str:
    """The boolean the caller meant by ``0``, ``'false'``, ``'no'``… (TRUE when it is unclear)."""
    text = None
    if isinstance(node, ast.NumberLit):
        text = str(node.value)
    elif isinstance(node, ast.StringLit):
        text = node.value.strip().lower()
    return "FALSE" if text in _FALSE_SPELLINGS else "TRUE"


def _bad_enum(info: _TermInfo, node: ast.StringLit) -> DslError:
    allowed = ", ".join(f"'{v}'" for v in info.allowed or ())
    suggestions = closest_names(node.value.lower(), info.allowed or ())
    meant = habits.ENUM_SYNONYMS.get(info.name, {}).get(node.value.strip().lower())
    if meant is not None:
        suggestions = [meant, *(s for s in suggestions if s != meant)]
    return _fail(
        f"'{node.value}' is not an allowed value of {info.name}; allowed values: {allowed}.",
        "invalid_value",
        node,
        f"Use one of {allowed}, e.g. {info.name} = '{(suggestions or info.allowed or ('',))[0]}'.",
        suggestions=suggestions,
    )


def _value_is_name(info: _TermInfo, node: ast.ColumnRef) -> DslError:
    text = (node.spelling or node.name).replace("'", "''")
    example = (
        f"{info.name} OVERLAP ('{text}')" if info.type.endswith("[]") else f"{info.name} = '{text}'"
    )
    if node.quoted:
        return _fail(
            f'"{node.spelling or node.name}" is a double-quoted name, not a string.',
            "type_mismatch",
            node,
            f"Strings take single quotes: {example}.",
        )
    return _fail(
        f"{node.name} is not a value for {info.name}.",
        "type_mismatch",
        node,
        f"Write literals on the right; strings take single quotes: {example}.",
    )


def _as_list_literal(text: str) -> str:
    """A string the caller meant as a list (``'a'``, ``'a,b'``, ``'["a","b"]'``) written as this
    language's list literal."""
    inner = text.strip()
    if inner[:1] in "[{" and inner[-1:] in "]}":
        inner = inner[1:-1]
    items = [i.strip().strip('"').strip() for i in inner.split(",")]
    quoted = [f"'{i.replace(chr(39), chr(39) * 2)}'" for i in items if i]
    return f"({', '.join(quoted)})"


def _convert_array(info: _TermInfo, node: ast.Value) -> tuple[str, ...]:
    """A string-array literal for a string[] column: (…), […], ARRAY[…] or '{a,b}'."""
    if isinstance(node, ast.StringLit):
        parsed = literals.parse_array_text(node.value)
        if parsed is None:
            listed = _as_list_literal(node.value)
            raise _fail(
                f"{_display(node)} is a single string but {info.name} is an array ({info.type}).",
                "type_mismatch",
                node,
                f"Write the list in parentheses: {listed} (e.g. ('tag1', 'tag2')); in a condition, "
                f"{info.name} OVERLAP {listed} holds any of them.",
            )
        values = parsed
    elif isinstance(node, ast.ArrayLit):
        items: list[str] = []
        for item in node.items:
            if isinstance(item, ast.ColumnRef):
                raise _value_is_name(info, item)
            if not isinstance(item, ast.StringLit):
                raise _fail(
                    f"{_display(item)} is not a string; {info.name} holds strings.",
                    "type_mismatch",
                    item,
                    f"Quote each element: {info.name} OVERLAP ('tag1', 'tag2').",
                )
            items.append(item.value)
        values = tuple(items)
    elif isinstance(node, ast.ColumnRef):
        raise _value_is_name(info, node)
    else:
        raise _fail(
            f"{_display(node)} does not fit {info.name}, which is {info.type}.",
            "type_mismatch",
            node,
            "Write a list of strings, e.g. ('tag1', 'tag2').",
        )
    if info.column is not None and info.column.allowed_values is not None:
        allowed = info.column.allowed_values
        for value in values:
            if value not in allowed:
                listed = ", ".join(f"'{v}'" for v in allowed)
                raise _fail(
                    f"'{value}' is not an allowed element of {info.name}; allowed values: {listed}.",
                    "invalid_value",
                    node,
                    f"Use elements from {listed}, e.g. ('{allowed[0]}').",
                    suggestions=closest_names(value.lower(), allowed),
                )
    return values


# Names -----------------------------------------------------------------------------------------


def _resolve_resource(name: str, node: ast.Node, span: ast.Span) -> Resource:
    resource = get_resource(name)
    if resource is not None:
        return resource
    suggestions = closest_names(name, RESOURCE_NAMES)
    synonym = habits.RESOURCE_SYNONYMS.get(name)
    hint = "Run SHOW TABLES to list the resources: workspace, cards, decks, review_events."
    if synonym:
        suggestions = [synonym, *(s for s in suggestions if s != synonym)]
        resource = get_resource(synonym)
        described = resource.description if resource is not None else ""
        hint = f"{name} is the resource {synonym} here: {described}"
    if name == "tags":
        hint = "Tags are a column of cards; count them with SELECT tag, COUNT(*) FROM cards GROUP BY tag."
        suggestions = ["cards"]
    raise DslError(
        f"Unknown resource: {name}.{did_you_mean(suggestions)}",
        reason="unknown_resource",
        offset=span[0],
        hint=hint,
        suggestions=suggestions,
    )


def _unknown_column(
    resource: Resource,
    ref: ast.ColumnRef,
    extra_names: Iterable[str] = (),
    hint: str | None = None,
    *,
    writing: bool = False,
) -> DslError:
    name = ref.name
    visible = [c.name for c in resource.columns] + list(extra_names)
    # Internal names get their own hint; look-alike visible columns would only mislead.
    suggestions = [] if name in INTERNAL_FIELDS else closest_names(name, visible)
    if name == "id" and resource.id_column not in suggestions:
        suggestions.insert(0, resource.id_column)
    synonym = habits.column_synonym(resource.name, name)
    if writing:
        synonym = habits.WRITE_SYNONYMS.get(resource.name, {}).get(name, synonym)
    explained = habits.COLUMN_HINTS.get(resource.name, {}).get(name)
    if explained is not None and hint is None:
        hint, synonym = explained, None
    owners = [r.name for r in RESOURCES if r is not resource and r.column(name) is not None]
    meant = resource.column(synonym) if synonym and name not in INTERNAL_FIELDS else None
    if meant is not None:
        # A word for the column wins over look-alike spellings, which would answer another
        # question (status is not tags); close spellings still follow it.
        close = closest_names(name, visible, cutoff=0.75)
        suggestions = [meant.name, *(s for s in close if s != meant.name)]
    if hint is None:
        inverse = habits.INVERSE_SYNONYMS.get(resource.name, {}).get(name)
        if meant is not None and inverse is not None:
            hint = inverse
        elif meant is not None:
            hint = f"{meant.name} is the column for that: {meant.description}"
        elif name in INTERNAL_FIELDS:
            hint = INTERNAL_FIELDS[name]
        else:
            elsewhere = [
                (r.name, habits.column_synonym(r.name, name))
                for r in RESOURCES
                if r is not resource and habits.column_synonym(r.name, name)
            ]
            if owners:
                hint = (
                    f"{name} is a column of {' and '.join(owners)}, not {resource.name}; "
                    "query one resource at a time."
                )
            elif elsewhere:
                other, column = elsewhere[0]
                hint = (
                    f"{resource.name} has no such column; {other}.{column} may be what you mean: "
                    f"query it as SELECT {column} FROM {other}, one resource at a time."
                )
            elif ref.quoted:
                text = (ref.spelling or ref.name).replace("'", "''")
                hint = f"Strings take single quotes ('{text}'); double quotes name columns."
            elif suggestions:
                hint = f"Write {suggestions[0]} (DESCRIBE {resource.name} lists its columns)."
            else:
                hint = f"Run DESCRIBE {resource.name} to list its columns."
    return _fail(
        f"Unknown column for {resource.name}: {name}.{did_you_mean(suggestions)}",
        "unknown_column",
        ref,
        hint,
        suggestions=suggestions,
    )


def _tag_outside_select(ref: ast.ColumnRef) -> DslError:
    """The virtual ``tag`` makes one row per (card, tag), which only a SELECT has."""
    return _fail(
        "tag is only available in SELECT; UPDATE and DELETE filter cards by their tags column.",
        "unsupported_syntax",
        ref,
        "Filter by the tags column instead, e.g. WHERE tags OVERLAP ('english') or "
        "WHERE 'english' = ANY(tags).",
    )


# Select ----------------------------------------------------------------------------------------

_WHERE, _HAVING = "WHERE", "HAVING"


class _SelectScope:
    """Name resolution for one SELECT: columns, the UNNEST alias and the select aliases."""

    __slots__ = ("aliases", "default_names", "resource", "tag", "unnest_alias", "uses_tag")

    def __init__(self, resource: Resource, unnest_alias: str | None) -> None:
        self.resource = resource
        self.unnest_alias = unnest_alias
        self.tag = resource.column("tag")
        self.aliases: dict[str, Term] = {}
        self.default_names: dict[str, Term] = {}
        self.uses_tag = unnest_alias is not None

    def column(self, ref: ast.ColumnRef, *, hint: str | None = None) -> Column:
        name = ref.name
        if name == self.unnest_alias and self.tag is not None:
            column: Column | None = self.tag
        else:
            column = self.resource.column(name)
        if column is None:
            extra = [self.unnest_alias] if self.unnest_alias else []
            raise _unknown_column(self.resource, ref, extra, hint)
        if column.virtual:
            self.uses_tag = True
        return column

    def named(self, ref: ast.ColumnRef) -> Term:
        """A name in GROUP BY / HAVING / ORDER BY: alias first, then column, then default name."""
        name = ref.name
        if name in self.aliases:
            return self.aliases[name]
        if name == self.unnest_alias or self.resource.column(name) is not None:
            return self.column(ref)
        if name in self.default_names:
            return self.default_names[name]
        extra = [n for n in (*self.aliases, self.unnest_alias) if n]
        raise _unknown_column(self.resource, ref, extra)


def _default_name(term: Term) -> str:
    if isinstance(term, Column):
        return term.name
    if isinstance(term, DateOf):
        return f"date_{term.column.name}"
    if isinstance(term, Aggregate):
        return term.func if term.column is None else f"{term.func}_{term.column.name}"
    return f"{term.func}_{term.column.name}"


def _resolve_call(scope: _SelectScope, call: ast.FuncCall) -> Term:
    arg = call.arg
    if isinstance(arg, ast.Star):
        return Aggregate("count", None)
    column = scope.column(arg)
    name = call.name
    if name in ("sum", "avg"):
        if column.type not in NUMERIC_TYPES:
            raise _fail(
                f"{name.upper()}({column.name}) needs a numeric column; {column.name} is {column.type}.",
                "type_mismatch",
                call,
                f"Use {name.upper()} on an integer or number column, e.g. {name.upper()}(reps), or COUNT({column.name}).",
            )
        return Aggregate(name, column)
    if name in ("min", "max"):
        if not column.sortable:
            raise _fail(
                f"{name.upper()}({column.name}) needs a sortable column; {column.name} is not sortable.",
                "not_sortable",
                call,
                "Use MIN or MAX on a sortable column (DESCRIBE shows sortable = true), e.g. MAX(due_at).",
            )
        return Aggregate(name, column)
    if name == "count":
        return Aggregate("count", column, call.distinct)
    if name == "date":
        if column.type != DATETIME:
            raise _fail(
                f"DATE({column.name}) needs a datetime column; {column.name} is {column.type}.",
                "type_mismatch",
                call,
                "Use DATE on a datetime column, e.g. DATE(created_at).",
            )
        return DateOf(column)
    if column.type != STRING:
        raise _fail(
            f"{name.upper()}({column.name}) needs a string column; {column.name} is {column.type}.",
            "type_mismatch",
            call,
            f"Use {name.upper()} on a string column, e.g. {name.upper()}(front_text) = 'hola'.",
        )
    return CaseFold(name, column)


def _expression_term(scope: _SelectScope, expr: ast.Expr, where: str) -> Term:
    """A select item, GROUP BY or ORDER BY expression (not an alias lookup)."""
    if isinstance(expr, ast.ColumnRef):
        return scope.column(expr)
    term = _resolve_call(scope, expr)
    if isinstance(term, CaseFold):
        raise _fail(
            f"{expr.name.upper()}(...) is only allowed in conditions, not in {where}.",
            "unsupported_syntax",
            expr,
            f"Compare with it in WHERE instead, e.g. WHERE {expr.name.upper()}(front_text) = 'hola'.",
        )
    return term


def _is_aggregate(term: Term) -> bool:
    return isinstance(term, Aggregate)


class _Conditions:
    """Converts an AST condition into a plan condition for one statement and clause."""

    __slots__ = ("clause", "group_terms", "limits", "resource", "scope")

    def __init__(
        self,
        resource: Resource,
        scope: _SelectScope | None,
        clause: str,
        limits: Limits,
        group_terms: tuple[Term, ...] = (),
    ) -> None:
        self.resource = resource
        self.scope = scope
        self.clause = clause
        self.limits = limits
        self.group_terms = group_terms

    def convert(self, node: ast.Condition, depth: int = 1) -> Condition:
        # Depth counts the operators a predicate sits under, as parentheses do: 32 NOTs are 32
        # levels, like 32 pairs of parentheses.
        if depth > self.limits.max_nesting and isinstance(node, (ast.And, ast.Or, ast.Not)):
            raise _fail(
                f"The condition is nested more than {self.limits.max_nesting} levels deep.",
                "too_deep",
                node,
            )
        if isinstance(node, ast.And):
            return AllOf(tuple(self.convert(c, depth + 1) for c in node.operands))
        if isinstance(node, ast.Or):
            return AnyOf(tuple(self.convert(c, depth + 1) for c in node.operands))
        if isinstance(node, ast.Not):
            return Negation(self.convert(node.operand, depth + 1))
        return self.predicate(node)

    # Operands

    def term(self, expr: ast.Expr) -> Term:
        if isinstance(expr, ast.ColumnRef):
            if self.scope is None:
                column = self.resource.column(expr.name)
                if column is None:
                    raise _unknown_column(self.resource, expr, ())
                if column.virtual:
                    raise _tag_outside_select(expr)
                term: Term = column
            elif self.clause == _HAVING:
                term = self.scope.named(expr)
            else:
                hint = None
                if expr.name in self.scope.aliases and self.resource.column(expr.name) is None:
                    hint = "Select aliases cannot be used in WHERE; repeat the expression there or filter in HAVING."
                term = self.scope.column(expr, hint=hint)
        else:
            term = self._call_term(expr)
        if isinstance(term, Column) and not term.filterable:
            raise _fail(
                f"{term.name} is not filterable ({term.type}).",
                "not_filterable",
                expr,
                "Filter on another column; DESCRIBE shows which columns are filterable.",
            )
        if self.clause == _HAVING and not _is_aggregate(term) and term not in self.group_terms:
            raise _fail(
                f"HAVING can only use aggregates, select aliases or GROUP BY keys; {_term_info(term).name} is none of them.",
                "syntax_error",
                expr,
                "Filter rows in WHERE, or add the column to GROUP BY.",
            )
        return term

    def _call_term(self, call: ast.FuncCall) -> Term:
        if call.name in ("count", "sum", "avg", "min", "max") and self.clause == _WHERE:
            raise _fail(
                f"Aggregates such as {call.name.upper()}(...) are not allowed in WHERE.",
                "unsupported_syntax",
                call,
                f"Filter groups with HAVING, e.g. GROUP BY tag HAVING {call.name.upper()}(*) > 5."
                if call.name == "count"
                else "Filter groups with HAVING after GROUP BY.",
            )
        if call.name == "date":
            raise _fail(
                "DATE(...) cannot be used in conditions.",
                "unsupported_syntax",
                call,
                "Compare the datetime with a range, e.g. due_at >= '2026-03-05' AND due_at < '2026-03-06'.",
            )
        if self.scope is not None:
            term = _resolve_call(self.scope, call)
        else:
            column = (
                self.resource.column(call.arg.name) if isinstance(call.arg, ast.ColumnRef) else None
            )
            if column is None or column.virtual:
                assert isinstance(call.arg, ast.ColumnRef)
                if column is not None:
                    raise _tag_outside_select(call.arg)
                raise _unknown_column(self.resource, call.arg)
            term = _resolve_call(_SelectScope(self.resource, None), call)
        return term

    def _casefold_only(self, term: Term, node: ast.Node, form: str) -> None:
        if isinstance(term, CaseFold):
            raise _fail(
                f"{_term_info(term).name} can only be compared with =, !=, IN or LIKE, not {form}.",
                "unsupported_syntax",
                node,
                f"Write e.g. {_term_info(term).name} = 'hola'.",
            )

    def _scalar(self, term: Term, node: ast.Node, form: str) -> _TermInfo:
        info = _term_info(term)
        if info.type in (STRING_ARRAY, JSON) or info.type.endswith("[]"):
            raise _fail(
                f"{form} does not apply to {info.name}, which is {info.type}.",
                "type_mismatch",
                node,
                f"For arrays use OVERLAP, CONTAINS, = (...) or ANY, e.g. {info.name} OVERLAP ('tag1').",
            )
        if info.type == ColumnType.DATE:
            raise _fail(
                f"{info.name} cannot be compared.",
                "unsupported_syntax",
                node,
                "Compare the datetime column itself with a range of datetimes.",
            )
        return info

    def _array_column(self, term: Term, node: ast.Node, form: str) -> tuple[Column, _TermInfo]:
        info = _term_info(term)
        if not isinstance(term, Column) or info.type != STRING_ARRAY:
            raise _fail(
                f"{form} applies to string[] columns; {info.name} is {info.type}.",
                "type_mismatch",
                node,
                f"Use {form} on an array column such as tags, or compare a scalar with = or IN, "
                f"e.g. {info.name} IN ({_example(info.type, info.allowed)}).",
            )
        return term, info

    # Predicates

    def predicate(self, node: ast.Predicate) -> Condition:
        if isinstance(node, ast.Comparison):
            return self._comparison(node)
        if isinstance(node, ast.ArrayEquals):
            term = self.term(node.left)
            info = _term_info(term)
            if info.type != STRING_ARRAY:
                raise _fail(
                    f"{_display(node.value)} is a list but {info.name} is {info.type}.",
                    "type_mismatch",
                    node.value,
                    f"Compare a scalar with one value or use IN, e.g. {info.name} IN ({_example(info.type, info.allowed)}).",
                )
            column, info = self._array_column(term, node, "=")
            return ArraySetEquals(column, _convert_array(info, node.value))
        if isinstance(node, ast.In):
            term = self.term(node.left)
            info = self._scalar(term, node, "IN")
            values = tuple(self._list_value(info, term, v) for v in node.values)
            return InList(term, values, node.negated)
        if isinstance(node, ast.Between):
            term = self.term(node.left)
            self._casefold_only(term, node, "BETWEEN")
            info = self._scalar(term, node, "BETWEEN")
            low = _convert_scalar(info, node.low)
            high = _convert_scalar(info, node.high)
            return Range(term, low, high, node.negated)
        if isinstance(node, ast.IsNull):
            term = self.term(node.left)
            self._casefold_only(term, node, "IS NULL")
            _check_nullable(term, node)
            return NullCheck(term, node.negated)
        if isinstance(node, ast.Like):
            return self._like(node)
        if isinstance(node, ast.Overlap):
            column, info = self._array_column(self.term(node.left), node, "OVERLAP")
            return ArrayOverlap(column, _convert_array(info, node.value))
        if isinstance(node, ast.Contains):
            column, info = self._array_column(self.term(node.left), node, "CONTAINS")
            return ArrayContains(column, _convert_array(info, node.value))
        if isinstance(node, ast.Any):
            column, info = self._array_column(self.term(node.column), node, "ANY")
            return ArrayOverlap(
                column, _convert_array(info, ast.ArrayLit((node.value,), span=node.value.span))
            )
        return self._match(node)

    def _list_value(self, info: _TermInfo, term: Term, node: ast.Value) -> Any:
        if isinstance(node, ast.NullLit):
            raise _fail(
                "NULL cannot be listed in IN (...).",
                "type_mismatch",
                node,
                f"Add a separate condition: ({info.name} IN (...) OR {info.name} IS NULL).",
            )
        return _convert_scalar(info, node, check_enum=not isinstance(term, CaseFold))

    def _comparison(self, node: ast.Comparison) -> Condition:
        term = self.term(node.left)
        op = node.op
        right = node.right
        info = _term_info(term)
        if op not in ("=", "!="):
            self._casefold_only(term, node, op)
        if isinstance(right, ast.NullLit) and op in ("=", "!="):
            fix = "IS NULL" if op == "=" else "IS NOT NULL"
            never_null = isinstance(term, Column) and not term.nullable
            empty = _empty_value(term) if isinstance(term, Column) and never_null else None
            if empty is not None and op != "=":
                empty = f"NOT {empty}"
            raise _fail(
                f"{info.name} {op} NULL is never true.",
                "type_mismatch",
                right,
                f"Use {info.name} {fix}."
                if not never_null
                else f"{info.name} is never NULL; "
                + (f"an empty one is {empty}." if empty else "drop the condition."),
            )
        if info.type == STRING_ARRAY and isinstance(term, Column):
            if op == "=" and isinstance(right, ast.StringLit):
                return ArraySetEquals(term, _convert_array(info, right))
            raise _fail(
                f"{op} does not apply to {info.name}, which is {info.type}.",
                "type_mismatch",
                node,
                f"Use {info.name} = ('tag1', 'tag2'), {info.name} OVERLAP ('tag1') or {info.name} CONTAINS ('tag1').",
            )
        self._scalar(term, node, op)
        if (
            isinstance(right, ast.ColumnRef)
            and not right.quoted
            and (
                (
                    self.scope is not None
                    and right.name in (self.scope.aliases.keys() | {self.scope.unnest_alias})
                )
                or self.resource.column(right.name) is not None
            )
        ):
            raise _fail(
                f"Comparing {info.name} with the column {right.name} is not supported.",
                "unsupported_syntax",
                right,
                f"Compare a column with a literal, e.g. {info.name} = {_example(info.type, info.allowed)}.",
            )
        value = _convert_scalar(info, right, check_enum=not isinstance(term, CaseFold))
        return Compare(term, op, value)

    def _like(self, node: ast.Like) -> Condition:
        term = self.term(node.left)
        info = _term_info(term)
        keyword = ("NOT " if node.negated else "") + ("ILIKE" if node.case_insensitive else "LIKE")
        if info.type not in (STRING, UUID):
            raise _fail(
                f"{keyword} applies to string and uuid columns; {info.name} is {info.type}.",
                "type_mismatch",
                node,
                "Use =, <, > or IN for other types, e.g. reps >= 3, or tags OVERLAP ('tag1') for arrays.",
            )
        pattern = node.pattern
        if isinstance(pattern, ast.ColumnRef):
            raise _value_is_name(info, pattern)
        if not isinstance(pattern, ast.StringLit):
            raise _fail(
                f"{keyword} takes a string pattern, not {_display(pattern)}.",
                "type_mismatch",
                pattern,
                f"Write e.g. {info.name} {keyword} '%text%'.",
            )
        self._check_pattern_size(pattern, keyword)
        return Pattern(term, pattern.value, node.negated, node.case_insensitive)

    def _check_pattern_size(self, literal: ast.StringLit, what: str) -> None:
        limit = self.limits.max_pattern_bytes
        if len(literal.value) * 4 <= limit:
            return
        size = len(literal.value.encode("utf-8", "surrogatepass"))
        if size > limit:
            raise _fail(
                f"The {what} pattern is {size:,} bytes; at most {limit:,} bytes are allowed.",
                "too_long",
                literal,
                f"Search for a shorter text (at most {limit:,} bytes of UTF-8).",
            )

    def _match(self, node: ast.Match) -> Condition:
        columns = tuple(
            c for c in (self.resource.column(n) for n in self.resource.text_columns_for_match) if c
        )
        if not columns:
            raise _fail(
                f"MATCH(...) is not available on {self.resource.name}; it searches cards and decks.",
                "unsupported_syntax",
                node,
                "Use LIKE / ILIKE on a string column instead, e.g. client_event_id ILIKE '%abc%'.",
            )
        text = node.text
        assert isinstance(text, ast.StringLit)
        if not text.value.strip():
            raise _fail(
                "MATCH('') needs some text to search for.",
                "invalid_value",
                node,
                "Write e.g. MATCH('hola'), or drop the condition to match everything.",
            )
        self._check_pattern_size(text, "MATCH")
        return TextMatch(text.value, columns)


def _validate_select(stmt: ast.Select, limits: Limits) -> SelectPlan:
    resource = _resolve_resource(stmt.resource, stmt, stmt.resource_span)
    unnest_alias = stmt.unnest_alias
    if stmt.unnest_column is not None:
        column_ref = stmt.unnest_column
        if resource.name != "cards" or column_ref.name != "tags":
            raise _fail(
                f"UNNEST {column_ref.name} is not supported on {resource.name}; only cards.tags can be unnested.",
                "unsupported_syntax",
                column_ref,
                "Write SELECT card_id, t FROM cards UNNEST tags AS t, or use the tag column.",
            )
        if resource.column(unnest_alias or "") is not None and unnest_alias != "tag":
            raise _fail(
                f"The UNNEST alias {unnest_alias} is already a column of cards.",
                "syntax_error",
                column_ref,
                "Choose another name, e.g. UNNEST tags AS t.",
            )
    scope = _SelectScope(resource, unnest_alias)

    # Items
    star = len(stmt.items) == 1 and isinstance(stmt.items[0].expr, ast.Star)
    items: list[OutputItem] = []
    item_nodes: list[ast.SelectItem | None] = []
    if star:
        items = [OutputItem(c.name, c) for c in resource.readable_columns]
        if unnest_alias is not None and scope.tag is not None:
            items.append(OutputItem(unnest_alias, scope.tag))
    else:
        for item in stmt.items:
            expr = item.expr
            assert not isinstance(expr, ast.Star)
            term = _expression_term(scope, expr, "the select list")
            if item.alias_without_as and item.alias and resource.column(item.alias) is not None:
                # `SELECT front_text back_text`: silently naming front_text "back_text" would
                # answer another question than the caller asked; it is a missing comma.
                shown = _display(expr) if isinstance(expr, ast.ColumnRef) else "the item"
                raise DslError(
                    f"{item.alias} after {shown} reads as an alias; a comma is missing between "
                    "two columns.",
                    reason="syntax_error",
                    offset=item.span[1] - len(item.alias),
                    hint=f"Separate the columns with a comma ({shown}, {item.alias}), or write "
                    f"AS {item.alias} to name the item.",
                    suggestions=[f", {item.alias}"],
                )
            if isinstance(expr, ast.ColumnRef) and expr.name == unnest_alias:
                default = unnest_alias
            else:
                default = _default_name(term)
            name = item.alias or default
            if any(existing.name == name for existing in items):
                raise _fail(
                    f"Two select items are named {name}.",
                    "syntax_error",
                    item,
                    f"Give one of them an alias, e.g. ... AS {name}_2.",
                )
            items.append(OutputItem(name, term))
            item_nodes.append(item)
            if item.alias:
                scope.aliases[item.alias] = term
            else:
                scope.default_names.setdefault(default, term)

    # WHERE
    where = None
    if stmt.where is not None:
        where = _Conditions(resource, scope, _WHERE, limits).convert(stmt.where)

    # Grouping
    has_aggregate = any(_is_aggregate(i.term) for i in items)
    grouped = bool(stmt.distinct or stmt.group_by or has_aggregate or stmt.having is not None)
    group_terms: list[Term] = []
    if stmt.group_by:
        for expr in stmt.group_by:
            term = (
                scope.named(expr)
                if isinstance(expr, ast.ColumnRef)
                else _expression_term(scope, expr, "GROUP BY")
            )
            if _is_aggregate(term):
                raise _fail(
                    f"GROUP BY cannot use the aggregate {_term_info(term).name}.",
                    "syntax_error",
                    expr,
                    "Group by columns, tag, DATE(column) or their aliases, e.g. GROUP BY tag.",
                )
            _check_groupable(term, expr)
            if term not in group_terms:
                group_terms.append(term)
    elif stmt.distinct:
        for output, node in zip(items, item_nodes or [None] * len(items), strict=True):
            if star:
                raise _fail(
                    "SELECT DISTINCT * is not supported.",
                    "unsupported_syntax",
                    stmt.items[0],
                    "List the columns to deduplicate, e.g. SELECT DISTINCT effort_level FROM cards.",
                )
            if not _is_aggregate(output.term):
                _check_groupable(output.term, node)
                if output.term not in group_terms:
                    group_terms.append(output.term)
    if grouped:
        if star:
            raise _fail(
                "SELECT * cannot be combined with GROUP BY, aggregates or HAVING.",
                "syntax_error",
                stmt.items[0],
                "List the grouped columns and aggregates, e.g. SELECT tag, COUNT(*) FROM cards GROUP BY tag.",
            )
        for output, node in zip(items, item_nodes, strict=True):
            if not _is_aggregate(output.term) and output.term not in group_terms:
                shown = _term_info(output.term).name
                keys = [_term_info(t).name for t in group_terms if isinstance(t, Column | DateOf)]
                unselected = [k for k in keys if k not in {i.name for i in items}]
                # `SELECT front_text, COUNT(*) ... GROUP BY tag` means the key was forgotten in
                # the select list: adding front_text to GROUP BY would count something else.
                hint = (
                    f"Select the grouping key instead, e.g. SELECT {unselected[0]}, COUNT(*) ... "
                    f"GROUP BY {unselected[0]}; or add {shown} to GROUP BY, or aggregate it."
                    if unselected
                    else f"Add it to GROUP BY, e.g. GROUP BY {shown}, or aggregate it, e.g. COUNT(*)."
                )
                raise _fail(
                    f"{shown} must appear in GROUP BY or be used inside an aggregate.",
                    "syntax_error",
                    node,
                    hint,
                    suggestions=unselected[:1],
                )

    # HAVING
    having = None
    if stmt.having is not None:
        having = _Conditions(resource, scope, _HAVING, limits, tuple(group_terms)).convert(
            stmt.having
        )

    # ORDER BY
    order_keys: list[OrderKey] = []
    for order in stmt.order_by:
        expr = order.expr
        term = (
            scope.named(expr)
            if isinstance(expr, ast.ColumnRef)
            else _expression_term(scope, expr, "ORDER BY")
        )
        info = _term_info(term)
        if isinstance(term, Column) and not term.sortable:
            raise _fail(
                f"{term.name} is not sortable ({term.type}).",
                "not_sortable",
                expr,
                "Sort by another column; DESCRIBE shows which columns are sortable.",
            )
        if grouped and not _is_aggregate(term) and term not in group_terms:
            raise _fail(
                f"ORDER BY {info.name} must use a GROUP BY key, an aggregate or a select alias.",
                "syntax_error",
                expr,
                "Sort by a grouped column or an aggregate, e.g. ORDER BY COUNT(*) DESC.",
            )
        if not grouped and _is_aggregate(term):
            raise _fail(
                f"ORDER BY {info.name} needs a grouped query.",
                "syntax_error",
                expr,
                "Add GROUP BY, or sort by a column, e.g. ORDER BY created_at DESC.",
            )
        order_keys.append(OrderKey(term, order.descending, order.nulls_first))

    return SelectPlan(
        resource=resource,
        items=tuple(items),
        star=star,
        distinct=stmt.distinct,
        explode_tags=scope.uses_tag,
        unnest_alias=unnest_alias,
        where=where,
        grouped=grouped,
        group_by=tuple(group_terms),
        having=having,
        order_by=tuple(order_keys),
        order_random=stmt.order_random,
        limit=stmt.limit,
        offset=stmt.offset,
    )


def _check_groupable(term: Term, node: ast.Node | None) -> None:
    if isinstance(term, Column) and not term.sortable:
        hint = (
            "Group by single tags with the tag column, e.g. SELECT tag, COUNT(*) FROM cards GROUP BY tag."
            if term.name == "tags"
            else "Group by a column that DESCRIBE lists as sortable."
        )
        raise _fail(
            f"{term.name} ({term.type}) cannot be grouped or deduplicated.",
            "not_sortable",
            node,
            hint,
        )


# Writes ----------------------------------------------------------------------------------------


def _writable_resource(name: str, node: ast.Node, span: ast.Span, verb: str) -> Resource:
    resource = _resolve_resource(name, node, span)
    if not resource.writable:
        command = f" {resource.explicit_command_hint}" if resource.explicit_command_hint else ""
        raise DslError(
            f"{verb} on {resource.name} is not allowed: {resource.name} is read-only.{command}",
            reason="unsupported_syntax",
            offset=span[0],
            hint=f"{resource.name} is read-only: "
            + (
                resource.explicit_command_hint
                or "only cards and decks are writable; read this resource with SELECT."
            ),
        )
    return resource


def _write_column(resource: Resource, ref: ast.ColumnRef) -> Column:
    column = resource.column(ref.name)
    if column is None:
        raise _unknown_column(resource, ref, writing=True)
    if not column.writable:
        writable = ", ".join(c.name for c in resource.writable_columns)
        raise _fail(
            f"{column.name} is read-only; the writable columns of {resource.name} are: {writable}.",
            "read_only_column",
            ref,
            habits.SCHEDULING_COMMANDS.get(column.name, f"Write only {writable}.")
            if column.name != "tag"
            else "Write the tags column, e.g. tags = ('english', 'verbs').",
        )
    return column


def _empty_value(column: Column) -> str | None:
    """How a column that is never NULL writes "nothing": () for arrays, '' for text that may be
    empty; None when it has no such value."""
    if column.is_array:
        return f"{column.name} = ()"
    if column.type == STRING and not column.required:
        return f"{column.name} = ''"
    return None


def _write_value(column: Column, node: ast.Value) -> Any:
    if isinstance(node, ast.NullLit):
        empty = _empty_value(column)
        example = _example(column.type, column.allowed_values if not column.is_array else None)
        raise _fail(
            f"{column.name} cannot be NULL.",
            "invalid_value",
            node,
            f"Write {empty} for an empty value, e.g. SET {empty}."
            if empty
            else f"Give a value, e.g. {column.name} = {example}.",
        )
    info = _term_info(column)
    if column.is_array:
        return _convert_array(_TermInfo(column.name, column.type, None, column), node)
    if isinstance(node, ast.Now):
        raise _mismatch(info, node)
    return _convert_scalar(info, node)


def _returning(resource: Resource, returning: ast.Returning | None) -> tuple[Column, ...] | None:
    if returning is None:
        return None
    if len(returning) == 1 and isinstance(returning[0], ast.Star):
        return resource.readable_columns
    columns: list[Column] = []
    for ref in returning:
        assert isinstance(ref, ast.ColumnRef)
        column = resource.column(ref.name)
        if column is None:
            raise _unknown_column(resource, ref)
        if column.virtual:
            raise _fail(
                "tag is only available in SELECT.",
                "unsupported_syntax",
                ref,
                "Return the tags column instead: RETURNING card_id, tags.",
            )
        if column not in columns:
            columns.append(column)
    return tuple(columns)


def _where_required(stmt: ast.Update | ast.Delete, verb: str) -> ast.Condition:
    if stmt.where is None:
        raise _fail(
            f"{verb} needs a WHERE clause.",
            "missing_where",
            stmt,
            f"Add a WHERE naming the rows (at most {dsl_settings.MAX_ROWS_PER_WRITE} per statement), e.g. {verb} "
            f"{stmt.resource} ... WHERE {_id_example(stmt.resource)}; for every row, read the ids "
            "a page at a time with SELECT and name them.",
        )
    return stmt.where


def _id_example(resource_name: str) -> str:
    resource = get_resource(resource_name)
    column = resource.id_column if resource is not None else "card_id"
    return f"{column} = {_UUID_EXAMPLE}"


def _validate_insert(parsed: ast.ParsedStatement, stmt: ast.Insert, limits: Limits) -> InsertPlan:
    resource = _writable_resource(stmt.resource, stmt, stmt.resource_span, "INSERT")
    columns: list[Column] = []
    for ref in stmt.columns:
        column = _write_column(resource, ref)
        if column in columns:
            raise _fail(
                f"{column.name} is listed twice.", "syntax_error", ref, "List each column once."
            )
        columns.append(column)
    missing = [c.name for c in resource.columns if c.required and c not in columns]
    if missing:
        needed = " and ".join(missing)
        example = ", ".join(c.name for c in resource.columns if c.required)
        raise _fail(
            f"INSERT INTO {resource.name} needs {needed}.",
            "invalid_value",
            stmt.columns[0] if stmt.columns else stmt,
            f"List the required columns, e.g. INSERT INTO {resource.name} ({example}) VALUES (...).",
        )
    if len(stmt.rows) > limits.max_insert_rows:
        raise _fail(
            f"INSERT has {len(stmt.rows)} rows; at most {limits.max_insert_rows} are allowed per statement.",
            "too_many_rows",
            stmt.rows[limits.max_insert_rows],
            f"Split the rows into several INSERT statements of at most {limits.max_insert_rows} rows.",
        )
    rows: list[tuple[Any, ...]] = []
    for number, row in enumerate(stmt.rows, start=1):
        if len(row.values) != len(columns):
            text = _source(parsed, row.span)
            raise _fail(
                f"Row {number} has {_count(len(row.values), 'value')} but "
                f"{_count(len(columns), 'column')} are listed: {text}",
                "syntax_error",
                row,
                f"Give one value per column ({', '.join(c.name for c in columns)}).",
            )
        rows.append(tuple(_write_value(c, v) for c, v in zip(columns, row.values, strict=True)))
    return InsertPlan(resource, tuple(columns), tuple(rows), _returning(resource, stmt.returning))


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _source(parsed: ast.ParsedStatement, span: ast.Span) -> str:
    text = parsed.sql[span[0] - parsed.span[0] : span[1] - parsed.span[0]]
    return text if len(text) <= 200 else text[:197] + "..."


def _validate_update(stmt: ast.Update, limits: Limits) -> UpdatePlan:
    resource = _writable_resource(stmt.resource, stmt, stmt.resource_span, "UPDATE")
    assignments: list[tuple[Column, Any]] = []
    for assignment in stmt.assignments:
        column = _write_column(resource, assignment.column)
        if any(existing is column for existing, _ in assignments):
            raise _fail(
                f"{column.name} is assigned twice.",
                "syntax_error",
                assignment.column,
                "Assign each column once.",
            )
        assignments.append((column, _write_value(column, assignment.value)))
    where = _Conditions(resource, None, _WHERE, limits).convert(_where_required(stmt, "UPDATE"))
    return UpdatePlan(resource, tuple(assignments), where, _returning(resource, stmt.returning))


def _validate_delete(stmt: ast.Delete, limits: Limits) -> DeletePlan:
    resource = _writable_resource(stmt.resource, stmt, stmt.resource_span, "DELETE")
    where = _Conditions(resource, None, _WHERE, limits).convert(
        _where_required(stmt, "DELETE FROM")
    )
    return DeletePlan(resource, where, _returning(resource, stmt.returning))


# Entry points ----------------------------------------------------------------------------------


def _like_matches(pattern: str, text: str) -> bool:
    # Resource names are lower case, so SHOW TABLES LIKE 'Card%' should still find cards.
    regex = "".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern)
    return re.fullmatch(regex, text, re.DOTALL | re.IGNORECASE) is not None


def validate(parsed: ast.ParsedStatement, limits: Limits = DEFAULT_LIMITS) -> Plan:
    """Validate one parsed statement; raises ``DslError`` (without a statement index)."""
    stmt = parsed.node
    if isinstance(stmt, ast.Select):
        return _validate_select(stmt, limits)
    if isinstance(stmt, ast.Insert):
        return _validate_insert(parsed, stmt, limits)
    if isinstance(stmt, ast.Update):
        return _validate_update(stmt, limits)
    if isinstance(stmt, ast.Delete):
        return _validate_delete(stmt, limits)
    if isinstance(stmt, ast.Describe):
        return DescribePlan(_resolve_resource(stmt.resource, stmt, stmt.resource_span))
    like = stmt.like
    resources = (
        RESOURCES if like is None else tuple(r for r in RESOURCES if _like_matches(like, r.name))
    )
    return ShowTablesPlan(resources)


def validate_batch(batch: ast.Batch, limits: Limits = DEFAULT_LIMITS) -> tuple[Plan, ...]:
    """Validate every statement of a batch; errors of multi-statement batches carry their index."""
    plans: list[Plan] = []
    for parsed in batch.statements:
        try:
            plans.append(validate(parsed, limits))
        except DslError as error:
            if len(batch.statements) > 1:
                error.in_statement(parsed.index)
            raise
    return tuple(plans)
