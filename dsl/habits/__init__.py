"""Data: what agents write from other SQL dialects, and what it is in this language (dsl.md §9.1).

``dsl.teaching`` reads these tables when a statement fails; a new habit is a new row here.
The parser's own errors are rows of another shape, in ``parse_errors`` (read by
``dsl.language.syntax_errors``, and described there).

A row's ``match`` is a space-separated token pattern, matched from any token of the failed
statement (the row is indexed by its first element):

- a word (``getdate``) or words (``top|first``) match a name or keyword of that spelling, never a
  name in double quotes; ``'now'`` matches that string literal; operators and punctuation match
  their text (``@>``, ``::``, ``(``, ``,``; characters the lexer refuses, such as ``@`` or ``\\``,
  too);
- ``#num``, ``#str``, ``#name`` (a name), ``#word`` (a name or keyword), ``#value`` (a literal),
  ``#operand`` (a name, literal or call), ``#any`` (one token);
- ``#args`` / ``#group``: a parenthesised group, its top-level arguments as ``{k[0]}``, ``{k[1]}``…
  (``{k[-1]}`` the last); ``#array``: ``ARRAY[...]``, ``[...]``, ``(...)`` or a string;
- ``#array_column``: a name of an array column of the statement's resource;
- a trailing ``?`` makes an element optional; a leading ``¬`` is a look-ahead that must not match.

Templates (``message``, ``advice``, ``replace``, ``rewrite``, ``suggest``) are ``str.format``-like:
``{0}`` is the whole match as written, ``{1}``… each element's capture, ``{fix}`` the replacement
that was found to work, and ``{resource}``, ``{id_column}``, ``{where}``, ``{named_resource}``,
``{required_columns}``, ``{moved_to_where}``, ``{before}``, ``{after}`` come from the statement.
Filters follow a colon and chain with ``|``: ``{2[0]:unit}`` (``day`` → ``days``), ``abs``,
``sign``, ``number``, ``interval``, ``unquote``, ``quote``, ``list`` (any array spelling →
``('a', 'b')``), ``column`` (a bare column name only), ``clock`` (only a reading of the clock),
``day``, ``day_after``, ``next_year``, ``like`` (a literal usable inside a LIKE pattern),
``regex_like`` (a plain regular expression as a LIKE pattern), ``unwild`` (a LIKE pattern's text),
``underscores`` (``n`` → ``n+1`` underscores), ``upper``, ``lower``, ``cast_inner``.
A filter that does not fit its input makes that template unusable, so the next one is tried; a
field or filter that is not registered (``FIELDS`` in ``dsl.teaching.rewrites``, ``FILTERS`` in
``dsl.teaching.filters``) is a bug in the row and raises ``TemplateError``. ``{page_rows}`` and
``{write_rows}`` are the configured limits (``dsl_settings``).

Every row carries ``example``, a statement it explains: tests/dsl/test_habit_examples.py sends each
through the endpoint and fails unless that row taught the error.

``replace`` rewrites the matched tokens, ``rewrite`` the whole statement; each is tried in order,
and only a rewrite that then validates is shown as a corrected statement. ``advice`` is the hint
when a rewrite was found (``{fix}`` names it); ``fallback`` the hint when none was.
``clauses`` restricts a row to the clauses it fits (select, from, where, group, having, order,
page, set, values, returning, into; None at the statement's start), ``statements`` to statement
kinds (the first word), ``when_reason`` to errors of those reasons; ``at`` is the element the
error points at.
"""

from __future__ import annotations

from collections import defaultdict

from dsl.habits import (
    aggregates,
    arrays,
    casts,
    catalogs,
    clock,
    joins,
    nulls,
    paging,
    syntax,
    text,
    writes,
)
from dsl.habits.base import CLOCK_WORDS, INTERVAL_UNITS, Habit
from dsl.habits.names import (
    COLUMN_DEFAULTS,
    COLUMN_HINTS,
    COLUMN_SYNONYMS,
    ENUM_SYNONYMS,
    INVERSE_SYNONYMS,
    NULL_MEANINGS,
    RESOURCE_SYNONYMS,
    SCHEDULING_COMMANDS,
    VALUE_SYNONYMS,
    WRITE_SYNONYMS,
    column_synonym,
    resource_for,
)

__all__ = [
    "CLOCK_WORDS",
    "COLUMN_DEFAULTS",
    "COLUMN_HINTS",
    "COLUMN_SYNONYMS",
    "ENUM_SYNONYMS",
    "HABITS",
    "INTERVAL_UNITS",
    "INVERSE_SYNONYMS",
    "NULL_MEANINGS",
    "RESOURCE_SYNONYMS",
    "SCHEDULING_COMMANDS",
    "VALUE_SYNONYMS",
    "WRITE_SYNONYMS",
    "Habit",
    "column_synonym",
    "resource_for",
    "rows_starting_with",
    "second_keys",
]

# Earlier rows are the more specific: within one token, the first matching row explains it.
HABITS: tuple[Habit, ...] = (
    *nulls.ROWS,
    *clock.ROWS,
    *casts.ROWS,
    *arrays.ROWS,
    *text.ROWS,
    *aggregates.ROWS,
    *paging.ROWS,
    *catalogs.ROWS,
    *writes.ROWS,
    *joins.ROWS,
    *syntax.ROWS,
)


def _first_keys(habit: Habit) -> list[str]:
    head = habit.match[0]
    return head.split("|") if not head.startswith("#") else [head]


_BY_KEY: dict[str, list[Habit]] = defaultdict(list)
for _habit in HABITS:
    for _key in _first_keys(_habit):
        _BY_KEY[_key].append(_habit)

_BRACKETED = ("#array", "#args", "#group", "#operand", "#any")
_KIND_KEYS = {
    "ARRAY": ("#array", "#word", "#any"),
    "LPAREN": _BRACKETED,
    "LBRACKET": _BRACKETED,
    "IDENT": ("#name", "#word", "#operand", "#value", "#any", "#array", "#array_column"),
    "NUMBER": ("#num", "#value", "#operand", "#any"),
    "STRING": ("#str", "#value", "#operand", "#any", "#array"),
}


_ORDER = {id(habit): index for index, habit in enumerate(HABITS)}


_ONE_TOKEN = ("#name", "#word", "#num", "#str", "#any", "#array_column")


def _literal_second(habit: Habit) -> frozenset[str] | None:
    """The second element's spellings when the first element is one token and the second a
    plain word or operator; None otherwise."""
    if len(habit.match) < 2:
        return None
    first, element = habit.match[0], habit.match[1]
    if first.startswith("#") and first not in _ONE_TOKEN:
        return None
    options = [o for o in element.split("|") if o] or [element]
    if element.startswith("¬") or element.endswith("?") or any(o.startswith("#") for o in options):
        return None
    return frozenset(o.lower() for o in options)


_SECOND = {id(habit): _literal_second(habit) for habit in HABITS}


def second_keys(habit: Habit) -> frozenset[str] | None:
    """The spellings the token after a match's first may have, or None for any (a cheap test
    before the whole pattern is matched)."""
    return _SECOND[id(habit)]


def rows_starting_with(key: str, kind: str) -> list[Habit]:
    """The rows whose pattern may start at a token spelt ``key`` of type ``kind``, in table
    order (an earlier row is the more specific one)."""
    rows = list(_BY_KEY.get(key, ()))
    for wildcard in _KIND_KEYS.get(kind, ("#word", "#any")):
        rows.extend(_BY_KEY.get(wildcard, ()))
    return sorted(rows, key=lambda habit: _ORDER[id(habit)])
