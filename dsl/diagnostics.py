"""Errors that teach (dsl.md §9.1): a failed statement's error, rewritten to name this language's
equivalent of the construct the caller wrote, with a corrected statement that is known to run.

The knowledge lives in data (``dsl.habits``: other dialects' constructs as token patterns, and
the synonyms of each resource's columns); this module only matches those rows against the failed
statement's tokens and renders them. It runs on the failure path alone, so a statement that
parses and validates never pays for it.

How a correction is found: a habit row (or the error's own first suggestion) gives candidate
rewrites of the statement; each is parsed and validated like any request, and what still fails is
corrected again, a few rounds at most. Only a rewrite that validates is shown as a statement, so a
hint never proposes a statement that is itself rejected. When a rewrite fails only elsewhere (the
caller made two mistakes), its fragment is still shown, without the full statement.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from ply import lex

from dsl import habits
from dsl.errors import DslError
from dsl.habits import Habit
from dsl.lexer import tokenize
from dsl.parser import DEFAULT_LIMITS, Limits, parse_batch
from dsl.resources import get_resource
from dsl.validator import RelativeNow, parse_datetime, parse_interval, validate_batch

logger = logging.getLogger(__name__)

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
_CORRECTION_ROUNDS = 4
_MAX_SHOWN_STATEMENT = 400

_CLAUSE_OF_TOKEN = {
    "SELECT": "select",
    "FROM": "from",
    "WHERE": "where",
    "HAVING": "having",
    "SET": "set",
    "VALUES": "values",
    "RETURNING": "returning",
    "LIMIT": "page",
    "OFFSET": "page",
    "INTO": "into",
    "UNNEST": "from",
}
_COMPARISON_TYPES = frozenset({"EQ", "NE", "LT", "LE", "GT", "GE"})
_AFTER_CLAUSE = {
    "GROUP": frozenset({"HAVING", "ORDER", "LIMIT", "OFFSET"}),
    "ORDER": frozenset({"LIMIT", "OFFSET"}),
}
_STOP_WHERE = frozenset({"GROUP", "ORDER", "LIMIT", "OFFSET", "RETURNING", "HAVING"})
_RESOURCE_MODIFIERS = frozenset(
    {"top", "low_priority", "high_priority", "delayed", "ignore", "quick", "only"}
)


# The failed statement as tokens ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Tok:
    type: str
    value: Any
    text: str  # as written
    word: str | None  # lower-cased name or keyword, for words not in double quotes
    start: int  # offsets into the statement text
    end: int


class _Statement:
    """One statement's text and tokens, with the context a template may use."""

    def __init__(self, text: str, raw: list[lex.LexToken], base: int) -> None:
        self.text = text
        self.toks: list[_Tok] = []
        for tok in raw:
            word = None
            if (
                tok.type not in ("ERROR", "STRING")
                and isinstance(tok.value, str)
                and not getattr(tok, "quoted", False)
            ):
                word = tok.value.lower()
            self.toks.append(
                _Tok(
                    tok.type,
                    tok.value,
                    text[tok.lexpos - base : tok.end - base],
                    word,
                    tok.lexpos - base,
                    tok.end - base,
                )
            )
        self.kind = self.toks[0].word if self.toks else None
        self._clauses: list[str | None] | None = None
        self._resource: tuple[str | None] | None = None

    def clause_at(self, i: int) -> str | None:
        """The clause token ``i`` sits in: select, from, where, group, having, order, page, set,
        values, returning, into; inside parentheses, the enclosing clause until one starts
        within them."""
        if self._clauses is None:
            self._clauses = self._clause_of_each_token()
        return self._clauses[i] if 0 <= i < len(self._clauses) else None

    def _clause_of_each_token(self) -> list[str | None]:
        clauses: list[str | None] = []
        stack: list[str | None] = [None]
        for j, tok in enumerate(self.toks):
            clauses.append(stack[-1])
            if tok.type in ("LPAREN", "LBRACKET"):
                stack.append(stack[-1])
            elif tok.type in ("RPAREN", "RBRACKET"):
                if len(stack) > 1:
                    stack.pop()
            elif tok.type in _CLAUSE_OF_TOKEN:
                stack[-1] = _CLAUSE_OF_TOKEN[tok.type]
            elif tok.type == "BY" and j > 0 and self.toks[j - 1].type in ("GROUP", "ORDER"):
                stack[-1] = self.toks[j - 1].type.lower()
        return clauses

    def resource(self) -> str | None:
        """The resource the statement names (after FROM, INTO, UPDATE, DESCRIBE), synonyms
        resolved, or None."""
        if self._resource is None:
            self._resource = (self._find_resource(),)
        return self._resource[0]

    def _find_resource(self) -> str | None:
        for j, tok in enumerate(self.toks[:-1]):
            if tok.type in ("FROM", "INTO", "UPDATE", "DESCRIBE") or (
                j == 0 and tok.type == "DESC"
            ):
                k = self._after_modifiers(j + 1)
                name = self.toks[k].word if k < len(self.toks) else None
                resolved = habits.resource_for(name) if name is not None else None
                # An alias (`UPDATE c SET ... FROM cards c`) names no resource: look further.
                if resolved is not None:
                    return resolved
        return None

    def _after_modifiers(self, k: int) -> int:
        """The token after other dialects' modifiers between a keyword and its resource
        (``UPDATE TOP (1) cards``, ``UPDATE LOW_PRIORITY cards``)."""
        toks = self.toks
        while k < len(toks) and toks[k].word in _RESOURCE_MODIFIERS:
            k += 1
            if toks[k - 1].word == "top" and k < len(toks):
                close = _balanced_end(toks, k) if toks[k].type == "LPAREN" else k
                k = (close if close is not None else k) + 1
        return k

    def where_text(self, stop_at: int | None = None) -> str | None:
        """The text of the WHERE condition, up to the next clause (or token ``stop_at``)."""
        for j, tok in enumerate(self.toks):
            if tok.type != "WHERE":
                continue
            depth, k = 0, j + 1
            while k < len(self.toks) and k != stop_at:
                t = self.toks[k]
                depth += t.type in ("LPAREN", "LBRACKET")
                depth -= t.type in ("RPAREN", "RBRACKET")
                if depth == 0 and (t.type in _STOP_WHERE or t.word in ("group", "order")):
                    break
                k += 1
            if k == j + 1:
                return None
            return self.text[self.toks[j + 1].start : self.toks[k - 1].end]
        return None

    def order_column(self) -> str | None:
        """The first column the ORDER BY names, else the resource's default order column."""
        for j, tok in enumerate(self.toks):
            if tok.type == "BY" and j > 0 and self.toks[j - 1].type == "ORDER":
                for t in self.toks[j + 1 :]:
                    if t.type in ("RPAREN", "FROM", "LIMIT", "OFFSET"):
                        break
                    if t.type == "IDENT" and t.word:
                        return t.word
        name = self.resource()
        resource = get_resource(name) if name else None
        return resource.default_order[0][0] if resource else None

    def from_order(self) -> str | None:
        """The statement's text from ORDER BY on."""
        for tok in self.toks:
            if tok.type == "ORDER":
                return self.text[tok.start :]
        return None

    def reordered(self) -> str | None:
        """The SELECT with its clauses in the grammar's order (WHERE, GROUP BY, HAVING, ORDER BY,
        LIMIT, OFFSET), when they were written in another order."""
        order = {"WHERE": 0, "GROUP": 1, "HAVING": 2, "ORDER": 3, "LIMIT": 4, "OFFSET": 5}
        starts = [
            j
            for j, tok in enumerate(self.toks)
            if tok.type in order and self._depth(j) == 0 and self.clause_at(j) != "select"
        ]
        if not starts:
            return None
        head = self.text[: self.toks[starts[0]].start].rstrip()
        pieces = []
        for n, j in enumerate(starts):
            end = self.toks[starts[n + 1]].start if n + 1 < len(starts) else len(self.text)
            pieces.append((order[self.toks[j].type], self.text[self.toks[j].start : end].strip()))
        ranked = sorted(pieces, key=lambda piece: piece[0])
        if ranked == pieces or len({rank for rank, _ in pieces}) != len(pieces):
            return None
        return " ".join([head, *(text for _, text in ranked)])

    def _depth(self, index: int) -> int:
        depth = 0
        for tok in self.toks[:index]:
            depth += tok.type in ("LPAREN", "LBRACKET")
            depth -= tok.type in ("RPAREN", "RBRACKET")
        return depth

    def other_aggregates(self, found: _Found) -> bool:
        """Whether the select list holds an aggregate outside the match (the aggregate a
        trailing ``FILTER (...)`` applies to counts as part of it)."""
        first = found.first
        if first >= 2 and self.toks[first - 1].type == "RPAREN":
            depth, j = 0, first - 1
            while j >= 0:
                depth += self.toks[j].type == "RPAREN"
                depth -= self.toks[j].type == "LPAREN"
                if depth == 0:
                    break
                j -= 1
            first = max(0, j - 1)
        for j, tok in enumerate(self.toks):
            if first <= j <= found.last or self.clause_at(j) != "select":
                continue
            nxt = self.toks[j + 1] if j + 1 < len(self.toks) else None
            if tok.word in ("count", "sum", "avg", "min", "max") and nxt and nxt.type == "LPAREN":
                return True
        return False

    def select_item(self, position: int) -> str | None:
        """The ``position``-th item of the select list (its alias when it has one)."""
        items, depth, start = [], 0, None
        for j, tok in enumerate(self.toks):
            if tok.type == "SELECT":
                start = j + 1
                continue
            if start is None:
                continue
            if tok.type in ("LPAREN", "LBRACKET"):
                depth += 1
            elif tok.type in ("RPAREN", "RBRACKET"):
                depth -= 1
            elif depth == 0 and tok.type in ("COMMA", "FROM"):
                items.append((start, j - 1))
                start = j + 1
                if tok.type == "FROM":
                    break
        if not 1 <= position <= len(items):
            return None
        first, last = items[position - 1]
        if last - first >= 1 and self.toks[last - 1].type == "AS":
            return self.toks[last].text
        return self.text[self.toks[first].start : self.toks[last].end]

    def _insert_parts(
        self,
    ) -> tuple[int, list[tuple[int, int]], list[list[tuple[int, int]]], int] | None:
        """(index of the column list's "(", its column spans, each VALUES row's value spans,
        index just past the last row) of an INSERT; None for other shapes."""
        toks = self.toks
        if self.kind != "insert":
            return None
        open_ = next((j for j, t in enumerate(toks) if t.type == "LPAREN"), None)
        values = next((j for j, t in enumerate(toks) if t.type == "VALUES"), None)
        if open_ is None or values is None or open_ > values:
            return None
        close = _balanced_end(toks, open_)
        if close is None or close > values:
            return None
        columns = _spans(toks, open_, close)
        rows, j = [], values + 1
        while j < len(toks) and toks[j].type == "LPAREN":
            end = _balanced_end(toks, j)
            if end is None:
                return None
            rows.append(_spans(toks, j, end))
            j = end + 1
            if j < len(toks) and toks[j].type == "COMMA":
                j += 1
        return open_, columns, rows, j

    def insert_without(self, index: int) -> str | None:
        """The INSERT without the column at token ``index`` and its value in every row."""
        parts = self._insert_parts()
        if parts is None:
            return None
        _, columns, rows, end = parts
        position = next((n for n, (a, _) in enumerate(columns) if a == index), None)
        if position is None or len(columns) < 2 or any(len(r) != len(columns) for r in rows):
            return None
        text, toks = self.text, self.toks

        def joined(spans: list[tuple[int, int]]) -> str:
            kept = [s for n, s in enumerate(spans) if n != position]
            return ", ".join(text[toks[a].start : toks[b].end] for a, b in kept)

        head = text[: toks[parts[0]].start].rstrip()
        body = ", ".join(f"({joined(r)})" for r in rows)
        tail = text[toks[end].start :] if end < len(toks) else ""
        return _tidy(f"{head} ({joined(columns)}) VALUES {body} {tail}")

    def column_of_value(self, index: int) -> str | None:
        """The column the value at token ``index`` is written to (SET col = v, or VALUES)."""
        toks = self.toks
        if index >= 2 and toks[index - 1].type == "EQ" and toks[index - 2].type == "IDENT":
            return toks[index - 2].word
        parts = self._insert_parts()
        if parts is None:
            return None
        _, columns, rows, _ = parts
        for row in rows:
            for n, (a, b) in enumerate(row):
                if a <= index <= b and n < len(columns):
                    return toks[columns[n][0]].word
        return None

    def group_keys(self) -> str | None:
        """The text of the GROUP BY list."""
        for j, tok in enumerate(self.toks):
            if tok.type == "GROUP" and j + 1 < len(self.toks) and self.toks[j + 1].type == "BY":
                k = j + 2
                while k < len(self.toks) and self.toks[k].type not in _AFTER_CLAUSE["GROUP"]:
                    k += 1
                if k == j + 2:
                    return None
                return self.text[self.toks[j + 2].start : self.toks[k - 1].end]
        return None

    def without_clause(self, kind: str) -> str | None:
        """The statement without its GROUP BY (``kind`` "GROUP") or ORDER BY clause."""
        for j, tok in enumerate(self.toks):
            if tok.type != kind:
                continue
            k = j + 1
            while k < len(self.toks) and self.toks[k].type not in _AFTER_CLAUSE.get(kind, ()):
                k += 1
            end = self.toks[k].start if k < len(self.toks) else len(self.text)
            return _tidy(self.text[: tok.start] + " " + self.text[end:])
        return None

    def without_item(self, found: _Found) -> str | None:
        """The statement without the select item the match is (with its alias and comma)."""
        toks, first, last = self.toks, found.first, found.last
        if last + 1 < len(toks) and toks[last + 1].type == "AS":
            last += 2
        elif last + 1 < len(toks) and toks[last + 1].type == "IDENT":
            last += 1
        if first > 0 and toks[first - 1].type == "COMMA":
            first -= 1
        elif last + 1 < len(toks) and toks[last + 1].type == "COMMA":
            last += 1
        else:
            return None
        return _tidy(self.text[: toks[first].start] + " " + self.text[toks[last].end :])

    def moved_to_where(self, found: _Found) -> str | None:
        """The statement with the match removed and its parenthesised condition (``FILTER (WHERE
        c)``) added to the WHERE."""
        groups = [c for c in found.captures if c.args]
        if not groups:
            return None
        inner = groups[-1].text[1:-1].strip()
        condition = re.sub(r"(?i)^where\s+", "", inner)
        if condition == inner or not condition:
            return None
        head = self.text[: self.toks[found.first].start].rstrip()
        return _with_condition(f"{head}{self.text[self.toks[found.last].end :]}", condition)

    def named_resource(self) -> str | None:
        """A resource named as a value or an argument (catalog look-ups name their table so)."""
        for tok in self.toks:
            value = tok.value if tok.type == "STRING" else tok.word
            if isinstance(value, str):
                name = habits.resource_for(value.lower())
                if name is not None:
                    return name
        return None


