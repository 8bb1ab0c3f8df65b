"""Rewrites of a failed statement: habit templates rendered into candidates, each checked by the parser and validator, and corrected further for a few rounds."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from dsl import habits
from dsl.language.errors import DslError
from dsl.language.lexer import tokenize
from dsl.language.parser import DEFAULT_LIMITS, Limits, parse_batch
from dsl.language.validator import validate_batch
from dsl.schema import get_resource
from dsl.settings import dsl_settings
from dsl.teaching.filters import TemplateError, _column, _quote, _Text
from dsl.teaching.matching import _Capture, _Found, _found_here
from dsl.teaching.shapes import (
    _SHAPE_FIELDS,
    _alternatives,
    _month_range,
    _shape_field,
    _shifted_literal,
    _subsets,
)
from dsl.teaching.statement import (
    _COMPARISON_TYPES,
    _ONE_UNIT,
    _failed_statement,
    _Statement,
    _tidy,
    _with_condition,
)

_CORRECTION_ROUNDS = 8


_STATEMENT_FIELDS = frozenset(
    {
        "resource", "id_column", "named_resource", "where", "kind_upper", "required_columns",
        "today", "tomorrow", "order_column", "from_order", "page_rows", "write_rows",
    }
)  # fmt: skip
_MATCH_FIELDS = frozenset(
    {
        "truncated_now", "date_column", "upsert_lookup", "reordered", "group_keys",
        "item_as_argument", "month_range", "shifted_literal", "subsets", "alternatives",
        "select_item", "ungrouped", "insert_without", "column_default", "without_item",
        "any_like", "alias", "after_explain", "moved_to_where", "before", "after", "column", "op",
    }
)  # fmt: skip
FIELDS = _STATEMENT_FIELDS | _MATCH_FIELDS | _SHAPE_FIELDS | {"fix"}
"""Every named template field (``{resource}``, ``{fix}``…): a name outside this set is a bug in a
row, raised as ``TemplateError`` (tests/dsl/test_habit_examples.py checks every row statically)."""


class _Context(dict):
    """Template variables: the captures by position, plus names computed on first use."""

    def __init__(self, stmt: _Statement, found: _Found | None) -> None:
        super().__init__()
        self.stmt = stmt
        self.found = found

    def __missing__(self, key: str) -> Any:
        if key not in FIELDS:
            raise TemplateError(f"unknown template field {{{key}}}")
        value = self._compute(key)
        if value is None:
            raise KeyError(key)
        self[key] = value
        return value

    def _compute(self, key: str) -> Any:
        stmt, found = self.stmt, self.found
        if key == "resource":
            return stmt.resource()
        if key == "id_column":
            name = stmt.resource()
            resource = get_resource(name) if name else None
            return resource.id_column if resource else None
        if key == "named_resource":
            return stmt.named_resource()
        if key == "where":
            return stmt.where_text(found.first if found else None)
        if key == "kind_upper":
            return stmt.kind.upper() if stmt.kind else None
        if key == "required_columns":
            name = stmt.resource()
            resource = get_resource(name) if name else None
            if resource is None or not resource.writable:
                return None
            return ", ".join(c.name for c in resource.columns if c.required)
        if key in ("today", "tomorrow"):
            day = datetime.now(UTC).date() + timedelta(days=key == "tomorrow")
            return f"'{day.isoformat()}'"
        if key == "page_rows":  # the configured limits (dsl.md §8), as the messages say them
            return str(dsl_settings.MAX_ROWS_PER_SELECT)
        if key == "write_rows":
            return str(dsl_settings.MAX_ROWS_PER_WRITE)
        if key == "order_column":
            return stmt.order_column()
        if key == "from_order":
            return stmt.from_order()
        if found is None:
            return None
        if key in _SHAPE_FIELDS:
            return _shape_field(key, stmt, found, self)
        if key == "truncated_now":
            return _truncated_now(found)
        if key == "date_column":
            groups = [c for c in found.captures if c.args]
            for arg in groups[0].args if groups else ():
                if re.fullmatch(r"\s*[A-Za-z_]\w*\s*", arg):
                    return arg.strip()
            return None
        if key == "upsert_lookup":
            update = _shape_field("upsert_update", stmt, found, self)
            match = re.fullmatch(r"UPDATE (\w+) SET .+? WHERE (.+)", update or "", re.DOTALL)
            if match is None:
                return None
            resource = get_resource(match.group(1))
            return (
                f"SELECT {resource.id_column} FROM {match.group(1)} WHERE {match.group(2)}"
                if resource
                else None
            )
        if key == "reordered":
            return stmt.reordered()
        if key == "group_keys":
            return stmt.group_keys()
        if key == "item_as_argument":
            # LAG(x) OVER (...) → x, or nothing when x is selected already.
            groups = [c for c in found.captures if c.args]
            if not groups:
                return None
            column = _column(groups[0].args[0])
            listed = {
                t.word
                for j, t in enumerate(stmt.toks)
                if stmt.clause_at(j) == "select" and not found.first <= j <= found.last
            }
            if column in listed:
                return stmt.without_item(found)
            return _spliced(stmt, found, column)
        if key == "month_range":
            return _month_range(found)
        if key == "shifted_literal":
            return _shifted_literal(found)
        if key == "subsets":
            return _subsets(found)
        if key == "alternatives":
            return _alternatives(found)
        if key == "select_item":
            numbers = [
                c
                for c in found.captures
                if c.last >= c.first and stmt.toks[c.first].type == "NUMBER"
            ]
            return stmt.select_item(int(stmt.toks[numbers[-1].first].value)) if numbers else None
        if key == "ungrouped":
            # The match replaced by its first argument, and no GROUP BY: the rows themselves,
            # ordered by what was grouped.
            groups = [c for c in found.captures if c.args]
            if not groups:
                return None
            text = _spliced(stmt, found, groups[0].args[0].strip())
            shifted = _Statement(text, tokenize(text), 0)
            keys = shifted.group_keys()
            plain = shifted.without_clause("GROUP")
            if not keys or plain is None:
                return None
            return plain if "ORDER BY" in plain.upper() else f"{plain} ORDER BY {keys}"
        if key == "insert_without":
            return stmt.insert_without(found.first)
        if key == "column_default":
            of_value = stmt.column_of_value(found.first)
            return habits.COLUMN_DEFAULTS.get(of_value) if of_value else None
        if key == "without_item":
            return stmt.without_item(found)
        if key == "any_like":
            column, negated, operator = (
                found.captures[0].text,
                found.captures[1].text,
                found.captures[2].text,
            )
            items = found.captures[5].args
            if not items:
                return None
            joiner = " AND " if negated else " OR "
            return joiner.join(
                f"{column} {negated} {operator} {item.strip()}".replace("  ", " ") for item in items
            )
        if key == "alias":
            toks = stmt.toks
            j = found.last + 1
            if j < len(toks) and toks[j].type == "AS":
                j += 1
            return toks[j].word if j < len(toks) and toks[j].type == "IDENT" else "t"
        if key == "after_explain":
            for tok in stmt.toks[found.first + 1 :]:
                if tok.type in ("SELECT", "INSERT", "UPDATE", "DELETE"):
                    return stmt.text[tok.start :]
            return None
        if key == "moved_to_where":
            return stmt.moved_to_where(found)
        toks = stmt.toks
        if key == "before":
            return stmt.text[: toks[found.first].start]
        if key == "after":
            return stmt.text[toks[found.last].end :] if found.last + 1 <= len(toks) else ""
        if key in ("column", "op"):
            j = found.first - 1
            if j >= 1 and toks[j].type in _COMPARISON_TYPES and toks[j - 1].type == "IDENT":
                return toks[j - 1].text if key == "column" else toks[j].text
            return None
        return None


class _Positional(dict):
    """The template fields: ``{0}`` the whole match as written, ``{1}``… each pattern element's
    capture, ``{fix}`` and the other names from the statement's context."""

    def __init__(self, captures: list[_Capture], context: _Context, whole: str) -> None:
        super().__init__()
        self.captures = captures
        self.context = context
        self.whole = whole

    def __missing__(self, key: str) -> Any:
        if key.isdigit():
            index = int(key)
            return _Text(self.whole) if index == 0 else self.captures[index - 1]
        return self.context[key]


