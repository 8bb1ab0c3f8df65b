"""Tokens of the dialect (dsl.md §3), built on ``ply.lex``.

``tokenize(sql)`` returns every token of the whole request, ``;`` included, each a PLY
``LexToken`` with two extra attributes: ``end`` (offset just past the token) and, for IDENT,
``quoted`` (it was written in double quotes) and ``spelling`` (the name before folding). Keyword and identifier values are folded to lower
case; STRING values have ``''`` unescaped; NUMBER values are exact ``Decimal``.

Lexing never raises: a character that cannot start a token becomes an ``ERROR`` token whose value
is a ``LexProblem``, so the parser can report the first problem of the statement it belongs to.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from ply import lex

_KEYWORD_WORDS = (
    "select",
    "distinct",
    "from",
    "where",
    "group",
    "by",
    "having",
    "order",
    "asc",
    "desc",
    "nulls",
    "limit",
    "offset",
    "as",
    "and",
    "or",
    "not",
    "in",
    "between",
    "is",
    "null",
    "true",
    "false",
    "like",
    "ilike",
    "overlap",
    "contains",
    "array",
    "current_timestamp",
    "current_date",
    "interval",
    "insert",
    "into",
    "values",
    "returning",
    "update",
    "set",
    "delete",
    "show",
    "describe",
    "unnest",
)
KEYWORDS: dict[str, str] = {word: word.upper() for word in _KEYWORD_WORDS}

PUNCTUATION: dict[str, str] = {
    "(": "LPAREN",
    ")": "RPAREN",
    "[": "LBRACKET",
    "]": "RBRACKET",
    ",": "COMMA",
    ";": "SEMI",
    ".": "DOT",
    "*": "TIMES",
    "+": "PLUS",
    "-": "MINUS",
}

COMPARISONS: dict[str, str] = {
    "=": "EQ",
    "!=": "NE",
    "<>": "NE",
    "<": "LT",
    "<=": "LE",
    ">": "GT",
    ">=": "GE",
}

TOKENS: tuple[str, ...] = (
    "IDENT",
    "STRING",
    "NUMBER",
    "ERROR",
    *sorted(set(KEYWORDS.values())),
    *sorted(set(PUNCTUATION.values())),
    *sorted(set(COMPARISONS.values())),
)

# ASCII whitespace plus the invisible spaces that pasted text tends to carry.
WHITESPACE = " \t\r\n\f\v\u00a0\u2002\u2003\u2009\u200b\u3000\ufeff"


_MAX_EXPONENT = 10_000


@dataclass(frozen=True, slots=True)
class LexProblem:
    reason: str
    message: str
    hint: str | None = None


_CHARACTER_PROBLEMS: tuple[tuple[str, LexProblem], ...] = (
    (
        "::",
        LexProblem(
            "unsupported_syntax",
            "Type casts (::) are not supported.",
            "Write the value as a literal of the column's type, e.g. due_at < '2026-03-05'.",
        ),
    ),
    (
        "&&",
        LexProblem(
            "unsupported_syntax",
            "The && operator is not supported.",
            "Use OVERLAP for arrays, e.g. tags OVERLAP ('english'), and AND to combine conditions.",
        ),
    ),
    (
        "@>",
        LexProblem(
            "unsupported_syntax",
            "The @> operator is not supported.",
            "Use CONTAINS for arrays, e.g. tags CONTAINS ('english', 'verbs').",
        ),
    ),
    (
        "||",
        LexProblem(
            "unsupported_syntax",
            "The || operator is not supported.",
            "Use OR to combine conditions; string concatenation is not part of the language.",
        ),
    ),
    (
        "?",
        LexProblem(
            "unsupported_syntax",
            "Query parameters (?) are not supported.",
            "Write the literal value into the statement, e.g. card_id = '123e4567-e89b-42d3-a456-426614174000'.",
        ),
    ),
    (
        "$",
        LexProblem(
            "unsupported_syntax",
            "Query parameters ($1) are not supported.",
            "Write the literal value into the statement, e.g. reps = 3.",
        ),
    ),
    (
        "`",
        LexProblem(
            "syntax_error",
            "Backticks are not part of the language.",
            "Write identifiers bare or in double quotes and strings in single quotes: front_text = 'Hola'.",
        ),
    ),
    (
        "!",
        LexProblem(
            "syntax_error", "Unexpected character '!'.", "Write != for not-equal and NOT to negate."
        ),
    ),
)

_SMART_QUOTES = "\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u2032\u2033"


class _Rules:
    """The PLY rule set; functions are tried in definition order, so longer forms come first."""

    tokens = TOKENS
    t_ignore = WHITESPACE

    def t_COMMENT(self, t: lex.LexToken) -> None:
        r"--[^\n]*|/\*[\s\S]*?\*/"

    def t_STRING(self, t: lex.LexToken) -> lex.LexToken:
        r"'(?:[^']|'')*'"
        t.value = t.value[1:-1].replace("''", "'")
        if "\x00" in t.value:
            t.type = "ERROR"
            t.value = LexProblem(
                "invalid_value",
                "String literals must not contain NUL characters.",
                "Remove the NUL (\\x00) characters from the string.",
            )
        return t

    def t_QUOTED_IDENT(self, t: lex.LexToken) -> lex.LexToken:
        r'"(?:[^"]|"")*"'
        t.type = "IDENT"
        t.spelling = t.value[1:-1].replace('""', '"')
        t.value = t.spelling.lower()
        t.quoted = True
        return t

    def t_NUMBER(self, t: lex.LexToken) -> lex.LexToken:
        r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
        try:
            value = Decimal(t.value)
        except InvalidOperation:
            value = None
        # Arithmetic on Decimals beyond the context's exponent range raises, so such literals stop
        # here; 1e400 still passes and gets a typed "out of range" error where it is used.
        if value is not None and -_MAX_EXPONENT <= value.adjusted() <= _MAX_EXPONENT:
            t.value = value
        else:
            t.type = "ERROR"
            t.value = LexProblem(
                "syntax_error",
                f"Number {t.value[:40]} is out of range.",
                "Use a number of ordinary size, e.g. 3 or 0.5.",
            )
        return t

    def t_IDENT(self, t: lex.LexToken) -> lex.LexToken:
        r"[^\W\d]\w*"
        t.spelling = t.value
        value = t.value.lower()
        t.type = KEYWORDS.get(value, "IDENT")
        t.value = value
        t.quoted = False
        return t

    # Operators and punctuation are plain string rules: PLY sets their type without a call.
    # (PLY tries function rules first, then string rules longest regex first, so "<=" and "<>"
    # are matched before "<".)
    t_LE = r"<="
    t_GE = r">="
    t_NE = r"<>|!="
    t_EQ = r"="
    t_LT = r"<"
    t_GT = r">"
    t_LPAREN = r"\("
    t_RPAREN = r"\)"
    t_LBRACKET = r"\["
    t_RBRACKET = r"\]"
    t_COMMA = r","
    t_SEMI = r";"
    t_DOT = r"\."
    t_TIMES = r"\*"
    t_PLUS = r"\+"
    t_MINUS = r"-"

    def t_error(self, t: lex.LexToken) -> lex.LexToken:
        problem, length = _problem_at(t.value)
        t.type = "ERROR"
        t.value = problem
        t.lexer.skip(length)
        return t


def _problem_at(rest: str) -> tuple[LexProblem, int]:
    """The problem at the start of ``rest`` and how many characters it spans.

    Unterminated literals swallow the rest of the input, as in PostgreSQL, so that nothing inside
    them is mistaken for further statements.
    """
    first = rest[0]
    if first == "'":
        return LexProblem(
            "syntax_error",
            "Unterminated string literal.",
            "Close the string with a single quote and write a quote inside it as '', e.g. 'it''s'.",
        ), len(rest)
    if first == '"':
        return LexProblem(
            "syntax_error",
            "Unterminated double-quoted identifier.",
            "Close the identifier with a double quote; strings take single quotes: front_text = 'Hola'.",
        ), len(rest)
    if rest.startswith("/*"):
        return LexProblem(
            "syntax_error", "Unterminated /* comment.", "Close the comment with */."
        ), len(rest)
    for prefix, problem in _CHARACTER_PROBLEMS:
        if rest.startswith(prefix):
            return problem, len(prefix)
    if first in _SMART_QUOTES:
        return LexProblem(
            "syntax_error",
            f"Unexpected typographic quote {first!r}.",
            "Use straight quotes: single quotes for strings ('Hola'), double quotes for identifiers.",
        ), 1
    return LexProblem(
        "syntax_error",
        f"Unexpected character {first!r} (U+{ord(first):04X}).",
        "Remove the character; strings go in single quotes, e.g. front_text = 'Hola'.",
    ), 1


_build_lock = threading.Lock()
_local = threading.local()


def _lexer() -> lex.Lexer:
    lexer = getattr(_local, "lexer", None)
    if lexer is None:
        with _build_lock:
            lexer = lex.lex(object=_Rules(), reflags=int(re.UNICODE), optimize=False, debug=False)
        _local.lexer = lexer
    return lexer


def tokenize(sql: str) -> list[lex.LexToken]:
    lexer = _lexer()
    lexer.input(sql)
    next_token = lexer.token
    tokens: list[lex.LexToken] = []
    append = tokens.append
    while (tok := next_token()) is not None:
        tok.end = lexer.lexpos
        append(tok)
    return tokens