def _month_range(found: _Found) -> str | None:
    """``YEAR(c) = 2026 AND MONTH(c) = 3`` as the range of that month."""
    column, other = found.captures[2].text, found.captures[9].text
    if column.lower() != other.lower():
        return None
    year, month = int(_number(found.captures[5].text)), int(_number(found.captures[12].text))
    if not 1 <= month <= 12 or not 1 <= year <= 9998:
        return None
    following = (year + month // 12, month % 12 + 1)
    return (
        f"{column} >= '{year:04d}-{month:02d}-01' AND "
        f"{column} < '{following[0]:04d}-{following[1]:02d}-01'"
    )


def _shifted_literal(found: _Found) -> str | None:
    """``'2026-03-01' + INTERVAL '7 days'`` as the literal it is: ``'2026-03-08'``."""
    moment = parse_datetime(_unquote(found.captures[0].text))
    shift = parse_interval(_unquote(found.captures[3].text))
    if moment is None or shift is None:
        return None
    sign = -1 if found.captures[1].text == "-" else 1
    moved = RelativeNow(sign * shift.amount, shift.unit).resolve(moment)
    if moved.time() == datetime.min.time():
        return _quote(moved.date().isoformat())
    return _quote(moved.strftime("%Y-%m-%dT%H:%M:%SZ"))


def _subsets(found: _Found) -> str | None:
    """``tags <@ ARRAY['a', 'b']`` (every tag is one of these) as the sets it may equal."""
    column = found.captures[0].text
    items = [a.strip() for a in found.captures[-1].args]
    if not items:
        try:
            items = [
                i.strip() for i in _list(found.captures[-1].text)[1:-1].split(",") if i.strip()
            ]
        except ValueError:
            return None
    if not 1 <= len(items) <= 4:
        return None
    sets = []
    for mask in range(1 << len(items)):
        chosen = [item for bit, item in enumerate(items) if mask >> bit & 1]
        sets.append(f"{column} = ({', '.join(chosen)})")
    return " OR ".join(sets)


def _alternatives(found: _Found) -> str | None:
    """A pattern with alternatives (``'%(verb|tense)%'``, REGEXP ``'verb|tense'``) as LIKEs
    joined with OR (AND for NOT)."""
    column = found.captures[0].text
    negated = found.captures[1].text.strip().upper() == "NOT"
    similar = any(c.text.lower() == "similar" for c in found.captures)
    inner = _unquote(found.captures[-1].text).replace("''", "'")
    group = re.fullmatch(r"([^()|]*)\(([^()]*)\)([^()|]*)", inner)
    prefix, alternatives, suffix = group.groups() if group else ("", inner, "")
    parts = alternatives.split("|")
    if len(parts) < 2 or len(parts) > 10:
        return None
    if similar:
        patterns = [_quote(prefix + p + suffix) for p in parts]
        if any(c in p for p in patterns for c in "[]*+?{}"):
            return None
        operator = "NOT LIKE" if negated else "LIKE"
    else:
        patterns = [_regex_like(_quote(prefix + p + suffix)) for p in parts]
        operator = "NOT ILIKE" if negated else "ILIKE"
    joiner = " AND " if negated else " OR "
    return joiner.join(f"{column} {operator} {p}" for p in patterns)


def _with_condition(text: str, condition: str) -> str | None:
    """``text`` with ``condition`` added to its WHERE (or as a new WHERE before GROUP BY,
    ORDER BY, LIMIT or OFFSET)."""
    stmt = _Statement(text, tokenize(text), 0)
    for j, tok in enumerate(stmt.toks):
        if tok.type == "WHERE":
            rest = stmt.where_text()
            if rest is None:
                return None
            start = stmt.toks[j + 1].start
            return f"{text[:start]}({condition}) AND ({rest}){text[start + len(rest) :]}"
    for tok in stmt.toks:
        if tok.type in ("GROUP", "ORDER", "LIMIT", "OFFSET", "HAVING"):
            return f"{text[: tok.start].rstrip()} WHERE {condition} {text[tok.start :]}"
    return f"{text.rstrip()} WHERE {condition}"


def _split_statements(sql: str) -> list[list[lex.LexToken]]:
    groups: list[list[lex.LexToken]] = [[]]
    for tok in tokenize(sql):
        if tok.type == "SEMI":
            groups.append([])
        else:
            groups[-1].append(tok)
    return groups


def _failed_statement(sql: str, error: DslError) -> tuple[_Statement, int] | None:
    """The statement ``error`` belongs to, and the offset of its text in ``sql``."""
    groups = _split_statements(sql)
    if error.statement_index is not None:
        index = error.statement_index - 1
    else:
        nonempty = [i for i, g in enumerate(groups) if g]
        if len(nonempty) != 1:
            return None
        index = nonempty[0]
    if not 0 <= index < len(groups) or not groups[index]:
        return None
    raw = groups[index]
    start, end = raw[0].lexpos, raw[-1].end
    return _Statement(sql[start:end], raw, start), start


# Matching habit rows -------------------------------------------------------------------------


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


class _Text(str):
    """A string with the format filters habit templates use, e.g. ``{2[0]:unit}``."""

    def __format__(self, spec: str) -> str:
        value = str(self)
        for name in filter(None, spec.split("|")):
            value = _FILTERS[name](value)
        return value


def _unit(text: str) -> str:
    word = text.strip().strip("'").lower()
    unit = habits.INTERVAL_UNITS.get(word)
    if unit is None:
        raise ValueError(text)
    return unit


def _number(text: str) -> str:
    text = text.strip().strip("'").strip()
    if not re.fullmatch(r"[+-]?\d+", text):
        raise ValueError(text)
    return text


def _interval(text: str) -> str:
    """``'7 day'`` / ``7 DAY`` / ``'1' hour`` → ``7 days``."""
    parts = text.replace("'", " ").split()
    if parts and parts[0].lower() == "interval":
        parts = parts[1:]
    if len(parts) != 2:
        raise ValueError(text)
    amount = _number(parts[0]).lstrip("+")
    return f"{amount.lstrip('-')} {_unit(parts[1])}"


def _strip_sign(text: str) -> str:
    return _number(text).lstrip("+-")


def _sign(text: str) -> str:
    return "-" if _number(text).startswith("-") else "+"


def _flip(text: str) -> str:
    return "+" if _number(text).startswith("-") else "-"


_MIRRORED = {">": "<", ">=": "<=", "<": ">", "<=": ">=", "=": "=", "!=": "!=", "<>": "<>"}


def _mirror(text: str) -> str:
    """The comparison seen from the other side (``a - b > n`` is ``b < a - n``)."""
    return _MIRRORED[text.strip()]


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) < 2 or text[0] != "'" or text[-1] != "'":
        raise ValueError(text)
    return text[1:-1]


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _list(text: str) -> str:
    """An array written the other dialect's way (``ARRAY['a']``, ``'{a,b}'``, ``'["a"]'``,
    ``'a'``) as this language's ``('a', 'b')``."""
    text = re.sub(r"::\s*\w+\s*(\[\s*\])?$", "", text.strip())
    if text.lower().startswith("array"):
        text = text[5:].strip()
    if text[:1] in "[(" and text[-1:] in "])":
        inner = text[1:-1].strip()
        return f"({inner})"
    if text[:1] == "'":
        inner = _unquote(text).replace("''", "'").strip()
        if inner[:1] in "{[" and inner[-1:] in "}]":
            inner = inner[1:-1]
        items = [i.strip().strip('"').strip("'") for i in inner.split(",") if i.strip()]
        if not items:
            return "()"
        return "(" + ", ".join(_quote(i) for i in items) + ")"
    raise ValueError(text)


