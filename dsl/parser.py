"""Parser of the dialect (dsl.md §3-§4, §6, §8), built on ``ply.yacc``.

Public entry: ``parse_batch(sql) -> ast.Batch``. It lexes the whole request once, splits the
tokens into statements on ``;``, checks each statement's token stream for the limits and for the
SQL that is deliberately not part of the language (so those get a precise ``unsupported_syntax``
instead of a generic syntax error), then runs the LALR parser on it. Every failure is a
``DslError``; no input makes this module raise anything else or recurse.

Generated tables are never written (``write_tables=False``, ``debug=False``); the parser and the
lexer are built once per thread because PLY parsers keep their stacks on the instance.
"""

from __future__ import annotations

import functools
import re
import threading
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ply import lex, yacc

from dsl import ast, habits
from dsl.errors import DslError, closest_names, did_you_mean
from dsl.lexer import KEYWORDS, TOKENS, LexProblem, tokenize


@dataclass(frozen=True, slots=True)
class Limits:
    """The parse- and validation-time limits of dsl.md §8 (the executor's settings override them)."""

    max_sql_bytes: int = 65_536
    max_statements: int = 50
    max_nesting: int = 32
    max_predicates: int = 500
    max_list_values: int = 1_000
    max_insert_rows: int = 100


DEFAULT_LIMITS = Limits()

MAX_PAGE_NUMBER = 2**63 - 1

AGGREGATES = frozenset({"count", "sum", "avg", "min", "max"})
SCALAR_FUNCTIONS = frozenset({"date", "lower", "upper"})
FUNCTIONS = AGGREGATES | SCALAR_FUNCTIONS | {"now", "random", "match", "any"}
_FUNCTION_LIST = (
    "COUNT, SUM, AVG, MIN, MAX, DATE, LOWER, UPPER, NOW, RANDOM (in ORDER BY), MATCH and ANY"
)

JOIN_MESSAGE = (
    "JOIN is not supported: query one resource at a time, e.g. SELECT card_id FROM review_events "
    "WHERE rating = 0, then SELECT * FROM cards WHERE card_id IN (...)"
)
SEVERAL_RESOURCES_MESSAGE = (
    "Selecting from several resources (FROM a, b) is not supported: query one resource at a "
    "time, e.g. SELECT card_id FROM review_events WHERE rating = 0, then SELECT * FROM cards "
    "WHERE card_id IN (...)"
)
_TWO_STEP_HINT = (
    "Run two statements: first SELECT card_id FROM review_events WHERE rating = 0, "
    "then SELECT * FROM cards WHERE card_id IN ('<id>', ...)."
)

_STATEMENT_STARTS = frozenset({"SELECT", "INSERT", "UPDATE", "DELETE", "SHOW", "DESCRIBE", "DESC"})
_JOIN_QUALIFIERS = frozenset({"left", "right", "inner", "outer", "full", "cross", "natural"})
_DDL = frozenset({"create", "drop", "alter", "truncate", "rename"})
_TRANSACTION = frozenset(
    {"begin", "commit", "rollback", "start", "savepoint", "release", "end", "abort"}
)
_PERMISSIONS = frozenset({"grant", "revoke"})
_OTHER_COMMANDS = frozenset(
    {"explain", "analyze", "vacuum", "pragma", "attach", "detach", "copy", "call", "merge",
     "upsert", "replace", "lock", "reindex", "prepare", "execute", "deallocate", "reset", "use"}
)  # fmt: skip

_CALL_EXAMPLES = {
    "count": "COUNT(*)",
    "sum": "SUM(reps)",
    "avg": "AVG(reps)",
    "min": "MIN(due_at)",
    "max": "MAX(due_at)",
    "date": "DATE(created_at)",
    "lower": "LOWER(front_text) = 'hola'",
    "upper": "UPPER(front_text) = 'HOLA'",
}

