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

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from ply import lex

from dsl import habits
from dsl.errors import DslError
from dsl.habits import Habit
from dsl.lexer import tokenize
from dsl.parser import DEFAULT_LIMITS, Limits, parse_batch
from dsl.resources import get_resource

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
_STOP_WHERE = frozenset({"GROUP", "ORDER", "LIMIT", "OFFSET", "RETURNING", "HAVING"})


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

    def clause_at(self, i: int) -> str | None:
        """The clause token ``i`` sits in: select, from, where, group, having, order, page, set,
        values, returning, into; parentheses the token is inside do not end the search."""
        depth = 0
        for j in range(i - 1, -1, -1):
            tok = self.toks[j]
            if tok.type in ("RPAREN", "RBRACKET"):
                depth += 1
            elif tok.type in ("LPAREN", "LBRACKET"):
                depth = max(0, depth - 1)
            if depth:
                continue
            if tok.type in _CLAUSE_OF_TOKEN:
                return _CLAUSE_OF_TOKEN[tok.type]
            if tok.type == "BY" and j > 0:
                return {"GROUP": "group", "ORDER": "order"}.get(self.toks[j - 1].type)
            if tok.word == "group" or tok.word == "order":
                return tok.word
        return None

    def resource(self) -> str | None:
        """The resource the statement names (after FROM, INTO, UPDATE, DESCRIBE), synonyms
        resolved, or None."""
        for j, tok in enumerate(self.toks[:-1]):
            if tok.type in ("FROM", "INTO", "UPDATE", "DESCRIBE") or (j == 0 and tok.type == "DESC"):
                name = self.toks[j + 1].word
                if name is not None:
                    return habits.resource_for(name)
        return None

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
        """The last column the ORDER BY names, else the resource's default order column."""
        for j, tok in enumerate(self.toks):
            if tok.type == "BY" and j > 0 and self.toks[j - 1].type == "ORDER":
                names = [t.word for t in self.toks[j + 1 :] if t.type == "IDENT" and t.word]
                if names:
                    return names[-1]
        name = self.resource()
        resource = get_resource(name) if name else None
        return resource.default_order[0][0] if resource else None

    def from_order(self) -> str | None:
        """The statement's text from ORDER BY on."""
        for tok in self.toks:
            if tok.type == "ORDER":
                return self.text[tok.start :]
        return None

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
        tail = self.text[self.toks[found.last].end :]
        text = f"{head}{tail}"
        shifted = _Statement(text, tokenize(text), 0)
        for j, tok in enumerate(shifted.toks):
            if tok.type == "WHERE":
                rest = shifted.where_text()
                if rest is None:
                    return None
                start = shifted.toks[j + 1].start
                return f"{text[:start]}({condition}) AND ({rest}){text[start + len(rest) :]}"
        for tok in shifted.toks:
            if tok.type in ("GROUP", "ORDER", "LIMIT", "OFFSET", "HAVING"):
                return f"{text[: tok.start].rstrip()} WHERE {condition} {text[tok.start :]}"
        return f"{text.rstrip()} WHERE {condition}"

    def named_resource(self) -> str | None:
        """A resource named as a value or an argument (catalog look-ups name their table so)."""
        for tok in self.toks:
            value = tok.value if tok.type == "STRING" else tok.word
            if isinstance(value, str):
                name = habits.resource_for(value.lower())
                if name is not None:
                    return name
        return None


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
    text = text.strip()
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
    """A bare column name (not a literal, not a call)."""
    if not re.fullmatch(r"[A-Za-z_]\w*", text.strip()):
        raise ValueError(text)
    return text.strip().lower()


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


def _underscores(text: str) -> str:
    count = int(_number(text)) + 1
    if not 0 < count <= 1000:
        raise ValueError(text)
    return "_" * count


def _cast_inner(text: str) -> str:
    match = re.fullmatch(r"(.+?)\s+as\s+\w+(\s*\([\d\s,]*\))?", text.strip(), re.IGNORECASE | re.DOTALL)
    if match is None:
        raise ValueError(text)
    return match.group(1)


def _search(text: str) -> str:
    """The text searched for, as a string literal for MATCH('...')."""
    match = re.search(r"'((?:[^']|'')*)'", text)
    if match is None:
        raise ValueError(text)
    inner = match.group(1).replace("''", "'").strip().strip("*")
    if not inner or any(c in inner for c in "&|!:<>()"):
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
    if element.startswith("'"):
        return _Capture(stmt, i, i) if tok.type == "STRING" and tok.text.lower() == element else None
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
    if tok.word is not None and tok.word in options:
        return _Capture(stmt, i, i)
    if tok.word is None and tok.type != "STRING" and tok.text.lower() in options:
        return _Capture(stmt, i, i)
    return None


def _match(stmt: _Statement, pattern: tuple[str, ...], i: int) -> list[_Capture] | None:
    captures: list[_Capture] = []
    at = i
    for element in pattern:
        if element.startswith("!") and len(element) > 1:
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


