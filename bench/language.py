"""Language overhead (docs/benchmarks.md §1): lex + parse + validate + compile of every statement
of bench/corpus.sql, with no database round trip.

Stages, each timed per statement (median over many runs of the whole corpus):
  parse     dsl.language.parser.parse_batch (lexing included)
  validate  dsl.language.validator.validate_batch
  compile   the plan to a ready Django queryset (dsl.runtime.compiler) for reads and UPDATE/DELETE
            targets; INSERT plans become the service functions' row dicts
  sqlgen    Django's SQL generation of that queryset (the executor does it once per plan and
            workspace; shown apart because it is Django's cost, not the dialect's)
  warm      the same statement sent again: what the executor pays with its caches (prepared
            plan, ready SQL) — shown next to the goal, which is measured on first sight

Goal: median ≤ 250 µs and p99 ≤ 1 ms per statement for parse + validate + compile.
Run: ``python -m bench.language`` (BENCH_ROUNDS, default 200)."""

from __future__ import annotations

import gc
import json
import os
import statistics
import time
import uuid
from pathlib import Path

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
django.setup()

from django.db import connection  # noqa: E402

from bench.report import RESULTS_DIR, machine, percentile, table  # noqa: E402
from dsl.language import plan as p  # noqa: E402
from dsl.language import validator as v  # noqa: E402
from dsl.language.parser import parse_batch  # noqa: E402
from dsl.runtime import clock as statement_clock  # noqa: E402
from dsl.runtime import compiler  # noqa: E402
from dsl.runtime.executor import current_limits, prepare  # noqa: E402
from dsl.runtime.querylog import ExecutionStats  # noqa: E402
from dsl.runtime.reads import ready_select  # noqa: E402
from flashcards.models import Workspace  # noqa: E402
from flashcards.services import now_ms  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "corpus.sql"
STAGES = ("parse", "validate", "compile", "sqlgen")


def load_corpus(path: Path = CORPUS) -> list[str]:
    return [
        line.strip()
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("--")
    ]


def compile_plan(plan: p.Plan, workspace: Workspace) -> object:
    """What the executor builds before its first database call, the first time it sees a
    statement: a SELECT's queryset with NOW() left as a parameter (as ``ReadySelect.build`` does),
    the target-id queryset of an UPDATE / DELETE, an INSERT's row dicts."""
    if isinstance(plan, p.SelectPlan):
        return compiler.compile_select(plan, workspace, now=None).queryset
    if isinstance(plan, (p.UpdatePlan, p.DeletePlan)):
        scope = compiler._Scope(plan.resource, workspace, tag_rows=False, now=now_ms())
        condition = compiler.compile_condition(scope, plan.where)
        return compiler.base_queryset(plan.resource, workspace, where=condition)
    if isinstance(plan, p.InsertPlan):
        return plan.row_dicts()
    return plan


def generate_sql(compiled: object) -> None:
    query = getattr(compiled, "query", None)
    if query is not None:
        with statement_clock.clock(statement_clock.DEFERRED):
            query.get_compiler(connection=connection).as_sql()


def time_warm(sql: str, workspace: Workspace) -> float:
    """The same statement again, as the executor runs it: the prepared plan and, for reads, the
    ready SQL come from their caches (dsl.runtime.executor.prepare / dsl.runtime.reads.ready_select)."""
    started = time.perf_counter()
    _, plans = prepare(sql, current_limits(), "any", ExecutionStats())
    for plan in plans:
        if isinstance(plan, p.SelectPlan):
            ready_select(plan, workspace)
    return time.perf_counter() - started


def time_statement(sql: str, workspace: Workspace) -> dict[str, float]:
    limits = current_limits()
    t0 = time.perf_counter()
    batch = parse_batch(sql, limits)
    t1 = time.perf_counter()
    plans = v.validate_batch(batch, limits)
    t2 = time.perf_counter()
    compiled = [compile_plan(plan, workspace) for plan in plans]
    t3 = time.perf_counter()
    for item in compiled:
        generate_sql(item)
    t4 = time.perf_counter()
    return {"parse": t1 - t0, "validate": t2 - t1, "compile": t3 - t2, "sqlgen": t4 - t3}


