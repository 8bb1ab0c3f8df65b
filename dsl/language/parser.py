"""Grammar of the dialect (dsl.md §3-§4, §6, §8), built on ``ply.yacc``: its productions, the
building of its LALR tables, the token feed and ``parse_batch``.

Public entry: ``parse_batch(sql) -> ast.Batch``. It lexes the whole request once, splits the
tokens into statements on ``;`` and runs the LALR parser on each, after ``dsl.language.syntax_errors`` has
checked the statement's tokens for the limits and for the SQL that is deliberately not part of the
language; where the grammar stops, ``dsl.language.syntax_errors`` says why. Every failure is a ``DslError``;
no input makes this module raise anything else or recurse.

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

from dsl.language import ast
from dsl.language.errors import DslError
from dsl.language.functions import FUNCTIONS
from dsl.language.lexer import TOKENS, tokenize
from dsl.language.syntax_errors import (
    check_tokens,
    error,
    misplaced_call,
    syntax_error,
    unknown_function,
    unsupported,
)
from dsl.settings import dsl_settings


@dataclass(frozen=True, slots=True)
class Limits:
    """The parse- and validation-time limits of dsl.md §8 (the executor's settings override them)."""

    max_sql_bytes: int = 65_536
    max_statements: int = 50
    max_nesting: int = 32
    max_predicates: int = 500
    max_list_values: int = 1_000
    max_insert_rows: int = 100
    max_pattern_bytes: int = 50_000


DEFAULT_LIMITS = Limits()

MAX_PAGE_NUMBER = 2**63 - 1

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

PARSER_TOKENS: tuple[str, ...] = tuple(t for t in TOKENS if t not in {"ERROR", "SEMI", "DOT"})


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


def _end(p: yacc.YaccProduction, i: int) -> int:
    sym = p.slice[i]
    end: int = sym.end if isinstance(sym, lex.LexToken) else sym.value.span[1]
    return end


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
            raise error(
                "SHOW COLUMNS needs FROM <resource>.",
                offset=p.slice[2].end,
                hint="Write SHOW COLUMNS FROM cards (or DESCRIBE cards).",
            )
        if word != "tables":
            raise error(
                f"SHOW {word.upper()} is not a statement; SHOW takes TABLES or COLUMNS FROM <resource>.",
                offset=p.slice[2].lexpos,
                hint="Write SHOW TABLES or SHOW COLUMNS FROM cards.",
            )
        like = p[4] if len(p) == 5 else None
        p[0] = ast.ShowTables(like, span=self._statement_span())

    def p_show_columns(self, p: yacc.YaccProduction) -> None:
        """show : SHOW IDENT FROM IDENT"""
        if p[2] != "columns":
            raise error(
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
        raise unsupported(
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
            raise error(
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
        raise unsupported(
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
            raise error(
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
            raise error(
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
            raise error(
                "A string on the left of = must be compared with ANY(array_column).",
                offset=call.span[0],
                hint="Write 'english' = ANY(tags), or put the column on the left: front_text = 'Hola'.",
            )
        p[0] = ast.Any(value, call.arg, span=(value.span[0], call.span[1]))

    def p_predicate_match(self, p: yacc.YaccProduction) -> None:
        """predicate : func_call"""
        call: _Call = p[1]
        if call.name != "match":
            raise error(
                f"{call.name.upper()}(...) is not a condition on its own.",
                offset=call.span[1],
                hint="Compare it with a value, e.g. LOWER(front_text) = 'hola', or use MATCH('text').",
            )
        text = call.arg
        if isinstance(text, ast.ColumnRef) and text.quoted:
            raise error(
                f'MATCH takes a string in single quotes, not the double-quoted "{text.spelling}".',
                "type_mismatch",
                offset=text.span[0],
                hint=f"Strings take single quotes: MATCH('{text.spelling}').",
            )
        if not isinstance(text, ast.StringLit):
            raise error(
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
        if name in ("now", "today", "match", "any", "random"):
            message, hint = misplaced_call(call.name)
            raise error(message, offset=call.span[0], hint=hint)
        if name == "count" and isinstance(arg, ast.NumberLit):
            raise unsupported(
                f"COUNT({arg.value}) is not supported.",
                call.span[0],
                "Write COUNT(*) to count rows.",
            )
        star_ok = name == "count" and not call.distinct
        if not isinstance(arg, ast.ColumnRef) and not (star_ok and isinstance(arg, ast.Star)):
            takes = "*, a column or DISTINCT column" if name == "count" else "one column"
            raise error(
                f"{name.upper()} takes {takes}.",
                offset=call.span[0],
                hint=f"Write e.g. {_CALL_EXAMPLES[name]}.",
            )
        if call.distinct and name != "count":
            raise unsupported(
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
            raise unknown_function(p.slice[1])
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
            p[0] = ast.Now(sign, p[4], now.today, span=(now.span[0], p.slice[4].end))

    def p_now(self, p: yacc.YaccProduction) -> None:
        """now : CURRENT_TIMESTAMP
        | CURRENT_DATE
        | func_call"""
        call = p[1]
        if not isinstance(call, _Call):
            p[0] = ast.Now(span=_tok_span(p, 1), today=p.slice[1].type == "CURRENT_DATE")
        elif call.name in ("now", "today") and call.arg is None and not call.distinct:
            p[0] = ast.Now(span=call.span, today=call.name == "today")
        else:
            message, hint = misplaced_call(call.name)
            raise error(message, offset=call.span[0], hint=hint)

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
            raise error(
                f"RANDOM() cannot be used as {where}; it only appears as ORDER BY RANDOM().",
                offset=expr.span[0],
                hint="Write ORDER BY RANDOM() LIMIT 10 to sample rows.",
            )
        return expr

    def _check_list_length(self, values: list[Any]) -> None:
        limit = self.limits.max_list_values
        if len(values) > limit:
            raise error(
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
            raise error(
                f"{keyword} {shown} is out of range: {keyword} takes a whole number from {minimum}"
                + (
                    f" (values above {dsl_settings.MAX_ROWS_PER_SELECT} are lowered to "
                    f"{dsl_settings.MAX_ROWS_PER_SELECT})."
                    if keyword == "LIMIT"
                    else "."
                ),
                "limit_out_of_range",
                offset=literal.span[0],
                hint="Write e.g. LIMIT 20 OFFSET 40.",
            )
        return int(value)

    def p_error(self, tok: lex.LexToken | None) -> None:
        raise syntax_error(tok, self.feed.tokens, self.feed.end_offset, self._expected())

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
    check_tokens(tokens, limits.max_nesting)
    grammar, parser = _thread_parser()
    grammar.feed = _Feed(tokens, end_offset)
    grammar.limits = limits
    try:
        batch: ast.Statement = parser.parse(lexer=grammar.feed)
        return batch
    finally:
        grammar.feed = _Feed([], 0)


def parse_batch(sql: str, limits: Limits = DEFAULT_LIMITS) -> ast.Batch:
    """Parse a whole request into its statements; raises ``DslError`` on the first problem."""
    if (
        len(sql) * 4 > limits.max_sql_bytes
        and len(sql.encode("utf-8", "surrogatepass")) > limits.max_sql_bytes
    ):
        raise error(
            f"The sql is longer than {limits.max_sql_bytes:,} bytes.",
            "too_long",
            offset=None,
            hint=f"Send a shorter sql string (at most {limits.max_sql_bytes:,} bytes); split the "
            "work into several requests.",
        )
    surrogate = _LONE_SURROGATE.search(sql)
    if surrogate is not None:
        # Lone surrogates cannot be encoded as UTF-8, so no database (or response) could hold them.
        raise error(
            f"The sql contains an invalid Unicode character (U+{ord(surrogate.group()):04X}).",
            offset=surrogate.start(),
            hint="Remove the character or send the text as valid UTF-8.",
        )
    tokens = tokenize(sql)
    if not tokens:
        raise error("The sql holds no statement.", "empty_statement", offset=None)

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
        raise error(
            f"The sql holds {len(groups)} statements; at most {limits.max_statements} are allowed.",
            "too_many_statements",
            offset=extra[0].lexpos,
            hint=f"Send at most {limits.max_statements} statements per request; split the batch.",
        )

    is_batch = len(groups) > 1
    statements: list[ast.ParsedStatement] = []
    for index, (statement_tokens, separator) in enumerate(groups, start=1):
        try:
            if not statement_tokens:
                raise error(
                    "Empty statement: there is nothing between two ';'."
                    if index > 1
                    else "Empty statement: the sql starts with ';'.",
                    "empty_statement",
                    offset=separator.lexpos if separator is not None else None,
                )
            # A statement's input ends at its ';', the last one's at the end of the sql.
            end_offset = separator.lexpos if separator is not None else len(sql)
            node = _parse_statement(statement_tokens, end_offset, limits)
        except DslError as failure:
            if is_batch:
                failure.in_statement(index)
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
