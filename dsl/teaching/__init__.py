"""Errors that teach (dsl.md §9.1): a failed statement's error, rewritten to name this language's
equivalent of the construct the caller wrote, with a corrected statement that is known to run.

The knowledge lives in data (``dsl.habits``: other dialects' constructs as token patterns, and
the synonyms of each resource's columns); this package only matches those rows against the failed
statement's tokens and renders them. It runs on the failure path alone, so a statement that
parses and validates never pays for it.

How a correction is found: a habit row (or the error's own first suggestion) gives candidate
rewrites of the statement; each is parsed and validated like any request, and what still fails is
corrected again, a few rounds at most. Only a rewrite that validates is shown as a statement, so a
hint never proposes a statement that is itself rejected. When a rewrite fails only elsewhere (the
caller made two mistakes), its fragment is still shown, without the full statement.

Modules: ``statement`` (the failed statement as tokens, and its clauses), ``matching`` (habit
rows against those tokens), ``filters`` (the template filters), ``shapes`` (statements rebuilt
for joins, subqueries, upserts and the like), ``rewrites`` (rendering and checking rewrites);
this module decides what the caller reads.
"""

from __future__ import annotations

import logging
import re
import threading
import time

from dsl.habits import Habit
from dsl.language.errors import DslError
from dsl.language.lexer import tokenize
from dsl.language.parser import DEFAULT_LIMITS, Limits, parse_batch
from dsl.language.validator import validate_batch
from dsl.settings import teaching_is_strict
from dsl.teaching.matching import _Found, _found_here
from dsl.teaching.rewrites import (
    _TEACHING_SECONDS,
    _budget,
    _candidates,
    _check,
    _format,
    _settle,
    _suggestion_candidate,
)
from dsl.teaching.statement import _failed_statement, _Statement

logger = logging.getLogger(__name__)

STRICT = False
"""When True (the test suite sets it, config/test_settings.py), an exception while explaining is
raised instead of logged: a misspelt template field or a broken filter fails the test that reaches
it instead of silently disabling its row."""

_trace = threading.local()


def last_row() -> Habit | None:
    """The habit row that explained the last error taught on this thread (tests read it to prove
    a row's example reaches that row)."""
    return getattr(_trace, "habit", None)


# Reasons whose statement text can hold a foreign construct worth explaining; the others (limits,
# endpoint, empty statements) are about the request as a whole.
_TEACHABLE = frozenset(
    {
        "syntax_error",
        "unsupported_syntax",
        "unknown_column",
        "unknown_resource",
        "type_mismatch",
        "invalid_value",
        "read_only_column",
        "not_filterable",
        "not_sortable",
        "limit_out_of_range",
    }
)


_MAX_SHOWN_STATEMENT = 400


def teach(error: DslError, sql: str, limits: Limits = DEFAULT_LIMITS) -> DslError:
    """``error`` as the caller should read it: the habit it shows, named, with a fix.

    Never raises: explaining is best effort, and a failure here must not turn the caller's
    400 into a 500, so it is logged and the original error stands."""
    if error.reason not in _TEACHABLE or not isinstance(sql, str):
        return error
    _budget.deadline = time.monotonic() + _TEACHING_SECONDS
    _trace.habit = None
    try:
        taught = _teach(error, sql, limits)
        _budget.deadline = None  # the last check below must run whatever the time spent
        taught.hint = _verified_hint(taught.hint, limits)
        return taught
    except Exception:
        if STRICT or teaching_is_strict():
            raise
        logger.exception("dsl.teaching could not explain %s", error.reason)
        return error
    finally:
        _budget.deadline = None


_SHOWN = re.compile(
    r"(e\.g\.|read first:) ((?:SELECT|INSERT|UPDATE|DELETE|SHOW|DESCRIBE|DESC)\b.*)$"
)


_TEMPLATE = re.compile(r"<[^>]*>|\.\.\.|…")


def _verified_hint(hint: str, limits: Limits) -> str:
    """``hint`` without its closing example statement when that statement does not run: a hint
    never proposes something that is itself rejected (templates with placeholders excepted)."""
    match = _SHOWN.search(hint)
    if match is None:
        return hint
    shown = match.group(2).removesuffix(".")
    if _TEMPLATE.search(shown) or _check(shown, limits) is None:
        return hint
    head = hint[: match.start()].rstrip(" ,;:")
    return head + "." if head and not head.endswith((".", "?", ")")) else head or hint


