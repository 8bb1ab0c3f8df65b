"""Every habit row (dsl/habits/) carries the statement it teaches, and that statement, sent through
the real endpoint, is explained by that row (dsl.md §9.1); every placeholder of every row names a
registered field or filter, so no row can be disabled by a misspelling."""

from __future__ import annotations

import re
from typing import Any

import pytest

from dsl import teaching
from dsl.habits import HABITS, Habit
from dsl.language.lexer import tokenize
from dsl.teaching.filters import FILTERS, TemplateError, _Text
from dsl.teaching.rewrites import _FIELD, FIELDS
from flashcards import services
from flashcards.services.demo import seed_demo_workspace
from tests.factories import UserFactory
from tests.support.envelope import post_sql


def _templates(habit: Habit) -> list[str]:
    return [
        t
        for t in (
            habit.message,
            habit.advice,
            habit.fallback,
            habit.condition,
            *habit.replace,
            *habit.rewrite,
            *habit.suggest,
        )
        if t
    ]


def _label(habit: Habit) -> str:
    return f"{habit.family}: {' '.join(habit.match)}"


def test_every_row_has_an_example_and_examples_are_distinct() -> None:
    missing = [_label(h) for h in HABITS if not h.example.strip()]
    assert missing == []
    for habit in HABITS:
        tokenize(habit.example)  # lexes (a lexer refusal would still be taught, but not here)


def test_every_placeholder_resolves_to_a_registered_field_or_filter() -> None:
    problems = []
    for habit in HABITS:
        for template in _templates(habit):
            for match in _FIELD.finditer(template):
                name, spec = match.group(1), match.group(3) or ""
                if name.isdigit():
                    if int(name) > len(habit.match):
                        problems.append(f"{_label(habit)}: {{{name}}} beyond the pattern")
                elif name not in FIELDS:
                    problems.append(f"{_label(habit)}: unknown field {{{name}}}")
                for filter_name in filter(None, spec.split("|")):
                    if filter_name not in FILTERS:
                        problems.append(f"{_label(habit)}: unknown filter :{filter_name}")
            # What is left after the fields are taken out holds no stray brace.
            rest = _FIELD.sub("", template).replace("{{", "").replace("}}", "")
            if re.search(r"[{}]", rest):
                problems.append(f"{_label(habit)}: a brace that is no field in {template!r}")
    assert problems == []


def test_an_unknown_filter_raises_instead_of_skipping_the_row() -> None:
    with pytest.raises(TemplateError):
        format(_Text("7"), "unitt")


@pytest.fixture
def demo_api(db: None, client_for: Any) -> Any:
    user = UserFactory(username="demo-habit-examples")
    workspace = seed_demo_workspace(user).workspace
    _, plaintext = services.create_api_key(user, "examples", workspace=workspace)
    return client_for(plaintext)


def test_every_rows_example_is_taught_by_that_row_end_to_end(demo_api: Any) -> None:
    misses = []
    for habit in HABITS:
        body = post_sql(demo_api, habit.example, dry_run=True).json()
        fired = teaching.last_row()
        if body["ok"]:
            misses.append(f"{_label(habit)}\n    {habit.example}\n    accepted")
        elif fired is not habit:
            other = "no row" if fired is None else _label(fired)
            misses.append(f"{_label(habit)}\n    {habit.example}\n    taught by {other}")
        elif not body["error"]["details"].get("hint"):
            misses.append(f"{_label(habit)}\n    {habit.example}\n    no hint")
    assert misses == [], f"{len(misses)} of {len(HABITS)} rows:\n" + "\n".join(misses)