def _truncated_now(found: _Found) -> str | None:
    """``date_trunc('week', now())`` as the literal it is today (UTC): the start of this day,
    week (Monday), month or year."""
    unit = found.captures[2].text.strip("'").lower()
    today = datetime.now(UTC).date()
    starts = {
        "day": today,
        "week": today - timedelta(days=today.weekday()),
        "month": today.replace(day=1),
        "year": today.replace(month=1, day=1),
    }
    start = starts.get(unit)
    return None if start is None else f"'{start.isoformat()}'"


def _format(template: str, found: _Found, stmt: _Statement, **extra: str) -> str | None:
    context = _Context(stmt, found)
    context.update(extra)
    whole = stmt.text[stmt.toks[found.first].start : stmt.toks[found.last].end]
    mapping = _Positional(found.captures, context, whole)
    try:
        return _ONE_UNIT.sub(r"'\1 \2'", _tidy(_format_map(template, mapping)))
    except TemplateError:
        raise
    except (KeyError, IndexError, ValueError, AttributeError):
        return None


def _format_map(template: str, mapping: _Positional) -> str:
    # str.format_map cannot index a missing key's value ("{2[0]}"), so resolve fields by hand.
    def field(match: re.Match[str]) -> str:
        name, index, spec = match.group(1), match.group(2), match.group(3) or ""
        value = mapping[name]
        if index is not None:
            value = value[int(index)]
        if isinstance(value, (_Capture, _Text)):
            return format(value, spec)
        return format(_Text(str(value)), spec)

    return _FIELD.sub(field, template).replace("{{", "{").replace("}}", "}")