def _column(text: str) -> str:
    """A column name (not a literal, not a call); a qualifier (``cards.tags``) is dropped."""
    match = re.fullmatch(r"(?:[A-Za-z_]\w*\s*\.\s*)?([A-Za-z_]\w*)", text.strip())
    if match is None:
        raise ValueError(text)
    return match.group(1).lower()


def _clock(text: str) -> str:
    """Only a reading of the clock passes (the template then writes NOW() itself)."""
    word = re.sub(r"\s|\(\)", "", text.lower())
    if word not in habits.CLOCK_WORDS and word not in ("'now'", "now"):
        raise ValueError(text)
    return "NOW()"


def _day_after(text: str) -> str:
    day = date.fromisoformat(_unquote(text)[:10])
    return _quote((day + timedelta(days=1)).isoformat())


def _day(text: str) -> str:
    return _quote(date.fromisoformat(_unquote(text)[:10]).isoformat())


def _like_text(text: str) -> str:
    """A string literal's content, with LIKE's wildcards escaped away (they cannot be)."""
    inner = _unquote(text)
    if "%" in inner or "_" in inner:
        raise ValueError(text)
    return inner


def _upper(text: str) -> str:
    return text.upper()


def _lower(text: str) -> str:
    return text.lower()


def _modifier(text: str) -> str:
    """SQLite's ``'-7 days'`` modifier as ``- INTERVAL '7 days'``."""
    parts = _unquote(text).split()
    if len(parts) != 2:
        raise ValueError(text)
    sign = "-" if parts[0].startswith("-") else "+"
    return f"{sign} INTERVAL '{_strip_sign(parts[0])} {_unit(parts[1])}'"