_COMPARISON_OPS = {"EQ": "=", "NE": "!=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}

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

PARSER_TOKENS: tuple[str, ...] = tuple(t for t in TOKENS if t not in {"ERROR", "SEMI", "DOT"})


def _error(
    message: str,
    reason: str = "syntax_error",
    *,
    offset: int | None,
    hint: str | None = None,
    suggestions: list[str] | None = None,
) -> DslError:
    return DslError(message, reason=reason, offset=offset, hint=hint, suggestions=suggestions or ())


def _unsupported(message: str, offset: int, hint: str | None = None) -> DslError:
    return _error(message, "unsupported_syntax", offset=offset, hint=hint)


# Intermediate parse values -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Call:
    """``name(arg)`` before the surrounding rule decides what the call means there."""

    name: str
    arg: ast.ColumnRef | ast.Star | ast.StringLit | ast.NumberLit | None
    distinct: bool
    span: ast.Span


@dataclass(frozen=True, slots=True)
class _Random:
    span: ast.Span


class _Feed:
    """Hands one statement's tokens to PLY and keeps what ``p_error`` needs for its message.

    ``token`` (what PLY calls for the next token, None at the end) is ``next`` over the list,
    called from C: the parser asks once per token."""

    __slots__ = ("end_offset", "predicates", "token", "tokens")

    def __init__(self, tokens: list[lex.LexToken], end_offset: int) -> None:
        self.tokens = tokens
        self.token = functools.partial(next, iter(tokens), None)
        self.end_offset = end_offset
        self.predicates = 0

    def before(self, lookahead: lex.LexToken | None, back: int) -> lex.LexToken | None:
        """The token ``back`` places before ``lookahead`` (1 = the one just before it); a None
        lookahead is the end of the statement."""
        if lookahead is None:
            index = len(self.tokens) - back
        else:
            index = next(i for i, tok in enumerate(self.tokens) if tok is lookahead) - back
        return self.tokens[index] if 0 <= index < len(self.tokens) else None


def _end(p: yacc.YaccProduction, i: int) -> int:
    sym = p.slice[i]
    return sym.end if isinstance(sym, lex.LexToken) else sym.value.span[1]


def _tok_span(p: yacc.YaccProduction, i: int) -> ast.Span:
    tok = p.slice[i]
    return (tok.lexpos, tok.end)


class _Grammar:
    """The LALR grammar: one production per method, no logic beyond building nodes and checks
    that need no schema."""

    tokens = PARSER_TOKENS
    start = "statement"
    precedence = (
        ("left", "OR"),
        ("left", "AND"),
        ("right", "NOT"),
    )

    def __init__(self) -> None:
        self.feed = _Feed([], 0)
        self.limits = DEFAULT_LIMITS
        self.lr: yacc.LRParser | None = None

    # Statements ------------------------------------------------------------------------------

    def p_statement(self, p: yacc.YaccProduction) -> None:
        """statement : select
        | insert
        | update
        | delete
        | show
        | describe"""
        p[0] = p[1]

    def p_show(self, p: yacc.YaccProduction) -> None:
        """show : SHOW IDENT
        | SHOW IDENT LIKE STRING"""
        word = p[2]
        if word == "columns":
            raise _error(
                "SHOW COLUMNS needs FROM <resource>.",
                offset=p.slice[2].end,
                hint="Write SHOW COLUMNS FROM cards (or DESCRIBE cards).",
            )
        if word != "tables":
            raise _error(
                f"SHOW {word.upper()} is not a statement; SHOW takes TABLES or COLUMNS FROM <resource>.",
                offset=p.slice[2].lexpos,
                hint="Write SHOW TABLES or SHOW COLUMNS FROM cards.",
            )
        like = p[4] if len(p) == 5 else None
        p[0] = ast.ShowTables(like, span=self._statement_span())

    def p_show_columns(self, p: yacc.YaccProduction) -> None:
        """show : SHOW IDENT FROM IDENT"""
        if p[2] != "columns":
            raise _error(
                f"SHOW {p[2].upper()} FROM is not a statement.",
                offset=p.slice[2].lexpos,
                hint="Write SHOW COLUMNS FROM cards (or DESCRIBE cards).",
            )
        p[0] = ast.Describe(p[4], span=self._statement_span(), resource_span=_tok_span(p, 4))

    def p_describe(self, p: yacc.YaccProduction) -> None:
        """describe : DESCRIBE IDENT
        | DESC IDENT"""
        p[0] = ast.Describe(p[2], span=self._statement_span(), resource_span=_tok_span(p, 2))

    def p_select(self, p: yacc.YaccProduction) -> None:
        """select : SELECT distinct select_list FROM IDENT unnest where group_by having order_by page"""
        unnest_alias, unnest_column = p[6] or (None, None)
        order_items, order_random = p[10] or ((), False)
        limit, offset = p[11] or (None, None)
        p[0] = ast.Select(
            distinct=p[2],
            items=p[3],
            resource=p[5],
            unnest_alias=unnest_alias,
            unnest_column=unnest_column,
            where=p[7],
            group_by=p[8] or (),
            having=p[9],
            order_by=order_items,
            order_random=order_random,
            limit=limit,
            offset=offset,
            span=self._statement_span(),
            resource_span=_tok_span(p, 5),
        )

    def p_distinct(self, p: yacc.YaccProduction) -> None:
        """distinct : DISTINCT
        |"""
        p[0] = len(p) == 2

    def p_select_list_star(self, p: yacc.YaccProduction) -> None:
        """select_list : TIMES"""
        p[0] = (ast.SelectItem(ast.Star(span=_tok_span(p, 1)), span=_tok_span(p, 1)),)

    def p_select_list(self, p: yacc.YaccProduction) -> None:
        """select_list : select_items"""
        p[0] = tuple(p[1])

    def p_select_items(self, p: yacc.YaccProduction) -> None:
        """select_items : select_items COMMA select_item
        | select_item"""
        if len(p) == 2:
            p[0] = [p[1]]
        else:
            p[1].append(p[3])
            p[0] = p[1]

    def p_select_item(self, p: yacc.YaccProduction) -> None:
        """select_item : expr
        | expr IDENT
        | expr AS IDENT"""
        expr = self._operand(p[1], "a select item")
        alias = p[len(p) - 1] if len(p) > 2 else None
        p[0] = ast.SelectItem(
            expr, alias, alias_without_as=len(p) == 3, span=(expr.span[0], _end(p, len(p) - 1))
        )

    def p_unnest(self, p: yacc.YaccProduction) -> None:
        """unnest : UNNEST IDENT AS IDENT
        |"""
        if len(p) == 1:
            p[0] = None
        else:
            column = ast.ColumnRef(p[2], p.slice[2].quoted, span=_tok_span(p, 2))
            p[0] = (p[4], column)

    def p_where(self, p: yacc.YaccProduction) -> None:
        """where : WHERE condition
        |"""
        p[0] = p[2] if len(p) == 3 else None

    def p_group_by(self, p: yacc.YaccProduction) -> None:
        """group_by : GROUP BY group_items
        |"""
        p[0] = tuple(p[3]) if len(p) == 4 else None

    def p_group_items(self, p: yacc.YaccProduction) -> None:
        """group_items : group_items COMMA group_item
        | group_item"""
        if len(p) == 2:
            p[0] = [p[1]]
        else:
            p[1].append(p[3])
            p[0] = p[1]

    def p_group_item(self, p: yacc.YaccProduction) -> None:
        """group_item : expr"""
        p[0] = self._operand(p[1], "a GROUP BY item")

    def p_group_item_position(self, p: yacc.YaccProduction) -> None:
        """group_item : NUMBER"""
        raise _unsupported(
            f"GROUP BY {p.slice[1].value} (a position) is not supported.",
            p.slice[1].lexpos,
            "Name the column, alias or DATE(column) instead, e.g. GROUP BY tag.",
        )

    def p_having(self, p: yacc.YaccProduction) -> None:
        """having : HAVING condition
        |"""
        p[0] = p[2] if len(p) == 3 else None

    def p_order_by(self, p: yacc.YaccProduction) -> None:
        """order_by : ORDER BY order_items
        |"""
        if len(p) == 1:
            p[0] = None
            return
        items = p[3]
        randoms = [item for item in items if isinstance(item, _Random)]
        if not randoms:
            p[0] = (tuple(items), False)
        elif len(items) == 1:
            p[0] = ((), True)
        else:
            raise _error(
                "ORDER BY RANDOM() must stand alone.",
                offset=randoms[0].span[0],
                hint="Write ORDER BY RANDOM() without other sort keys.",
            )

    def p_order_items(self, p: yacc.YaccProduction) -> None:
        """order_items : order_items COMMA order_item
        | order_item"""
        if len(p) == 2:
            p[0] = [p[1]]
        else:
            p[1].append(p[3])
            p[0] = p[1]

    def p_order_item(self, p: yacc.YaccProduction) -> None:
        """order_item : expr direction nulls_order"""
        expr = p[1]
        if isinstance(expr, _Random):
            p[0] = expr
            return
        descending, direction_end = p[2] or (False, expr.span[1])
        nulls_first, nulls_end = p[3] or (None, direction_end)
        p[0] = ast.OrderItem(expr, descending, nulls_first, span=(expr.span[0], nulls_end))

    def p_order_item_position(self, p: yacc.YaccProduction) -> None:
        """order_item : NUMBER direction nulls_order"""
        raise _unsupported(
            f"ORDER BY {p.slice[1].value} (a position) is not supported.",
            p.slice[1].lexpos,
            "Name the column or alias to sort by, e.g. ORDER BY created_at DESC.",
        )

    def p_direction(self, p: yacc.YaccProduction) -> None:
        """direction : ASC
        | DESC
        |"""
        p[0] = None if len(p) == 1 else (p.slice[1].type == "DESC", p.slice[1].end)

    def p_nulls_order(self, p: yacc.YaccProduction) -> None:
        """nulls_order : NULLS IDENT
        |"""
        if len(p) == 1:
            p[0] = None
        elif p[2] in ("first", "last"):
            p[0] = (p[2] == "first", p.slice[2].end)
        else:
            raise _error(
                f"NULLS takes FIRST or LAST, not {p[2]}.",
                offset=p.slice[2].lexpos,
                hint="Write NULLS FIRST or NULLS LAST, e.g. ORDER BY due_at ASC NULLS LAST.",
            )

    def p_page(self, p: yacc.YaccProduction) -> None:
        """page : LIMIT number
        | OFFSET number
        | LIMIT number OFFSET number
        | OFFSET number LIMIT number
        |"""
        if len(p) == 1:
            p[0] = None
            return
        values: dict[str, int] = {}
        for i in range(1, len(p), 2):
            keyword = p.slice[i].type
            values[keyword] = self._page_number(p[i + 1], keyword)
        p[0] = (values.get("LIMIT"), values.get("OFFSET"))

    def p_insert(self, p: yacc.YaccProduction) -> None:
        """insert : INSERT INTO IDENT LPAREN column_list RPAREN VALUES rows returning"""
        p[0] = ast.Insert(
            p[3],
            tuple(p[5]),
            tuple(p[8]),
            p[9],
            span=self._statement_span(),
            resource_span=_tok_span(p, 3),
        )

    def p_column_list(self, p: yacc.YaccProduction) -> None:
        """column_list : column_list COMMA IDENT
        | IDENT"""
        i = len(p) - 1
        column = ast.ColumnRef(p[i], p.slice[i].quoted, span=_tok_span(p, i))
        if len(p) == 2:
            p[0] = [column]
        else:
            p[1].append(column)
            p[0] = p[1]

    def p_rows(self, p: yacc.YaccProduction) -> None:
        """rows : rows COMMA row
        | row"""
        if len(p) == 2:
            p[0] = [p[1]]
        else:
            p[1].append(p[3])
            p[0] = p[1]

    def p_row(self, p: yacc.YaccProduction) -> None:
        """row : LPAREN value_list RPAREN"""
        p[0] = ast.Row(tuple(p[2]), span=(p.slice[1].lexpos, p.slice[3].end))

    def p_returning(self, p: yacc.YaccProduction) -> None:
        """returning : RETURNING TIMES
        | RETURNING column_list
        |"""
        if len(p) == 1:
            p[0] = None
        elif p.slice[2].type == "TIMES":
            p[0] = (ast.Star(span=_tok_span(p, 2)),)
        else:
            p[0] = tuple(p[2])

    def p_update(self, p: yacc.YaccProduction) -> None:
        """update : UPDATE IDENT SET assignments where returning"""
        p[0] = ast.Update(
            p[2],
            tuple(p[4]),
            p[5],
            p[6],
            span=self._statement_span(),
            resource_span=_tok_span(p, 2),
        )

    def p_assignments(self, p: yacc.YaccProduction) -> None:
        """assignments : assignments COMMA assignment
        | assignment"""
        if len(p) == 2:
            p[0] = [p[1]]
        else:
            p[1].append(p[3])
            p[0] = p[1]

    def p_assignment(self, p: yacc.YaccProduction) -> None:
        """assignment : IDENT EQ value"""
        column = ast.ColumnRef(p[1], p.slice[1].quoted, span=_tok_span(p, 1))
        p[0] = ast.Assignment(column, p[3], span=(p.slice[1].lexpos, p[3].span[1]))

    def p_delete(self, p: yacc.YaccProduction) -> None:
        """delete : DELETE FROM IDENT where returning"""
        p[0] = ast.Delete(
            p[3],
            p[4],
            p[5],
            span=self._statement_span(),
            resource_span=_tok_span(p, 3),
        )

    # Conditions ------------------------------------------------------------------------------

    def p_condition_or(self, p: yacc.YaccProduction) -> None:
        """condition : condition OR condition"""
        p[0] = _join(ast.Or, p[1], p[3])

    def p_condition_and(self, p: yacc.YaccProduction) -> None:
        """condition : condition AND condition"""
        p[0] = _join(ast.And, p[1], p[3])

    def p_condition_not(self, p: yacc.YaccProduction) -> None:
        """condition : NOT condition"""
        p[0] = ast.Not(p[2], span=(p.slice[1].lexpos, p[2].span[1]))

    def p_condition_group(self, p: yacc.YaccProduction) -> None:
        """condition : LPAREN condition RPAREN"""
        p[0] = p[2]

    def p_condition_predicate(self, p: yacc.YaccProduction) -> None:
        """condition : predicate"""
        self.feed.predicates += 1
        if self.feed.predicates > self.limits.max_predicates:
            raise _error(
                f"The statement has more than {self.limits.max_predicates} predicates.",
                "too_complex",
                offset=p[1].span[0],
            )
        p[0] = p[1]

    def p_predicate_comparison(self, p: yacc.YaccProduction) -> None:
        """predicate : expr EQ value
        | expr NE value
        | expr LT value
        | expr LE value
        | expr GT value
        | expr GE value"""
        left = self._operand(p[1], "a condition")
        right = p[3]
        span = (left.span[0], right.span[1])
        op = _COMPARISON_OPS[p.slice[2].type]
        if op == "=" and isinstance(right, ast.ArrayLit):
            p[0] = ast.ArrayEquals(left, right, span=span)
        else:
            p[0] = ast.Comparison(op, left, right, span=span)

    def p_predicate_in(self, p: yacc.YaccProduction) -> None:
        """predicate : expr IN LPAREN value_list RPAREN
        | expr NOT IN LPAREN value_list RPAREN"""
        left = self._operand(p[1], "a condition")
        negated = len(p) == 7
        values = p[len(p) - 2]
        self._check_list_length(values)
        p[0] = ast.In(left, tuple(values), negated, span=(left.span[0], _end(p, len(p) - 1)))

    def p_predicate_between(self, p: yacc.YaccProduction) -> None:
        """predicate : expr BETWEEN value AND value
        | expr NOT BETWEEN value AND value"""
        left = self._operand(p[1], "a condition")
        negated = len(p) == 7
        low, high = p[len(p) - 3], p[len(p) - 1]
        p[0] = ast.Between(left, low, high, negated, span=(left.span[0], high.span[1]))

    def p_predicate_is_null(self, p: yacc.YaccProduction) -> None:
        """predicate : expr IS NULL
        | expr IS NOT NULL"""
        left = self._operand(p[1], "a condition")
        p[0] = ast.IsNull(left, len(p) == 5, span=(left.span[0], _end(p, len(p) - 1)))

    def p_predicate_like(self, p: yacc.YaccProduction) -> None:
        """predicate : expr LIKE value
        | expr ILIKE value
        | expr NOT LIKE value
        | expr NOT ILIKE value"""
        left = self._operand(p[1], "a condition")
        negated = len(p) == 5
        insensitive = p.slice[len(p) - 2].type == "ILIKE"
        pattern = p[len(p) - 1]
        p[0] = ast.Like(left, pattern, negated, insensitive, span=(left.span[0], pattern.span[1]))

    def p_predicate_overlap(self, p: yacc.YaccProduction) -> None:
        """predicate : expr OVERLAP value"""
        left = self._operand(p[1], "a condition")
        p[0] = ast.Overlap(left, p[3], span=(left.span[0], p[3].span[1]))

    def p_predicate_contains(self, p: yacc.YaccProduction) -> None:
        """predicate : expr CONTAINS value"""
        left = self._operand(p[1], "a condition")
        p[0] = ast.Contains(left, p[3], span=(left.span[0], p[3].span[1]))

    def p_predicate_any(self, p: yacc.YaccProduction) -> None:
        """predicate : STRING EQ func_call"""
        call: _Call = p[3]
        value = ast.StringLit(p[1], span=_tok_span(p, 1))
        if call.name != "any" or not isinstance(call.arg, ast.ColumnRef):
            raise _error(
                "A string on the left of = must be compared with ANY(array_column).",
                offset=call.span[0],
                hint="Write 'english' = ANY(tags), or put the column on the left: front_text = 'Hola'.",
            )
        p[0] = ast.Any(value, call.arg, span=(value.span[0], call.span[1]))

    def p_predicate_match(self, p: yacc.YaccProduction) -> None:
        """predicate : func_call"""
        call: _Call = p[1]
        if call.name != "match":
            raise _error(
                f"{call.name.upper()}(...) is not a condition on its own.",
                offset=call.span[1],
                hint="Compare it with a value, e.g. LOWER(front_text) = 'hola', or use MATCH('text').",
            )
        text = call.arg
        if isinstance(text, ast.ColumnRef) and text.quoted:
            raise _error(
                f'MATCH takes a string in single quotes, not the double-quoted "{text.spelling}".',
                "type_mismatch",
                offset=text.span[0],
                hint=f"Strings take single quotes: MATCH('{text.spelling}').",
            )
        if not isinstance(text, ast.StringLit):
            raise _error(
                "MATCH takes one string literal.",
                "type_mismatch",
                offset=call.span[0],
                hint="Write MATCH('text to find').",
            )
        p[0] = ast.Match(text, span=call.span)

    # Expressions and values ------------------------------------------------------------------

    def p_expr_column(self, p: yacc.YaccProduction) -> None:
        """expr : IDENT"""
        tok = p.slice[1]
        p[0] = ast.ColumnRef(tok.value, tok.quoted, tok.spelling, span=_tok_span(p, 1))

    def p_expr_call(self, p: yacc.YaccProduction) -> None:
        """expr : func_call"""
        call: _Call = p[1]
        name, arg = call.name, call.arg
        if name == "random" and arg is None:
            p[0] = _Random(call.span)
            return
        if name in ("now", "match", "any", "random"):
            message, hint = _misplaced_call(call)
            raise _error(message, offset=call.span[0], hint=hint)
        if name == "count" and isinstance(arg, ast.NumberLit):
            raise _unsupported(
                f"COUNT({arg.value}) is not supported.",
                call.span[0],
                "Write COUNT(*) to count rows.",
            )
        star_ok = name == "count" and not call.distinct
        if not isinstance(arg, ast.ColumnRef) and not (star_ok and isinstance(arg, ast.Star)):
            takes = "*, a column or DISTINCT column" if name == "count" else "one column"
            raise _error(
                f"{name.upper()} takes {takes}.",
                offset=call.span[0],
                hint=f"Write e.g. {_CALL_EXAMPLES[name]}.",
            )
        if call.distinct and name != "count":
            raise _unsupported(
                f"{name.upper()}(DISTINCT ...) is not supported; only COUNT(DISTINCT column) is.",
                call.span[0],
                f"Write {name.upper()}(column) or COUNT(DISTINCT column).",
            )
        p[0] = ast.FuncCall(name, arg, call.distinct, span=call.span)

    def p_func_call(self, p: yacc.YaccProduction) -> None:
        """func_call : IDENT LPAREN RPAREN
        | IDENT LPAREN func_arg RPAREN
        | IDENT LPAREN DISTINCT func_arg RPAREN"""
        name = p[1]
        if name not in FUNCTIONS or p.slice[1].quoted:
            raise _unknown_function(p.slice[1])
        distinct = len(p) == 6
        arg = p[len(p) - 2] if len(p) > 4 else None
        p[0] = _Call(name, arg, distinct, (p.slice[1].lexpos, _end(p, len(p) - 1)))

    def p_func_arg(self, p: yacc.YaccProduction) -> None:
        """func_arg : TIMES
        | IDENT
        | STRING
        | NUMBER"""
        tok = p.slice[1]
        span = (tok.lexpos, tok.end)
        if tok.type == "TIMES":
            p[0] = ast.Star(span=span)
        elif tok.type == "IDENT":
            p[0] = ast.ColumnRef(tok.value, tok.quoted, tok.spelling, span=span)
        elif tok.type == "STRING":
            p[0] = ast.StringLit(tok.value, span=span)
        else:
            p[0] = ast.NumberLit(tok.value, span=span)

    def p_value_string(self, p: yacc.YaccProduction) -> None:
        """value : STRING"""
        p[0] = ast.StringLit(p[1], span=_tok_span(p, 1))

    def p_value_number(self, p: yacc.YaccProduction) -> None:
        """value : number"""
        p[0] = p[1]

    def p_number(self, p: yacc.YaccProduction) -> None:
        """number : NUMBER
        | MINUS NUMBER
        | PLUS NUMBER"""
        value: Decimal = p[len(p) - 1]
        if p.slice[1].type == "MINUS":
            value = value.copy_negate()
        p[0] = ast.NumberLit(value, span=(p.slice[1].lexpos, p.slice[len(p) - 1].end))

    def p_value_keyword(self, p: yacc.YaccProduction) -> None:
        """value : TRUE
        | FALSE
        | NULL"""
        kind = p.slice[1].type
        span = _tok_span(p, 1)
        p[0] = ast.NullLit(span=span) if kind == "NULL" else ast.BoolLit(kind == "TRUE", span=span)

    def p_value_identifier(self, p: yacc.YaccProduction) -> None:
        """value : IDENT"""
        # Kept so the validator can say why: a double-quoted "value" or a column on the right.
        tok = p.slice[1]
        p[0] = ast.ColumnRef(tok.value, tok.quoted, tok.spelling, span=_tok_span(p, 1))

    def p_value_array(self, p: yacc.YaccProduction) -> None:
        """value : LPAREN value_list RPAREN
        | LBRACKET value_list RBRACKET
        | ARRAY LBRACKET value_list RBRACKET"""
        items = p[len(p) - 2]
        self._check_list_length(items)
        p[0] = ast.ArrayLit(tuple(items), span=(p.slice[1].lexpos, p.slice[len(p) - 1].end))

    def p_value_empty_array(self, p: yacc.YaccProduction) -> None:
        """value : LPAREN RPAREN
        | LBRACKET RBRACKET
        | ARRAY LBRACKET RBRACKET"""
        p[0] = ast.ArrayLit((), span=(p.slice[1].lexpos, p.slice[len(p) - 1].end))

    def p_value_now(self, p: yacc.YaccProduction) -> None:
        """value : now
        | now PLUS INTERVAL STRING
        | now MINUS INTERVAL STRING"""
        now: ast.Now = p[1]
        if len(p) == 2:
            p[0] = now
        else:
            sign = 1 if p.slice[2].type == "PLUS" else -1
            p[0] = ast.Now(sign, p[4], span=(now.span[0], p.slice[4].end))

    def p_now(self, p: yacc.YaccProduction) -> None:
        """now : CURRENT_TIMESTAMP
        | func_call"""
        call = p[1]
        if not isinstance(call, _Call):
            p[0] = ast.Now(span=_tok_span(p, 1))
        elif call.name == "now" and call.arg is None and not call.distinct:
            p[0] = ast.Now(span=call.span)
        else:
            message, hint = _misplaced_call(call)
            raise _error(message, offset=call.span[0], hint=hint)

    def p_value_list(self, p: yacc.YaccProduction) -> None:
        """value_list : value_list COMMA value
        | value"""
        if len(p) == 2:
            p[0] = [p[1]]
        else:
            p[1].append(p[3])
            p[0] = p[1]

    # Helpers ---------------------------------------------------------------------------------

    def _statement_span(self) -> ast.Span:
        tokens = self.feed.tokens
        return (tokens[0].lexpos, tokens[-1].end)

    def _operand(self, expr: ast.Expr | _Random, where: str) -> ast.Expr:
        if isinstance(expr, _Random):
            raise _error(
                f"RANDOM() cannot be used as {where}; it only appears as ORDER BY RANDOM().",
                offset=expr.span[0],
                hint="Write ORDER BY RANDOM() LIMIT 10 to sample rows.",
            )
        return expr

    def _check_list_length(self, values: list[Any]) -> None:
        limit = self.limits.max_list_values
        if len(values) > limit:
            raise _error(
                f"A list holds {len(values)} values; at most {limit} are allowed.",
                "too_complex",
                offset=values[limit].span[0],
                hint=f"Split the list into several queries of at most {limit} values.",
            )

    def _page_number(self, literal: ast.NumberLit, keyword: str) -> int:
        value = literal.value
        minimum = 1 if keyword == "LIMIT" else 0
        if value != value.to_integral_value() or value < minimum or value > MAX_PAGE_NUMBER:
            shown = str(value) if len(str(value)) <= 40 else str(value)[:37] + "..."
            raise _error(
                f"{keyword} {shown} is out of range: {keyword} takes a whole number from {minimum}"
                + (" (values above 100 are lowered to 100)." if keyword == "LIMIT" else "."),
                "limit_out_of_range",
                offset=literal.span[0],
                hint="Write e.g. LIMIT 20 OFFSET 40.",
            )
        return int(value)

    def p_error(self, tok: lex.LexToken | None) -> None:
        raise _syntax_error(tok, self.feed, self._expected())

    def _expected(self) -> list[str]:
        """The tokens that can really come next: those of the failing state's action table that
        survive the reductions they trigger (LALR tables also list lookaheads whose reductions
        fail later, e.g. RETURNING after a SELECT's WHERE)."""
        if self.lr is None or not self.lr.statestack:
            return []
        stack = list(self.lr.statestack)
        return sorted(
            t for t in self.lr.action[stack[-1]] if t != "error" and self._viable(stack, t)
        )

    def _viable(self, stack: list[int], token: str) -> bool:
        """Whether the parser, in ``stack``, shifts ``token`` after the reductions it causes."""
        assert self.lr is not None
        action, goto, productions = self.lr.action, self.lr.goto, self.lr.productions
        stack = list(stack)
        for _ in range(1000):
            step = action[stack[-1]].get(token)
            if step is None:
                return False
            if step >= 0:  # shift, or accept at the end
                return True
            production = productions[-step]
            if production.len:
                del stack[-production.len :]
            state = goto[stack[-1]].get(production.name)
            if state is None:
                return False
            stack.append(state)
        return False


def _join(
    kind: type[ast.And] | type[ast.Or], left: ast.Condition, right: ast.Condition
) -> ast.Condition:
    operands = (left.operands if type(left) is kind else (left,)) + (
        right.operands if type(right) is kind else (right,)
    )
    return kind(operands, span=(left.span[0], right.span[1]))


def _misplaced_call(call: _Call) -> tuple[str, str]:
    """Message and hint for a known function used where it means nothing."""
    name = call.name
    if name == "now":
        return "NOW() is a value.", "Use it on the right of a comparison, e.g. due_at < NOW()."
    if name == "random":
        return (
            "RANDOM() only appears as ORDER BY RANDOM().",
            "Write ORDER BY RANDOM() LIMIT 10 to sample rows.",
        )
    if name == "match":
        return "MATCH('text') is a condition on its own, not a value.", "Write WHERE MATCH('text')."
    if name == "any":
        return (
            "ANY(array_column) only appears as 'value' = ANY(array_column).",
            "Write 'english' = ANY(tags).",
        )
    return (
        f"{name.upper()}(...) cannot be used as a value; only NOW() can.",
        "Compare a column with a literal, e.g. due_at < NOW() - INTERVAL '1 day'.",
    )


def _unknown_function(tok: lex.LexToken) -> DslError:
    name = tok.value
    # Only near-misspellings: a looser match crosses kinds (getdate is not DATE, rank not RANDOM).
    suggestions = [s.upper() for s in closest_names(name, sorted(FUNCTIONS), cutoff=0.8)]
    return DslError(
        f"Function {name}() is not supported.{did_you_mean(suggestions)}",
        reason="unsupported_syntax",
        offset=tok.lexpos,
        hint=f"The functions are {_FUNCTION_LIST}.",
        suggestions=suggestions,
    )


# p_error ---------------------------------------------------------------------------------------


def _describe(tok: lex.LexToken) -> str:
    if tok.type == "STRING":
        text = tok.value if len(tok.value) <= 30 else tok.value[:27] + "..."
        return f"string '{text}'"
    if tok.type == "NUMBER":
        text = str(tok.value)
        return f"number {text if len(text) <= 40 else text[:37] + '...'}"
    if tok.type == "IDENT":
        return f"'{tok.value}'"
    return f"'{str(tok.value).upper() if tok.type in KEYWORDS.values() else tok.value}'"


def _expected_text(expected: list[str]) -> str:
    names = [_TOKEN_NAMES.get(t, t) for t in expected if t != "error"]
    if not names or len(names) > 6:
        return ""
    if len(names) == 1:
        return f" Expected {names[0]}."
    return f" Expected {', '.join(names[:-1])} or {names[-1]}."


_CLAUSE_NAMES = {"GROUP": "GROUP BY", "ORDER": "ORDER BY"}
_VALUE_TOKENS = frozenset(
    {"STRING", "NUMBER", "TRUE", "FALSE", "NULL", "CURRENT_TIMESTAMP", "ARRAY", "LBRACKET", "MINUS",
     "PLUS"}
)  # fmt: skip
_OPERATOR_TOKENS = frozenset(
    {"EQ", "NE", "LT", "LE", "GT", "GE", "IN", "BETWEEN", "IS", "LIKE", "ILIKE", "OVERLAP",
     "CONTAINS"}
)  # fmt: skip


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
        if kind in KEYWORDS.values():
            names.append(_CLAUSE_NAMES.get(kind, kind))
        else:
            names.append(_TOKEN_NAMES.get(kind, kind))
    if not names:
        return "Check the statement against the grammar page (docs.grammarUrl)."
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return f"At this point the grammar accepts {listed}."


def _syntax_error(tok: lex.LexToken | None, feed: _Feed, expected: list[str]) -> DslError:
    prev = feed.before(tok, 1)
    prev2 = feed.before(tok, 2)
    prev_type = prev.type if prev else None
    offset = feed.end_offset if tok is None else tok.lexpos
    where = "end of statement" if tok is None else _describe(tok)
    expected_text = _expected_text(expected)

    if tok is not None and tok.type == "IDENT" and not tok.quoted:
        keywords = [t.lower() for t in expected if t in KEYWORDS.values()]
        close = closest_names(tok.value, keywords)
        if close:
            suggestions = [c.upper() for c in close]
            return _error(
                f"Unexpected {where}.{did_you_mean(suggestions)}",
                offset=offset,
                hint=f"Check the spelling of {suggestions[0]}.",
                suggestions=suggestions,
            )
    after_connective = prev is not None and prev_type in ("WHERE", "HAVING", "AND", "OR", "NOT")
    if after_connective and (tok is None or tok.type in ("AND", "OR")):
        keyword = prev.value.upper()
        return _error(
            f"{keyword} must be followed by a condition.",
            offset=offset,
            hint=f"Complete the condition, e.g. {keyword} reps = 0, or remove the dangling {keyword}.",
        )
    if (
        tok is not None
        and prev_type in ("WHERE", "HAVING", "AND", "OR", "NOT", "LPAREN")
        and tok.type
        in (
            "NUMBER",
            "MINUS",
            "PLUS",
            "TRUE",
            "FALSE",
            "NULL",
        )
    ):
        return _error(
            f"Unexpected {where}: a condition starts with a column.",
            offset=offset,
            hint="Put the column on the left of the comparison, e.g. reps = 0.",
        )
    if after_connective:
        keyword = prev.value.upper()
        return _error(
            f"{keyword} must be followed by a condition; found {where}.",
            offset=offset,
            hint=f"Write a condition after {keyword}, e.g. {keyword} reps = 0.",
        )
    if tok is not None and tok.type == "RPAREN" and prev_type == "LPAREN" and prev2 is not None:
        if prev2.type == "IN":
            return _error(
                "IN () needs at least one value.",
                offset=offset,
                hint="List the values, e.g. effort_level IN ('fast', 'medium').",
            )
        if prev2.type in ("VALUES", "COMMA"):
            return _error(
                "A VALUES row needs one value per column.",
                offset=offset,
                hint="Write e.g. VALUES ('Question', 'Answer').",
            )
    if prev is not None and prev2 is not None and prev.type == "IDENT" and prev2.type == "FROM":
        if tok is not None and tok.type == "COMMA":
            return _unsupported(
                SEVERAL_RESOURCES_MESSAGE,
                offset,
                _TWO_STEP_HINT,
            )
        if tok is not None and (tok.type in ("IDENT", "AS")):
            named = habits.resource_for(prev.value)
            following = habits.resource_for(tok.value) if tok.type == "IDENT" else None
            if named is None and following is not None:
                # `FROM DEFAULT cards`: the word before the resource is the stray one.
                return _error(
                    f"Unexpected '{prev.value}' before {tok.value}.",
                    offset=prev.lexpos,
                    hint=f"Write the resource alone, e.g. SELECT * FROM {following}.",
                )
            return _unsupported(
                "Table aliases are not supported.",
                offset,
                "Remove the alias and write column names alone, e.g. SELECT * FROM "
                f"{named or 'cards'}.",
            )
        if tok is not None and tok.type == "LPAREN" and feed.tokens[0].type == "SELECT":
            return _unsupported(
                f"{prev.value}(...) is not a resource; table functions are not supported.",
                prev.lexpos,
                "Select from one resource, e.g. SELECT * FROM cards.",
            )
    if (
        tok is not None
        and tok.type == "COMMA"
        and prev_type == "TIMES"
        and prev2 is not None
        and (prev2.type in ("SELECT", "DISTINCT"))
    ):
        return _error(
            "* must stand alone in the select list.",
            offset=offset,
            hint="Write SELECT * FROM cards, or list the columns: SELECT card_id, tag FROM cards.",
        )
    if (
        tok is not None
        and tok.type == "COMMA"
        and prev_type == "NUMBER"
        and prev2 is not None
        and (prev2.type == "LIMIT")
    ):
        return _error(
            "LIMIT takes one number.",
            offset=offset,
            hint="Write LIMIT 20 OFFSET 40 instead of LIMIT 40, 20.",
        )
    if prev_type == "INTERVAL":
        return _error(
            "INTERVAL takes a quoted amount and unit.",
            offset=offset,
            hint="Write e.g. NOW() - INTERVAL '7 days'.",
        )
    if prev_type == "LIMIT" or prev_type == "OFFSET":
        return _error(
            f"{prev.value.upper()} takes a whole number; found {where}.",
            offset=offset,
            hint="Write e.g. LIMIT 20 OFFSET 0.",
        )
    if (
        tok is not None
        and tok.type == "VALUES"
        and prev_type == "IDENT"
        and prev2 is not None
        and (prev2.type == "INTO")
    ):
        return _error(
            "INSERT needs an explicit column list.",
            offset=offset,
            hint="Write e.g. INSERT INTO cards (front_text, back_text) VALUES ('Question', 'Answer').",
        )
    if tok is not None and tok.type == "EQ" and prev_type == "EQ":
        return _error("Use a single = to compare.", offset=prev.lexpos, hint="Write e.g. reps = 0.")
    if tok is not None and prev_type == "IS":
        return _error(
            f"IS only tests for NULL; found {where}.",
            offset=offset,
            hint="Write column IS NULL or column IS NOT NULL; compare booleans with =, e.g. enable_fuzz = TRUE.",
        )
    if tok is not None and tok.type == "IDENT" and tok.quoted:
        return _error(
            f'Unexpected double-quoted "{tok.value}".{expected_text}',
            offset=offset,
            hint="Strings take single quotes; double quotes are for names, e.g. front_text = 'Hola'.",
        )
    if (
        tok is not None
        and tok.type == "LPAREN"
        and prev_type == "IDENT"
        and prev2 is not None
        and (prev2.type == "LPAREN")
    ):
        return _unsupported(
            "Function calls cannot be nested.",
            offset,
            "Apply one function to a column, e.g. COUNT(DISTINCT tag) or LOWER(front_text).",
        )
    hint = _expected_hint(expected)
    if tok is None:
        after = f" after {_describe(prev)}" if prev is not None else ""
        return _error(
            f"Unexpected end of statement{after}.{expected_text}", offset=offset, hint=hint
        )
    return _error(f"Unexpected {where}.{expected_text}", offset=offset, hint=hint)


# Statement pre-checks ---------------------------------------------------------------------------


def _check_tokens(tokens: list[lex.LexToken], limits: Limits) -> None:
    """Reject, at the first offending token, what must not reach the grammar: lexing problems,
    nesting beyond the limit (before PLY builds anything deep) and well-known SQL that the
    language leaves out on purpose."""
    first = tokens[0]
    depth = 0
    has_from = False
    count = len(tokens)
    for i, tok in enumerate(tokens):
        kind = tok.type
        if kind == "ERROR":
            problem: LexProblem = tok.value
            raise _error(problem.message, problem.reason, offset=tok.lexpos, hint=problem.hint)
        if i == 0 and kind not in _STATEMENT_STARTS:
            raise _statement_start_error(tok)
        if kind == "LPAREN" or kind == "LBRACKET":
            depth += 1
            if depth > limits.max_nesting:
                raise _error(
                    f"Parentheses are nested more than {limits.max_nesting} levels deep.",
                    "too_deep",
                    offset=tok.lexpos,
                )
        elif kind == "RPAREN" or kind == "RBRACKET":
            depth -= 1
            if depth < 0:
                raise _error(
                    f"Unmatched '{tok.value}'.",
                    offset=tok.lexpos,
                    hint="Remove it or add the opening parenthesis it closes.",
                )
        elif kind == "DOT":
            _raise_dot(tokens, i)
        elif kind == "SELECT" and i > 0:
            if first.type == "INSERT":
                raise _unsupported(
                    "INSERT ... SELECT is not supported.",
                    tok.lexpos,
                    "Read the rows with SELECT first, then INSERT them with VALUES (...), (...).",
                )
            raise _unsupported(
                "Subqueries are not supported.",
                tok.lexpos,
                "Run the inner SELECT first, then use its values in a second statement, "
                "e.g. SELECT * FROM cards WHERE card_id IN ('<id>', ...).",
            )
        elif kind == "FROM":
            has_from = True
            if first.type == "UPDATE":
                raise _unsupported(
                    "UPDATE ... FROM is not supported.",
                    tok.lexpos,
                    "Look up the ids with a SELECT first, then UPDATE cards SET ... WHERE card_id IN ('<id>', ...).",
                )
        elif kind == "IDENT" and not tok.quoted:
            word = tok.value
            following = tokens[i + 1].type if i + 1 < count else None
            join = _join_start(tokens, i)
            if join is not None:
                raise _unsupported(JOIN_MESSAGE, join.lexpos, _TWO_STEP_HINT)
            if word in ("union", "intersect", "except"):
                raise _unsupported(
                    f"{word.upper()} is not supported.",
                    tok.lexpos,
                    "Run the statements separately (a batch separated by ';' returns each result).",
                )
            if word == "over" and following == "LPAREN":
                raise _unsupported(
                    "Window functions (OVER) are not supported.",
                    tok.lexpos,
                    "Use GROUP BY with COUNT, SUM, AVG, MIN or MAX instead.",
                )
            if word == "with" and i == 0:
                raise _with_error(tok)
            if word == "case" and following == "IDENT" and tokens[i + 1].value == "when":
                raise _unsupported(
                    "CASE expressions are not supported.",
                    tok.lexpos,
                    "Filter with WHERE instead, or compute the mapping after reading the rows.",
                )
            if (
                following == "LPAREN"
                and word not in FUNCTIONS
                and (i == 0 or tokens[i - 1].type != "INTO")
                # EXISTS (SELECT …) and friends are reported as the subquery they hold.
                and not (i + 2 < count and tokens[i + 2].type == "SELECT")
            ):
                raise _unknown_function(tok)
    if first.type == "SELECT" and not has_from:
        for tok in tokens:
            if tok.type == "IDENT" and not tok.quoted and closest_names(tok.value, ["from"]):
                raise _error(
                    f"Unexpected '{tok.value}'. Did you mean FROM?",
                    offset=tok.lexpos,
                    hint="Write e.g. SELECT * FROM cards.",
                    suggestions=["FROM"],
                )
        for tok in tokens:
            resource = habits.resource_for(tok.value) if tok.type == "IDENT" else None
            if resource is not None and not tok.quoted:
                raise _error(
                    f"SELECT needs FROM before the resource: found '{tok.value}' without it.",
                    offset=tok.lexpos,
                    hint=f"Write FROM {resource}, e.g. SELECT * FROM {resource}.",
                    suggestions=[f"FROM {resource}"],
                )
        raise _unsupported(
            "SELECT without FROM is not supported.",
            first.lexpos,
            "Every SELECT reads one resource (SHOW TABLES lists them), e.g. SELECT * FROM cards LIMIT 10.",
        )


def _raise_dot(tokens: list[lex.LexToken], i: int) -> None:
    tok = tokens[i]
    # `c.front_text ... JOIN ...`: the qualified name is only a symptom; the JOIN is what the
    # caller must change, so that is the error worth reporting.
    for k in range(i + 1, len(tokens)):
        join = _join_start(tokens, k)
        if join is not None:
            raise _unsupported(JOIN_MESSAGE, join.lexpos, _TWO_STEP_HINT)
    # `SELECT a.x, b.y FROM a, b`: likewise the second resource is the mistake, not `a.x`.
    for k in range(2, len(tokens)):
        if (
            tokens[k].type == "COMMA"
            and tokens[k - 1].type == "IDENT"
            and tokens[k - 2].type == "FROM"
        ):
            raise _unsupported(SEVERAL_RESOURCES_MESSAGE, tokens[k].lexpos, _TWO_STEP_HINT)
    before = tokens[i - 1] if i > 0 else None
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    if (
        before is not None
        and before.type == "IDENT"
        and after is not None
        and after.type in ("IDENT", "TIMES")
    ):
        raise _unsupported(
            f"Qualified names ({before.value}.{after.value}) are not supported.",
            before.lexpos,
            f"Write the column name alone, e.g. {after.value if after.type == 'IDENT' else '*'}.",
        )
    raise _error(
        "Unexpected '.'.", offset=tok.lexpos, hint="Remove the '.'; numbers look like 0.5 or .5."
    )


def _join_start(tokens: list[lex.LexToken], i: int) -> lex.LexToken | None:
    """The first token of a join written at ``tokens[i]`` (``LEFT OUTER JOIN`` starts at
    LEFT, SQL Server's ``CROSS APPLY`` at CROSS, MySQL's ``STRAIGHT_JOIN``), or None."""
    tok = tokens[i]
    if tok.type != "IDENT" or tok.quoted or tok.value not in ("join", "straight_join", "apply"):
        return None
    start = i
    while start > 0 and start > i - 2:
        before = tokens[start - 1]
        if before.type != "IDENT" or before.quoted or before.value not in _JOIN_QUALIFIERS:
            break
        start -= 1
    if tok.value == "apply" and start == i:
        return None  # `apply` alone is a name, not SQL Server's CROSS / OUTER APPLY
    return tokens[start]


def _with_error(tok: lex.LexToken) -> DslError:
    return _unsupported(
        "WITH (common table expressions) is not supported.",
        tok.lexpos,
        "Run the inner query as its own statement first, then use its values in the next one.",
    )


def _statement_start_error(tok: lex.LexToken) -> DslError:
    word = tok.value if tok.type != "IDENT" or not tok.quoted else ""
    if tok.type == "IDENT" and word:
        if word in _DDL:
            return _unsupported(
                f"{word.upper()} is not supported: the schema is fixed.",
                tok.lexpos,
                "Use SHOW TABLES and DESCRIBE to read the schema, and INSERT, UPDATE or DELETE to change rows.",
            )
        if word in _TRANSACTION:
            return _unsupported(
                f"Transaction control ({word.upper()}) is not supported.",
                tok.lexpos,
                "A request with writes already runs in one transaction; send the statements together, "
                "separated by ';'.",
            )
        if word in _PERMISSIONS:
            return _unsupported(
                f"{word.upper()} is not supported: access is controlled by API keys.",
                tok.lexpos,
                "Use SHOW TABLES, DESCRIBE, SELECT, INSERT, UPDATE or DELETE.",
            )
        if word == "with":
            return _with_error(tok)
        if word in _OTHER_COMMANDS:
            return _unsupported(
                f"{word.upper()} statements are not supported.",
                tok.lexpos,
                "Use SHOW TABLES, DESCRIBE, SELECT, INSERT, UPDATE or DELETE.",
            )
    if tok.type == "SET":
        return _unsupported(
            "SET statements are not supported; SET only appears in UPDATE ... SET.",
            tok.lexpos,
            "Write e.g. UPDATE cards SET back_text = 'Answer' WHERE card_id = '<uuid>'.",
        )
    starts = ["select", "insert", "update", "delete", "show", "describe"]
    suggestions = [s.upper() for s in closest_names(word, starts)] if isinstance(word, str) else []
    return _error(
        f"A statement cannot start with {_describe(tok)}.{did_you_mean(suggestions)}",
        offset=tok.lexpos,
        hint="Statements start with SELECT, INSERT, UPDATE, DELETE, SHOW or DESCRIBE.",
        suggestions=suggestions,
    )


# Building and running -------------------------------------------------------------------------

_build_lock = threading.Lock()
_local = threading.local()
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def build_parser(errorlog: Any = None, debuglog: Any = None) -> tuple[_Grammar, yacc.LRParser]:
    """Build the grammar and its LALR tables.

    ``errorlog`` receives PLY's warnings. PLY only counts conflicts in debug mode, so passing a
    ``debuglog`` turns that on and sends the state-by-state report there instead of to a
    ``parser.out`` file.
    """
    grammar = _Grammar()
    parser = yacc.yacc(
        module=grammar,
        debug=debuglog is not None,
        debuglog=debuglog,
        write_tables=False,
        errorlog=errorlog if errorlog is not None else yacc.NullLogger(),
    )
    grammar.lr = parser
    return grammar, parser


def _thread_parser() -> tuple[_Grammar, yacc.LRParser]:
    built = getattr(_local, "parser", None)
    if built is None:
        with _build_lock:
            built = build_parser()
        _local.parser = built
    return built


def _normalize(sql: str, tokens: list[lex.LexToken]) -> str:
    parts: list[str] = []
    previous_end = -1
    for tok in tokens:
        if previous_end >= 0 and tok.lexpos != previous_end:
            parts.append(" ")
        parts.append(sql[tok.lexpos : tok.end])
        previous_end = tok.end
    return "".join(parts)


def _parse_statement(tokens: list[lex.LexToken], end_offset: int, limits: Limits) -> ast.Statement:
    _check_tokens(tokens, limits)
    grammar, parser = _thread_parser()
    grammar.feed = _Feed(tokens, end_offset)
    grammar.limits = limits
    try:
        return parser.parse(lexer=grammar.feed)
    finally:
        grammar.feed = _Feed([], 0)


def parse_batch(sql: str, limits: Limits = DEFAULT_LIMITS) -> ast.Batch:
    """Parse a whole request into its statements; raises ``DslError`` on the first problem."""
    if (
        len(sql) * 4 > limits.max_sql_bytes
        and len(sql.encode("utf-8", "surrogatepass")) > limits.max_sql_bytes
    ):
        raise _error(
            f"The sql is longer than {limits.max_sql_bytes:,} bytes.",
            "too_long",
            offset=None,
        )
    surrogate = _LONE_SURROGATE.search(sql)
    if surrogate is not None:
        # Lone surrogates cannot be encoded as UTF-8, so no database (or response) could hold them.
        raise _error(
            f"The sql contains an invalid Unicode character (U+{ord(surrogate.group()):04X}).",
            offset=surrogate.start(),
            hint="Remove the character or send the text as valid UTF-8.",
        )
    tokens = tokenize(sql)
    if not tokens:
        raise _error("The sql holds no statement.", "empty_statement", offset=None)

    groups: list[tuple[list[lex.LexToken], lex.LexToken | None]] = []
    current: list[lex.LexToken] = []
    for tok in tokens:
        if tok.type == "SEMI":
            groups.append((current, tok))
            current = []
        else:
            current.append(tok)
    if current:
        groups.append((current, None))

    if len(groups) > limits.max_statements:
        extra = groups[limits.max_statements][0] or [groups[limits.max_statements][1]]
        raise _error(
            f"The sql holds {len(groups)} statements; at most {limits.max_statements} are allowed.",
            "too_many_statements",
            offset=extra[0].lexpos,
        )

    is_batch = len(groups) > 1
    statements: list[ast.ParsedStatement] = []
    for index, (statement_tokens, separator) in enumerate(groups, start=1):
        try:
            if not statement_tokens:
                raise _error(
                    "Empty statement: there is nothing between two ';'."
                    if index > 1
                    else "Empty statement: the sql starts with ';'.",
                    "empty_statement",
                    offset=separator.lexpos if separator is not None else None,
                )
            # A statement's input ends at its ';', the last one's at the end of the sql.
            end_offset = separator.lexpos if separator is not None else len(sql)
            node = _parse_statement(statement_tokens, end_offset, limits)
        except DslError as error:
            if is_batch:
                error.in_statement(index)
            raise
        span = (statement_tokens[0].lexpos, statement_tokens[-1].end)
        statements.append(
            ast.ParsedStatement(
                index=index,
                node=node,
                span=span,
                sql=sql[span[0] : span[1]],
                normalized_sql=_normalize(sql, statement_tokens),
            )
        )
    return ast.Batch(
        sql=sql,
        statements=tuple(statements),
        normalized_sql="; ".join(s.normalized_sql for s in statements),
    )
