"""Habit rows matched against a failed statement's tokens: the pattern elements of ``dsl.habits`` and the rows that explain an error."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from dsl import habits
from dsl.habits import Habit
from dsl.language.errors import DslError
from dsl.schema import get_resource
from dsl.teaching.filters import _Text
from dsl.teaching.statement import _arguments, _balanced_end, _Statement


class _Capture:
    """What one pattern element matched; ``format`` specs apply the filters of habits rows."""

    def __init__(self, stmt: _Statement, first: int, last: int, args: list[str] | None = None):
        self.stmt = stmt
        self.first = first
        self.last = last  # inclusive; last < first for an optional element that matched nothing
        self.args = args or []

    @property
    def text(self) -> str:
        if self.last < self.first:
            return ""
        return self.stmt.text[self.stmt.toks[self.first].start : self.stmt.toks[self.last].end]

    def __getitem__(self, index: int) -> _Text:
        return _Text(self.args[index].strip())

    def __format__(self, spec: str) -> str:
        return _Text(self.text).__format__(spec)

    def __str__(self) -> str:
        return self.text


def _match_element(stmt: _Statement, element: str, i: int) -> _Capture | None:
    """Match one pattern element at token ``i``; see ``dsl.habits`` for the notation."""
    if "#" in element and "|" in element:
        for option in element.split("|"):
            capture = _match_element(stmt, option, i)
            if capture is not None:
                return capture
        return None
    toks = stmt.toks
    if i >= len(toks):
        return None
    tok = toks[i]
    if element == "#array_column":
        if tok.type != "IDENT" or tok.word is None:
            return None
        name = stmt.resource()
        resource = get_resource(name) if name else None
        column = resource.column(tok.word) if resource else None
        return _Capture(stmt, i, i) if column is not None and column.is_array else None
    if element == "#any":
        return _Capture(stmt, i, i)
    if element == "#num":
        return _Capture(stmt, i, i) if tok.type == "NUMBER" else None
    if element == "#str":
        return _Capture(stmt, i, i) if tok.type == "STRING" else None
    if element == "#name":
        return _Capture(stmt, i, i) if tok.type == "IDENT" else None
    if element == "#word":
        return _Capture(stmt, i, i) if tok.word is not None else None
    if element == "#value":
        if tok.type in ("NUMBER", "STRING", "TRUE", "FALSE", "NULL"):
            return _Capture(stmt, i, i)
        if tok.type == "MINUS" and i + 1 < len(toks) and toks[i + 1].type == "NUMBER":
            return _Capture(stmt, i, i + 1)
        return None
    if element.startswith("#upto:"):
        # One or more tokens up to (not including) ``stop`` outside brackets.
        stop, depth = element[6:], 0
        for j in range(i, len(toks)):
            t = toks[j]
            if (
                depth == 0
                and j > i
                and (t.word == stop or (t.word is None and t.text.lower() == stop))
            ):
                return _Capture(stmt, i, j - 1)
            if t.type in ("LPAREN", "LBRACKET"):
                depth += 1
            elif t.type in ("RPAREN", "RBRACKET"):
                if depth == 0:
                    return _Capture(stmt, i, j - 1) if stop == ")" and j > i else None
                depth -= 1
        return None
    if element in ("#args", "#group"):
        if tok.type != "LPAREN":
            return None
        close = _balanced_end(toks, i)
        if close is None:
            return None
        return _Capture(stmt, i, close, _arguments(stmt, i, close))
    if element == "#array":
        if tok.type == "STRING":
            return _Capture(stmt, i, i)
        start = i + 1 if tok.type == "ARRAY" else i
        if start < len(toks) and toks[start].type in ("LBRACKET", "LPAREN"):
            close = _balanced_end(toks, start)
            if close is not None:
                return _Capture(stmt, i, close, _arguments(stmt, start, close))
        return None
    if element == "#operand":  # a column, a literal or a call: what a comparison side holds
        if tok.type == "IDENT" and i + 1 < len(toks) and toks[i + 1].type == "LPAREN":
            close = _balanced_end(toks, i + 1)
            return None if close is None else _Capture(stmt, i, close)
        if tok.type in ("IDENT", "NUMBER", "STRING", "TRUE", "FALSE", "NULL"):
            return _Capture(stmt, i, i)
        return None
    options = [o.lower() for o in element.split("|") if o] or [element]  # "||" is an operator
    if tok.type == "STRING":
        return _Capture(stmt, i, i) if tok.text.lower() in options else None
    if tok.word is not None and tok.word in options:
        return _Capture(stmt, i, i)
    if tok.word is None and tok.type != "STRING" and tok.text.lower() in options:
        return _Capture(stmt, i, i)
    return None


def _match(stmt: _Statement, pattern: tuple[str, ...], i: int) -> list[_Capture] | None:
    captures: list[_Capture] = []
    at = i
    for element in pattern:
        if element.startswith("¬") and len(element) > 1:
            if _match_element(stmt, element[1:], at) is not None:
                return None
            captures.append(_Capture(stmt, at, at - 1))
            continue
        optional = element.endswith("?") and len(element) > 1
        name = element[:-1] if optional else element
        capture = _match_element(stmt, name, at)
        if capture is None:
            if not optional:
                return None
            capture = _Capture(stmt, at, at - 1)
        captures.append(capture)
        at = capture.last + 1
    return captures


@dataclass(frozen=True, slots=True)
class _Found:
    habit: Habit
    captures: list[_Capture]
    first: int  # token indexes of the whole match
    last: int

    def offset(self, stmt: _Statement) -> int:
        capture = self.captures[self.habit.at]
        index = capture.first if capture.last >= capture.first else self.first
        return stmt.toks[index].start


def _habits_in(stmt: _Statement, until: int | None = None) -> Iterator[_Found]:
    """Every habit row matching in the statement, in token order (row order within a token),
    starting at tokens up to offset ``until`` (a construct that begins after the error cannot
    be what the parser stopped at)."""
    toks = stmt.toks
    for i in range(len(toks)):
        tok = toks[i]
        if until is not None and tok.start > until:
            return
        key = tok.word if tok.word is not None else tok.text.lower()
        rows = habits.rows_starting_with(key, tok.type)
        if not rows:
            continue
        following = None
        if i + 1 < len(toks):
            nxt = toks[i + 1]
            following = nxt.word if nxt.word is not None else nxt.text.lower()
        clause = stmt.clause_at(i)
        for habit in rows:
            second = habits.second_keys(habit)
            if second is not None and following not in second:
                continue
            if habit.clauses is not None and clause not in habit.clauses:
                continue
            if habit.statements is not None and stmt.kind not in habit.statements:
                continue
            captures = _match(stmt, habit.match, i)
            if captures is None:
                continue
            last = max((c.last for c in captures), default=i)
            yield _Found(habit, captures, i, max(last, i))


_MAX_ROWS_TRIED = 12


def _found_here(stmt: _Statement, error: DslError, base: int) -> list[_Found]:
    """The habits to explain, best first: the rows matching at the first foreign construct (in
    row order), then those at later tokens up to the error (tried when the first have no fix);
    none when the original error is about something specific earlier in the statement."""
    offset = None if error.offset is None else error.offset - base
    generic = error.reason == "syntax_error" and not error.suggestions
    rows: list[_Found] = []
    until = None if offset is None or generic else offset
    for found in _habits_in(stmt, until):
        if found.habit.when_reason and error.reason not in found.habit.when_reason:
            continue
        if "at_error" in found.habit.tags and offset is not None and found.offset(stmt) != offset:
            continue  # a symptom (`c.reps` beside a JOIN) is explained only where it is the error
        if not rows:
            begins = stmt.toks[found.first].start
            if not (offset is None or generic or begins <= offset or found.habit.overrides):
                return []
        rows.append(found)
        if len(rows) >= _MAX_ROWS_TRIED:
            break
    return rows