def _next_year(text: str) -> str:
    return str(int(_number(text)) + 1)


_REGEX_META = set("[](){}|\\+?*")


def _regex_like(text: str) -> str:
    """A plain regular expression (anchors, ``.`` and ``.*`` at most) as a LIKE pattern."""
    inner = _unquote(text).replace("''", "'")
    if "%" in inner or "_" in inner:
        raise ValueError(text)
    start = "" if inner.startswith("^") else "%"
    end = "" if inner.endswith("$") and not inner.endswith("\\$") else "%"
    inner = inner.removeprefix("^")
    if end == "":
        inner = inner[:-1]
    inner = inner.replace(".*", "%")
    if any(c in _REGEX_META for c in inner.replace("%", "")):
        raise ValueError(text)
    inner = inner.replace(".", "_")
    return _quote(f"{start}{inner}{end}".replace("%%", "%"))


def _unwild(text: str) -> str:
    """A LIKE pattern's literal text (``'%eng%'`` → ``eng``)."""
    inner = _unquote(text).strip("%")
    if not inner or "%" in inner or "_" in inner:
        raise ValueError(text)
    return inner.replace("''", "'")


def _json_word(text: str) -> str:
    """A LIKE pattern searching JSON text for one element (``'%"english"%'``) → ``english``."""
    inner = _unquote(text)
    match = re.fullmatch(r'%"([^"%_]+)"%', inner)
    if match is None:
        raise ValueError(text)
    return match.group(1)


def _empty_list(text: str) -> str:
    """Passes only an empty array written as a string (``'[]'``, ``'{}'``)."""
    if _list(text) != "()":
        raise ValueError(text)
    return "()"


def _glob_like(text: str) -> str:
    inner = _unquote(text)
    if "%" in inner or "_" in inner or "[" in inner:
        raise ValueError(text)
    return _quote(inner.replace("''", "'").replace("*", "%").replace("?", "_"))


def _negated_eq(text: str) -> str:
    """``NOT`` (of NOT LIKE) as the comparison it becomes: ``!=``; nothing as ``=``."""
    return "!=" if text.strip().lower() == "not" else "="


def _col_in(text: str) -> str:
    """The column a one-argument call wraps: ``TRIM(back_text)`` → ``back_text``."""
    match = re.fullmatch(r"\w+\s*\(\s*([A-Za-z_]\w*)\s*\)", text.strip())
    if match is None:
        raise ValueError(text)
    return match.group(1).lower()


def _columns(text: str) -> str:
    """The bare column names among a call's arguments, as a select list."""
    inner = text.strip().removeprefix("(").removesuffix(")")
    parts = re.findall(r"'(?:[^']|'')*'|[^,]+", inner)
    names = [p.strip() for p in parts if re.fullmatch(r"\s*[A-Za-z_]\w*\s*", p)]
    if not names:
        raise ValueError(text)
    return ", ".join(n.lower() for n in names)


def _null_meaning(text: str) -> str:
    """What "no value" is for a column that is never NULL (``reps`` → ``reps = 0``)."""
    meaning = habits.NULL_MEANINGS.get(text.strip().lower())
    if meaning is None:
        raise ValueError(text)
    return meaning


def _empty_value(text: str) -> str:
    """The empty value a never-NULL column takes: ``tags = ()``, ``back_text = ''``."""
    name = text.strip().lower()
    if name in ("tags", "effort_levels"):
        return f"{name} = ()"
    if name in ("back_text", "card_type"):
        return f"{name} = ''"
    raise ValueError(text)


_SECOND_UNITS = ((604800, "week"), (86400, "day"), (3600, "hour"), (60, "minute"))


def _seconds(text: str) -> str:
    """A number of seconds as an interval of the largest exact unit (86400 → ``1 day``)."""
    seconds = int(_number(text))
    for size, unit in _SECOND_UNITS:
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}" + ("s" if count != 1 else "")
    raise ValueError(text)


def _plain_like(text: str) -> str:
    """A SIMILAR TO pattern that is a LIKE pattern already (no regular-expression parts)."""
    if any(c in _unquote(text) for c in "|()[]*+?{}"):
        raise ValueError(text)
    return text


def _hex_prefix(text: str) -> str:
    """The start of a uuid (at least 4 hexadecimal digits), for ``card_id LIKE '04da5c72%'``."""
    inner = _unquote(text).lower()
    if not re.fullmatch(r"[0-9a-f]{4}[0-9a-f-]{0,31}", inner):
        raise ValueError(text)
    return inner


def _uuid(text: str) -> str:
    inner = _unquote(text)
    if not re.fullmatch(r"[0-9a-fA-F]{8}-?([0-9a-fA-F]{4}-?){3}[0-9a-fA-F]{12}", inner):
        raise ValueError(text)
    return text


def _day_format(text: str) -> str:
    """Passes (as nothing) a date format that names the day (``'%Y-%m-%d'``, ``'YYYY-MM-DD'``):
    only then is DATE(column) the same grouping."""
    inner = _unquote(text)
    if not re.search(r"%d|%j|DD|dd", inner) or re.search(r"%H|HH|hh|%M|MI|%S|SS", inner):
        raise ValueError(text)
    return ""


