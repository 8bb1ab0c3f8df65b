"""The parser's errors (dsl.md §9.1): the rows of ``dsl.habits.parse_errors`` matched against one
statement's tokens, before the grammar runs (``check_tokens``) and where it stops
(``syntax_error``), each turned into the ``DslError`` the caller reads.

The knowledge is in those rows; what stays here is what a row cannot say: the limits and lexing
problems of the token stream, the look-up of joins, qualified names and unknown functions, and
the ``check`` functions named by rows that need the registry's synonyms or a spelling match.
``dsl.teaching`` may later enrich these errors with a habit and a corrected statement.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping

from ply import lex

from dsl import habits
from dsl.habits.parse_errors import (
    CONSTRUCTS,
    JOIN_MESSAGE,
    JOIN_QUALIFIERS,
    JOIN_WORDS,
    MISPLACED_CALL,
    MISPLACED_CALLS,
    QUALIFIED_JOIN_WORDS,
    SEVERAL_RESOURCES_MESSAGE,
    STATEMENT_WORDS,
    SYNTAX_RULES,
    TWO_STEP_HINT,
    UNSUPPORTED,
    Construct,
    SyntaxRule,
)
from dsl.language.errors import DslError, closest_names, did_you_mean
from dsl.language.functions import FUNCTION_LIST, FUNCTIONS
from dsl.language.lexer import KEYWORDS, LexProblem

STATEMENT_STARTS = frozenset({"SELECT", "INSERT", "UPDATE", "DELETE", "SHOW", "DESCRIBE", "DESC"})
_KEYWORD_KINDS = frozenset(KEYWORDS.values())

_TOKEN_NAMES = {
    "IDENT": "a name",
    "STRING": "a string",
    "NUMBER": "a number",
    "LPAREN": "'('",
    "RPAREN": "')'",
    "LBRACKET": "'['",
    "RBRACKET": "']'",
    "COMMA": "','",
    "TIMES": "'*'",
    "PLUS": "'+'",
    "MINUS": "'-'",
    "EQ": "'='",
    "NE": "'!='",
    "LT": "'<'",
    "LE": "'<='",
    "GT": "'>'",
    "GE": "'>='",
    "$end": "end of statement",
}
_CLAUSE_NAMES = {"GROUP": "GROUP BY", "ORDER": "ORDER BY"}
_VALUE_TOKENS = frozenset(
    {"STRING", "NUMBER", "TRUE", "FALSE", "NULL", "CURRENT_TIMESTAMP", "CURRENT_DATE", "ARRAY", "LBRACKET", "MINUS",
     "PLUS"}
)  # fmt: skip
_OPERATOR_TOKENS = frozenset(
    {"EQ", "NE", "LT", "LE", "GT", "GE", "IN", "BETWEEN", "IS", "LIKE", "ILIKE", "OVERLAP",
     "CONTAINS"}
)  # fmt: skip


def error(
    message: str,
    reason: str = "syntax_error",
    *,
    offset: int | None,
    hint: str | None = None,
    suggestions: list[str] | None = None,
) -> DslError:
    """A parse-time ``DslError`` (the grammar's own checks build theirs with it too)."""
    return DslError(message, reason=reason, offset=offset, hint=hint, suggestions=suggestions or ())


def unsupported(message: str, offset: int, hint: str | None = None) -> DslError:
    return error(message, UNSUPPORTED, offset=offset, hint=hint)


def describe(tok: lex.LexToken) -> str:
    """A token as an error names it: ``string 'x'``, ``number 3``, ``'name'``, ``'WHERE'``."""
    if tok.type == "STRING":
        text = tok.value if len(tok.value) <= 30 else tok.value[:27] + "..."
        return f"string '{text}'"
    if tok.type == "NUMBER":
        text = str(tok.value)
        return f"number {text if len(text) <= 40 else text[:37] + '...'}"
    if tok.type == "IDENT":
        return f"'{tok.value}'"
    return f"'{str(tok.value).upper() if tok.type in _KEYWORD_KINDS else tok.value}'"


# Before the grammar ------------------------------------------------------------------------------


# The rows by each spelling or kind their first element takes, in table order: one look-up per
# token.
_CONSTRUCTS_BY_KEY: dict[str, list[Construct]] = defaultdict(list)
for _row in CONSTRUCTS:
    for _key in _row.match[0].split("|"):
        _CONSTRUCTS_BY_KEY[_key].append(_row)


def check_tokens(tokens: list[lex.LexToken], max_nesting: int) -> None:
    """Reject, at the first offending token, what must not reach the grammar: lexing problems,
    nesting beyond the limit (before PLY builds anything deep) and well-known SQL that the
    language leaves out on purpose (``CONSTRUCTS``, joins, unknown functions)."""
    first = tokens[0]
    depth = 0
    has_from = False
    for i, tok in enumerate(tokens):
        kind = tok.type
        if kind == "ERROR":
            problem: LexProblem = tok.value
            raise error(problem.message, problem.reason, offset=tok.lexpos, hint=problem.hint)
        if i == 0:
            if kind not in STATEMENT_STARTS:
                raise statement_start_error(tok)
            continue  # a statement's first token is a keyword that starts it, nothing to check
        if kind == "LPAREN" or kind == "LBRACKET":
            depth += 1
            if depth > max_nesting:
                raise error(
                    f"Parentheses are nested more than {max_nesting} levels deep.",
                    "too_deep",
                    offset=tok.lexpos,
                )
        elif kind == "RPAREN" or kind == "RBRACKET":
            depth -= 1
            if depth < 0:
                raise error(
                    f"Unmatched '{tok.value}'.",
                    offset=tok.lexpos,
                    hint="Remove it or add the opening parenthesis it closes.",
                )
        elif kind == "DOT":
            raise _dot_error(tokens, i)
        elif kind == "IDENT":
            if not tok.quoted:
                _check_name(tokens, i)
        else:
            if kind == "FROM":
                has_from = True
            rows = _CONSTRUCTS_BY_KEY.get(kind)
            if rows:
                _check_constructs(rows, tokens, i)
    if first.type == "SELECT" and not has_from:
        raise _select_without_from(tokens)


def _check_name(tokens: list[lex.LexToken], i: int) -> None:
    """A name outside double quotes: a join's word, a construct's, or a call of an unknown
    function (in that order)."""
    tok = tokens[i]
    join = join_start(tokens, i)
    if join is not None:
        raise unsupported(JOIN_MESSAGE, join.lexpos, TWO_STEP_HINT)
    rows = _CONSTRUCTS_BY_KEY.get(tok.value)
    if rows:
        _check_constructs(rows, tokens, i)
    count = len(tokens)
    if (
        i + 1 < count
        and tokens[i + 1].type == "LPAREN"
        and tok.value not in FUNCTIONS
        and tokens[i - 1].type != "INTO"
        # EXISTS (SELECT …) and friends are reported as the subquery they hold.
        and not (i + 2 < count and tokens[i + 2].type == "SELECT")
    ):
        raise unknown_function(tok)


def _check_constructs(rows: list[Construct], tokens: list[lex.LexToken], i: int) -> None:
    for row in rows:
        if row.statement is not None and tokens[0].type != row.statement:
            continue
        if all(_element_matches(e, tokens, i + k) for k, e in enumerate(row.match) if k):
            raise unsupported(
                row.message.format(word=str(tokens[i].value).upper()), tokens[i].lexpos, row.hint
            )


def _element_matches(element: str, tokens: list[lex.LexToken], index: int) -> bool:
    """A later element of a construct's pattern: a kind, or a name of that spelling (in double
    quotes or not: ``CASE "when"`` is still a CASE)."""
    if index >= len(tokens):
        return False
    tok = tokens[index]
    options = element.split("|")
    if element.islower():
        return tok.type == "IDENT" and tok.value in options
    return tok.type in options


def join_start(tokens: list[lex.LexToken], i: int) -> lex.LexToken | None:
    """The first token of a join written at ``tokens[i]`` (``LEFT OUTER JOIN`` starts at
    LEFT, SQL Server's ``CROSS APPLY`` at CROSS, MySQL's ``STRAIGHT_JOIN``), or None."""
    tok = tokens[i]
    if tok.type != "IDENT" or tok.quoted:
        return None
    qualified_only = tok.value in QUALIFIED_JOIN_WORDS
    if not qualified_only and tok.value not in JOIN_WORDS:
        return None
    start = i
    while start > 0 and start > i - 2:
        before = tokens[start - 1]
        if before.type != "IDENT" or before.quoted or before.value not in JOIN_QUALIFIERS:
            break
        start -= 1
    if qualified_only and start == i:
        return None
    return tokens[start]


def _dot_error(tokens: list[lex.LexToken], i: int) -> DslError:
    tok = tokens[i]
    # `c.front_text ... JOIN ...`: the qualified name is only a symptom; the JOIN is what the
    # caller must change, so that is the error worth reporting.
    for k in range(i + 1, len(tokens)):
        join = join_start(tokens, k)
        if join is not None:
            return unsupported(JOIN_MESSAGE, join.lexpos, TWO_STEP_HINT)
    # `SELECT a.x, b.y FROM a, b`: likewise the second resource is the mistake, not `a.x`.
    for k in range(2, len(tokens)):
        if (
            tokens[k].type == "COMMA"
            and tokens[k - 1].type == "IDENT"
            and tokens[k - 2].type == "FROM"
        ):
            return unsupported(SEVERAL_RESOURCES_MESSAGE, tokens[k].lexpos, TWO_STEP_HINT)
    before = tokens[i - 1] if i > 0 else None
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    if (
        before is not None
        and before.type == "IDENT"
        and after is not None
        and after.type in ("IDENT", "TIMES")
    ):
        return unsupported(
            f"Qualified names ({before.value}.{after.value}) are not supported.",
            before.lexpos,
            f"Write the column name alone, e.g. {after.value if after.type == 'IDENT' else '*'}.",
        )
    return error(
        "Unexpected '.'.", offset=tok.lexpos, hint="Remove the '.'; numbers look like 0.5 or .5."
    )


def _select_without_from(tokens: list[lex.LexToken]) -> DslError:
    """A SELECT with no FROM: a misspelt FROM, a resource written without it, or neither."""
    for tok in tokens:
        if tok.type == "IDENT" and not tok.quoted and closest_names(tok.value, ["from"]):
            return error(
                f"Unexpected '{tok.value}'. Did you mean FROM?",
                offset=tok.lexpos,
                hint="Write e.g. SELECT * FROM cards.",
                suggestions=["FROM"],
            )
    for tok in tokens:
        resource = habits.resource_for(tok.value) if tok.type == "IDENT" else None
        if resource is not None and not tok.quoted:
            return error(
                f"SELECT needs FROM before the resource: found '{tok.value}' without it.",
                offset=tok.lexpos,
                hint=f"Write FROM {resource}, e.g. SELECT * FROM {resource}.",
                suggestions=[f"FROM {resource}"],
            )
    return unsupported(
        "SELECT without FROM is not supported.",
        tokens[0].lexpos,
        "Every SELECT reads one resource (SHOW TABLES lists them), e.g. SELECT * FROM cards LIMIT 10.",
    )


def statement_start_error(tok: lex.LexToken) -> DslError:
    """The error for a statement whose first token starts none of the language's statements."""
    word = tok.value if tok.type != "IDENT" or not tok.quoted else ""
    if (tok.type == "IDENT" and word) or tok.type in _KEYWORD_KINDS:
        for row in STATEMENT_WORDS:
            if word in row.words:
                return unsupported(row.message.format(word=word.upper()), tok.lexpos, row.hint)
    starts = ["select", "insert", "update", "delete", "show", "describe"]
    suggestions = [s.upper() for s in closest_names(word, starts)] if isinstance(word, str) else []
    return error(
        f"A statement cannot start with {describe(tok)}.{did_you_mean(suggestions)}",
        offset=tok.lexpos,
        hint="Statements start with SELECT, INSERT, UPDATE, DELETE, SHOW or DESCRIBE.",
        suggestions=suggestions,
    )


# Inside the grammar ------------------------------------------------------------------------------


def unknown_function(tok: lex.LexToken) -> DslError:
    """``name(...)`` where ``name`` is not one of the language's functions."""
    name = tok.value
    # Only near-misspellings: a looser match crosses kinds (getdate is not DATE, rank not RANDOM).
    suggestions = [s.upper() for s in closest_names(name, sorted(FUNCTIONS), cutoff=0.8)]
    return DslError(
        f"Function {name}() is not supported.{did_you_mean(suggestions)}",
        reason=UNSUPPORTED,
        offset=tok.lexpos,
        hint=f"The functions are {FUNCTION_LIST}.",
        suggestions=suggestions,
    )


def misplaced_call(name: str) -> tuple[str, str]:
    """Message and hint for a known function used where it means nothing."""
    if name in MISPLACED_CALLS:
        return MISPLACED_CALLS[name]
    message, hint = MISPLACED_CALL
    return message.format(name=name.upper()), hint


# Where the grammar stops -------------------------------------------------------------------------


class _Context:
    """The failing token, the two before it and the grammar's expected kinds, with the
    placeholders of ``SYNTAX_RULES`` computed when a template asks for them."""

    __slots__ = ("at", "before", "before2", "expected", "first")

    def __init__(
        self, at: lex.LexToken | None, tokens: list[lex.LexToken], expected: list[str]
    ) -> None:
        index = len(tokens) if at is None else next(i for i, t in enumerate(tokens) if t is at)
        self.at = at
        self.before = tokens[index - 1] if index >= 1 else None
        self.before2 = tokens[index - 2] if index >= 2 else None
        self.expected = expected
        self.first = tokens[0]

    def placeholder(self, name: str) -> str:
        at, before = self.at, self.before
        if name == "where":
            return "end of statement" if at is None else describe(at)
        if name == "value":
            return "" if at is None else str(at.value)
        if name == "before":
            return "" if before is None else str(before.value)
        if name == "keyword":
            return "" if before is None else str(before.value).upper()
        if name == "before_shown":
            return "" if before is None else describe(before)
        if name == "expected":
            return _expected_text(self.expected)
        if name == "expected_hint":
            return _expected_hint(self.expected)
        raise KeyError(name)


class _Placeholders(dict[str, str]):
    """A rule's own values (from its ``check``), then the context's, filled in on demand."""

    def __init__(self, context: _Context, values: Mapping[str, str]) -> None:
        super().__init__(values)
        self.context = context

    def __missing__(self, name: str) -> str:
        return self.context.placeholder(name)


def _matches(pattern: str, tok: lex.LexToken | None) -> bool:
    for option in pattern.split("|"):
        if option == "*":
            return True
        if tok is None:
            if option == "$end":
                return True
        elif (
            option == tok.type
            or option == "#token"
            or (tok.type == "IDENT" and option == ("#quoted" if tok.quoted else "#name"))
        ):
            return True
    return False


# What a rule's `check` finds: the row's own placeholders and the suggestions the error carries.
_Suggested = tuple[dict[str, str], list[str]]


def _misspelt_keyword(context: _Context) -> _Suggested | None:
    assert context.at is not None
    keywords = [t.lower() for t in context.expected if t in _KEYWORD_KINDS]
    close = closest_names(context.at.value, keywords)
    if not close:
        return None
    suggestions = [c.upper() for c in close]
    return {"did_you_mean": did_you_mean(suggestions), "suggestion": suggestions[0]}, suggestions


def _stray_word_before_resource(context: _Context) -> _Suggested | None:
    # `FROM DEFAULT cards`: the word before the resource is the stray one.
    assert context.at is not None and context.before is not None
    at = context.at
    following = habits.resource_for(at.value) if at.type == "IDENT" else None
    if habits.resource_for(context.before.value) is not None or following is None:
        return None
    return {"resource": following}, []


def _table_alias(context: _Context) -> _Suggested | None:
    assert context.before is not None
    return {"resource": habits.resource_for(context.before.value) or "cards"}, []


# A row's `check` by name: None when the row does not apply after all.
_CHECKS: dict[str, Callable[[_Context], _Suggested | None]] = {
    "misspelt_keyword": _misspelt_keyword,
    "stray_word_before_resource": _stray_word_before_resource,
    "table_alias": _table_alias,
}


def syntax_rule(
    at: lex.LexToken | None, tokens: list[lex.LexToken], expected: list[str]
) -> tuple[SyntaxRule, _Context, _Suggested]:
    """The first row of ``SYNTAX_RULES`` that fits where the grammar stopped, with what its
    templates need (the last row fits everywhere)."""
    context = _Context(at, tokens, expected)
    for rule in SYNTAX_RULES:
        if not (
            _matches(rule.at, at)
            and _matches(rule.before, context.before)
            and _matches(rule.before2, context.before2)
        ):
            continue
        if rule.statement is not None and context.first.type != rule.statement:
            continue
        found: _Suggested | None = ({}, [])
        if rule.check is not None:
            found = _CHECKS[rule.check](context)
        if found is not None:
            return rule, context, found
    raise AssertionError("the last syntax rule matches every token")


def syntax_error(
    at: lex.LexToken | None, tokens: list[lex.LexToken], end_offset: int, expected: list[str]
) -> DslError:
    """What ``p_error`` raises: the grammar stopped at ``at`` (None: at the end of the
    statement, which ends at ``end_offset``) and accepts the token kinds ``expected`` there."""
    rule, context, (values, suggestions) = syntax_rule(at, tokens, expected)
    if rule.point == "before" and context.before is not None:
        offset = context.before.lexpos
    else:
        offset = end_offset if at is None else at.lexpos
    placeholders = _Placeholders(context, values)
    return error(
        rule.message.format_map(placeholders),
        rule.reason,
        offset=offset,
        hint=rule.hint.format_map(placeholders),
        suggestions=suggestions,
    )


def _expected_text(expected: list[str]) -> str:
    names = [_TOKEN_NAMES.get(t, t) for t in expected if t != "error"]
    if not names or len(names) > 6:
        return ""
    if len(names) == 1:
        return f" Expected {names[0]}."
    return f" Expected {', '.join(names[:-1])} or {names[-1]}."


def _expected_hint(expected: list[str]) -> str:
    """What the grammar accepts at the point of failure, for a hint (dsl.md §9.1: when nothing
    specific is known, say what is allowed there rather than show a fixed example)."""
    names: list[str] = []
    kinds = set(expected) - {"error"}
    if kinds & _VALUE_TOKENS:
        names.append("a value ('text', 3, TRUE, NULL, NOW())")
    if kinds & _OPERATOR_TOKENS:
        shown = [_TOKEN_NAMES.get(k, k).strip("'") for k in sorted(kinds & _OPERATOR_TOKENS)]
        names.append(f"an operator ({', '.join(shown)})")
    for kind in sorted(kinds - _VALUE_TOKENS - _OPERATOR_TOKENS):
        if kind in _KEYWORD_KINDS:
            names.append(_CLAUSE_NAMES.get(kind, kind))
        else:
            names.append(_TOKEN_NAMES.get(kind, kind))
    if not names:
        return "Check the statement against the grammar page (docs.grammarUrl)."
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return f"At this point the grammar accepts {listed}."
