"""Data: the parser's own teaching errors (dsl.md §9.1), the rows that ``dsl.language.syntax_errors`` reads.

Every table is read first match wins, in the order written: an earlier row is the more specific
one, so moving a row changes which error a statement gets. Each row of ``CONSTRUCTS`` and
``SYNTAX_RULES`` carries an ``example``, a statement that this row answers
(tests/dsl/test_syntax_errors.py checks each one, and that no two rows have the same pattern).

``STATEMENT_WORDS``: a statement that starts with a word which is not a statement here (DDL,
transaction control, permissions, other commands). ``words`` are matched against the first token
when it is a name outside double quotes or a keyword; ``{word}`` is that word in upper case.

``CONSTRUCTS``: SQL that the language leaves out on purpose, refused before the grammar runs at
the first token (the statement's own first one excepted) where a row matches. ``match`` is a token
pattern from that token on: an upper-case element is a token kind (``SELECT``, ``LPAREN``), a
lower-case one a name of that spelling (``union|intersect|except``: any of them); the first token
is never a name in double quotes. ``statement`` restricts a row to statements whose first token is
of that kind; ``{word}`` is the first token's text in upper case. Joins are found by their words:
one of ``JOIN_WORDS`` after at most two ``JOIN_QUALIFIERS``, or ``QUALIFIED_JOIN_WORDS`` after at
least one (``CROSS APPLY``), and the error points at the first word.

``SYNTAX_RULES``: what the caller reads when the grammar stops at a token. ``before2``, ``before``
and ``at`` are patterns for the two tokens before the failing one and the failing token itself,
each a choice of ``|``-separated options: ``*`` anything, even nothing; ``#token`` any token;
``$end`` no token (the end of the statement, or before its start); ``#name`` a name outside double
quotes, ``#quoted`` one in double quotes; any other option is a token kind (``WHERE``, ``LPAREN``).
``statement`` is as above; ``check`` names a test in ``dsl.language.syntax_errors`` that the row needs
beyond the token kinds (it may add placeholders). ``point`` is where the error points: ``at`` (the
failing token, or the end of the statement) or ``before`` (the token before it). Templates take
``{where}`` (the failing token described, e.g. ``number 1``, or ``end of statement``), ``{value}``
(its text), ``{before}`` (the previous token's text), ``{keyword}`` (that text in upper case),
``{before_shown}`` (the previous token described), ``{expected}`` (`` Expected a or b.`` when the
grammar accepts only a few tokens there, else empty) and ``{expected_hint}`` (what the grammar
accepts there, as a hint sentence), and those of the row's check: ``misspelt_keyword`` gives
``{did_you_mean}`` and ``{suggestion}`` (and the error's suggestions),
``stray_word_before_resource`` and ``table_alias`` give ``{resource}``.
"""

from __future__ import annotations

from dataclasses import dataclass

SYNTAX_ERROR = "syntax_error"
UNSUPPORTED = "unsupported_syntax"

JOIN_MESSAGE = (
    "JOIN is not supported: query one resource at a time, e.g. SELECT card_id FROM review_events "
    "WHERE rating = 0, then SELECT * FROM cards WHERE card_id IN (...)"
)
SEVERAL_RESOURCES_MESSAGE = (
    "Selecting from several resources (FROM a, b) is not supported: query one resource at a "
    "time, e.g. SELECT card_id FROM review_events WHERE rating = 0, then SELECT * FROM cards "
    "WHERE card_id IN (...)"
)
TWO_STEP_HINT = (
    "Run two statements: first SELECT card_id FROM review_events WHERE rating = 0, "
    "then SELECT * FROM cards WHERE card_id IN ('<id>', ...)."
)

JOIN_WORDS = frozenset({"join", "straight_join"})
QUALIFIED_JOIN_WORDS = frozenset({"apply"})  # `apply` alone is a name; CROSS / OUTER APPLY join
JOIN_QUALIFIERS = frozenset({"left", "right", "inner", "outer", "full", "cross", "natural"})


