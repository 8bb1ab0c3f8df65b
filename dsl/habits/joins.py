"""Habits, Joins: JOIN (and FROM a, b, APPLY, LATERAL), aliases and qualified names, subqueries,
CTEs and set operations.

The parser already rejects each of these at its first token; these rows turn the rejection into
the two-step recipe, built from the caller's own statement: the first step is a verified SELECT
of the ids (``SELECT card_id FROM review_events WHERE rating = 0``), the second the caller's
statement filtered by them (``... WHERE card_id IN ('<id>', ...)``).
"""

from __future__ import annotations

from dataclasses import replace

from dsl.habits.base import Habit, h

_QUALIFIERS = "left|right|inner|full|cross|natural|outer"


def _first_step(habit: Habit) -> Habit:
    """The rewrite is the statement to run first, not a corrected statement (it reads other rows
    than the caller asked for), so it is shown as the first step and never as correctedSql."""
    return replace(habit, tags=(*habit.tags, "first_step"))


def _at_error(habit: Habit) -> Habit:
    """Explained only where the error points: a qualified name is a symptom when the statement
    also joins, and the JOIN is then what the caller must change."""
    return replace(habit, tags=(*habit.tags, "at_error"))


# The first step of a join: the ids from the resource the conditions are about (the joined one
# first, as `FROM cards JOIN review_events ... WHERE r.rating = 0` filters the reviews), then all.
_JOIN_STEPS = (
    "SELECT card_id FROM {other_resource} WHERE {plain_where}",
    "SELECT card_id FROM {resource} WHERE {plain_where}",
    "SELECT card_id FROM {other_resource}",
)
_JOIN_ADVICE = (
    "Query one resource at a time: first {fix}, then SELECT ... FROM {then_resource} "
    "WHERE card_id {join_in} ('<id>', ...) with the ids it returned"
)
_JOIN_FALLBACK = (
    "Query one resource at a time: first SELECT card_id FROM review_events WHERE rating = 0, "
    "then SELECT * FROM cards WHERE card_id IN ('<id>', ...)"
)
_WRITE_JOIN_ADVICE = (
    "Query one resource at a time: first {fix}, then run the {kind_upper} on {resource} alone "
    "with WHERE card_id IN ('<id>', ...) naming the ids it returned"
)
# Cards and decks share no id: a deck is a saved filter over tags and effort levels.
_DECK_STEPS = (
    "SELECT tags, effort_levels FROM {deck_join} WHERE {plain_where}",
    "SELECT name, tags, effort_levels FROM {deck_join}",
)
_DECK_ADVICE = (
    "A deck is a saved filter, not a table of cards: first read the deck ({fix}), then "
    "SELECT * FROM cards WHERE tags OVERLAP (<its tags>) AND effort_level IN (<its effort_levels>)"
)
_UNNEST_MESSAGE = (
    "unnest() as a table is not supported; FROM cards UNNEST tags AS <alias> gives one row per tag."
)