def _unwhere(text: str) -> str:
    """A ``WHERE c`` fragment as the condition ``c``."""
    condition = re.sub(r"(?i)^\s*where\s+", "", text)
    if condition == text or not condition.strip():
        raise ValueError(text)
    return condition.strip()


def _day_unit(text: str) -> str:
    """Passes (as nothing) date_trunc's 'day' unit: only then is DATE(column) the same value."""
    if _unquote(text).strip().lower() not in ("day", "dd", "d", "days"):
        raise ValueError(text)
    return ""


def _underscores(text: str) -> str:
    count = int(_number(text)) + 1
    if not 0 < count <= 1000:
        raise ValueError(text)
    return "_" * count


def _cast_inner(text: str) -> str:
    match = re.fullmatch(
        r"(.+?)\s+as\s+\w+(\s*\([\d\s,]*\))?", text.strip(), re.IGNORECASE | re.DOTALL
    )
    if match is None:
        raise ValueError(text)
    return match.group(1)


def _search(text: str) -> str:
    """The text searched for, as a string literal for MATCH('...')."""
    match = re.search(r"'((?:[^']|'')*)'", text)
    if match is None:
        raise ValueError(text)
    inner = match.group(1).replace("''", "'").strip().strip("*").lstrip("+")
    inner = re.sub(r"(?i)\s+in\s+(boolean|natural language)\s+mode$", "", inner)
    if not inner or any(c in inner for c in '&|!:<>()+-"'):
        raise ValueError(text)
    return _quote(inner)


def _position_column(text: str) -> str:
    parts = re.split(r"\s+in\s+", text.strip(), flags=re.IGNORECASE)
    if len(parts) != 2:
        raise ValueError(text)
    return _column(parts[1])


def _position_text(text: str) -> str:
    parts = re.split(r"\s+in\s+", text.strip(), flags=re.IGNORECASE)
    if len(parts) != 2:
        raise ValueError(text)
    return _like_text(parts[0])


def _unparen(text: str) -> str:
    return _number(text.strip().removeprefix("(").removesuffix(")"))