_FIELD = re.compile(r"(?<!\{)\{(\w+)(?:\[(-?\d+)\])?(?::([\w|]+))?\}")


def _spliced(stmt: _Statement, found: _Found, replacement: str) -> str:
    before = stmt.text[: stmt.toks[found.first].start]
    after = stmt.text[stmt.toks[found.last].end :]
    if not replacement:
        return _tidy(before.rstrip() + " " + after.lstrip())
    return _tidy(before + replacement + after)


@dataclass(frozen=True, slots=True)
class _Candidate:
    statement: str
    fragment: str | None
    region: tuple[int, int]  # where the rewrite changed the statement text


def _candidates(stmt: _Statement, found: _Found) -> Iterator[_Candidate]:
    habit = found.habit
    region_start = stmt.toks[found.first].start
    condition = _format(habit.condition, found, stmt) if habit.condition else None
    if habit.condition and condition is None:
        return
    moves_condition = habit.condition is not None or any(
        "moved_to_where" in r for r in habit.rewrite
    )
    if moves_condition and stmt.other_aggregates(found):
        return  # a WHERE would change the other aggregates' rows too
    for template in habit.replace:
        fragment = _format(template, found, stmt)
        if fragment is None:
            continue
        statement = _spliced(stmt, found, fragment)
        if condition is not None:
            conditioned = _with_condition(statement, condition)
            if conditioned is None:
                continue
            yield _Candidate(conditioned, conditioned, (0, len(conditioned)))
            continue
        if not fragment:  # a removal: the example is the statement without it
            yield _Candidate(statement, statement, (region_start, region_start + 1))
            continue
        yield _Candidate(statement, fragment, (region_start, region_start + len(fragment)))
    for template in habit.rewrite:
        formatted = _format(template, found, stmt)
        if formatted:
            statement = _tidy(formatted)
            yield _Candidate(statement, statement, (0, len(statement)))