ROWS: tuple[Habit, ...] = (
    h(
        "names",
        "deck|deck_name|deck_title|deck_id =|like|ilike #str",
        "",
        "",
        rewrite=(
            "SELECT tags, effort_levels FROM decks WHERE deck_id = {3:uuid}",
            "SELECT tags, effort_levels FROM decks WHERE name {2:upper} {3}",
        ),
        when_reason="unknown_column",
        tags=("first_step",),
        example="SELECT * FROM cards WHERE deck = 'Spanish phrases'",
    ),
    # One row per tag: LATERAL unnest, CROSS APPLY STRING_SPLIT, FROM cards, unnest(tags).
    h(
        "joins",
        f"{_QUALIFIERS} join lateral? unnest ( #array_column ) as? #name",
        _UNNEST_MESSAGE,
        "Write {fix} (or name the tag column, which is one row per tag)",
        replace="UNNEST {6} AS {9}",
        example="SELECT t.tag, COUNT(*) FROM cards CROSS JOIN LATERAL unnest(tags) AS t(tag) GROUP BY t.tag",
    ),
    h(
        "joins",
        ", unnest ( #array_column ) as? #name",
        _UNNEST_MESSAGE,
        "Write {fix}",
        rewrite="{before} UNNEST {4} AS {7}{after}",
        clauses="from",
        example="SELECT t, COUNT(*) FROM cards, unnest(tags) AS t GROUP BY t",
    ),
    h(
        "joins",
        "cross|outer apply string_split|openjson|unnest ( #array_column",
        "{1:upper} APPLY is not supported; one row per tag is the tag column.",
        "Write e.g. {fix}",
        rewrite="SELECT tag, COUNT(*) FROM {resource} GROUP BY tag",
        example="SELECT value AS tag, COUNT(*) FROM cards CROSS APPLY STRING_SPLIT(tags, ',') GROUP BY value",
    ),
    _first_step(
        h(
            "joins",
            "cross|outer apply ( select",
            "{1:upper} APPLY is not supported: query one resource at a time.",
            "Run the inner query on its own first ({fix}), then match its rows to yours by card_id",
            rewrite="{inner_select}",
            fallback=_JOIN_FALLBACK,
            example="SELECT c.front_text, x.n FROM cards c OUTER APPLY (SELECT COUNT(*) AS n FROM review_events r WHERE r.card_id = c.card_id) x",
        )
    ),
    # cards with decks: tags, not ids, relate them.
    *(
        _first_step(
            h(
                "joins",
                pattern,
                "JOIN is not supported: a deck holds no card ids; its cards are those whose tags OVERLAP its tags.",
                _DECK_ADVICE,
                rewrite=_DECK_STEPS,
                fallback=_DECK_ADVICE.replace(
                    "({fix})", "(SELECT name, tags, effort_levels FROM decks)"
                ),
                statements="select",
                example=example,
            )
        )
        for pattern, example in (
            (f"{_QUALIFIERS} outer? join decks|cards", "SELECT * FROM cards CROSS JOIN decks"),
            ("join|straight_join decks|cards", "SELECT * FROM cards JOIN decks"),
        )
    ),
    # An anti-join (LEFT JOIN r ... WHERE r.card_id IS NULL): the ids that have a match first,
    # then the caller's resource without them.
    *(
        _first_step(
            h(
                "joins",
                pattern,
                "{0:upper} is not supported: query one resource at a time, then exclude the matches with card_id NOT IN (...).",
                "Query one resource at a time: first {fix}, then SELECT ... FROM {resource} WHERE card_id NOT IN ('<id>', ...) "
                "(with your other conditions) to get the rows that have no match",
                rewrite="SELECT DISTINCT card_id FROM {other_resource}{anti_join}",
                statements="select",
                example=example,
            )
        )
        for pattern, example in (
            (
                f"{_QUALIFIERS} outer? join|apply",
                "SELECT * FROM cards LEFT OUTER JOIN review_events USING (card_id) WHERE review_events.card_id IS NULL",
            ),
            (
                "join|straight_join",
                "SELECT c.* FROM cards c JOIN review_events r ON r.card_id = c.card_id WHERE r.card_id IS NULL",
            ),
        )
    ),
    # Any other join: the ids first, then the caller's statement on one resource.
    *(
        _first_step(
            h(
                "joins",
                pattern,
                # The message of dsl.md §9's example (pinned by the contract tests); the hint
                # carries the recipe built from the caller's statement.
                "{0:upper} is not supported: query one resource at a time, e.g. SELECT card_id FROM review_events "
                "WHERE rating = 0, then SELECT * FROM cards WHERE card_id IN (...)",
                advice,
                rewrite=_JOIN_STEPS,
                fallback=_JOIN_FALLBACK,
                statements=kinds,
                example=example,
            )
        )
        for pattern, kinds, advice, example in (
            (
                f"{_QUALIFIERS} outer? join|apply",
                "select",
                _JOIN_ADVICE,
                "SELECT * FROM cards NATURAL JOIN review_events",
            ),
            (
                f"{_QUALIFIERS} outer? join|apply",
                "update delete",
                _WRITE_JOIN_ADVICE,
                "UPDATE c SET c.effort_level = 'long' FROM cards c INNER JOIN review_events r ON r.card_id = c.card_id WHERE r.rating = 0",
            ),
            (
                "join|straight_join",
                "select",
                _JOIN_ADVICE,
                "SELECT * FROM cards JOIN review_events ON true",
            ),
            (
                "join|straight_join",
                "update delete",
                _WRITE_JOIN_ADVICE,
                "DELETE cards FROM cards JOIN review_events ON review_events.card_id = cards.card_id WHERE review_events.rating = 0",
            ),
        )
    ),
    _first_step(
        h(
            "joins",
            ", decks|cards",
            "Selecting from several resources (FROM a, b) is not supported: a deck holds no card ids; its cards are those whose tags OVERLAP its tags.",
            _DECK_ADVICE,
            rewrite=_DECK_STEPS,
            fallback=_DECK_ADVICE.replace(
                "({fix})", "(SELECT name, tags, effort_levels FROM decks)"
            ),
            clauses="from",
            statements="select",
            example="SELECT * FROM cards, decks",
        )
    ),
    _first_step(
        h(
            "joins",
            ", #name",
            "Selecting from several resources (FROM a, b) is not supported: query one resource at a time.",
            _JOIN_ADVICE,
            rewrite=_JOIN_STEPS,
            fallback=_JOIN_FALLBACK,
            clauses="from",
            example="SELECT tag, COUNT(*) FROM , cards GROUP BY tag",
        )
    ),
    h(
        "joins",
        "lateral",
        "LATERAL (and joins in general) are not supported: query one resource at a time.",
        _JOIN_ADVICE,
        fallback=_JOIN_FALLBACK,
        example="SELECT * FROM cards LATERAL VIEW explode(tags) t AS tag",
    ),
    # A table alias or a qualified name on one resource: the statement without them.
    _at_error(
        h(
            "joins",
            "#name . #name|*",
            "Qualified names ({0}) and table aliases are not supported: a statement reads one resource, so its columns are written alone.",
            "Drop the qualifier and the alias: {fix}",
            rewrite="{unqualified}",
            fallback="Drop the qualifier and any table alias, and write the column name alone, e.g. {3}",
            example="SELECT * FROM public.cards",
        )
    ),
    # Subqueries: a derived table is its inner SELECT; otherwise the inner SELECT runs first.
    h(
        "joins",
        "select",
        "A subquery in FROM is not supported: select from the resource directly.",
        "Write {fix}",
        rewrite="{inner_select}",
        clauses="from",
        example="SELECT * FROM (SELECT * FROM cards)",
    ),
    h(
        "joins",
        "with recursive",
        "Recursive queries (WITH RECURSIVE) are not supported: a statement reads one resource.",
        "Read the resources themselves: {fix} lists them",
        rewrite="SHOW TABLES",
        example="WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 7) SELECT * FROM n",
    ),
    _first_step(
        h(
            "joins",
            "with #name",
            "WITH (common table expressions) is not supported: run the inner query as its own statement.",
            "Run it first ({fix}), then use the ids it returns in the main statement, e.g. WHERE card_id IN ('<id>', ...)",
            rewrite="{inner_select}",
            fallback="Run the inner query as its own statement first, then use its values in the next one, e.g. WHERE card_id IN ('<id>', ...)",
            example="WITH recent AS (SELECT * FROM cards) SELECT * FROM recent",
        )
    ),
    h(
        "joins",
        "select",
        "A subquery over the same resource is not needed: its clauses apply to the statement itself.",
        "Write {fix}",
        rewrite="{collapsed}",
        clauses="where",
        example="SELECT front_text FROM cards WHERE rowid IN (SELECT rowid FROM cards ORDER BY random() LIMIT 5)",
    ),
    _first_step(
        h(
            "joins",
            "select",
            "A subquery in the select list is not supported: run it as its own statement.",
            "Run it first ({fix}): it gives one row per card_id; then read your rows and match them by card_id",
            rewrite="{inner_select}",
            fallback="Run the inner SELECT as its own statement first, then match its rows to yours by card_id",
            clauses="select",
            example="SELECT front_text, (SELECT COUNT(*) FROM review_events WHERE review_events.card_id = cards.card_id) AS n FROM cards",
        )
    ),
    _first_step(
        h(
            "joins",
            "select",
            "Subqueries are not supported: run the inner SELECT as its own statement first.",
            "Run it first ({fix}), then {outer_with_ids} with the values it returned",
            rewrite="{inner_select}",
            fallback="Run the inner SELECT first, then use its values in a second statement, e.g. SELECT * FROM cards WHERE card_id IN ('<id>', ...)",
            clauses="where having select set",
            example="WHERE SELECT card_id, front_text FROM cards",
        )
    ),
    h(
        "joins",
        "in ( values #group )",
        "IN (VALUES ...) is not supported: IN takes the values themselves.",
        "Write {fix}",
        replace="IN {4}",
        at=2,
        example="SELECT * FROM cards WHERE card_id IN (VALUES ('04da5c72-4974-4190-a468-80a78fe9dbb8'))",
    ),
    # Set operations over one resource are one WHERE.
    h(
        "joins",
        "union all?",
        "{0:upper} is not supported: one statement reads one resource with one WHERE.",
        "Combine the conditions with OR: {fix}",
        rewrite="{set_head} WHERE {left_where} OR {right_where}",
        fallback="Run the statements separately (a batch separated by ';' returns each result), or combine the conditions with OR when both read the same resource",
        example="SHOW UNION SELECT * FROM decks TABLES",
    ),
    h(
        "joins",
        "intersect",
        "INTERSECT is not supported: one statement reads one resource with one WHERE.",
        "Combine the conditions with AND: {fix}",
        rewrite="{set_head} WHERE {left_where} AND {right_where}",
        fallback="Run the statements separately, or combine the conditions with AND when both read the same resource",
        example="SELECT card_id FROM cards INTERSECT SELECT card_id FROM review_events",
    ),
    h(
        "joins",
        "except|minus",
        "{1:upper} is not supported: one statement reads one resource with one WHERE.",
        "Exclude the second condition with AND NOT: {fix}",
        rewrite="{set_head} WHERE {left_where} AND NOT {right_where}",
        fallback="Run the statements separately, or write WHERE <first> AND NOT <second> when both read the same resource",
        example="SELECT card_id FROM cards EXCEPT SELECT card_id FROM review_events",
    ),
)
