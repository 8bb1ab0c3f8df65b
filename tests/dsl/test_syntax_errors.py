"""The parser's teaching errors as data (dsl/habits/parse_errors.py) and their interpreter
(dsl/language/syntax_errors.py): every row is reachable from a statement, in the order the table says, and
no row hides behind another with the same pattern."""

from __future__ import annotations

from typing import Any

import pytest

from dsl.habits.parse_errors import (
    CONSTRUCTS,
    MISPLACED_CALL,
    MISPLACED_CALLS,
    STATEMENT_WORDS,
    SYNTAX_RULES,
    UNSUPPORTED,
    Construct,
    StatementWord,
    SyntaxRule,
)
from dsl.language import syntax_errors
from dsl.language.errors import DslError
from dsl.language.functions import FUNCTIONS
from dsl.language.lexer import KEYWORDS, TOKENS
from dsl.language.parser import parse_batch
from dsl.language.syntax_errors import STATEMENT_STARTS

_PATTERN_WORDS = {"*", "#token", "$end", "#name", "#quoted"}


def fails(sql: str) -> DslError:
    with pytest.raises(DslError) as caught:
        parse_batch(sql)
    return caught.value


# SYNTAX_RULES: where the grammar stops --------------------------------------------------------


@pytest.mark.parametrize("rule", SYNTAX_RULES, ids=lambda rule: rule.example)
def test_every_syntax_rule_answers_its_example(
    rule: SyntaxRule, monkeypatch: pytest.MonkeyPatch
) -> None:
    answered: list[SyntaxRule] = []
    find = syntax_errors.syntax_rule

    def spy(*args: Any) -> Any:
        found = find(*args)
        answered.append(found[0])
        return found

    monkeypatch.setattr(syntax_errors, "syntax_rule", spy)
    error = fails(rule.example)
    assert answered == [rule]
    assert error.reason == rule.reason
    assert "{" not in error.message and "{" not in error.hint


def test_the_examples_get_the_messages_the_rows_spell() -> None:
    error = fails("SELECT * FROM cards WHERE reps = 0 AND")
    assert error.message == "AND must be followed by a condition."
    assert error.hint == "Complete the condition, e.g. AND reps = 0, or remove the dangling AND."
    assert error.offset == len("SELECT * FROM cards WHERE reps = 0 AND")

    error = fails("SELECT * FROM cards WHERE reps == 0")
    assert (error.message, error.offset) == ("Use a single = to compare.", 31)

    error = fails("SELECT * FROM cards WHRE reps = 0")
    assert error.message == "Unexpected 'whre'. Did you mean WHERE?"
    assert (error.hint, error.suggestions) == ("Check the spelling of WHERE.", ["WHERE"])


def test_no_two_syntax_rules_share_a_pattern() -> None:
    keys = [(r.before2, r.before, r.at, r.statement, r.check) for r in SYNTAX_RULES]
    assert len(keys) == len(set(keys))


def test_syntax_rule_patterns_name_real_token_kinds() -> None:
    kinds = set(TOKENS) - {"ERROR", "SEMI", "DOT"}
    for rule in SYNTAX_RULES:
        for pattern in (rule.before2, rule.before, rule.at):
            assert set(pattern.split("|")) <= kinds | _PATTERN_WORDS, rule
        assert rule.point in ("at", "before")
        assert rule.statement is None or rule.statement in STATEMENT_STARTS


def test_the_last_syntax_rule_fits_every_failure() -> None:
    last = SYNTAX_RULES[-1]
    assert (last.before2, last.before, last.at, last.statement, last.check) == (
        "*",
        "*",
        "*",
        None,
        None,
    )


# CONSTRUCTS: SQL left out on purpose, refused before the grammar runs ---------------------------


@pytest.mark.parametrize("row", CONSTRUCTS, ids=lambda row: row.example)
def test_every_construct_answers_its_example(row: Construct) -> None:
    error = fails(row.example)
    word = row.example[error.offset :].split()[0]
    assert error.reason == UNSUPPORTED
    assert error.message == row.message.format(word=word.upper())
    assert error.hint == row.hint
    assert word.upper() in row.match[0].upper().split("|")


def test_no_two_constructs_share_a_pattern() -> None:
    keys = [(row.match, row.statement) for row in CONSTRUCTS]
    assert len(keys) == len(set(keys))


def test_construct_patterns_are_token_kinds_or_names() -> None:
    for row in CONSTRUCTS:
        for element in row.match:
            for option in element.split("|"):
                # A keyword never lexes as a name, so a lower-case keyword could never match.
                assert option in TOKENS if option.isupper() else option not in KEYWORDS, row
        assert row.statement is None or row.statement in STATEMENT_STARTS


def test_a_construct_for_one_statement_kind_leaves_the_others_alone() -> None:
    assert fails("SELECT * FROM cards WHERE card_id IN (SELECT card_id FROM cards)").message == (
        "Subqueries are not supported."
    )
    error = fails("UPDATE cards SET reps = 0 FROM decks")
    assert error.message == "UPDATE ... FROM is not supported."
    assert error.offset == len("UPDATE cards SET reps = 0 ")


def test_a_name_in_double_quotes_is_never_a_construct() -> None:
    error = fails('SELECT "union" FROM cards WHERE reps = 0 "union"')
    assert error.message.startswith('Unexpected double-quoted "union"')


# STATEMENT_WORDS: a statement that starts with another dialect's command -----------------------


@pytest.mark.parametrize(
    ("row", "word"),
    [(row, word) for row in STATEMENT_WORDS for word in sorted(row.words)],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_every_statement_word_is_named(row: StatementWord, word: str) -> None:
    error = fails(f"{word.upper()} cards")
    assert error.reason == UNSUPPORTED
    assert error.offset == 0
    assert error.message == row.message.format(word=word.upper())
    assert error.hint == row.hint


def test_statement_words_belong_to_one_row_and_are_no_statement_of_ours() -> None:
    words = [word for row in STATEMENT_WORDS for word in row.words]
    assert len(words) == len(set(words))
    starts = {kind.lower() for kind in STATEMENT_STARTS}
    assert not starts & set(words)
    # Only SET is a keyword (of UPDATE ... SET); every other word reaches the lexer as a name.
    assert {word for word in words if word in KEYWORDS} == {"set"}


def test_a_double_quoted_statement_word_is_only_a_name() -> None:
    error = fails('"drop" cards')
    assert error.reason == "syntax_error"
    assert error.message == "A statement cannot start with 'drop'."


# MISPLACED_CALLS: a known function where it means nothing ---------------------------------------

_MISPLACED = {
    "now": "SELECT NOW() FROM cards",
    "random": "SELECT * FROM cards WHERE due_at < RANDOM()",
    "match": "SELECT MATCH('x') FROM cards",
    "any": "SELECT ANY(tags) FROM cards",
}


@pytest.mark.parametrize("name", sorted(MISPLACED_CALLS))
def test_every_misplaced_call_row_is_reachable(name: str) -> None:
    error = fails(_MISPLACED[name])
    assert (error.message, error.hint) == MISPLACED_CALLS[name]


def test_other_functions_get_the_general_misplaced_call() -> None:
    error = fails("SELECT * FROM cards WHERE due_at < LOWER(front_text)")
    message, hint = MISPLACED_CALL
    assert (error.message, error.hint) == (message.format(name="LOWER"), hint)
    assert set(MISPLACED_CALLS) <= FUNCTIONS
