"""Lexical rules of dsl.md §3: tokens, folding, literals, comments, positions, bad characters."""

from __future__ import annotations

from decimal import Decimal

import pytest

from dsl.language.lexer import LexProblem, tokenize


def kinds(sql: str) -> list[str]:
    return [t.type for t in tokenize(sql)]


def values(sql: str) -> list[object]:
    return [t.value for t in tokenize(sql)]


def test_keywords_are_case_insensitive_and_identifiers_fold_to_lower_case() -> None:
    assert kinds("select Select SELECT sElEcT") == ["SELECT"] * 4
    assert values("SELECT Front_Text FROM Cards") == ["select", "front_text", "from", "cards"]


def test_function_names_and_contextual_words_are_identifiers() -> None:
    # COUNT, NOW, TABLES, FIRST… stay usable as aliases and column-like names.
    assert kinds("count now tables first last match any random") == ["IDENT"] * 8


def test_double_quoted_identifiers_fold_and_are_marked_quoted() -> None:
    (tok,) = tokenize('"Card_ID"')
    assert (tok.type, tok.value, tok.quoted) == ("IDENT", "card_id", True)
    (plain,) = tokenize("card_id")
    assert plain.quoted is False
    assert values('"say ""hi"""') == ['say "hi"']


def test_string_literals_unescape_doubled_quotes_and_keep_everything_else() -> None:
    assert values("'it''s'") == ["it's"]
    assert values("'a;b -- c /* d */ \\n\n'") == ["a;b -- c /* d */ \\n\n"]
    assert values("''") == [""]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("12", Decimal(12)), ("0.5", Decimal("0.5")), (".5", Decimal("0.5")), ("1e3", Decimal(1000))],
)
def test_numbers(text: str, expected: Decimal) -> None:
    assert values(text) == [expected]


def test_negative_numbers_are_a_sign_then_a_number() -> None:
    # The grammar folds the sign, so `reps > - 3` and `reps>-3` both work.
    assert kinds("-3") == ["MINUS", "NUMBER"]


def test_booleans_and_null_are_keywords() -> None:
    assert kinds("TRUE false Null") == ["TRUE", "FALSE", "NULL"]


def test_comments_are_ignored() -> None:
    assert kinds("SELECT -- all of it\n* /* every\ncolumn */ FROM cards") == [
        "SELECT",
        "TIMES",
        "FROM",
        "IDENT",
    ]


def test_whitespace_is_free_form() -> None:
    assert kinds("SELECT*FROM cards WHERE(reps=0)") == [
        "SELECT",
        "TIMES",
        "FROM",
        "IDENT",
        "WHERE",
        "LPAREN",
        "IDENT",
        "EQ",
        "NUMBER",
        "RPAREN",
    ]
    assert kinds("front_text='Hola'OR reps=0") == [
        "IDENT",
        "EQ",
        "STRING",
        "OR",
        "IDENT",
        "EQ",
        "NUMBER",
    ]


def test_operators() -> None:
    assert kinds("= != <> < <= > >=") == ["EQ", "NE", "NE", "LT", "LE", "GT", "GE"]
    assert kinds("( ) [ ] , ; . * + -") == [
        "LPAREN",
        "RPAREN",
        "LBRACKET",
        "RBRACKET",
        "COMMA",
        "SEMI",
        "DOT",
        "TIMES",
        "PLUS",
        "MINUS",
    ]


def test_tokens_carry_start_and_end_offsets() -> None:
    tokens = tokenize("SELECT  'a''b' FROM x")
    assert [(t.lexpos, t.end) for t in tokens] == [(0, 6), (8, 14), (15, 19), (20, 21)]


def test_unicode_identifiers_lex_as_identifiers() -> None:
    # A Cyrillic "o" (U+043E) looks like a Latin one: it must reach the validator as a name.
    (tok,) = tokenize("fr\u043ent_text")
    assert tok.type == "IDENT"
    assert tok.value != "front_text"


def test_pasted_non_breaking_spaces_are_whitespace() -> None:
    assert kinds("SELECT\u00a0*\ufeffFROM cards") == ["SELECT", "TIMES", "FROM", "IDENT"]


def problem(sql: str) -> tuple[LexProblem, int]:
    errors = [t for t in tokenize(sql) if t.type == "ERROR"]
    assert errors, sql
    return errors[0].value, errors[0].lexpos


def test_unterminated_string_swallows_the_rest() -> None:
    issue, offset = problem("SELECT * FROM cards WHERE x = 'abc; DROP")
    assert issue.reason == "syntax_error"
    assert "Unterminated string" in issue.message
    assert offset == 30
    assert kinds("x = 'abc; SELECT 1")[-1] == "ERROR"


def test_unterminated_comment_and_identifier() -> None:
    assert "comment" in problem("SELECT /* never closed")[0].message
    assert "identifier" in problem('SELECT "never closed')[0].message


def test_nul_in_string_is_rejected() -> None:
    issue, _ = problem("'a\x00b'")
    assert issue.reason == "invalid_value"


def test_nul_outside_string_is_an_unexpected_character() -> None:
    issue, offset = problem("SELECT\x00")
    assert (issue.reason, offset) == ("syntax_error", 6)


@pytest.mark.parametrize(
    ("sql", "reason", "fragment"),
    [
        ("reps::text", "unsupported_syntax", "casts"),
        ("tags && ('a')", "unsupported_syntax", "OVERLAP"),
        ("tags @> ('a')", "unsupported_syntax", "CONTAINS"),
        ("a || b", "unsupported_syntax", "||"),
        ("reps = ?", "unsupported_syntax", "parameters"),
        ("reps = $1", "unsupported_syntax", "parameters"),
        ("`cards`", "syntax_error", "Backticks"),
        ("front_text = \u2018Hola\u2019", "syntax_error", "typographic"),
        ("reps % 2", "syntax_error", "U+0025"),
    ],
)
def test_bad_characters_get_specific_messages(sql: str, reason: str, fragment: str) -> None:
    issue, _ = problem(sql)
    assert issue.reason == reason
    assert fragment in issue.message + (issue.hint or "")


def test_numbers_with_absurd_exponents_are_errors_not_crashes() -> None:
    issue, _ = problem("1e999999999999999999999")
    assert "out of range" in issue.message
    assert values("1e400") == [Decimal("1e400")]


def test_lexer_is_reusable_across_calls() -> None:
    assert kinds("SELECT") == ["SELECT"]
    assert kinds("'unterminated") == ["ERROR"]
    assert kinds("FROM") == ["FROM"]
