"""Data: what agents write from other SQL dialects, and what it is in this language (dsl.md §9.1).

``dsl.diagnostics`` reads these tables when a statement fails; a new habit is a new row here.

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
- a trailing ``?`` makes an element optional; a leading ``!`` is a look-ahead that must not match.

Templates (``message``, ``advice``, ``replace``, ``rewrite``, ``suggest``) are ``str.format``-like:
``{0}`` is the whole match as written, ``{1}``… each element's capture, ``{fix}`` the replacement
that was found to work, and ``{resource}``, ``{id_column}``, ``{where}``, ``{named_resource}``,
``{required_columns}``, ``{moved_to_where}``, ``{before}``, ``{after}`` come from the statement.
Filters follow a colon and chain with ``|``: ``{2[0]:unit}`` (``day`` → ``days``), ``abs``,
``sign``, ``flip``, ``number``, ``interval``, ``unquote``, ``quote``, ``list`` (any array spelling →
``('a', 'b')``), ``column`` (a bare column name only), ``clock`` (only a reading of the clock),
``day``, ``day_after``, ``next_year``, ``like`` (a literal usable inside a LIKE pattern),
``regex_like`` (a plain regular expression as a LIKE pattern), ``unwild`` (a LIKE pattern's text),
``underscores`` (``n`` → ``n+1`` underscores), ``upper``, ``lower``, ``cast_inner``.
A filter that does not fit its input makes that template unusable, so the next one is tried.

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
from dataclasses import dataclass, field

# A name read as the current moment in some dialect.
CLOCK_WORDS = frozenset(
    {
        "now",
        "current_timestamp",
        "current_date",
        "current_time",
        "getdate",
        "getutcdate",
        "sysdate",
        "sysdatetime",
        "sysutcdatetime",
        "systimestamp",
        "localtimestamp",
        "localtime",
        "curdate",
        "curtime",
        "utc_timestamp",
        "utc_date",
        "clock_timestamp",
        "statement_timestamp",
        "transaction_timestamp",
        "today",
    }
)

INTERVAL_UNITS = {
    **dict.fromkeys(("minute", "minutes", "min", "mins", "mi", "n"), "minutes"),
    **dict.fromkeys(("hour", "hours", "hh", "h"), "hours"),
    **dict.fromkeys(("day", "days", "dd", "d", "dy", "dayofyear", "y"), "days"),
    **dict.fromkeys(("week", "weeks", "wk", "ww", "w"), "weeks"),
    **dict.fromkeys(("month", "months", "mm", "m", "mon", "mons"), "months"),
    **dict.fromkeys(("year", "years", "yy", "yyyy", "yr", "yrs"), "years"),
}

ANY = None  # ``clauses`` value: the row fits anywhere


@dataclass(frozen=True, slots=True)
class Habit:
    family: str
    match: tuple[str, ...]
    message: str
    advice: str
    replace: tuple[str, ...] = ()
    rewrite: tuple[str, ...] = ()
    fallback: str | None = None
    at: int = 0
    clauses: frozenset[str | None] | None = None
    statements: frozenset[str] | None = None
    when_reason: frozenset[str] | None = None
    reason: str | None = None
    """None keeps the original error's reason: a row explains a rejection, it does not
    reclassify it (dsl.md §9: no error loses its reason)."""
    suggest: tuple[str, ...] = ()
    overrides: bool = False
    """Explain this habit even when the original error points earlier in the statement."""
    tags: tuple[str, ...] = field(default=())


def _h(
    family: str,
    match: str,
    message: str,
    advice: str,
    *,
    replace: str | tuple[str, ...] = (),
    rewrite: str | tuple[str, ...] = (),
    fallback: str | None = None,
    at: int = 0,
    clauses: str | None = None,
    statements: str | None = None,
    when_reason: str | None = None,
    reason: str | None = None,
    suggest: str | tuple[str, ...] = (),
    overrides: bool = False,
) -> Habit:
    def _tuple(value: str | tuple[str, ...]) -> tuple[str, ...]:
        return (value,) if isinstance(value, str) else value

    def _set(value: str | None) -> frozenset[str | None] | None:
        if value is None:
            return None
        return frozenset(None if v == "-" else v for v in value.split())

    return Habit(
        family=family,
        match=tuple(match.split()),
        message=message,
        advice=advice,
        replace=_tuple(replace),
        rewrite=_tuple(rewrite),
        fallback=fallback,
        at=at,
        clauses=_set(clauses),
        statements=frozenset(statements.split()) if statements else None,
        when_reason=frozenset(when_reason.split()) if when_reason else None,
        reason=reason,
        suggest=_tuple(suggest),
        overrides=overrides,
    )


_CLOCK_NAMES = "|".join(sorted(CLOCK_WORDS - {"now", "current_timestamp"}))
_VALUE_CLAUSES = "select where having set values order group"
_READ_FIRST = "SELECT {id_column}, {1} FROM {resource} WHERE {where}"

HABITS: tuple[Habit, ...] = (
    # -- the clock and dates -----------------------------------------------------------------
    _h(
        "clock",
        "current_timestamp ( )",
        "CURRENT_TIMESTAMP takes no parentheses here.",
        "Write {fix} (or CURRENT_TIMESTAMP without parentheses)",
        replace="NOW()",
    ),
    _h(
        "clock",
        f"{_CLOCK_NAMES} #group?",
        "{1:upper} is not part of this language: the clock is NOW() (the current UTC moment).",
        "Write NOW() instead of {0}; for a day boundary compare with NOW() - INTERVAL '1 day'",
        replace="NOW()",
        fallback="Write NOW() instead of {0}, e.g. due_at <= NOW()",
    ),
    _h(
        "clock",
        "date|datetime|strftime|julianday|unixepoch ( 'now' )",
        "{1}('now') is SQLite's clock; here the current moment is NOW().",
        "Write NOW() instead of {0}",
        replace="NOW()",
    ),
    _h(
        "clock",
        "date|datetime ( 'now' , #str )",
        "{1}('now', ...) is SQLite's date arithmetic; here it is NOW() plus or minus an INTERVAL.",
        "Write {fix} instead of {0}",
        replace="NOW() {5:modifier}",
        fallback="Write NOW() - INTERVAL '7 days' (units: minutes, hours, days, weeks, months, years)",
    ),
    _h(
        "clock",
        "dateadd|timestampadd #args",
        "{1:upper}() is not supported: date arithmetic is NOW() plus or minus an INTERVAL.",
        "Write {fix} instead of {0}",
        replace="{2[2]:clock} {2[1]:sign} INTERVAL '{2[1]:abs} {2[0]:unit}'",
        fallback="Compare with NOW() plus or minus an INTERVAL, e.g. due_at < NOW() + INTERVAL '7 days'",
    ),
    _h(
        "clock",
        "date_add|adddate #args",
        "{1:upper}() is not supported: date arithmetic is NOW() plus or minus an INTERVAL.",
        "Write {fix} instead of {0}",
        replace=(
            "{2[0]:clock} + INTERVAL '{2[1]:interval}'",
            "{2[0]:clock} + INTERVAL '{2[1]:number} days'",
        ),
        fallback="Compare with NOW() plus or minus an INTERVAL, e.g. due_at < NOW() + INTERVAL '7 days'",
    ),
    _h(
        "clock",
        "date_sub|subdate #args",
        "{1:upper}() is not supported: date arithmetic is NOW() plus or minus an INTERVAL.",
        "Write {fix} instead of {0}",
        replace=(
            "{2[0]:clock} - INTERVAL '{2[1]:interval}'",
            "{2[0]:clock} - INTERVAL '{2[1]:number} days'",
        ),
        fallback="Compare with NOW() minus an INTERVAL, e.g. reviewed_at_server > NOW() - INTERVAL '7 days'",
    ),
    _h(
        "clock",
        "interval #num #word",
        "INTERVAL takes its amount and unit in one quoted string.",
        "Write {fix}",
        replace="INTERVAL '{2} {3:unit}'",
        at=1,
        fallback="Write e.g. NOW() - INTERVAL '7 days' (units: minutes, hours, days, weeks, months, years)",
    ),
    _h(
        "clock",
        "interval #str #word",
        "INTERVAL takes its amount and unit in one quoted string.",
        "Write {fix}",
        replace="INTERVAL '{2:number} {3:unit}'",
        at=1,
        fallback="Write e.g. NOW() - INTERVAL '7 days' (units: minutes, hours, days, weeks, months, years)",
    ),
    _h(
        "clock",
        "#str :: interval",
        "Type casts (::) are not supported; intervals are written INTERVAL '<n> <unit>'.",
        "Write {fix}",
        replace="INTERVAL '{1:interval}'",
        at=1,
    ),
    _h(
        "clock",
        "datediff #args <=|< #num",
        "DATEDIFF() is not supported: compare the datetime with NOW() and an INTERVAL.",
        "Write {fix}",
        replace=(
            "{2[1]:column} >= {2[2]:clock} - INTERVAL '{4} {2[0]:unit}'",
            "{2[1]:column} >= {2[0]:clock} - INTERVAL '{4} days'",
        ),
        clauses="where having",
    ),
    _h(
        "clock",
        "datediff #args >=|> #num",
        "DATEDIFF() is not supported: compare the datetime with NOW() and an INTERVAL.",
        "Write {fix}",
        replace=(
            "{2[1]:column} <= {2[2]:clock} - INTERVAL '{4} {2[0]:unit}'",
            "{2[1]:column} <= {2[0]:clock} - INTERVAL '{4} days'",
        ),
        clauses="where having",
    ),
    _h(
        "clock",
        "datediff|timestampdiff|date_diff|age|julianday|unixepoch|epoch #args",
        "{1:upper}() is not supported: datetimes are compared directly, with NOW() and INTERVAL.",
        "Compare the column with NOW() and an INTERVAL, e.g. due_at < NOW() + INTERVAL '7 days'",
    ),
    _h(
        "clock",
        "date_trunc|datetrunc|trunc #args = #str",
        "{1:upper}() is not supported; a calendar day is a range of datetimes in a condition.",
        "Write {fix}",
        replace="{2[1]:column} >= {4:day} AND {2[1]:column} < {4:day_after}",
        clauses="where having",
    ),
    _h(
        "clock",
        "date_trunc|datetrunc #args",
        "{1:upper}() is not supported; the calendar date of a datetime is DATE(column).",
        "Write {fix} (the UTC day) instead of {0}",
        replace="DATE({2[1]:column})",
        fallback="Use DATE(column) in the select list, GROUP BY or ORDER BY, and a range in WHERE, e.g. created_at >= '2026-03-01' AND created_at < '2026-04-01'",
    ),
    _h(
        "clock",
        "extract ( year FROM #name ) = #num",
        "EXTRACT() is not supported; a year is a range of datetimes in a condition.",
        "Write {fix}",
        replace="{5} >= '{8}-01-01' AND {5} < '{8:next_year}-01-01'",
        clauses="where having",
    ),
    _h(
        "clock",
        "year ( #name ) = #num",
        "YEAR() is not supported; a year is a range of datetimes in a condition.",
        "Write {fix}",
        replace="{3} >= '{6}-01-01' AND {3} < '{6:next_year}-01-01'",
        clauses="where having",
    ),
    _h(
        "clock",
        "extract ( #word FROM #name )",
        "EXTRACT() is not supported; the only date function is DATE(column), the UTC calendar day.",
        "Write {fix} (one value per day; add the days up per {3} after reading)",
        replace="DATE({5})",
        fallback="Filter with a range instead, e.g. {5} >= '2026-01-01' AND {5} < '2027-01-01'",
    ),
    _h(
        "clock",
        "year|month|day|dayofmonth|dayofweek|dayofyear|hour|minute|week|weekday|quarter #args",
        "{1:upper}() is not supported; the only date function is DATE(column), the UTC calendar day.",
        "Write {fix} (one value per day) instead of {0}",
        replace="DATE({2[0]:column})",
        fallback="Filter with a range instead, e.g. {2[0]} >= '2026-01-01' AND {2[0]} < '2027-01-01'",
    ),
    _h(
        "clock",
        "datepart|date_part|datename #args",
        "{1:upper}() is not supported; the only date function is DATE(column), the UTC calendar day.",
        "Write {fix} (one value per day) instead of {0}",
        replace="DATE({2[1]:column})",
        fallback="Filter with a range instead, e.g. {2[1]} >= '2026-01-01' AND {2[1]} < '2027-01-01'",
    ),
    _h(
        "clock",
        "strftime|to_char|date_format|format|to_date|to_timestamp #args",
        "{1:upper}() is not supported: datetimes come back as ISO-8601 UTC strings; DATE(column) gives the calendar day.",
        "Write {fix} instead of {0}",
        replace=("DATE({2[1]:column})", "DATE({2[0]:column})"),
        fallback="Compare datetimes with ISO-8601 literals, e.g. created_at >= '2026-03-01'",
    ),
    _h(
        "clock",
        "cast ( #name as date ) = #str",
        "CAST() is not supported; a calendar day is a range of datetimes in a condition.",
        "Write {fix}",
        replace="{3} >= {8:day} AND {3} < {8:day_after}",
        clauses="where having",
    ),
    _h(
        "clock",
        "date ( #name ) = #str",
        "DATE() only appears in the select list, GROUP BY and ORDER BY; in a condition a day is a range.",
        "Write {fix}",
        replace="{3} >= {6:day} AND {3} < {6:day_after}",
        clauses="where having",
        overrides=True,
    ),
    _h(
        "clock",
        "#name :: date = #str",
        "Type casts (::) are not supported; a calendar day is a range of datetimes in a condition.",
        "Write {fix}",
        replace="{1} >= {5:day} AND {1} < {5:day_after}",
        clauses="where having",
        at=1,
    ),
    _h(
        "clock",
        "cast ( #name as date|datetime2|smalldatetime )",
        "CAST() is not supported; the calendar date of a datetime is DATE(column).",
        "Write {fix} instead of {0}",
        replace="DATE({3})",
        fallback="Compare the datetime with a range instead, e.g. {3} >= '2026-03-05' AND {3} < '2026-03-06'",
    ),
    _h(
        "clock",
        "convert ( date , #name #any? #any? )",
        "CONVERT() is not supported; the calendar date of a datetime is DATE(column).",
        "Write {fix} instead of {0}",
        replace="DATE({5})",
        fallback="Compare the datetime with a range instead, e.g. {5} >= '2026-03-05' AND {5} < '2026-03-06'",
    ),
    _h(
        "clock",
        "#name :: date",
        "Type casts (::) are not supported; the calendar date of a datetime is DATE(column).",
        "Write {fix} instead of {0}",
        replace="DATE({1})",
        fallback="Compare the datetime with a range instead, e.g. {1} >= '2026-03-05' AND {1} < '2026-03-06'",
        at=1,
    ),
    # -- casts in general ----------------------------------------------------------------------
    _h(
        "aggregates",
        "cast #args",
        "CAST() is not supported: every column and literal already has its type.",
        "Write {fix} without the cast",
        replace="{2[0]:cast_inner}",
        fallback="Drop the cast and write literals of the column's type, e.g. reps = 3",
    ),
    _h(
        "aggregates",
        "convert|try_cast|try_convert #args",
        "{1:upper}() is not supported: every column and literal already has its type.",
        "Write {fix} without the conversion",
        replace=("{2[1]:column}", "{2[0]:cast_inner}"),
        fallback="Drop the conversion and write literals of the column's type, e.g. reps = 3",
    ),
    _h(
        "aggregates",
        "#operand :: #word",
        "Type casts (::) are not supported: every column and literal already has its type.",
        "Write {fix} without the cast",
        replace="{1}",
        at=1,
        fallback="Drop the cast and write literals of the column's type, e.g. due_at < '2026-03-05'",
    ),
    # -- arrays and tags -----------------------------------------------------------------------
    _h(
        "arrays",
        "#name @> #array",
        "The @> operator is not supported; an array holding all of some values is CONTAINS.",
        "Write {fix}",
        replace="{1} CONTAINS {3:list}",
        at=1,
        fallback="Write e.g. tags CONTAINS ('english', 'verbs') for all of them or tags OVERLAP ('english') for any",
    ),
    _h(
        "arrays",
        "#array <@ #name",
        "The <@ operator is not supported; an array holding all of some values is CONTAINS.",
        "Write {fix}",
        replace="{3} CONTAINS {1:list}",
        at=1,
    ),
    _h(
        "arrays",
        "#name < @ #array",
        "The <@ (is contained by) operator is not supported.",
        "Use {fix} for cards with any of these tags, or CONTAINS for all of them",
        replace="{1} OVERLAP {4:list}",
        at=1,
    ),
    _h(
        "arrays",
        "#name && #array",
        "The && operator is not supported; arrays sharing a value is OVERLAP.",
        "Write {fix}",
        replace="{1} OVERLAP {3:list}",
        at=1,
        fallback="Write e.g. tags OVERLAP ('english', 'verbs'); combine conditions with AND",
    ),
    _h(
        "arrays",
        "#value = any|some ( #array_column )",
        "= ANY works only as 'value' = ANY(tags) here.",
        "Write {fix}",
        replace="{5} OVERLAP ({1})",
    ),
    _h(
        "arrays",
        "#value = all ( #array_column )",
        "= ALL(array) is not supported.",
        "Use {fix} for cards holding this tag",
        replace="{5} CONTAINS ({1})",
    ),
    _h(
        "arrays",
        "#value in #array_column",
        "IN takes a list of values; whether an array holds a value is OVERLAP.",
        "Write {fix}",
        replace="{3} OVERLAP ({1})",
        at=1,
    ),
    _h(
        "arrays",
        "#value in ( #array_column )",
        "IN takes a list of values; whether an array holds a value is OVERLAP.",
        "Write {fix}",
        replace="{4} OVERLAP ({1})",
        at=1,
    ),
    _h(
        "arrays",
        "#array_column contains|overlap #str",
        "{2:upper} takes a parenthesised list of values.",
        "Write {fix} (a list is written ('tag1', 'tag2'))",
        replace="{1} {2:upper} {3:list}",
        at=2,
    ),
    _h(
        "arrays",
        "#array_column = #str",
        "{1} is an array; compare it with an array, or test for one tag with OVERLAP.",
        "Write {fix} for the {1} holding {3}, or {1} = ({3}) for exactly that one (a list is written ('tag1', 'tag2'))",
        replace="{1} OVERLAP {3:list}",
        clauses="where having",
        when_reason="type_mismatch",
        at=2,
    ),
    _h(
        "arrays",
        "#array_column = #str",
        "{1} is an array: write the whole list of values.",
        "Write {fix} (a list is written ('tag1', 'tag2'))",
        replace="{1} = {3:list}",
        clauses="set",
        when_reason="type_mismatch",
        at=2,
    ),
    _h(
        "arrays",
        "#array_column :: #word not? like|ilike #str",
        "Type casts (::) are not supported; search tags with the tag column or MATCH.",
        "Write {fix}",
        replace=("{1} OVERLAP ({6:like|quote})", "tag {4}{5} {6}", "MATCH({6:unwild|quote})"),
        at=1,
    ),
    _h(
        "arrays",
        "#array_column not? like|ilike #str",
        "{3:upper} works on strings; {1} is an array.",
        "Write {fix}",
        replace=("{1} OVERLAP ({4:like|quote})", "tag {2}{3} {4}", "MATCH({4:unwild|quote})"),
        when_reason="type_mismatch",
        at=2,
    ),
    _h(
        "arrays",
        "#array_column is null",
        "{1} is never NULL: a card without tags has {1} = ().",
        "Write {fix}",
        replace="{1} = ()",
        when_reason="type_mismatch",
        overrides=True,
    ),
    _h(
        "arrays",
        "#array_column is not null",
        "{1} is never NULL: a card without tags has {1} = ().",
        "Write {fix}",
        replace="NOT {1} = ()",
        when_reason="type_mismatch",
        overrides=True,
    ),
    _h(
        "arrays",
        "find_in_set #args >|!=|<>|>=? #num?",
        "FIND_IN_SET() is not supported; whether an array holds a value is OVERLAP.",
        "Write {fix}",
        replace="{2[1]:column} OVERLAP ({2[0]})",
    ),
    _h(
        "arrays",
        "json_contains|jsonb_contains #args",
        "{1:upper}() is not supported; tags are an array with OVERLAP (any) and CONTAINS (all).",
        "Write {fix}",
        replace="{2[0]:column} CONTAINS {2[1]:list}",
        fallback="Write e.g. tags OVERLAP ('english') or tags CONTAINS ('english', 'verbs')",
    ),
    _h(
        "arrays",
        "array_contains|has|arrayhas|array_has|list_contains #args",
        "{1:upper}() is not supported; whether an array holds a value is OVERLAP.",
        "Write {fix}",
        replace="{2[0]:column} OVERLAP ({2[1]})",
    ),
    _h(
        "arrays",
        "array_position|array_indexof|indexof #args",
        "{1:upper}() is not supported; whether an array holds a value is OVERLAP.",
        "Write {fix}",
        replace="{2[0]:column} OVERLAP ({2[1]})",
        fallback="Write e.g. tags OVERLAP ('english')",
    ),
    _h(
        "arrays",
        "array_length|cardinality|json_array_length|jsonb_array_length|json_length|array_upper|len|length|coalesce #args = 0",
        "{1:upper}() is not supported; an empty array is written ().",
        "Write {fix}",
        replace="{2[0]:column} = ()",
    ),
    _h(
        "arrays",
        "array_length|cardinality|json_array_length|jsonb_array_length|json_length|array_upper|len|length #args >|!=|<> 0",
        "{1:upper}() is not supported; an empty array is written ().",
        "Write {fix}",
        replace="NOT {2[0]:column} = ()",
    ),
    _h(
        "arrays",
        "array_length|cardinality|json_array_length|jsonb_array_length|json_length|array_upper|len|length #args >= 1",
        "{1:upper}() is not supported; an empty array is written ().",
        "Write {fix}",
        replace="NOT {2[0]:column} = ()",
    ),
    _h(
        "arrays",
        "array_length|cardinality|json_array_length|jsonb_array_length|json_length|array_upper #args",
        "{1:upper}() is not supported: there is no array length.",
        "Count tags per card after reading them, or count cards per tag with SELECT tag, COUNT(*) FROM cards GROUP BY tag; test for no tags with tags = ()",
    ),
    _h(
        "arrays",
        "unnest ( #array_column )",
        "unnest() is not a function here; the virtual column tag gives one row per (card, tag).",
        "Write {fix}",
        replace="tag",
        clauses="select group order",
        fallback="Write e.g. SELECT tag, COUNT(*) FROM cards GROUP BY tag, or FROM cards UNNEST tags AS t",
    ),
    _h(
        "arrays",
        "array_append|array_prepend|array_cat|array_remove|array_replace|array_concat|json_array_append|json_insert|json_remove|json_set #args",
        "{1:upper}() is not supported: write the whole new list of values.",
        "Read the current list first, then write all of it, e.g. UPDATE {resource} SET {2[0]} = ('english', 'verbs') WHERE {where}",
        rewrite=_READ_FIRST.replace("{1}", "{2[0]:column}"),
        clauses="set",
        fallback="Write the whole new list, e.g. SET tags = ('english', 'verbs')",
    ),
    _h(
        "arrays",
        "array_append|array_prepend|array_cat|array_remove|array_to_string|array_join|string_to_array|json_extract|json_each|json_array_elements|jsonb_array_elements|json_value|json_query|openjson|json_unquote #args",
        "{1:upper}() is not supported: tags are an array column with OVERLAP, CONTAINS and the tag column.",
        "Read tags as a list, filter with e.g. tags OVERLAP ('english'), or use one row per tag with SELECT card_id, tag FROM cards",
    ),
    _h(
        "arrays",
        "#array_column = #array_column || #any",
        "There is no concatenation (||): write the whole new list.",
        "Read the current list first, then write all of it, e.g. SET {1} = ('english', 'verbs', 'new')",
        rewrite=_READ_FIRST.replace("{1}", "{3:column}"),
        clauses="set",
        at=3,
    ),
    _h(
        "writes",
        "#name = #name || #any",
        "There is no concatenation (||): write the whole new value.",
        "Read the current text first, then write all of it, e.g. SET {1} = 'the whole new text'",
        rewrite=_READ_FIRST.replace("{1}", "{3:column}"),
        clauses="set",
        at=3,
    ),
    _h(
        "writes",
        "concat|concat_ws #args",
        "CONCAT() is not supported: write the whole new value.",
        "Read the current value first, then write all of it, e.g. SET back_text = 'the whole new text'",
        rewrite="SELECT {id_column}, {2[0]:column} FROM {resource} WHERE {where}",
        clauses="set",
    ),
    _h(
        "writes",
        "#name = #name +|- #num",
        "Arithmetic is not supported; {1} is written by the scheduler, not by UPDATE.",
        "Submit a review (POST /v1/agent/reviews) to change scheduling counters; read the value with {fix}",
        rewrite=_READ_FIRST.replace("{1}", "{1:column}"),
        clauses="set",
        at=3,
    ),
    _h(
        "text",
        "#any || #any",
        "|| is not an operator here: text cannot be concatenated, and OR is written OR.",
        "Write {fix}",
        replace="{1} OR {3}",
        clauses="where having",
        at=1,
        fallback="Combine conditions with OR; search text with LIKE, e.g. front_text LIKE '%hola%'",
    ),
    _h(
        "names",
        "rating =|!=|<> #str",
        "rating is a number (0 again, 1 hard, 2 good, 3 easy); the word is review_grade.",
        "Write {fix}",
        replace="review_grade {2} {3:lower}",
        when_reason="type_mismatch invalid_value",
    ),
    _h(
        "names",
        "rating not? in ( #str",
        "rating is a number (0 again, 1 hard, 2 good, 3 easy); the word is review_grade.",
        "Compare the words with review_grade {2} IN (...) instead",
        replace="review_grade {2} IN ({5:lower}",
        when_reason="type_mismatch invalid_value",
    ),
    # -- text search ---------------------------------------------------------------------------
    _h(
        "text",
        "#name ~ * #str",
        "The ~* (regular expression) operator is not supported; patterns are written with ILIKE.",
        "Write {fix}",
        replace="{1} ILIKE {4:regex_like}",
        at=1,
        fallback="Write {1} ILIKE '%text%' (% any run, _ one character), or MATCH('text')",
    ),
    _h(
        "text",
        "#name ! ~ * #str",
        "The !~* operator is not supported; patterns are written with NOT ILIKE.",
        "Write {fix}",
        replace="{1} NOT ILIKE {5:regex_like}",
        at=1,
    ),
    _h(
        "text",
        "#name ! ~ #str",
        "The !~ operator is not supported; patterns are written with NOT LIKE.",
        "Write {fix}",
        replace="{1} NOT LIKE {4:regex_like}",
        at=1,
    ),
    _h(
        "text",
        "#name ~ #str",
        "The ~ (regular expression) operator is not supported; patterns are written with LIKE.",
        "Write {fix}",
        replace="{1} LIKE {3:regex_like}",
        at=1,
        fallback="Write {1} LIKE '%text%' (% any run, _ one character), or ILIKE to ignore case",
    ),
    _h(
        "text",
        "#name not? regexp|rlike|regexp_like|similar #str",
        "{3:upper} is not supported; patterns are written with LIKE / ILIKE (% any run, _ one character).",
        "Write {fix}",
        replace="{1} {2}ILIKE {4:regex_like}",
        at=2,
        fallback="Write {1} ILIKE '%text%', or MATCH('text')",
    ),
    _h(
        "text",
        "#name not? similar to #str",
        "SIMILAR TO is not supported; patterns are written with LIKE (% any run, _ one character).",
        "Write {fix}",
        replace="{1} {2}LIKE {5}",
        at=2,
    ),
    _h(
        "text",
        "regexp_like|regexp_matches|regexp_contains|regexp_instr #args",
        "{1:upper}() is not supported; patterns are written with LIKE / ILIKE.",
        "Write {fix}",
        replace="{2[0]:column} ILIKE {2[1]:regex_like}",
        fallback="Write e.g. front_text ILIKE '%text%', or MATCH('text')",
    ),
    _h(
        "text",
        "contains ( #name , #str )",
        "CONTAINS(column, 'text') is SQL Server's full-text search; here substring search is ILIKE or MATCH.",
        "Write {fix}",
        replace=("{3} ILIKE '%{5:like}%'", "MATCH({5})"),
        clauses="where having",
        fallback="Write e.g. front_text ILIKE '%text%', or MATCH('text') over all text columns",
    ),
    _h(
        "text",
        "freetext|contains|containstable|freetexttable ( #any , #str )",
        "{1:upper}() is SQL Server's full-text search; here it is MATCH('text').",
        "Write {fix}",
        replace="MATCH({5})",
    ),
    _h(
        "text",
        "match #args against #group",
        "MATCH ... AGAINST is MySQL's full-text search; here it is MATCH('text') alone.",
        "Write {fix}",
        replace="MATCH({4[0]:search})",
        at=2,
    ),
    _h(
        "text",
        "to_tsvector #args @ @ to_tsquery|plainto_tsquery|websearch_to_tsquery|phraseto_tsquery #args",
        "Full-text search with @@ is not supported; here it is MATCH('text').",
        "Write {fix}",
        replace="MATCH({6[-1]:search})",
        at=2,
    ),
    _h(
        "text",
        "#name @ @ #any",
        "The @@ operator is not supported; full-text search is MATCH('text').",
        "Write e.g. MATCH('text') (a case-insensitive substring search over the text columns)",
        at=1,
    ),
    _h(
        "text",
        "charindex|locate #args >|>=|!=|<> #num",
        "{1:upper}() is not supported; a substring test is LIKE '%text%'.",
        "Write {fix}",
        replace="{2[1]:column} LIKE '%{2[0]:like}%'",
    ),
    _h(
        "text",
        "instr|strpos|position #args >|>=|!=|<> #num",
        "{1:upper}() is not supported; a substring test is LIKE '%text%'.",
        "Write {fix}",
        replace=(
            "{2[0]:column} LIKE '%{2[1]:like}%'",
            "{2[0]:position_column} LIKE '%{2[0]:position_text}%'",
        ),
    ),
    _h(
        "text",
        "charindex|locate|instr|strpos|position #args = 0",
        "{1:upper}() is not supported; a substring test is LIKE '%text%'.",
        "Write {fix}",
        replace=(
            "{2[1]:column} NOT LIKE '%{2[0]:like}%'",
            "{2[0]:column} NOT LIKE '%{2[1]:like}%'",
        ),
    ),
    _h(
        "text",
        "left|substring|substr #args = #str",
        "{1:upper}() is not supported; a prefix test is LIKE 'text%'.",
        "Write {fix}",
        replace="{2[0]:column} LIKE '{4:like}%'",
    ),
    _h(
        "text",
        "right #args = #str",
        "RIGHT() is not supported; a suffix test is LIKE '%text'.",
        "Write {fix}",
        replace="{2[0]:column} LIKE '%{4:like}'",
    ),
    _h(
        "text",
        "length|len|char_length|character_length|octet_length #args > #num",
        "{1:upper}() is not supported; a minimum length is a LIKE pattern of underscores.",
        "Write {fix} (each _ is one character)",
        replace="{2[0]:column} LIKE '{4:underscores}%'",
    ),
    _h(
        "text",
        "length|len|char_length|character_length #args = 0",
        "{1:upper}() is not supported; an empty text is ''.",
        "Write {fix}",
        replace="{2[0]:column} = ''",
    ),
    _h(
        "text",
        "length|len|char_length|character_length|octet_length|datalength #args",
        "{1:upper}() is not supported: there is no text length.",
        "Read the text and measure it after reading; a minimum length is a LIKE pattern of underscores, e.g. front_text LIKE '___%' (at least 3 characters)",
    ),
    _h(
        "text",
        "#name collate #word = #str",
        "COLLATE is not supported; a case-insensitive comparison is LOWER(column) = 'text' or ILIKE.",
        "Write {fix}",
        replace="LOWER({1}) = {5:lower}",
        at=1,
    ),
    _h(
        "text",
        "#name collate #word",
        "COLLATE is not supported: strings already compare with = and LIKE case-sensitively, ILIKE and LOWER() without case, and sort case-insensitively first.",
        "Write {fix} without COLLATE",
        replace="{1}",
        at=1,
        fallback="Write LOWER(column) = 'text' or column ILIKE 'text' for a case-insensitive comparison",
    ),
    _h(
        "text",
        "trim|ltrim|rtrim|btrim|initcap|reverse|replace|soundex|translate #args",
        "{1:upper}() is not supported: text values are stored trimmed and come back as written.",
        "Write {fix} and transform the text after reading",
        replace="{2[0]:column}",
        clauses="select order group",
        fallback="Compare the column itself, e.g. front_text = 'text' or front_text ILIKE '%text%'",
    ),
    _h(
        "text",
        "concat|concat_ws|left|right|substring|substr|lpad|rpad|repeat|format #args",
        "{1:upper}() is not supported: select the column and shape the text after reading.",
        "Write {fix}",
        replace=("{2[0]:column}", "{2[1]:column}"),
        clauses="select order group",
    ),
    # -- aggregates ----------------------------------------------------------------------------
    _h(
        "aggregates",
        "filter #group",
        "FILTER (WHERE ...) is not supported: a query has one WHERE, and groups are GROUP BY.",
        "Move the condition into WHERE: {fix}; for several conditions at once, count per value with GROUP BY",
        rewrite="{moved_to_where}",
        fallback="Move the condition into WHERE, or count per value with GROUP BY, e.g. SELECT rating, COUNT(*) FROM review_events GROUP BY rating",
    ),
    _h(
        "aggregates",
        "sum|count ( case when",
        "CASE expressions are not supported: conditions go in WHERE, and counts per value come from GROUP BY.",
        "Count per value with GROUP BY, or move the condition into WHERE, e.g. SELECT rating, COUNT(*) FROM review_events GROUP BY rating",
        at=2,
    ),
    _h(
        "aggregates",
        "case when",
        "CASE expressions are not supported.",
        "Filter with WHERE instead, or group by the column and map the values after reading, e.g. SELECT fsrs_card_state, COUNT(*) FROM cards GROUP BY fsrs_card_state",
    ),
    _h(
        "aggregates",
        "isnull ( #name )",
        "ISNULL(column) is not supported; a missing value is tested with IS NULL.",
        "Write {fix}",
        replace="{3} IS NULL",
        clauses="where having",
    ),
    _h(
        "aggregates",
        "coalesce|ifnull|isnull|nvl|nvl2|nullif|zeroifnull #args",
        "{1:upper}() is not supported: missing values come back as null.",
        "Write {fix} and treat null after reading, or filter with {2[0]} IS NULL / IS NOT NULL",
        replace="{2[0]}",
        fallback="Test for missing values with IS NULL, e.g. due_at IS NULL",
    ),
    _h(
        "aggregates",
        "round|ceil|ceiling|floor|trunc|truncate|abs|sign #args",
        "{1:upper}() is not supported: numbers come back unrounded.",
        "Write {fix} and round after reading",
        replace="{2[0]}",
        fallback="Select the number as it is, e.g. AVG(fsrs_difficulty), and round after reading",
    ),
    _h(
        "aggregates",
        "string_agg|group_concat|array_agg|json_agg|jsonb_agg|listagg|json_arrayagg|json_group_array #args",
        "{1:upper}() is not supported: there is no list aggregate.",
        "Read the rows instead (tags is already a list per card), e.g. SELECT {id_column}, tags FROM {resource}",
        rewrite="SELECT {id_column}, {2[0]:column} FROM {resource} ORDER BY {2[0]:column}",
        fallback="Read the rows and collect the values after reading, e.g. SELECT card_id, tags FROM cards",
    ),
    _h(
        "aggregates",
        "stddev|stddev_pop|stddev_samp|stdev|stdevp|variance|var_pop|var_samp|var|median|mode|percentile_cont|percentile_disc|approx_percentile|bool_and|bool_or|every|bit_and|bit_or|total|product #args",
        "{1:upper}() is not supported; the aggregates are COUNT, SUM, AVG, MIN and MAX.",
        "Use {fix}, or read the values and compute the statistic after reading",
        replace=("AVG({2[0]:column})", "AVG({2[-1]:column})"),
        fallback="Use COUNT, SUM, AVG, MIN or MAX, e.g. AVG(reps)",
    ),
    _h(
        "aggregates",
        "distinct on #group",
        "DISTINCT ON is not supported: one row per value is GROUP BY with MIN / MAX for the other columns.",
        "Group by {3[0]}, e.g. {fix}",
        rewrite=(
            "SELECT {3[0]:column}, MAX({order_column}) FROM {resource} GROUP BY {3[0]:column}",
            "SELECT {3[0]:column}, COUNT(*) FROM {resource} GROUP BY {3[0]:column}",
        ),
        at=1,
    ),
    _h(
        "aggregates",
        "count|sum|avg|min|max #args over #group",
        "Window functions (OVER) are not supported.",
        "Use GROUP BY with the aggregate instead, e.g. {fix}",
        rewrite="SELECT COUNT(*) FROM {resource} WHERE {where}",
        fallback="Use GROUP BY with COUNT, SUM, AVG, MIN or MAX instead, e.g. SELECT tag, COUNT(*) FROM cards GROUP BY tag",
        at=2,
    ),
    _h(
        "aggregates",
        "row_number|rank|dense_rank|ntile|lag|lead|first_value|last_value|nth_value|percent_rank|cume_dist #args over?",
        "Window functions ({1:upper}() OVER) are not supported.",
        "Order the rows and page through them instead, e.g. SELECT * FROM {resource} ORDER BY {order_column} DESC LIMIT 10",
        fallback="Order the rows and page through them instead, e.g. SELECT * FROM cards ORDER BY created_at DESC LIMIT 10",
    ),
    _h(
        "aggregates",
        "count ( distinct #name ,",
        "COUNT(DISTINCT ...) takes one column.",
        "Write {fix}, or GROUP BY the columns and count the rows",
        replace="COUNT(DISTINCT {4})",
        fallback="Write COUNT(DISTINCT column) for one column",
        at=4,
    ),
    # -- paging --------------------------------------------------------------------------------
    _h(
        "paging",
        "top #num percent?",
        "TOP is SQL Server's; rows are limited with LIMIT at the end of the statement.",
        "Write LIMIT {2} at the end, e.g. {fix}",
        rewrite="{before}{after} LIMIT {2}",
        statements="select",
        fallback="Write LIMIT {2} at the end of the statement (at most 100 rows a page)",
    ),
    _h(
        "paging",
        "top ( #num ) percent?",
        "TOP is SQL Server's; rows are limited with LIMIT at the end of the statement.",
        "Write LIMIT {3} at the end, e.g. {fix}",
        rewrite="{before}{after} LIMIT {3}",
        statements="select",
        fallback="Write LIMIT {3} at the end of the statement (at most 100 rows a page)",
    ),
    _h(
        "paging",
        "top #num|#group",
        "UPDATE and DELETE take no TOP or LIMIT: they change every row their WHERE matches.",
        "Read the ids of the rows you mean first, then name them: {kind_upper} ... WHERE {id_column} IN ('<id>', ...); first: {fix}",
        rewrite="SELECT {id_column} FROM {resource} WHERE {where} LIMIT {2:unparen}",
        statements="update delete",
        fallback="Narrow the WHERE to the rows you mean, e.g. WHERE {id_column} = '<id>'",
    ),
    _h(
        "paging",
        "offset #num row|rows fetch first|next #num row|rows only",
        "OFFSET ... FETCH is not supported; pages are LIMIT n OFFSET m.",
        "Write {fix}",
        replace="LIMIT {6} OFFSET {2}",
    ),
    _h(
        "paging",
        "fetch first|next #num row|rows only",
        "FETCH FIRST is not supported; rows are limited with LIMIT.",
        "Write {fix}",
        replace="LIMIT {3}",
    ),
    _h(
        "paging",
        "fetch first|next row|rows only",
        "FETCH FIRST is not supported; rows are limited with LIMIT.",
        "Write {fix}",
        replace="LIMIT 1",
    ),
    _h(
        "paging",
        "offset #num row|rows",
        "OFFSET takes a number alone.",
        "Write {fix}",
        replace="OFFSET {2}",
        at=2,
    ),
    _h(
        "paging",
        "limit #num , #num",
        "LIMIT takes one number; the offset is written OFFSET.",
        "Write {fix}",
        replace="LIMIT {4} OFFSET {2}",
        at=2,
        statements="select",
    ),
    _h(
        "paging",
        "limit all|#num|- #num?",
        "UPDATE and DELETE take no LIMIT: they change every row their WHERE matches (at most 100).",
        "Read the ids of the rows you mean first, then name them: {kind_upper} ... WHERE {id_column} IN ('<id>', ...); first: {fix}",
        rewrite="SELECT {id_column} FROM {resource} WHERE {where} LIMIT {2}",
        statements="update delete",
        fallback="Narrow the WHERE to the rows you mean, e.g. WHERE {id_column} = '<id>'",
    ),
    _h(
        "paging",
        "order by",
        "UPDATE and DELETE take no ORDER BY: they change every row their WHERE matches.",
        "Read the ids of the rows you mean first (SELECT can ORDER BY and LIMIT), then name them in the WHERE with {id_column} IN ('<id>', ...); first: {fix}",
        rewrite="SELECT {id_column} FROM {resource} WHERE {where} {from_order}",
        statements="update delete",
        fallback="Narrow the WHERE to the rows you mean, e.g. WHERE {id_column} = '<id>'",
    ),
    _h(
        "paging",
        "limit all",
        "LIMIT ALL is not supported: pages hold at most 100 rows.",
        "Write {fix} and page on with OFFSET",
        replace="LIMIT 100",
        at=1,
    ),
    _h(
        "paging",
        "limit - 1",
        "LIMIT -1 is not supported: pages hold at most 100 rows.",
        "Write {fix} and page on with OFFSET",
        replace="LIMIT 100",
        at=1,
        overrides=True,
        reason=None,
    ),
    _h(
        "paging",
        "rownum|rowid <=|< #num",
        "ROWNUM is not supported; rows are limited with LIMIT at the end of the statement.",
        "Drop the ROWNUM condition and write LIMIT {3} at the end of the statement",
    ),
    # -- catalogs ------------------------------------------------------------------------------
    _h(
        "catalogs",
        "information_schema . columns",
        "information_schema is not available; the columns of a resource are listed by DESCRIBE.",
        "Run {fix}",
        rewrite=("DESCRIBE {named_resource}", "SHOW TABLES"),
    ),
    _h(
        "catalogs",
        "information_schema|pg_catalog|sys|mysql|performance_schema|sqlite_schema|main . #word",
        "{1} is not available; the schema is read with SHOW TABLES and DESCRIBE.",
        "Run {fix}",
        rewrite=("DESCRIBE {named_resource}", "SHOW TABLES"),
    ),
    _h(
        "catalogs",
        "from sqlite_master|sqlite_schema|sqlite_temp_master|pg_tables|pg_class|pg_attribute|pg_stat_user_tables|all_tables|user_tables|tables|columns|tab|dual|sysobjects|syscolumns|information_schema",
        "{2} is not available; the schema is read with SHOW TABLES and DESCRIBE.",
        "Run {fix}",
        rewrite=("DESCRIBE {named_resource}", "SHOW TABLES"),
        at=1,
        when_reason="unknown_resource unsupported_syntax syntax_error",
    ),
    _h(
        "catalogs",
        "\\ d #word",
        "Backslash commands (\\d) belong to psql; here the columns of a resource are listed by DESCRIBE.",
        "Run {fix}",
        rewrite=("DESCRIBE {3:resource_name}", "SHOW TABLES"),
    ),
    _h(
        "catalogs",
        "\\ #word",
        "Backslash commands belong to psql; here the schema is read with SHOW TABLES and DESCRIBE.",
        "Run {fix}",
        rewrite="SHOW TABLES",
    ),
    _h(
        "catalogs",
        ". tables|table|databases",
        "Dot commands belong to the sqlite3 shell; here the resources are listed by SHOW TABLES.",
        "Run {fix}",
        rewrite="SHOW TABLES",
    ),
    _h(
        "catalogs",
        ". schema|indexes|indices #word?",
        "Dot commands belong to the sqlite3 shell; here the columns of a resource are listed by DESCRIBE.",
        "Run {fix}",
        rewrite=("DESCRIBE {3:resource_name}", "SHOW TABLES"),
    ),
    _h(
        "catalogs",
        "show create table|view #word",
        "SHOW CREATE TABLE is not supported: the schema is fixed; DESCRIBE lists a resource's columns.",
        "Run {fix}",
        rewrite=("DESCRIBE {4:resource_name}", "SHOW TABLES"),
        at=1,
    ),
    _h(
        "catalogs",
        "show full|extended|open tables|columns? from? #word?",
        "SHOW {2:upper} is not supported.",
        "Run {fix}",
        rewrite=("DESCRIBE {5:resource_name}", "SHOW TABLES"),
        at=1,
    ),
    _h(
        "catalogs",
        "show columns|fields in|from #word",
        "Write SHOW COLUMNS FROM <resource>, or DESCRIBE <resource>.",
        "Run {fix}",
        rewrite="DESCRIBE {4:resource_name}",
        at=2,
    ),
    _h(
        "catalogs",
        "show index|indexes|keys|indices|triggers|table from|in #word",
        "SHOW {2:upper} is not supported: the schema is fixed; DESCRIBE lists a resource's columns.",
        "Run {fix}",
        rewrite=("DESCRIBE {4:resource_name}", "SHOW TABLES"),
        at=1,
    ),
    _h(
        "catalogs",
        "show databases|schemas|status|variables|processlist|grants|engines|search_path|all|tables #any?",
        "SHOW {2:upper} is not supported; SHOW TABLES lists the resources of the selected workspace.",
        "Run {fix}",
        rewrite="SHOW TABLES",
        at=1,
        when_reason="syntax_error unsupported_syntax",
    ),
    _h(
        "catalogs",
        "describe|desc table|extended|formatted #word",
        "DESCRIBE takes the resource name alone.",
        "Run {fix}",
        rewrite="DESCRIBE {3:resource_name}",
        at=1,
    ),
    _h(
        "catalogs",
        "pragma table_info|table_xinfo|index_list|foreign_key_list ( #any )",
        "PRAGMA belongs to SQLite; here the columns of a resource are listed by DESCRIBE.",
        "Run {fix}",
        rewrite=("DESCRIBE {4:unquote_any|resource_name}", "SHOW TABLES"),
    ),
    _h(
        "catalogs",
        "pragma #word",
        "PRAGMA belongs to SQLite; here the schema is read with SHOW TABLES and DESCRIBE.",
        "Run {fix}",
        rewrite="SHOW TABLES",
    ),
    _h(
        "catalogs",
        "exec|execute|sp_help|sp_columns|sp_describe_first_result_set sp_help|sp_columns|sp_helptext? #any",
        "Stored procedures are not available; the columns of a resource are listed by DESCRIBE.",
        "Run {fix}",
        rewrite=("DESCRIBE {named_resource}", "SHOW TABLES"),
    ),
    _h(
        "catalogs",
        "sp_help|sp_columns|sp_tables|exec|execute #any?",
        "Stored procedures are not available; the schema is read with SHOW TABLES and DESCRIBE.",
        "Run {fix}",
        rewrite=("DESCRIBE {named_resource}", "SHOW TABLES"),
    ),
    _h(
        "catalogs",
        "explain analyze? verbose? query? plan? for? select",
        "EXPLAIN is not available: run the statement itself (reads are limited to 100 rows a page).",
        "Run {fix}",
        rewrite="{after_explain}",
    ),
    _h(
        "catalogs",
        "use|attach|connect #any",
        "Every statement runs in the workspace selected for this API key; there are no databases to switch.",
        "Choose the workspace with POST /v1/agent/workspaces/<workspace_id>/select; list resources with {fix}",
        rewrite="SHOW TABLES",
    ),
    _h(
        "catalogs",
        "select version|database|current_database|current_schema|current_user|user|session_user|schema|db_name|@ ( )?",
        "SELECT needs FROM, and the server's internals are not readable; the workspace itself is a resource.",
        "Run {fix}",
        rewrite="SELECT * FROM workspace",
        at=1,
    ),
    # -- writes --------------------------------------------------------------------------------
    _h(
        "writes",
        "on conflict|duplicate",
        "There is no upsert ({1:upper} {2:upper}): INSERT always creates new rows with new ids.",
        "Insert without it ({fix}), and change existing rows with UPDATE {resource} SET ... WHERE {id_column} = '<id>'",
        rewrite="{before}",
        fallback="Change existing rows with UPDATE {resource} SET ... WHERE {id_column} = '<id>', and create new ones with INSERT",
    ),
    _h(
        "writes",
        "insert or replace|ignore|abort|fail|rollback",
        "INSERT OR {3:upper} is not supported: INSERT always creates new rows with new ids.",
        "Write {fix}",
        replace="INSERT",
        at=1,
    ),
    _h(
        "writes",
        "insert ignore|overwrite",
        "INSERT {2:upper} is not supported: INSERT always creates new rows with new ids.",
        "Write {fix}",
        replace="INSERT",
        at=1,
    ),
    _h(
        "writes",
        "replace|upsert into",
        "{1:upper} INTO is not supported: INSERT creates new rows, UPDATE changes existing ones.",
        "Write {fix}",
        replace="INSERT INTO",
        clauses="-",
    ),
    _h(
        "writes",
        "merge into? #any",
        "MERGE is not supported: INSERT creates new rows, UPDATE changes existing ones.",
        "Write INSERT INTO {3:resource_name} (...) VALUES (...) for new rows and UPDATE {3:resource_name} SET ... WHERE ... for existing ones",
        fallback="Write INSERT INTO cards (...) VALUES (...) for new rows and UPDATE cards SET ... WHERE ... for existing ones",
    ),
    _h(
        "writes",
        "into #word values",
        "INSERT needs an explicit column list.",
        "Name the columns, e.g. {fix}",
        replace="INTO {2} ({required_columns}) VALUES",
        at=2,
        fallback="Name the columns: INSERT INTO {2} ({required_columns}) VALUES (...)",
    ),
    _h(
        "writes",
        "into #word set",
        "INSERT ... SET is MySQL's; here INSERT takes a column list and VALUES.",
        "Write INSERT INTO {2} ({required_columns}) VALUES (...)",
        at=2,
    ),
    _h(
        "writes",
        "default values",
        "DEFAULT VALUES is not supported: a new row needs its required columns.",
        "Write INSERT INTO {resource} ({required_columns}) VALUES (...)",
    ),
    _h(
        "writes",
        "delete from? #word using",
        "DELETE ... USING is not supported: a statement reads one resource.",
        "Look up the ids with a SELECT first, then DELETE FROM {resource} WHERE {id_column} IN ('<id>', ...)",
        at=3,
    ),
    _h(
        "writes",
        "truncate table? #word",
        "TRUNCATE is not supported; rows are removed with DELETE ... WHERE (at most 100 per statement).",
        "Write DELETE FROM {3:resource_name} WHERE ... for the rows you mean, e.g. DELETE FROM {3:resource_name} WHERE {3:id_of} IN ('<id>', ...)",
        fallback="Write DELETE FROM cards WHERE card_id IN ('<id>', ...)",
    ),
    # -- joins, subqueries and set operations ----------------------------------------------------
    _h(
        "joins",
        "lateral",
        "LATERAL (and joins in general) are not supported: query one resource at a time.",
        "Run two statements: first SELECT card_id FROM review_events WHERE rating = 0, then SELECT * FROM cards WHERE card_id IN ('<id>', ...)",
    ),
)


def _first_keys(habit: Habit) -> list[str]:
    head = habit.match[0]
    return head.split("|") if not head.startswith("#") else [head]


_BY_KEY: dict[str, list[Habit]] = defaultdict(list)
for _habit in HABITS:
    for _key in _first_keys(_habit):
        _BY_KEY[_key].append(_habit)

_KIND_KEYS = {
    "IDENT": ("#name", "#word", "#operand", "#value", "#any", "#array", "#array_column"),
    "NUMBER": ("#num", "#value", "#operand", "#any"),
    "STRING": ("#str", "#value", "#operand", "#any", "#array"),
}


_ORDER = {id(habit): index for index, habit in enumerate(HABITS)}


def rows_starting_with(key: str, kind: str) -> list[Habit]:
    """The rows whose pattern may start at a token spelt ``key`` of type ``kind``, in table
    order (an earlier row is the more specific one)."""
    rows = list(_BY_KEY.get(key, ()))
    for wildcard in _KIND_KEYS.get(kind, ("#word", "#any")):
        rows.extend(_BY_KEY.get(wildcard, ()))
    return sorted(rows, key=lambda habit: _ORDER[id(habit)])


# Names -----------------------------------------------------------------------------------------

RESOURCE_SYNONYMS: dict[str, str] = {
    **dict.fromkeys(
        ("card", "flashcards", "flashcard", "notes", "note", "items", "item", "questions",
         "facts", "entries", "cards_table", "words", "vocabulary", "terms"),
        "cards",
    ),
    **dict.fromkeys(("deck", "collections", "collection", "sets", "groups", "playlists"), "decks"),
    **dict.fromkeys(
        ("review", "reviews", "review_event", "review_log", "review_logs", "revlog", "reviewlog",
         "review_history", "reviews_log", "history", "events", "logs", "answers", "attempts",
         "ratings", "study_log", "repetitions"),
        "review_events",
    ),
    **dict.fromkeys(
        ("workspaces", "settings", "config", "configuration", "preferences", "scheduler",
         "scheduler_settings", "account", "profile", "options"),
        "workspace",
    ),
}  # fmt: skip

# Per resource: a word agents use for a column → the column that answers the same question.
COLUMN_SYNONYMS: dict[str, dict[str, str]] = {
    "cards": {
        **dict.fromkeys(
            ("question", "prompt", "front", "term", "word", "text", "question_text", "front_side",
             "card_front", "frontside", "content", "title", "expression", "clue", "q"),
            "front_text",
        ),
        **dict.fromkeys(
            ("answer", "back", "definition", "meaning", "translation", "answer_text", "back_side",
             "card_back", "backside", "explanation", "solution", "response", "a"),
            "back_text",
        ),
        **dict.fromkeys(
            ("status", "state", "card_state", "queue", "learning_state", "stage", "phase",
             "srs_state", "fsrs_state", "type_state"),
            "fsrs_card_state",
        ),
        **dict.fromkeys(
            ("next_review", "next_review_at", "next_due", "due_date", "due", "due_on", "next_date",
             "review_at", "scheduled_at", "next_review_date", "due_time", "next_at"),
            "due_at",
        ),
        **dict.fromkeys(
            ("last_review", "last_reviewed", "last_review_at", "last_studied", "reviewed_at",
             "last_seen", "last_review_date", "last_practiced"),
            "fsrs_last_reviewed_at",
        ),
        **dict.fromkeys(
            ("review_count", "repetitions", "reviews", "times_reviewed", "num_reviews",
             "repetition", "review_total", "count_reviews", "rep_count"),
            "reps",
        ),
        **dict.fromkeys(
            ("lapse_count", "failures", "forgotten", "fail_count", "times_forgotten", "errors"),
            "lapses",
        ),
        **dict.fromkeys(("difficulty", "ease", "ease_factor", "factor", "easiness"), "fsrs_difficulty"),
        **dict.fromkeys(
            ("stability", "interval", "ivl", "memory_strength", "strength"), "fsrs_stability"
        ),
        **dict.fromkeys(("scheduled_days", "interval_days", "days_interval"), "fsrs_scheduled_days"),
        **dict.fromkeys(
            ("created", "creation_date", "date_created", "created_on", "added", "added_at",
             "inserted_at", "create_time", "created_date"),
            "created_at",
        ),
        **dict.fromkeys(
            ("updated", "modified", "modified_at", "last_modified", "changed_at", "mtime",
             "updated_on", "update_time", "edited_at", "mod"),
            "updated_at",
        ),
        **dict.fromkeys(
            ("tag_list", "labels", "label", "keywords", "categories", "category", "topics",
             "topic", "subjects", "tagged", "deck", "deck_name", "decks"),
            "tags",
        ),
        **dict.fromkeys(
            ("effort", "difficulty_level", "level", "effort_levels", "time_needed", "size"),
            "effort_level",
        ),
        **dict.fromkeys(("type", "kind", "note_type", "model", "template"), "card_type"),
        **dict.fromkeys(("cardid", "uuid", "card", "note_id", "cid", "pk", "key"), "card_id"),
        **dict.fromkeys(("meta", "extra", "data", "source", "info", "attributes"), "metadata"),
    },
    "decks": {
        **dict.fromkeys(("title", "deck_name", "label", "deck", "description", "deck_title"), "name"),
        **dict.fromkeys(
            ("tag_list", "labels", "keywords", "categories", "category", "topics", "filter",
             "tag_filter", "tag"),
            "tags",
        ),
        **dict.fromkeys(("effort", "effort_level", "levels", "level", "efforts"), "effort_levels"),
        **dict.fromkeys(("deckid", "uuid", "pk", "did", "key"), "deck_id"),
        **dict.fromkeys(
            ("created", "creation_date", "date_created", "created_on", "added"), "created_at"
        ),
        **dict.fromkeys(("updated", "modified", "modified_at", "last_modified", "mod"), "updated_at"),
    },
    "review_events": {
        **dict.fromkeys(
            ("grade", "ease", "answer", "result", "outcome", "response", "button", "score",
             "rating_name", "grade_name", "rating_text", "review_rating"),
            "review_grade",
        ),
        **dict.fromkeys(
            ("reviewed_at", "review_time", "review_date", "time", "timestamp", "date",
             "created_at", "answered_at", "studied_at", "review_at", "at", "when"),
            "reviewed_at_server",
        ),
        **dict.fromkeys(("client_reviewed_at", "local_time", "device_time"), "reviewed_at_client"),
        **dict.fromkeys(("event_id", "review_id", "revlog_id", "uuid", "pk"), "review_event_id"),
        **dict.fromkeys(("card", "cid", "flashcard_id", "note_id"), "card_id"),
        **dict.fromkeys(("rating_value", "rating_number", "grade_number", "button_number"), "rating"),
    },
    "workspace": {
        **dict.fromkeys(("retention", "target_retention", "request_retention"), "desired_retention"),
        **dict.fromkeys(("max_interval", "maximum_interval", "max_ivl"), "maximum_interval_days"),
        **dict.fromkeys(("learning_steps", "steps"), "learning_steps_minutes"),
        **dict.fromkeys(("relearning_steps", "lapse_steps"), "relearning_steps_minutes"),
        **dict.fromkeys(("fuzz", "fuzzing", "use_fuzz"), "enable_fuzz"),
        **dict.fromkeys(("scheduler", "algo", "scheduler_name"), "algorithm"),
        **dict.fromkeys(("uuid", "pk"), "workspace_id"),
        **dict.fromkeys(("title", "workspace_name"), "name"),
    },
}  # fmt: skip

# Columns that only the scheduler writes, and the command that changes them (dsl.md §7).
SCHEDULING_COLUMNS = frozenset(
    {
        "due_at",
        "reps",
        "lapses",
        "fsrs_card_state",
        "fsrs_step_index",
        "fsrs_scheduled_days",
        "fsrs_stability",
        "fsrs_difficulty",
        "fsrs_last_reviewed_at",
    }
)

# String values of an integer column that agents write as words.
VALUE_SYNONYMS: dict[str, dict[str, str]] = {
    "rating": {"again": "0", "hard": "1", "good": "2", "easy": "3"},
}


def resource_for(name: str) -> str | None:
    """The resource ``name`` is, or is a common word for."""
    from dsl.resources import get_resource

    if get_resource(name) is not None:
        return name
    return RESOURCE_SYNONYMS.get(name)


def column_synonym(resource: str, name: str) -> str | None:
    return COLUMN_SYNONYMS.get(resource, {}).get(name)
