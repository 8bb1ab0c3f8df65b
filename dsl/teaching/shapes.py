"""Statements rebuilt from the caller's own: the two-step recipes for joins and subqueries, set operations, upserts, date ranges and other context fields of habit templates; each result is verified like every rewrite."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from dsl import habits
from dsl.language.lexer import tokenize
from dsl.language.literals import parse_interval
from dsl.language.plan import RelativeNow
from dsl.teaching.filters import _list, _number, _quote, _regex_like, _unquote
from dsl.teaching.matching import _Found
from dsl.teaching.statement import (
    _COMPARISON_TYPES,
    _STOP_WHERE,
    _arguments,
    _balanced_end,
    _Statement,
    _tidy,
    _Tok,
)
from flashcards.services.timestamps import parse_timestamp


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
    moment = parse_timestamp(_unquote(found.captures[0].text))
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
