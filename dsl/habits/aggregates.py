"""Habits, Aggregates: FILTER, CASE, COALESCE, ROUND, STRING_AGG, DISTINCT ON, window functions."""

from __future__ import annotations

from dsl.habits.base import Habit, h

ROWS: tuple[Habit, ...] = (
    h(
        "aggregates",
        "filter #group",
        "FILTER (WHERE ...) is not supported: a query has one WHERE, and groups are GROUP BY.",
        "Move the condition into WHERE: {fix}; for several conditions at once, count per value with GROUP BY",
        rewrite="{moved_to_where}",
        fallback="Move the condition into WHERE, or count per value with GROUP BY, e.g. SELECT rating, COUNT(*) FROM review_events GROUP BY rating",
    ),
    h(
        "aggregates",
        "sum|count ( case when",
        "CASE expressions are not supported: conditions go in WHERE, and counts per value come from GROUP BY.",
        "Count per value with GROUP BY, or move the condition into WHERE, e.g. SELECT rating, COUNT(*) FROM review_events GROUP BY rating",
        at=2,
    ),
    h(
        "aggregates",
        "case when",
        "CASE expressions are not supported.",
        "Filter with WHERE instead, or group by the column and map the values after reading, e.g. SELECT fsrs_card_state, COUNT(*) FROM cards GROUP BY fsrs_card_state",
    ),
    h(
        "aggregates",
        "isnull ( #name )",
        "ISNULL(column) is not supported; a missing value is tested with IS NULL.",
        "Write {fix}",
        replace="{3} IS NULL",
        clauses="where having",
    ),
    h(
        "aggregates",
        "coalesce|ifnull|isnull|nvl|nvl2|nullif|zeroifnull #args",
        "{1:upper}() is not supported: missing values come back as null.",
        "Write {fix} and treat null after reading, or filter with {2[0]} IS NULL / IS NOT NULL",
        replace="{2[0]}",
        fallback="Test for missing values with IS NULL, e.g. due_at IS NULL",
    ),
    h(
        "aggregates",
        "round|ceil|ceiling|floor|trunc|truncate|abs|sign #args",
        "{1:upper}() is not supported: numbers come back unrounded.",
        "Write {fix} and round after reading",
        replace="{2[0]}",
        fallback="Select the number as it is, e.g. AVG(fsrs_difficulty), and round after reading",
    ),
    h(
        "aggregates",
        "string_agg|group_concat|array_agg|json_agg|jsonb_agg|listagg|json_arrayagg|json_group_array #args",
        "{1:upper}() is not supported: there is no list aggregate.",
        "Read the rows instead (tags is already a list per card), e.g. SELECT {id_column}, tags FROM {resource}",
        rewrite="SELECT {id_column}, {2[0]:column} FROM {resource} ORDER BY {2[0]:column}",
        fallback="Read the rows and collect the values after reading, e.g. SELECT card_id, tags FROM cards",
    ),
    h(
        "aggregates",
        "stddev|stddev_pop|stddev_samp|stdev|stdevp|variance|var_pop|var_samp|var|median|mode|percentile_cont|percentile_disc|approx_percentile|bool_and|bool_or|every|bit_and|bit_or|total|product #args",
        "{1:upper}() is not supported; the aggregates are COUNT, SUM, AVG, MIN and MAX.",
        "Use {fix}, or read the values and compute the statistic after reading",
        replace=("AVG({2[0]:column})", "AVG({2[-1]:column})"),
        fallback="Use COUNT, SUM, AVG, MIN or MAX, e.g. AVG(reps)",
    ),
    h(
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
    h(
        "aggregates",
        "count|sum|avg|min|max #args over #group",
        "Window functions (OVER) are not supported.",
        "Use GROUP BY with the aggregate instead, e.g. {fix}",
        rewrite="SELECT COUNT(*) FROM {resource} WHERE {where}",
        fallback="Use GROUP BY with COUNT, SUM, AVG, MIN or MAX instead, e.g. SELECT tag, COUNT(*) FROM cards GROUP BY tag",
        at=2,
    ),
    h(
        "aggregates",
        "row_number|rank|dense_rank|ntile|lag|lead|first_value|last_value|nth_value|percent_rank|cume_dist #args over?",
        "Window functions ({1:upper}() OVER) are not supported.",
        "Order the rows and page through them instead, e.g. SELECT * FROM {resource} ORDER BY {order_column} DESC LIMIT 10",
        fallback="Order the rows and page through them instead, e.g. SELECT * FROM cards ORDER BY created_at DESC LIMIT 10",
    ),
    h(
        "aggregates",
        "count ( distinct #name ,",
        "COUNT(DISTINCT ...) takes one column.",
        "Write {fix}, or GROUP BY the columns and count the rows",
        replace="COUNT(DISTINCT {4})",
        fallback="Write COUNT(DISTINCT column) for one column",
        at=4,
    ),
)