@dataclass(frozen=True, slots=True)
class StatementWord:
    words: frozenset[str]
    message: str
    hint: str


_READ_OR_WRITE = "Use SHOW TABLES, DESCRIBE, SELECT, INSERT, UPDATE or DELETE."
_OTHER_COMMANDS = frozenset(
    {"explain", "analyze", "vacuum", "pragma", "attach", "detach", "copy", "call", "merge",
     "upsert", "replace", "lock", "reindex", "prepare", "execute", "deallocate", "reset", "use"}
)  # fmt: skip

STATEMENT_WORDS: tuple[StatementWord, ...] = (
    StatementWord(
        frozenset({"create", "drop", "alter", "truncate", "rename"}),
        "{word} is not supported: the schema is fixed.",
        "Use SHOW TABLES and DESCRIBE to read the schema, and INSERT, UPDATE or DELETE to change "
        "rows.",
    ),
    StatementWord(
        frozenset({"begin", "commit", "rollback", "start", "savepoint", "release", "end", "abort"}),
        "Transaction control ({word}) is not supported.",
        "A request with writes already runs in one transaction; send the statements together, "
        "separated by ';'.",
    ),
    StatementWord(
        frozenset({"grant", "revoke"}),
        "{word} is not supported: access is controlled by API keys.",
        _READ_OR_WRITE,
    ),
    StatementWord(
        frozenset({"with"}),
        "WITH (common table expressions) is not supported.",
        "Run the inner query as its own statement first, then use its values in the next one.",
    ),
    StatementWord(
        _OTHER_COMMANDS,
        "{word} statements are not supported.",
        _READ_OR_WRITE,
    ),
    StatementWord(
        frozenset({"set"}),
        "SET statements are not supported; SET only appears in UPDATE ... SET.",
        "Write e.g. UPDATE cards SET back_text = 'Answer' WHERE card_id = '<uuid>'.",
    ),
)


@dataclass(frozen=True, slots=True)
class Construct:
    match: tuple[str, ...]
    message: str
    hint: str
    example: str
    statement: str | None = None


CONSTRUCTS: tuple[Construct, ...] = (
    Construct(
        ("SELECT",),
        "INSERT ... SELECT is not supported.",
        "Read the rows with SELECT first, then INSERT them with VALUES (...), (...).",
        example="INSERT INTO cards (front_text, back_text) SELECT front_text, back_text FROM cards",
        statement="INSERT",
    ),
    Construct(
        ("SELECT",),
        "Subqueries are not supported.",
        "Run the inner SELECT first, then use its values in a second statement, "
        "e.g. SELECT * FROM cards WHERE card_id IN ('<id>', ...).",
        example="SELECT * FROM cards WHERE deck_id IN (SELECT deck_id FROM decks)",
    ),
    Construct(
        ("FROM",),
        "UPDATE ... FROM is not supported.",
        "Look up the ids with a SELECT first, then UPDATE cards SET ... WHERE card_id IN "
        "('<id>', ...).",
        example="UPDATE cards SET reps = 0 FROM decks WHERE decks.deck_id = cards.deck_id",
        statement="UPDATE",
    ),
    Construct(
        ("union|intersect|except",),
        "{word} is not supported.",
        "Run the statements separately (a batch separated by ';' returns each result).",
        example="SELECT tag FROM cards UNION SELECT name FROM decks",
    ),
    Construct(
        ("over", "LPAREN"),
        "Window functions (OVER) are not supported.",
        "Use GROUP BY with COUNT, SUM, AVG, MIN or MAX instead.",
        example="SELECT COUNT(*) OVER (PARTITION BY tag) FROM cards",
    ),
    Construct(
        ("case", "when"),
        "CASE expressions are not supported.",
        "Filter with WHERE instead, or compute the mapping after reading the rows.",
        example="SELECT CASE WHEN reps > 3 THEN 'old' END FROM cards",
    ),
)