def run(rounds: int) -> dict[str, object]:
    corpus = load_corpus()
    workspace = Workspace(id=uuid.uuid4(), name="bench")  # never saved: no database round trip
    for sql in corpus:  # warm-up: the thread's parser, Django's field caches
        time_statement(sql, workspace)
    samples: dict[str, list[list[float]]] = {sql: [] for sql in corpus}
    warm: list[float] = []
    gc.collect()
    for _ in range(rounds):
        for sql in corpus:
            timing = time_statement(sql, workspace)
            samples[sql].append([timing[stage] for stage in STAGES])
    for sql in corpus:  # fills the executor's caches
        time_warm(sql, workspace)
    for _ in range(rounds):
        for sql in corpus:
            warm.append(time_warm(sql, workspace))
    per_statement = []
    for sql, runs in samples.items():
        medians = [statistics.median(run[i] for run in runs) for i in range(len(STAGES))]
        per_statement.append({"sql": sql, **dict(zip(STAGES, medians, strict=True))})
    front_end = [sum(run[:3]) for runs in samples.values() for run in runs]
    with_sql = [sum(run) for runs in samples.values() for run in runs]
    statement_medians = [s["parse"] + s["validate"] + s["compile"] for s in per_statement]
    return {
        "machine": machine(),
        "statements": len(corpus),
        "rounds": rounds,
        "front_end_us": _us(front_end),
        "front_end_statement_medians_us": _us(statement_medians),
        "with_sql_us": _us(with_sql),
        "warm_us": _us(warm),
        "stage_median_us": {
            stage: statistics.median(s[stage] for s in per_statement) * 1e6 for stage in STAGES
        },
        "slowest": sorted(
            per_statement, key=lambda s: -(s["parse"] + s["validate"] + s["compile"])
        )[:5],
    }


def _us(values: list[float]) -> dict[str, float]:
    return {
        "median": statistics.median(values) * 1e6,
        "p99": percentile(values, 0.99) * 1e6,
        "max": max(values) * 1e6,
    }


def report(results: dict) -> str:
    fe = results["front_end_us"]
    per = results["front_end_statement_medians_us"]
    gen = results["with_sql_us"]
    rows = [
        [
            "parse + validate + compile, every run",
            f"{fe['median']:.0f}",
            f"{fe['p99']:.0f}",
            f"{fe['max']:.0f}",
        ],
        [
            "… per-statement medians",
            f"{per['median']:.0f}",
            f"{per['p99']:.0f}",
            f"{per['max']:.0f}",
        ],
        [
            "… + Django SQL generation",
            f"{gen['median']:.0f}",
            f"{gen['p99']:.0f}",
            f"{gen['max']:.0f}",
        ],
        [
            "the same statement again (executor's caches)",
            f"{results['warm_us']['median']:.0f}",
            f"{results['warm_us']['p99']:.0f}",
            f"{results['warm_us']['max']:.0f}",
        ],
    ]
    stages = results["stage_median_us"]
    slow = [
        [f"`{s['sql'][:90]}{'…' if len(s['sql']) > 90 else ''}`"]
        + [f"{s[stage] * 1e6:.0f}" for stage in STAGES]
        for s in results["slowest"]
    ]
    ok = fe["median"] <= 250 and fe["p99"] <= 1000
    return "\n".join(
        [
            f"### Language overhead: {results['statements']} statements x {results['rounds']} rounds",
            "",
            table(["µs per statement", "median", "p99", "max"], rows),
            "",
            "Median per stage (µs): "
            + ", ".join(f"{stage} {stages[stage]:.0f}" for stage in STAGES),
            "",
            "Slowest statements (median µs per stage):",
            "",
            table(["statement", *STAGES], slow),
            "",
            f"Goal median ≤ 250 µs and p99 ≤ 1000 µs, first sight of each statement: "
            f"{'met' if ok else 'NOT met'}.",
        ]
    )


def main() -> None:
    results = run(int(os.environ.get("BENCH_ROUNDS", "200")))
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / "language.json").write_text(json.dumps(results, indent=2))
    print(report(results))


if __name__ == "__main__":
    main()