def _habits_in(stmt: _Statement) -> Iterator[_Found]:
    """Every habit row matching somewhere in the statement, in token order (row order within a
    token)."""
    for i in range(len(stmt.toks)):
        tok = stmt.toks[i]
        key = tok.word if tok.word is not None else tok.text.lower()
        rows = habits.rows_starting_with(key, tok.type)
        if not rows:
            continue
        clause = stmt.clause_at(i)
        for habit in rows:
            if habit.clauses is not None and clause not in habit.clauses:
                continue
            if habit.statements is not None and stmt.kind not in habit.statements:
                continue
            captures = _match(stmt, habit.match, i)
            if captures is None:
                continue
            last = max((c.last for c in captures), default=i)
            yield _Found(habit, captures, i, max(last, i))


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
        if key == "order_column":
            return stmt.order_column()
        if key == "from_order":
            return stmt.from_order()
        if found is None:
            return None
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
    for template in habit.replace:
        fragment = _format(template, found, stmt)
        if fragment is None:
            continue
        yield _Candidate(
            _spliced(stmt, found, fragment),
            fragment or None,
            (region_start, region_start + len(fragment)),
        )
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
        if tok.start == error.offset - base and tok.word is not None:
            text = stmt.text[: tok.start] + suggestion + stmt.text[tok.end :]
            return _Candidate(text, suggestion, (tok.start, tok.start + len(suggestion)))
    return None


# Checking rewrites ------------------------------------------------------------------------------


def _check(statement: str, limits: Limits) -> DslError | None:
    from dsl.validator import validate_batch  # the validator imports nothing of this module

    try:
        batch = parse_batch(statement, limits)
        if len(batch.statements) != 1:
            return DslError("not one statement", reason="syntax_error")
        validate_batch(batch, limits)
    except DslError as error:
        return error
    return None


def _next_candidate(statement: str, error: DslError) -> _Candidate | None:
    located = _failed_statement(statement, error)
    if located is None:
        return None
    stmt, base = located
    found = _first_found(stmt, error, base)
    if found is not None:
        for candidate in _candidates(stmt, found):
            return candidate
    return _suggestion_candidate(stmt, error, base)


def _settle(candidate: _Candidate, limits: Limits) -> tuple[str | None, bool]:
    """(a corrected statement that validates, or None; whether the candidate's own change held).

    The change holds when the first remaining error lies outside the rewritten region: the
    fragment is right, the caller just has another mistake elsewhere."""
    statement = candidate.statement
    error = _check(statement, limits)
    if error is None:
        return statement, True
    offset = error.offset if error.offset is not None else -1
    held = not (candidate.region[0] <= offset <= candidate.region[1])
    if not held:
        return None, False
    for _ in range(_CORRECTION_ROUNDS):
        nxt = _next_candidate(statement, error)
        if nxt is None:
            return None, True
        statement = nxt.statement
        error = _check(statement, limits)
        if error is None:
            return statement, True
    return None, True


# The error -------------------------------------------------------------------------------------


def _first_found(stmt: _Statement, error: DslError, base: int) -> _Found | None:
    """The habit to explain: the first foreign construct, unless the original error is about
    something specific earlier in the statement."""
    offset = None if error.offset is None else error.offset - base
    generic = error.reason == "syntax_error" and not error.suggestions
    for found in _habits_in(stmt):
        if not found.habit.when_reason or error.reason in found.habit.when_reason:
            at = found.offset(stmt)
            if offset is None or generic or at <= offset or found.habit.overrides:
                return found
            return None
    return None


def teach(error: DslError, sql: str, limits: Limits = DEFAULT_LIMITS) -> DslError:
    """``error`` as the caller should read it: the habit it shows, named, with a fix."""
    if error.reason not in _TEACHABLE or not isinstance(sql, str):
        return error
    located = _failed_statement(sql, error)
    if located is None:
        return error
    stmt, base = located
    found = _first_found(stmt, error, base)
    if found is None:
        return _with_correction(error, sql, stmt, base, limits)
    habit = found.habit
    corrected, fragment = None, None
    for candidate in _candidates(stmt, found):
        statement, held = _settle(candidate, limits)
        if statement is not None or held:
            corrected, fragment = statement, candidate.fragment
            break
    message = _format(habit.message, found, stmt) or error.base_message
    advice = None
    if corrected is not None or fragment is not None:
        advice = _format(habit.advice, found, stmt, fix=fragment or "")
    if advice is None:
        advice = _format(habit.fallback or habit.advice, found, stmt, fix="")
    first_step = corrected is not None and _is_read_before_write(stmt.kind, corrected)
    hint = _sentence(advice or error.hint, corrected, "read first" if first_step else "corrected")
    taught = DslError(
        message,
        reason=habit.reason or error.reason,
        offset=base + found.offset(stmt),
        hint=hint,
        suggestions=[s for s in (_format(x, found, stmt) for x in habit.suggest) if s],
        statement_index=error.statement_index,
    )
    taught.corrected_sql = None if first_step else _whole(sql, base, stmt, corrected)
    return taught


def _is_read_before_write(kind: str | None, corrected: str) -> bool:
    """A write that has no equivalent is answered with the read to run before it; that read is
    a first step, not the corrected statement."""
    return kind in ("insert", "update", "delete") and corrected.split(None, 1)[0].lower() == "select"


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


def _sentence(advice: str, corrected: str | None, label: str = "corrected") -> str:
    advice = advice.strip()
    if corrected is None or len(corrected) > _MAX_SHOWN_STATEMENT or corrected in advice:
        return advice if advice.endswith((".", "?", ")")) or not advice else advice + "."
    return f"{advice.rstrip('.')}; {label}: {corrected}"


def _whole(sql: str, base: int, stmt: _Statement, corrected: str | None) -> str | None:
    if corrected is None:
        return None
    return sql[:base] + corrected + sql[base + len(stmt.text) :]