def _teach(error: DslError, sql: str, limits: Limits) -> DslError:
    located = _failed_statement(sql, error)
    if located is None:
        return error
    stmt, base = located
    rows = _found_here(stmt, error, base)
    if not rows:
        return _with_correction(error, sql, stmt, base, limits)
    found, corrected, fragment = _best_row(stmt, rows, limits)
    if found is None:  # no row can say more than the error itself
        return _with_correction(error, sql, stmt, base, limits)
    habit = found.habit
    _trace.habit = habit
    reason, offset = _classified(error, habit, base + found.offset(stmt))
    # A validation error kept as it was keeps its message too (it names the column, its type
    # and what it holds); the row's own explanation goes first in the hint.
    kept = reason == error.reason and offset == error.offset and error.reason not in _PARSE_REASONS
    message = (
        error.base_message if kept else _format(habit.message, found, stmt) or error.base_message
    )
    advice = None
    rewrites = bool(habit.replace or habit.rewrite)
    # An advice naming {fix} needs a fix: without one (a row with no rewrite) the fallback is
    # the hint, never "first , then ..." with the fix left empty.
    if (corrected is not None or fragment is not None or not rewrites) and (
        fragment is not None or "{fix}" not in habit.advice
    ):
        advice = _format(habit.advice, found, stmt, fix=fragment or "")
    if advice is None and habit.fallback:
        advice = _format(habit.fallback, found, stmt, fix="")
    if advice is None and "{fix}" not in habit.advice:
        advice = _format(habit.advice, found, stmt, fix="")
    # A row tagged first_step (a JOIN's first query) answers with the statement to run before
    # the real one, never with a "corrected" statement of another meaning.
    first_step = corrected is not None and (
        "first_step" in habit.tags or _is_first_step(stmt, corrected)
    )
    if kept and corrected is None and fragment is None and (habit.replace or habit.rewrite):
        # Nothing better than what the validator said: keep its hint, and try its suggestion.
        return _with_correction(error, sql, stmt, base, limits)
    if kept and advice and "own_hint" not in habit.tags:
        explanation = _format(habit.message, found, stmt) or error.hint
        if explanation and fragment and fragment in explanation:
            advice = explanation  # the validator's hint already says it
        elif explanation:
            advice = f"{explanation.rstrip('.')}; {advice[:1].lower()}{advice[1:]}"
    hint = _sentence(advice or error.hint, corrected, "read first" if first_step else "e.g.")
    taught = DslError(
        message,
        reason=reason,
        offset=offset,
        hint=hint,
        suggestions=[s for s in (_format(x, found, stmt) for x in habit.suggest) if s],
        statement_index=error.statement_index,
    )
    example_only = first_step or "example" in habit.tags
    taught.corrected_sql = None if example_only else _whole(sql, base, stmt, corrected)
    return taught


_PARSE_REASONS = frozenset({"syntax_error", "unsupported_syntax"})


def _best_row(
    stmt: _Statement, rows: list[_Found], limits: Limits
) -> tuple[_Found | None, str | None, str | None]:
    """The first row with a rewrite that holds, its corrected statement and fragment; else the
    first row, with neither."""
    for found in rows:
        for candidate in _candidates(stmt, found):
            statement, held = _settle(candidate, limits)
            if statement is not None or held:
                if statement is None and candidate.fragment == candidate.statement:
                    continue  # a whole statement that still fails elsewhere is no example
                fragment = candidate.fragment if held else statement
                if statement is not None and fragment and fragment not in statement:
                    fragment = (
                        statement  # corrected further: the fragment alone would contradict it
                    )
                return found, statement, fragment
    for found in rows:
        habit = found.habit
        if not (habit.replace or habit.rewrite) or habit.fallback:
            return found, None, None  # advice that stands without a rewrite
    return None, None, None


def _classified(error: DslError, habit: Habit, at: int) -> tuple[str, int | None]:
    """The reason and position of a taught error (see ``Habit.reason``): the parser's generic
    failure becomes the foreign construct it was; a validation error keeps what it said."""
    if habit.reason == "keep":
        return error.reason, at
    if habit.reason is not None:
        return habit.reason, at
    if error.reason in _PARSE_REASONS:
        return "unsupported_syntax", at
    return error.reason, error.offset if error.offset is not None else at


def _is_first_step(stmt: _Statement, corrected: str) -> bool:
    """A statement with no equivalent is answered with the read to run before it (a write's
    rows, a deck's filter): that read is a first step, not the corrected statement."""
    if stmt.kind in ("insert", "update", "delete"):
        return corrected.split(None, 1)[0].lower() == "select"
    other = _Statement(corrected, tokenize(corrected), 0)
    mine, theirs = stmt.resource(), other.resource()
    return stmt.kind == other.kind == "select" and None not in (mine, theirs) and mine != theirs


def _with_correction(
    error: DslError, sql: str, stmt: _Statement, base: int, limits: Limits
) -> DslError:
    """A plain error with a suggestion: show the statement the suggestion makes, if it runs."""
    candidate = _suggestion_candidate(stmt, error, base)
    if candidate is None:
        return error
    corrected, _ = _settle(candidate, limits)
    if corrected is None:
        return error
    error.hint = _sentence(error.hint, corrected)
    error.corrected_sql = _whole(sql, base, stmt, corrected)
    return error


def _sentence(advice: str, corrected: str | None, label: str = "e.g.") -> str:
    """The hint: the advice, then the corrected statement (``…, e.g. <statement>``) or the
    read to run first (``…; read first: <statement>``)."""
    advice = advice.strip()
    if corrected is not None and advice.endswith(corrected):
        return advice  # no period after a statement the caller may copy
    if corrected is None or len(corrected) > _MAX_SHOWN_STATEMENT or corrected in advice:
        return advice if advice.endswith((".", "?", ")")) or not advice else advice + "."
    if label == "e.g.":
        # The corrected statement is the hint's one "e.g.": an example inside the advice
        # becomes "as in", so the statement after "e.g." always runs to the end of the hint.
        return f"{advice.rstrip('.').replace('e.g. ', 'as in ')}, e.g. {corrected}"
    return f"{advice.rstrip('.')}; {label}: {corrected}"


def _whole(sql: str, base: int, stmt: _Statement, corrected: str | None) -> str | None:
    """The whole request with the failed statement corrected, when all of it then validates
    (another statement of a batch may fail too; then only the hint shows the correction)."""
    if corrected is None:
        return None
    whole = sql[:base] + corrected + sql[base + len(stmt.text) :]
    if whole != corrected:
        try:
            validate_batch(parse_batch(whole))
        except DslError:
            return None
    return whole
