"""dsl.md §9.1 on a corpus of foreign habits (``corpus/habits.jsonl``): each statement written the
way agents write SQL for PostgreSQL, MySQL, SQLite or SQL Server fails with the given reason, points
at the given token, has a hint holding the given fragment, and the retry an agent writes from that
hint runs. Everything goes through the real endpoint on the demo workspace.

Format: one JSON object per line with ``family``, ``dialect``, ``sql``, ``reason``, ``at`` (the text
the error position must point at), ``hint`` (a fragment the hint must contain, case-insensitive)
and ``retry`` (the corrected statement, which must succeed).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from flashcards import services
from flashcards.services.demo import seed_demo_workspace
from tests.factories import UserFactory
from tests.support.envelope import post_sql

CORPUS = Path(__file__).parent / "corpus" / "habits.jsonl"
KEYS = ["family", "dialect", "sql", "reason", "at", "hint", "retry"]
FAMILIES = {
    "clock", "arrays", "text", "aggregates", "paging", "catalogs", "writes", "joins", "names",
    "nulls", "syntax",
}  # fmt: skip


def _entries() -> list[dict[str, str]]:
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


ENTRIES = _entries()


def test_the_corpus_is_wide_and_well_formed() -> None:
    assert len(ENTRIES) >= 300
    families = Counter(entry["family"] for entry in ENTRIES)
    assert set(families) == FAMILIES
    assert min(families.values()) >= 15, families
    assert {entry["dialect"] for entry in ENTRIES} >= {"postgres", "mysql", "sqlite", "tsql"}
    for entry in ENTRIES:
        assert list(entry) == KEYS, entry
        assert entry["at"].lower() in entry["sql"].lower(), entry
    assert len({entry["sql"] for entry in ENTRIES}) == len(ENTRIES)


@pytest.fixture
def demo_api(db: None, client_for: Any) -> Any:
    user = UserFactory(username="demo-habits")
    workspace = seed_demo_workspace(user).workspace
    _, plaintext = services.create_api_key(user, "habits", workspace=workspace)
    return client_for(plaintext)


def _miss(entry: dict[str, str], body: dict[str, Any]) -> str | None:
    """What is wrong with the error ``body`` for ``entry``, or None."""
    if body["ok"]:
        return "accepted"
    details = body["error"]["details"]
    problems = []
    if details["reason"] != entry["reason"]:
        problems.append(f"reason {details['reason']}")
    offset = details.get("position", {}).get("offset")
    pointed = None if offset is None else entry["sql"][offset : offset + len(entry["at"])]
    if pointed is None or pointed.lower() != entry["at"].lower():
        problems.append(
            f"points at {entry['sql'][offset:][:20]!r}" if offset is not None else "no position"
        )
    if entry["hint"].lower() not in details["hint"].lower():
        problems.append(f"hint {details['hint']!r}")
    return "; ".join(problems) or None


def test_every_foreign_habit_is_taught_and_its_retry_runs(demo_api: Any) -> None:
    misses, failed_retries = [], []
    for entry in ENTRIES:
        body = post_sql(demo_api, entry["sql"], dry_run=True).json()
        miss = _miss(entry, body)
        if miss is not None:
            misses.append(f"{entry['sql']}\n    {miss}")
        retry = post_sql(demo_api, entry["retry"], dry_run=True).json()
        if not retry["ok"]:
            failed_retries.append(f"{entry['retry']}\n    {retry['error']['message']}")
    assert failed_retries == []
    assert misses == [], f"{len(misses)} of {len(ENTRIES)} entries missed:\n" + "\n".join(misses)


def test_a_verified_correction_is_offered_and_runs(demo_api: Any) -> None:
    """Where the error carries ``correctedSql``, that statement is one the endpoint runs."""
    offered = 0
    for entry in ENTRIES:
        details = post_sql(demo_api, entry["sql"], dry_run=True).json()["error"]["details"]
        corrected = details.get("correctedSql")
        if corrected is None:
            continue
        offered += 1
        retry = post_sql(demo_api, corrected, dry_run=True).json()
        assert retry["ok"], (entry["sql"], corrected, retry["error"])
    assert offered >= len(ENTRIES) // 2