def _unquote_any(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"`":
        return text[1:-1]
    return text


def _resource_name(text: str) -> str:
    name = habits.resource_for(_unquote_any(text).lower())
    if name is None:
        raise ValueError(text)
    return name


def _id_of(text: str) -> str:
    resource = get_resource(_resource_name(text))
    if resource is None:
        raise ValueError(text)
    return resource.id_column


_FILTERS: dict[str, Callable[[str], str]] = {
    "unit": _unit,
    "number": _number,
    "interval": _interval,
    "abs": _strip_sign,
    "sign": _sign,
    "flip": _flip,
    "unquote": _unquote,
    "quote": _quote,
    "list": _list,
    "column": _column,
    "clock": _clock,
    "day_after": _day_after,
    "day": _day,
    "like": _like_text,
    "upper": _upper,
    "lower": _lower,
    "mirror": _mirror,
    "day_unit": _day_unit,
    "unwhere": _unwhere,
    "day_format": _day_format,
    "hex_prefix": _hex_prefix,
    "uuid": _uuid,
    "seconds": _seconds,
    "plain_like": _plain_like,
    "json_word": _json_word,
    "null_meaning": _null_meaning,
    "empty_value": _empty_value,
    "glob_like": _glob_like,
    "negated_eq": _negated_eq,
    "col_in": _col_in,
    "columns": _columns,
    "empty_list": _empty_list,
    "modifier": _modifier,
    "next_year": _next_year,
    "regex_like": _regex_like,
    "unwild": _unwild,
    "underscores": _underscores,
    "cast_inner": _cast_inner,
    "search": _search,
    "position_column": _position_column,
    "position_text": _position_text,
    "unparen": _unparen,
    "unquote_any": _unquote_any,
    "resource_name": _resource_name,
    "id_of": _id_of,
}


def _balanced_end(toks: list[_Tok], i: int) -> int | None:
    """Index of the bracket closing the one at ``i``."""
    depth = 0
    for j in range(i, len(toks)):
        kind = toks[j].type
        if kind in ("LPAREN", "LBRACKET"):
            depth += 1
        elif kind in ("RPAREN", "RBRACKET"):
            depth -= 1
            if depth == 0:
                return j
    return None


def _spans(toks: list[_Tok], open_: int, close: int) -> list[tuple[int, int]]:
    """The token spans of the top-level comma-separated items between two brackets."""
    spans, depth, start = [], 0, open_ + 1
    for j in range(open_ + 1, close):
        kind = toks[j].type
        if kind in ("LPAREN", "LBRACKET"):
            depth += 1
        elif kind in ("RPAREN", "RBRACKET"):
            depth -= 1
        elif kind == "COMMA" and depth == 0:
            spans.append((start, j - 1))
            start = j + 1
    if start <= close - 1:
        spans.append((start, close - 1))
    return [(a, b) for a, b in spans if a <= b]


def _arguments(stmt: _Statement, open_: int, close: int) -> list[str]:
    args, depth, start = [], 0, open_ + 1
    for j in range(open_ + 1, close):
        kind = stmt.toks[j].type
        if kind in ("LPAREN", "LBRACKET"):
            depth += 1
        elif kind in ("RPAREN", "RBRACKET"):
            depth -= 1
        elif kind == "COMMA" and depth == 0:
            args.append((start, j - 1))
            start = j + 1
    if start <= close - 1:
        args.append((start, close - 1))
    return [stmt.text[stmt.toks[a].start : stmt.toks[b].end] for a, b in args if a <= b]


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


# Statement shapes that joins, subqueries, set operations and upserts are rebuilt from -----------
# (context fields of the joins and writes rows: the two-step recipe is written with the caller's
# own resources, conditions and values, and then verified like every other rewrite).

_ID_PLACEHOLDER = "('<id>', ...)"
_JOIN_WORDS = frozenset({"join", "straight_join", "apply"})
_AGGREGATE_WORDS = frozenset({"count", "sum", "avg", "min", "max"})


def _qualifier_at(toks: list[_Tok], j: int) -> bool:
    """Whether token ``j`` is the ``t`` of a qualified name ``t.col`` or ``t.*``."""
    return (
        toks[j].type == "IDENT"
        and j + 2 < len(toks)
        and toks[j + 1].type == "DOT"
        and toks[j + 2].type in ("IDENT", "TIMES")
    )


def _rebuilt(stmt: _Statement, first: int, last: int, skip: frozenset[int] = frozenset()) -> str:
    """Tokens ``first..last`` as written, without qualifiers (``t.``) and the tokens in ``skip``;
    a kept token takes the spacing before the first token dropped ahead of it."""
    toks = stmt.toks
    drop = set(skip)
    for j in range(first, last + 1):
        if _qualifier_at(toks, j):
            drop.update((j, j + 1))
    parts: list[str] = []
    gap: str | None = None
    for j in range(first, last + 1):
        own = stmt.text[toks[j - 1].end : toks[j].start] if j > first else ""
        if j in drop:
            gap = own if gap is None else gap
            continue
        parts.append((own if gap is None else gap) + toks[j].text)
        gap = None
    return "".join(parts).strip()


def _depth0(stmt: _Statement, first: int, last: int) -> Iterator[int]:
    """The indexes in ``first..last`` outside any parentheses opened in that range."""
    depth = 0
    for j in range(first, last + 1):
        kind = stmt.toks[j].type
        if kind in ("RPAREN", "RBRACKET"):
            depth -= 1
        if depth == 0:
            yield j
        if kind in ("LPAREN", "LBRACKET"):
            depth += 1


def _clause_end(stmt: _Statement, first: int, last: int) -> int:
    """The index just past a condition starting at ``first`` (the next clause or ``last + 1``)."""
    for j in _depth0(stmt, first, last):
        tok = stmt.toks[j]
        if tok.type in _STOP_WHERE or tok.word in ("group", "order") or tok.word in _JOIN_WORDS:
            return j
    return last + 1


def _where_in(stmt: _Statement, first: int, last: int) -> tuple[int, int] | None:
    """The token range of the WHERE condition in ``first..last`` (depth 0), or None."""
    for j in _depth0(stmt, first, last):
        if stmt.toks[j].type == "WHERE":
            end = _clause_end(stmt, j + 1, last)
            return (j + 1, end - 1) if end > j + 1 else None
    return None


def _conjuncts(stmt: _Statement, first: int, last: int) -> list[tuple[int, int]]:
    """A condition split at its top-level ANDs (whole when it has a top-level OR)."""
    parts, start, between = [], first, False
    for j in _depth0(stmt, first, last):
        kind = stmt.toks[j].type
        if kind == "OR":
            return [(first, last)]
        if kind == "BETWEEN":
            between = True
        elif kind == "AND":
            if between:
                between = False
                continue
            parts.append((start, j - 1))
            start = j + 1
    parts.append((start, last))
    return [(a, b) for a, b in parts if a <= b]


def _correlation(stmt: _Statement, first: int, last: int) -> str | None:
    """``a.col = b.col`` (what ties two resources together): the column, else None."""
    toks = stmt.toks[first : last + 1]
    kinds = [t.type for t in toks]
    if kinds != ["IDENT", "DOT", "IDENT", "EQ", "IDENT", "DOT", "IDENT"]:
        return None
    return toks[2].word


def _unmatched(stmt: _Statement, first: int, last: int) -> bool:
    """``r.card_id IS NULL`` after an outer join: the rows that have no match."""
    kinds = [t.type for t in stmt.toks[first : last + 1]]
    return kinds == ["IDENT", "DOT", "IDENT", "IS", "NULL"]


def _join_in(stmt: _Statement) -> str:
    """``NOT IN`` for an anti-join (``LEFT JOIN r ... WHERE r.card_id IS NULL``), else ``IN``."""
    span = _where_in(stmt, 0, len(stmt.toks) - 1)
    if span is not None and any(_unmatched(stmt, a, b) for a, b in _conjuncts(stmt, *span)):
        return "NOT IN"
    return "IN"


def _collapsed(stmt: _Statement, select: int, close: int) -> str | None:
    """``SELECT x FROM r WHERE id IN (SELECT id FROM r <rest>)`` is ``SELECT x FROM r <rest>``."""
    toks = stmt.toks
    open_ = select - 1
    if open_ < 3 or close != len(toks) - 1 or toks[open_ - 1].type != "IN":
        return None
    if toks[open_ - 3].type != "WHERE" or toks[open_ - 2].type != "IDENT":
        return None
    column = toks[open_ - 2].word
    from_ = select + 2
    if toks[select + 1].word != column or from_ + 1 >= close or toks[from_].type != "FROM":
        return None
    if habits.resource_for(toks[from_ + 1].word or "") != stmt.resource():
        return None
    rest = _rebuilt(stmt, from_ + 2, close - 1) if from_ + 2 < close else ""
    return _tidy(f"{_rebuilt(stmt, 0, open_ - 4)} {rest}")


def _condition(stmt: _Statement, first: int, last: int) -> tuple[str | None, str | None]:
    """A condition without qualifiers and without the conditions that tie two resources
    together; and the column that tied them (``card_id``), if any."""
    kept, tied = [], None
    for a, b in _conjuncts(stmt, first, last):
        column = _correlation(stmt, a, b)
        if column is not None:
            tied = tied or column
            continue
        if _unmatched(stmt, a, b):
            continue  # the outer join's "no such row" test: the second step's NOT IN says it
        kept.append(_rebuilt(stmt, a, b))
    return (" AND ".join(kept) or None), tied


def _subquery_at(stmt: _Statement, found: _Found) -> tuple[int, int] | None:
    """The first ``(SELECT ...)`` from the match on: its SELECT and closing parenthesis."""
    toks = stmt.toks
    for j in range(max(found.first, 1), len(toks)):
        if toks[j].type == "SELECT" and toks[j - 1].type == "LPAREN":
            close = _balanced_end(toks, j - 1)
            return None if close is None else (j, close)
    return None


def _inner_select(stmt: _Statement, select: int, close: int) -> tuple[str, str | None] | None:
    """A subquery as a statement of its own (qualifiers, aliases and the condition tying it to
    the outer statement dropped; a correlated aggregate grouped by the tying column)."""
    toks = stmt.toks
    from_ = next((j for j in _depth0(stmt, select, close - 1) if toks[j].type == "FROM"), None)
    if from_ is None or from_ + 1 >= close or toks[from_ + 1].type != "IDENT":
        return None
    k = from_ + 2
    if k < close and toks[k].type == "AS":
        k += 1
    if k < close and toks[k].type == "IDENT" and toks[k].word not in _JOIN_WORDS:
        k += 1  # the subquery's own alias
    condition, tied = None, None
    if k < close and toks[k].type == "WHERE":
        end = _clause_end(stmt, k + 1, close - 1)
        condition, tied = _condition(stmt, k + 1, end - 1)
        k = end
    rest = _rebuilt(stmt, k, close - 1) if k < close else ""
    items = _rebuilt(stmt, select + 1, from_ - 1)
    if tied is not None:
        aggregate = any(
            toks[j].word in _AGGREGATE_WORDS and toks[j + 1].type == "LPAREN"
            for j in range(select + 1, from_ - 1)
        )
        if aggregate and not any(toks[j].type == "GROUP" for j in range(k, close)):
            items, rest = f"{tied}, {items}", f"GROUP BY {tied} {rest}"
        elif not aggregate:
            items = f"DISTINCT {tied}"
    where = f" WHERE {condition}" if condition else ""
    return _tidy(f"SELECT {items} FROM {toks[from_ + 1].text}{where} {rest}"), tied


def _outer_with_ids(stmt: _Statement, select: int, close: int) -> str | None:
    """The outer statement with its subquery replaced by the values the first step returns."""
    toks = stmt.toks
    open_ = select - 1
    before = toks[open_ - 1] if open_ >= 1 else None
    if before is None:
        return None
    start, end = open_, close
    if before.type == "IN":
        values = _ID_PLACEHOLDER
    elif before.word in ("any", "some") and open_ >= 2 and toks[open_ - 2].type == "EQ":
        start, values = open_ - 2, f"IN {_ID_PLACEHOLDER}"
    elif before.word == "exists":
        inner = _inner_select(stmt, select, close)
        if inner is None or inner[1] is None:
            return None
        start = open_ - 1
        negated = start >= 1 and toks[start - 1].type == "NOT"
        start -= negated
        values = f"{inner[1]} {'NOT IN' if negated else 'IN'} {_ID_PLACEHOLDER}"
    elif before.type in _COMPARISON_TYPES:
        values = "<value>"
    else:
        return None
    skip = _alias_positions(stmt)
    head = _rebuilt(stmt, 0, start - 1, skip)
    tail = _rebuilt(stmt, end + 1, len(toks) - 1, skip) if end + 1 < len(toks) else ""
    return _tidy(f"{head} {values} {tail}")


def _other_resource(stmt: _Statement) -> str | None:
    """A second resource the statement reads (after JOIN, APPLY, a comma in FROM, USING)."""
    first = stmt.resource()
    for j in range(1, len(stmt.toks)):
        tok, prev = stmt.toks[j], stmt.toks[j - 1]
        if tok.type != "IDENT" or tok.word is None:
            continue
        if prev.type in ("FROM", "COMMA", "UPDATE") or prev.word in (*_JOIN_WORDS, "using"):
            name = habits.resource_for(tok.word)
            if name is not None and name != first:
                return name
    return None


def _set_operands(stmt: _Statement, found: _Found) -> tuple[str, str, str] | None:
    """``SELECT x FROM r WHERE a UNION SELECT x FROM r WHERE b``: the shared head and the two
    conditions (parenthesised when they combine several), or None when the heads differ."""
    sides = []
    for lo, hi in ((0, found.first - 1), (found.last + 1, len(stmt.toks) - 1)):
        span = _where_in(stmt, lo, hi)
        if span is None:
            return None
        a, b = span
        condition = _rebuilt(stmt, a, b)
        if any(stmt.toks[j].type in ("AND", "OR") for j in _depth0(stmt, a, b)):
            condition = f"({condition})"
        tail = _rebuilt(stmt, b + 1, hi) if b < hi else ""
        sides.append((_rebuilt(stmt, lo, a - 2), condition, tail))
    (head, left, left_tail), (other, right, tail) = sides
    if left_tail or " ".join(head.lower().split()) != " ".join(other.lower().split()):
        return None
    return head, left, f"{right} {tail}".strip()


def _assignments(stmt: _Statement, first: int) -> list[tuple[str, int, int]] | None:
    """``a = x, b = y`` from token ``first`` to the end of the statement: (column, first, last)."""
    toks, out, start = stmt.toks, [], first
    stops = [j for j in _depth0(stmt, first, len(toks) - 1) if toks[j].type in ("COMMA", "WHERE")]
    end = next((j for j in stops if toks[j].type == "WHERE"), len(toks))
    for stop in [*(j for j in stops if j < end), end]:
        if stop - start < 3 or toks[start].type != "IDENT" or toks[start + 1].type != "EQ":
            return None
        out.append((toks[start].word or "", start + 2, stop - 1))
        start = stop + 1
    return out


def _inserted_values(stmt: _Statement) -> tuple[str, dict[str, str], int] | None:
    """``INSERT INTO r (a, b) VALUES (x, y)``: the resource, each column's value, and the index
    after the row (one row only: an upsert of several rows has no single UPDATE)."""
    toks = stmt.toks
    into = next((j for j, t in enumerate(toks) if t.type == "INTO"), None)
    if into is None or into + 2 >= len(toks) or toks[into + 2].type != "LPAREN":
        return None
    cols_close = _balanced_end(toks, into + 2)
    if cols_close is None or cols_close + 2 >= len(toks) or toks[cols_close + 1].type != "VALUES":
        return None
    row_close = _balanced_end(toks, cols_close + 2)
    if row_close is None:
        return None
    if row_close + 1 < len(toks) and toks[row_close + 1].type == "COMMA":
        return None
    columns = [c.strip().lower() for c in _arguments(stmt, into + 2, cols_close)]
    values = _arguments(stmt, cols_close + 2, row_close)
    if len(columns) != len(values):
        return None
    return (
        toks[into + 1].text,
        dict(zip(columns, (v.strip() for v in values), strict=True)),
        row_close + 1,
    )


def _upsert_update(stmt: _Statement) -> str | None:
    """The UPDATE an upsert means for an existing row: ``INSERT ... ON CONFLICT (k) DO UPDATE
    SET c = EXCLUDED.c`` → ``UPDATE r SET c = <its value> WHERE k = <its value>``."""
    inserted = _inserted_values(stmt)
    if inserted is None:
        return None
    resource, values, k = inserted
    toks = stmt.toks
    keys: list[str] = []
    conflict = k + 2 < len(toks) and toks[k].word == "on" and toks[k + 1].word == "conflict"
    if conflict and toks[k + 2].type == "LPAREN":
        close = _balanced_end(toks, k + 2)
        keys = [a.strip().lower() for a in _arguments(stmt, k + 2, close or k + 2)]
    update = next((j for j in range(k, len(toks)) if toks[j].type == "UPDATE"), None)
    changes: dict[str, str] = {}
    if update is not None:
        start = update + 1 + (update + 1 < len(toks) and toks[update + 1].type == "SET")
        assignments = _assignments(stmt, start)
        if not assignments:
            return None
        for column, a, b in assignments:
            words = [t.word for t in toks[a : b + 1]]
            if column in values and (
                words[:1] == ["values"] or "excluded" in words or "new" in words
            ):
                changes[column] = values[column]
            elif a == b and toks[a].type in ("STRING", "NUMBER", "TRUE", "FALSE"):
                changes[column] = toks[a].text
            else:
                return None
    elif k >= len(toks) or toks[k].word != "on":
        names = list(values)
        keys = keys or names[:1]
        changes = {c: v for c, v in values.items() if c not in keys}
    keys = keys or [c for c in values if c not in changes]
    if not changes or not keys or any(key not in values for key in keys):
        return None
    sets = ", ".join(f"{c} = {v}" for c, v in changes.items())
    where = " AND ".join(f"{key} = {values[key]}" for key in keys)
    return f"UPDATE {resource} SET {sets} WHERE {where}"


def _set_as_values(stmt: _Statement) -> str | None:
    """MySQL's ``INSERT INTO r SET a = x, b = y`` as ``(a, b) VALUES (x, y)``."""
    set_ = next((j for j, t in enumerate(stmt.toks) if t.type == "SET"), None)
    assignments = _assignments(stmt, set_ + 1) if set_ is not None else None
    if not assignments:
        return None
    columns = ", ".join(c for c, _, _ in assignments)
    values = ", ".join(_rebuilt(stmt, a, b) for _, a, b in assignments)
    return f"({columns}) VALUES ({values})"


def _shape_field(key: str, stmt: _Statement, found: _Found, context: dict[str, Any]) -> Any:
    """The context fields above, by name (None when the statement has no such shape)."""
    if key in ("inner_select", "outer_with_ids", "collapsed"):
        at = _subquery_at(stmt, found)
        if at is None:
            return None
        if key == "outer_with_ids":
            return _outer_with_ids(stmt, *at)
        if key == "collapsed":
            return _collapsed(stmt, *at)
        inner = _inner_select(stmt, *at)
        return None if inner is None else inner[0]
    if key == "other_resource":
        return _other_resource(stmt)
    if key == "plain_where":
        span = _where_in(stmt, 0, len(stmt.toks) - 1)
        return None if span is None else _condition(stmt, *span)[0]
    if key == "unqualified":
        return _unqualified(stmt)
    if key == "then_resource":
        fix = context.get("fix")
        done = _Statement(fix, tokenize(fix), 0).resource() if fix else None
        for name in (stmt.resource(), _other_resource(stmt)):
            if name is not None and name != done:
                return name
        return None
    if key in ("set_head", "left_where", "right_where"):
        operands = _set_operands(stmt, found)
        if operands is None:
            return None
        return operands[("set_head", "left_where", "right_where").index(key)]
    if key == "join_in":
        return _join_in(stmt)
    if key == "anti_join":
        return "" if _join_in(stmt) == "NOT IN" else None
    if key == "deck_join":
        pair = {stmt.resource(), _other_resource(stmt)}
        return "decks" if pair == {"cards", "decks"} else None
    if key == "upsert_update":
        return _upsert_update(stmt)
    if key == "set_as_values":
        return _set_as_values(stmt)
    if key == "before_where":
        where = next((t for t in stmt.toks if t.type == "WHERE"), None)
        return None if where is None else stmt.text[: where.start].rstrip()
    return None


def _unqualified(stmt: _Statement) -> str | None:
    """The statement without qualifiers (``c.reps`` → ``reps``) and without the alias its FROM
    (or UPDATE / INTO) gives the resource."""
    toks = stmt.toks
    return _rebuilt(stmt, 0, len(toks) - 1, _alias_positions(stmt)) if toks else None


def _alias_positions(stmt: _Statement) -> frozenset[int]:
    """The tokens of the alias a FROM (or UPDATE / INTO) gives its resource (``AS`` too)."""
    toks = stmt.toks
    skip: set[int] = set()
    for j, tok in enumerate(toks[:-1]):
        if tok.type in ("FROM", "UPDATE", "INTO") and toks[j + 1].type == "IDENT":
            k = j + 2
            if k < len(toks) and toks[k].type == "AS":
                skip.add(k)
                k += 1
            if k < len(toks) and toks[k].type == "IDENT" and toks[k].word not in _JOIN_WORDS:
                skip.add(k)
    return frozenset(skip)


_SHAPE_FIELDS = frozenset(
    {
        "inner_select",
        "outer_with_ids",
        "other_resource",
        "plain_where",
        "unqualified",
        "then_resource",
        "set_head",
        "left_where",
        "right_where",
        "upsert_update",
        "deck_join",
        "join_in",
        "anti_join",
        "collapsed",
        "set_as_values",
        "before_where",
    }
)


# Rendering -------------------------------------------------------------------------------------


class _Context(dict):
    """Template variables: the captures by position, plus names computed on first use."""

    def __init__(self, stmt: _Statement, found: _Found | None) -> None:
        super().__init__()
        self.stmt = stmt
        self.found = found

    def __missing__(self, key: str) -> Any:
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
        if key == "order_column":
            return stmt.order_column()
        if key == "from_order":
            return stmt.from_order()
        if found is None:
            return None
        if key in _SHAPE_FIELDS:
            return _shape_field(key, stmt, found, self)
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
            column = stmt.column_of_value(found.first)
            return habits.COLUMN_DEFAULTS.get(column) if column else None
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


def _format(template: str, found: _Found, stmt: _Statement, **extra: str) -> str | None:
    context = _Context(stmt, found)
    context.update(extra)
    whole = stmt.text[stmt.toks[found.first].start : stmt.toks[found.last].end]
    mapping = _Positional(found.captures, context, whole)
    try:
        return _ONE_UNIT.sub(r"'\1 \2'", _tidy(_format_map(template, mapping)))
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


_ONE_UNIT = re.compile(r"'([+-]?1) (minute|hour|day|week|month|year)s'")
_SPACES_OUTSIDE_STRINGS = re.compile(r"('(?:[^']|'')*')|[ \t]{2,}")


def _tidy(statement: str) -> str:
    """Runs of spaces left by removing tokens, collapsed (string literals kept as written)."""
    tidied = _SPACES_OUTSIDE_STRINGS.sub(lambda m: m.group(1) or " ", statement)
    return tidied.strip()


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
            statement = _with_condition(statement, condition)
            if statement is None:
                continue
            yield _Candidate(statement, statement, (0, len(statement)))
            continue
        if not fragment:  # a removal: the example is the statement without it
            yield _Candidate(statement, statement, (region_start, region_start + 1))
            continue
        yield _Candidate(statement, fragment, (region_start, region_start + len(fragment)))
    for template in habit.rewrite:
        statement = _format(template, found, stmt)
        if statement:
            statement = _tidy(statement)
            yield _Candidate(statement, statement, (0, len(statement)))


def _suggestion_candidate(stmt: _Statement, error: DslError, base: int) -> _Candidate | None:
    """The error's first suggestion written in place of the token it points at."""
    if not error.suggestions or error.offset is None:
        return None
    suggestion = error.suggestions[0]
    for tok in stmt.toks:
        inverse = habits.INVERSE_SYNONYMS.get(stmt.resource() or "", {})
        if tok.start == error.offset - base and tok.word in inverse:
            return None  # the nearest column runs the other way: explained, not substituted
        if tok.start != error.offset - base:
            continue
        if tok.word is None and tok.type != "STRING":
            return None
        # A value suggestion replaces a string literal as a string literal ('mid' → 'medium').
        written = _quote(suggestion) if tok.type == "STRING" else suggestion
        text = stmt.text[: tok.start] + written + stmt.text[tok.end :]
        return _Candidate(text, written, (tok.start, tok.start + len(written)))
    return None


# Checking rewrites ------------------------------------------------------------------------------


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
        for candidate in _candidates(stmt, found):
            fallback = fallback or candidate
            remaining = _check(candidate.statement, limits)
            if remaining is None:
                return candidate
            at = remaining.offset if remaining.offset is not None else -1
            if not candidate.region[0] <= at < candidate.region[1]:
                return candidate
    return _suggestion_candidate(stmt, error, base) or fallback


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


# The error -------------------------------------------------------------------------------------


def _first_found(stmt: _Statement, error: DslError, base: int) -> _Found | None:
    """The first row of ``_found_here``."""
    rows = _found_here(stmt, error, base)
    return rows[0] if rows else None


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


def teach(error: DslError, sql: str, limits: Limits = DEFAULT_LIMITS) -> DslError:
    """``error`` as the caller should read it: the habit it shows, named, with a fix.

    Never raises: explaining is best effort, and a failure here must not turn the caller's
    400 into a 500, so it is logged and the original error stands."""
    if error.reason not in _TEACHABLE or not isinstance(sql, str):
        return error
    _budget.deadline = time.monotonic() + _TEACHING_SECONDS
    try:
        taught = _teach(error, sql, limits)
        _budget.deadline = None  # the last check below must run whatever the time spent
        taught.hint = _verified_hint(taught.hint, limits)
        return taught
    except Exception:
        logger.exception("dsl.diagnostics could not explain %s", error.reason)
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
    reason, offset = _classified(error, habit, base + found.offset(stmt))
    # A validation error kept as it was keeps its message too (it names the column, its type
    # and what it holds); the row's own explanation goes first in the hint.
    kept = reason == error.reason and offset == error.offset and error.reason not in _PARSE_REASONS
    message = (
        error.base_message if kept else _format(habit.message, found, stmt) or error.base_message
    )
    advice = None
    rewrites = bool(habit.replace or habit.rewrite)
    if corrected is not None or fragment is not None or not rewrites:
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
    if kept and corrected is None and fragment is None:
        # Nothing better than what the validator said: keep its hint, and try its suggestion.
        return _with_correction(error, sql, stmt, base, limits)
    if kept and advice:
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
                return found, statement, candidate.fragment if held else statement
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