def _suggestion_candidate(stmt: _Statement, error: DslError, base: int) -> _Candidate | None:
    """The error's first suggestion written in place of the token it points at."""
    if not error.suggestions or error.offset is None:
        return None
    suggestion = error.suggestions[0]
    inverse = habits.INVERSE_SYNONYMS.get(stmt.resource() or "", {})
    for j, tok in enumerate(stmt.toks):
        # The nearest column runs the other way: shown in the select list, but never put into
        # a comparison or an order (habit rows flip those where they can).
        at_error = tok.start == error.offset - base
        if at_error and tok.word in inverse and stmt.clause_at(j) not in ("select", "returning"):
            return None
        if tok.start != error.offset - base:
            continue
        if tok.word is None and tok.type != "STRING":
            return None
        # A value suggestion replaces a string literal as a string literal ('mid' → 'medium').
        written = _quote(suggestion) if tok.type == "STRING" else suggestion
        text = stmt.text[: tok.start] + written + stmt.text[tok.end :]
        return _Candidate(text, written, (tok.start, tok.start + len(written)))
    return None


_budget = threading.local()


_TEACHING_SECONDS = 1.0  # the most one error's explanation may spend checking rewrites


def _check(statement: str, limits: Limits) -> DslError | None:
    deadline = getattr(_budget, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        # Out of time: treat every further rewrite as failing, so the explanation ends with what
        # it has (a hostile statement must not make an error expensive).
        return DslError("out of time for rewrites", reason="syntax_error")
    try:
        batch = parse_batch(statement, limits)
        if len(batch.statements) != 1:
            return DslError("not one statement", reason="syntax_error")
        validate_batch(batch, limits)
    except DslError as error:
        return error
    return None


def _next_candidate(
    statement: str, error: DslError, limits: Limits = DEFAULT_LIMITS
) -> _Candidate | None:
    """The next step of a correction: the first rewrite (of the rows that explain ``error``)
    that validates or fails only elsewhere, else the error's own suggestion."""
    located = _failed_statement(statement, error)
    if located is None:
        return None
    stmt, base = located
    fallback = None
    for found in _found_here(stmt, error, base):
        if {"first_step", "example"} & set(found.habit.tags):
            continue  # another statement to run first is no step of a correction
        for candidate in _candidates(stmt, found):
            if candidate.fragment == candidate.statement and _is_another_read(stmt, candidate):
                continue
            fallback = fallback or candidate
            remaining = _check(candidate.statement, limits)
            if remaining is None:
                return candidate
            at = remaining.offset if remaining.offset is not None else -1
            if not candidate.region[0] <= at < candidate.region[1]:
                return candidate
    return _suggestion_candidate(stmt, error, base) or fallback


def _is_another_read(stmt: _Statement, candidate: _Candidate) -> bool:
    """A rewrite that reads another resource, or reads where the statement wrote."""
    other = _Statement(candidate.statement, tokenize(candidate.statement), 0)
    return other.kind != stmt.kind or other.resource() != stmt.resource()


def _settle(candidate: _Candidate, limits: Limits) -> tuple[str | None, bool]:
    """(a corrected statement that validates, or None; whether the candidate's own change held).

    The change holds when the first remaining error lies outside the rewritten region: the
    fragment is right, the caller just has another mistake elsewhere."""
    statement = candidate.statement
    error = _check(statement, limits)
    if error is None:
        return statement, True
    offset = error.offset if error.offset is not None else -1
    held = not (candidate.region[0] <= offset < candidate.region[1])
    seen = {statement}
    for _ in range(_CORRECTION_ROUNDS):
        nxt = _next_candidate(statement, error, limits)
        if nxt is None or nxt.statement in seen:
            return None, held
        statement = nxt.statement
        seen.add(statement)
        error = _check(statement, limits)
        if error is None:
            # Corrected further; a change that did not hold by itself is not shown as a fragment.
            return statement, held
    return None, held
