"""The failed statement as tokens, with the context a habit template may use: its clauses, resource, WHERE text, select items and INSERT rows."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ply import lex

from dsl import habits
from dsl.language.errors import DslError
from dsl.language.lexer import tokenize
from dsl.schema import get_resource

if TYPE_CHECKING:
    from dsl.teaching.matching import _Found


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
    """The text of each top-level argument between two brackets."""
    toks = stmt.toks
    return [stmt.text[toks[a].start : toks[b].end] for a, b in _spans(toks, open_, close)]


_ONE_UNIT = re.compile(r"'([+-]?1) (minute|hour|day|week|month|year)s'")


_SPACES_OUTSIDE_STRINGS = re.compile(r"('(?:[^']|'')*')|[ \t]{2,}")


def _tidy(statement: str) -> str:
    """Runs of spaces left by removing tokens, collapsed (string literals kept as written)."""
    tidied = _SPACES_OUTSIDE_STRINGS.sub(lambda m: m.group(1) or " ", statement)
    return tidied.strip()