@dataclass(frozen=True, slots=True)
class SyntaxRule:
    before2: str
    before: str
    at: str
    message: str
    hint: str
    example: str
    reason: str = SYNTAX_ERROR
    point: str = "at"
    statement: str | None = None
    check: str | None = None


_CONNECTIVES = "WHERE|HAVING|AND|OR|NOT"

SYNTAX_RULES: tuple[SyntaxRule, ...] = (
    SyntaxRule(
        "*",
        "*",
        "#name",
        "Unexpected {where}.{did_you_mean}",
        "Check the spelling of {suggestion}.",
        example="SELECT * FROM cards WHRE reps = 0",
        check="misspelt_keyword",
    ),
    SyntaxRule(
        "*",
        _CONNECTIVES,
        "$end|AND|OR",
        "{keyword} must be followed by a condition.",
        "Complete the condition, e.g. {keyword} reps = 0, or remove the dangling {keyword}.",
        example="SELECT * FROM cards WHERE reps = 0 AND",
    ),
    SyntaxRule(
        "*",
        f"{_CONNECTIVES}|LPAREN",
        "NUMBER|MINUS|PLUS|TRUE|FALSE|NULL",
        "Unexpected {where}: a condition starts with a column.",
        "Put the column on the left of the comparison, e.g. reps = 0.",
        example="SELECT * FROM cards WHERE 0 = reps",
    ),
    SyntaxRule(
        "*",
        _CONNECTIVES,
        "#token",
        "{keyword} must be followed by a condition; found {where}.",
        "Write a condition after {keyword}, e.g. {keyword} reps = 0.",
        example="SELECT * FROM cards WHERE ORDER BY reps",
    ),
    SyntaxRule(
        "IN",
        "LPAREN",
        "RPAREN",
        "IN () needs at least one value.",
        "List the values, e.g. effort_level IN ('fast', 'medium').",
        example="SELECT * FROM cards WHERE effort_level IN ()",
    ),
    SyntaxRule(
        "VALUES|COMMA",
        "LPAREN",
        "RPAREN",
        "A VALUES row needs one value per column.",
        "Write e.g. VALUES ('Question', 'Answer').",
        example="INSERT INTO cards (front_text, back_text) VALUES ()",
    ),
    SyntaxRule(
        "FROM",
        "IDENT",
        "COMMA",
        SEVERAL_RESOURCES_MESSAGE,
        TWO_STEP_HINT,
        example="SELECT * FROM cards, decks",
        reason=UNSUPPORTED,
    ),
    SyntaxRule(
        "FROM",
        "IDENT",
        "IDENT|AS",
        "Unexpected '{before}' before {value}.",
        "Write the resource alone, e.g. SELECT * FROM {resource}.",
        example="SELECT * FROM default cards",
        point="before",
        check="stray_word_before_resource",
    ),
    SyntaxRule(
        "FROM",
        "IDENT",
        "IDENT|AS",
        "Table aliases are not supported.",
        "Remove the alias and write column names alone, e.g. SELECT * FROM {resource}.",
        example="SELECT * FROM cards AS c",
        reason=UNSUPPORTED,
        check="table_alias",
    ),
    SyntaxRule(
        "FROM",
        "IDENT",
        "LPAREN",
        "{before}(...) is not a resource; table functions are not supported.",
        "Select from one resource, e.g. SELECT * FROM cards.",
        example="SELECT * FROM lower(front_text)",
        reason=UNSUPPORTED,
        point="before",
        statement="SELECT",
    ),
    SyntaxRule(
        "SELECT|DISTINCT",
        "TIMES",
        "COMMA",
        "* must stand alone in the select list.",
        "Write SELECT * FROM cards, or list the columns: SELECT card_id, tag FROM cards.",
        example="SELECT *, tag FROM cards",
    ),
    SyntaxRule(
        "LIMIT",
        "NUMBER",
        "COMMA",
        "LIMIT takes one number.",
        "Write LIMIT 20 OFFSET 40 instead of LIMIT 40, 20.",
        example="SELECT * FROM cards LIMIT 40, 20",
    ),
    SyntaxRule(
        "*",
        "INTERVAL",
        "*",
        "INTERVAL takes a quoted amount and unit.",
        "Write e.g. NOW() - INTERVAL '7 days'.",
        example="SELECT * FROM cards WHERE due_at < NOW() - INTERVAL 7",
    ),
    SyntaxRule(
        "*",
        "LIMIT|OFFSET",
        "*",
        "{keyword} takes a whole number; found {where}.",
        "Write e.g. LIMIT 20 OFFSET 0.",
        example="SELECT * FROM cards LIMIT ten",
    ),
    SyntaxRule(
        "INTO",
        "IDENT",
        "VALUES",
        "INSERT needs an explicit column list.",
        "Write e.g. INSERT INTO cards (front_text, back_text) VALUES ('Question', 'Answer').",
        example="INSERT INTO cards VALUES ('Question', 'Answer')",
    ),
    SyntaxRule(
        "*",
        "EQ",
        "EQ",
        "Use a single = to compare.",
        "Write e.g. reps = 0.",
        example="SELECT * FROM cards WHERE reps == 0",
        point="before",
    ),
    SyntaxRule(
        "*",
        "IS",
        "#token",
        "IS only tests for NULL; found {where}.",
        "Write column IS NULL or column IS NOT NULL; compare booleans with =, e.g. "
        "enable_fuzz = TRUE.",
        example="SELECT * FROM decks WHERE enable_fuzz IS TRUE",
    ),
    SyntaxRule(
        "*",
        "*",
        "#quoted",
        'Unexpected double-quoted "{value}".{expected}',
        "Strings take single quotes; double quotes are for names, e.g. front_text = 'Hola'.",
        example='SELECT * FROM cards ORDER BY reps "desc"',
    ),
    SyntaxRule(
        "LPAREN",
        "IDENT",
        "LPAREN",
        "Function calls cannot be nested.",
        "Apply one function to a column, e.g. COUNT(DISTINCT tag) or LOWER(front_text).",
        example="SELECT COUNT(LOWER(tag)) FROM cards",
        reason=UNSUPPORTED,
    ),
    SyntaxRule(
        "*",
        "#token",
        "$end",
        "Unexpected end of statement after {before_shown}.{expected}",
        "{expected_hint}",
        example="SELECT * FROM cards WHERE reps =",
    ),
    SyntaxRule(
        "*",
        "*",
        "*",
        "Unexpected {where}.{expected}",
        "{expected_hint}",
        example="SELECT * FROM cards WHERE reps = 0 0",
    ),
)

# A known function written where it means nothing: its name -> message and hint; any other
# function gets MISPLACED_CALL, whose {name} is the function's name in upper case.
MISPLACED_CALLS: dict[str, tuple[str, str]] = {
    "now": ("NOW() is a value.", "Use it on the right of a comparison, e.g. due_at < NOW()."),
    "random": (
        "RANDOM() only appears as ORDER BY RANDOM().",
        "Write ORDER BY RANDOM() LIMIT 10 to sample rows.",
    ),
    "match": (
        "MATCH('text') is a condition on its own, not a value.",
        "Write WHERE MATCH('text').",
    ),
    "any": (
        "ANY(array_column) only appears as 'value' = ANY(array_column).",
        "Write 'english' = ANY(tags).",
    ),
}
MISPLACED_CALL = (
    "{name}(...) cannot be used as a value; only NOW() can.",
    "Compare a column with a literal, e.g. due_at < NOW() - INTERVAL '1 day'.",
)
