"""Whole-workspace aggregates against their floor (docs/benchmarks.md §6): on PostgreSQL, at 100k and
1M cards (3 reviews per card), each COUNT / GROUP BY the demo and the dialect's examples lead with,
run through the dialect (``dsl.runtime.service.run_sql``, in process: parse from the cache, compile, the
query, formatting) against the best hand-written SQL for the same answer that PostgreSQL can
answer from an index alone, on a connection of its own. Measured round-robin; each ratio is the
median of per-round ratios. The tables are vacuumed first (index-only scans need the visibility
map that autovacuum keeps on a live database).

Goal: every aggregate within 1.5x of its floor.

Run: ``python -m bench.aggregates`` (BENCH_AGGREGATE_SIZES, default ``100000,1000000``;
BENCH_AGGREGATE_ROUNDS, default 15). The 1M pair takes ~30 minutes to seed on first use."""

from __future__ import annotations

import json
import os
import statistics
import time
from typing import Any

os.environ["BENCH_DB"] = "postgres"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")

import django

django.setup()

import psycopg  # noqa: E402
from django.conf import settings  # noqa: E402

from bench import seed  # noqa: E402
from bench.report import RESULTS_DIR, machine, table  # noqa: E402
from dsl.runtime.service import run_sql  # noqa: E402
from flashcards.models import REVIEW_GRADES  # noqa: E402

GOAL = 1.5
GRADE_CASE = " ".join(f"WHEN {i} THEN '{grade}'" for i, grade in enumerate(REVIEW_GRADES))

# (name, dialect statement, floor SQL with %(ws)s) — each floor gives the dialect's answer.
AGGREGATES = (
    (
        "COUNT(*) cards",
        "SELECT COUNT(*) AS n FROM cards",
        "SELECT count(*) FROM flashcards_card WHERE workspace_id = %(ws)s AND deleted_at IS NULL",
    ),
    (
        "GROUP BY tag",
        "SELECT tag, COUNT(*) AS card_count FROM cards GROUP BY tag ORDER BY card_count DESC "
        "LIMIT 20 OFFSET 0",
        # Tag rows exist for live cards only, so counting them needs no join to the cards.
        "SELECT t.name, g.n FROM (SELECT ct.tag_id, count(*) AS n FROM flashcards_cardtag ct "
        "WHERE ct.workspace_id = %(ws)s GROUP BY ct.tag_id) g "
        "JOIN flashcards_tag t ON t.id = g.tag_id ORDER BY g.n DESC, t.key LIMIT 21",
    ),
    (
        "GROUP BY review_grade",
        "SELECT review_grade, COUNT(*) AS total_reviews FROM review_events GROUP BY review_grade "
        "ORDER BY total_reviews DESC LIMIT 10 OFFSET 0",
        f"SELECT CASE g.rating {GRADE_CASE} END, g.n FROM (SELECT rating, count(*) AS n "
        "FROM flashcards_reviewevent WHERE workspace_id = %(ws)s GROUP BY rating) g "
        "ORDER BY g.n DESC LIMIT 11",
    ),
    (
        "GROUP BY rating",
        "SELECT rating, COUNT(*) AS reviews FROM review_events GROUP BY rating "
        "ORDER BY reviews DESC LIMIT 10 OFFSET 0",
        "SELECT rating, count(*) AS n FROM flashcards_reviewevent WHERE workspace_id = %(ws)s "
        "GROUP BY rating ORDER BY n DESC LIMIT 11",
    ),
    (
        "COUNT(*) reviews",
        "SELECT COUNT(*) AS n FROM review_events",
        "SELECT count(*) FROM flashcards_reviewevent WHERE workspace_id = %(ws)s",
    ),
)


def _connect() -> psycopg.Connection:
    db = settings.DATABASES["default"]
    return psycopg.connect(
        host=db["HOST"], port=db["PORT"] or 5432, user=db["USER"], dbname=db["NAME"],
        autocommit=True,
    )  # fmt: skip


def _dialect(statement: str, workspace: Any) -> float:
    started = time.perf_counter()
    outcome = run_sql(
        sql=statement, workspace=workspace, user=None, api_key=None, surface="rest",
        mode="read", dry_run=False, request_id="bench", docs={},
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    assert outcome.body["ok"], outcome.body
    return elapsed


def _floor(raw: psycopg.Connection, sql: str, workspace: Any) -> float:
    started = time.perf_counter()
    raw.execute(sql, {"ws": workspace.pk}).fetchall()
    return time.perf_counter() - started


def _plan(raw: psycopg.Connection, sql: str, workspace: Any) -> str:
    rows = raw.execute(f"EXPLAIN {sql}", {"ws": workspace.pk}).fetchall()
    return "\n".join(row[0] for row in rows)


def run() -> dict[str, Any]:
    seed.ensure_database()
    sizes = [int(s) for s in os.environ.get("BENCH_AGGREGATE_SIZES", "100000,1000000").split(",")]
    rounds = int(os.environ.get("BENCH_AGGREGATE_ROUNDS", "15"))
    raw = _connect()
    for table_name in ("flashcards_card", "flashcards_cardtag", "flashcards_reviewevent"):
        raw.execute(f"VACUUM ANALYZE {table_name}")
    results: dict[str, Any] = {"machine": machine(), "rounds": rounds, "sizes": {}}
    for size in sizes:
        workspace = seed.ensure_pair(size).target
        cells = {}
        for name, statement, floor_sql in AGGREGATES:
            _dialect(statement, workspace), _floor(raw, floor_sql, workspace)  # warm both
            dialect, floor, ratios = [], [], []
            for _ in range(rounds):
                d, f = _dialect(statement, workspace), _floor(raw, floor_sql, workspace)
                dialect.append(d), floor.append(f), ratios.append(d / f)
            cells[name] = {
                "dialect_ms": statistics.median(dialect) * 1000,
                "floor_ms": statistics.median(floor) * 1000,
                "ratio": statistics.median(ratios),
                "floor_plan": _plan(raw, floor_sql, workspace),
            }
        results["sizes"][size] = cells
    raw.close()
    return results


def report(results: dict[str, Any]) -> str:
    rows = []
    worst = 0.0
    for size, cells in results["sizes"].items():
        for name, cell in cells.items():
            worst = max(worst, cell["ratio"])
            rows.append(
                [
                    seed.label(int(size)),
                    name,
                    f"{cell['dialect_ms']:.1f}",
                    f"{cell['floor_ms']:.1f}",
                    f"{cell['ratio']:.2f}x",
                    "index only" if "Index Only Scan" in cell["floor_plan"] else "heap",
                ]
            )
    return "\n".join(
        [
            "### Whole-workspace aggregates on PostgreSQL: the dialect against the index-only "
            f"floor, {results['rounds']} rounds",
            "",
            table(["cards", "aggregate", "dialect ms", "floor ms", "ratio", "floor scan"], rows),
            "",
            f"Goal ≤ {GOAL}x for every aggregate: {'met' if worst <= GOAL else 'NOT met'} "
            f"(worst {worst:.2f}x).",
        ]
    )


def main() -> None:
    results = run()
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / "aggregates.json").write_text(json.dumps(results, indent=2))
    print(report(results))


if __name__ == "__main__":
    main()
