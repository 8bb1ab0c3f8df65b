"""Statement rewrites the query console offers: another page of a SELECT (its LIMIT and OFFSET
set), and an error's suggestion put in place of the offending token.

Both work on the dialect's own tokens (``dsl.language.lexer.tokenize``), so a word inside a string literal
or a comment is never mistaken for LIMIT, and the rest of the statement is kept byte for byte."""

from __future__ import annotations

from dataclasses import dataclass

from ply import lex

from dsl.language.lexer import tokenize


@dataclass(frozen=True)
class Marker:
    """Where an error points: the statement's line there and the caret's column (0-based)."""

    line_number: int
    line: str
    column: int

    @property
    def gutter(self) -> str:
        return f"{self.line_number} | "

    @property
    def blank_gutter(self) -> str:
        return " " * len(self.gutter)

    @property
    def padding(self) -> str:
        """What goes before the caret so it sits under the column (tabs kept as tabs)."""
        return "".join("\t" if char == "\t" else " " for char in self.line[: self.column])


def page_statement(sql: str, *, limit: int, offset: int) -> str:
    """``sql`` (one SELECT) with ``LIMIT limit OFFSET offset``: existing numbers are replaced,
    missing clauses are added after the last token (before a trailing ``;`` or comment)."""
    tokens = [t for t in tokenize(sql) if t.type != "SEMI"]
    if not tokens:
        return sql
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement), applied right to left
    limit_number = _number_after(tokens, "LIMIT")
    offset_number = _number_after(tokens, "OFFSET")
    if limit_number is not None:
        edits.append((limit_number.lexpos, limit_number.end, str(limit)))
    if offset_number is not None:
        edits.append((offset_number.lexpos, offset_number.end, str(offset)))
    end = tokens[-1].end
    if limit_number is None and offset_number is None:
        edits.append((end, end, f" LIMIT {limit} OFFSET {offset}"))
    elif offset_number is None:
        assert limit_number is not None
        edits.append((limit_number.end, limit_number.end, f" OFFSET {offset}"))
    elif limit_number is None:
        edits.append((end, end, f" LIMIT {limit}"))
    for start, stop, text in sorted(edits, reverse=True):
        sql = sql[:start] + text + sql[stop:]
    return sql


def _number_after(tokens: list[lex.LexToken], keyword: str) -> lex.LexToken | None:
    for index, token in enumerate(tokens[:-1]):
        if token.type == keyword and tokens[index + 1].type == "NUMBER":
            return tokens[index + 1]
    return None


def apply_suggestion(sql: str, offset: int, suggestion: str) -> str:
    """``sql`` with the token at ``offset`` replaced by ``suggestion``; at the end of the input
    (nothing to replace) the suggestion is appended."""
    for token in tokenize(sql):
        if token.lexpos <= offset < token.end:
            if token.type == "STRING":
                # A value suggestion replaces a string literal: it stays one.
                suggestion = "'" + suggestion.replace("'", "''") + "'"
            return sql[: token.lexpos] + suggestion + sql[token.end :]
    if offset >= len(sql.rstrip()):
        return sql.rstrip() + " " + suggestion
    # Whitespace at the offset: the suggestion goes in as a word of its own.
    return sql[:offset] + suggestion + " " + sql[offset:]


STATEMENT_STARTS = frozenset({"SELECT", "SHOW", "DESCRIBE", "INSERT", "UPDATE", "DELETE"})


def missing_semicolon(sql: str, offset: int) -> str | None:
    """``sql`` with a ``;`` put before the statement keyword at ``offset`` when the error there is
    a second statement written without one (not a subquery); None otherwise."""
    tokens = [t for t in tokenize(sql) if t.type != "COMMENT"]
    for index, token in enumerate(tokens):
        if token.lexpos != offset:
            continue
        if token.type not in STATEMENT_STARTS and index > 0:
            # SHOW TABLES, DESCRIBE x: the parser may point at the word after the keyword.
            index -= 1
        if tokens[index].type in STATEMENT_STARTS and index > 0:
            before = tokens[index - 1]
            if before.type in ("LPAREN", "SEMI"):
                return None
            return sql[: before.end] + ";" + sql[before.end :]
    return None


def marker_at(sql: str, offset: int) -> Marker:
    """The line holding ``offset`` and the column of the caret under it."""
    offset = max(0, min(offset, len(sql)))
    line_start = sql.rfind("\n", 0, offset) + 1
    line_end = sql.find("\n", offset)
    line = sql[line_start : line_end if line_end != -1 else len(sql)]
    return Marker(sql.count("\n", 0, offset) + 1, line, offset - line_start)
