"""Query mix at scale (docs/benchmarks.md §2): the agent's typical statements on workspaces of 1k,
10k and 100k cards, each measured five ways in the same run, round-robin so drift hits all alike:

  executor  dsl.runtime.executor.execute_batch under the statement deadline (what run_sql does, minus
            the query-log row)
  run_sql   dsl.runtime.service.run_sql (executor + the query-log row every request writes)
  http      POST /v1/agent/sql through Django's test Client, in process (URL routing, middleware,
            API-key authentication, DRF, JSON rendering; no socket)
  orm       the hand-written Django ORM equivalent (bench/handwritten.py)
  raw       raw SQL through psycopg / sqlite3 on a connection of its own (the floor)

Also: SQL statements per write of 1/10/100 rows (CaptureQueriesContext), tracemalloc peak per
query, EXPLAIN plans, and a check that the bystander workspace of the same size is untouched.

Run: ``BENCH_DB=sqlite|postgres python -m bench.queries`` (BENCH_SIZES, BENCH_BUDGET_SECONDS)."""

from __future__ import annotations

import gc
import json
import os
import statistics
import time
import tracemalloc
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from bench import handwritten as hw  # noqa: E402
from bench import seed  # noqa: E402
from bench.report import RESULTS_DIR, machine, table  # noqa: E402
from dsl.language import validator  # noqa: E402
from dsl.language.parser import parse_batch  # noqa: E402
from dsl.runtime import compiler  # noqa: E402
from dsl.runtime.executor import current_limits, execute_batch  # noqa: E402
from dsl.runtime.querylog import ExecutionStats  # noqa: E402
from dsl.runtime.service import run_sql  # noqa: E402
from dsl.runtime.time_limit import statement_deadline  # noqa: E402
from flashcards import services  # noqa: E402
from flashcards.models import Card, Workspace  # noqa: E402

DOCS = {"discoveryUrl": "http://testserver/v1/", "grammarUrl": "http://testserver/v1/agent/grammar"}
METHODS = ("executor", "run_sql", "http", "orm", "raw")
PAGED_READS = ("paged_select", "match_search", "match_tag_word", "due_cards")


@dataclass
class Context:
    ws: Workspace
    raw: hw.RawDb
    client: Client
    update_ids: list[uuid.UUID]
    delete_ids: list[uuid.UUID]
    counter: int = 0

    def text(self) -> str:
        self.counter += 1
        return f"Updated answer {self.counter}"


def _insert_rows(count: int) -> list[dict[str, Any]]:
    return [
        {
            "front_text": f"Benchmark question {n}?",
            "back_text": f"Benchmark answer {n}.",
            "tags": ["English", "verbs"],
            "effort_level": "fast",
        }
        for n in range(count)
    ]


def _sql_literal(value: Any) -> str:
    if isinstance(value, list):
        return "(" + ", ".join(_sql_literal(v) for v in value) + ")"
    return "'" + str(value).replace("'", "''") + "'"


def insert_sql(rows: list[dict[str, Any]]) -> str:
    values = ", ".join(
        "("
        + ", ".join(
            _sql_literal(row[k]) for k in ("front_text", "back_text", "tags", "effort_level")
        )
        + ")"
        for row in rows
    )
    return f"INSERT INTO cards (front_text, back_text, tags, effort_level) VALUES {values}"


def ids_sql(ids: list[uuid.UUID]) -> str:
    return ", ".join(f"'{i}'" for i in ids)


@dataclass(frozen=True)
class Case:
    name: str
    kind: str  # read | write
    sql: Callable[[Context], str]
    orm: Callable[[Context], Any]
    raw: Callable[[Context], Any]
    cleanup: Callable[[Context, list[str]], None] | None = None


def _hard_delete(ctx: Context, ids: list[str]) -> None:
    Card.objects.filter(workspace=ctx.ws, id__in=ids).delete()


def _undelete(ctx: Context, ids: list[str]) -> None:
    """A DELETE returns no rows, so the fixed target ids are restored."""
    Card.objects.filter(workspace=ctx.ws, id__in=ctx.delete_ids).update(deleted_at=None)


INSERT_ROWS = _insert_rows(50)

CASES = (
    Case(
        "paged_select",
        "read",
        lambda ctx: (
            "SELECT * FROM cards WHERE tags OVERLAP ('english') AND effort_level IN "
            "('fast', 'medium') ORDER BY updated_at DESC LIMIT 20 OFFSET 0"
        ),
        lambda ctx: hw.orm_paged(ctx.ws),
        lambda ctx: hw.raw_paged(ctx.raw, ctx.ws),
    ),
    Case(
        "match_search",
        "read",
        lambda ctx: (
            "SELECT card_id, front_text, back_text FROM cards WHERE MATCH('photosynthesis') "
            "LIMIT 20"
        ),
        lambda ctx: hw.orm_match(ctx.ws),
        lambda ctx: hw.raw_match(ctx.raw, ctx.ws),
    ),
    Case(
        "match_tag_word",
        "read",
        lambda ctx: (
            "SELECT card_id, front_text, back_text FROM cards WHERE MATCH('english') LIMIT 20"
        ),
        lambda ctx: hw.orm_match(ctx.ws, "english"),
        lambda ctx: hw.raw_match(ctx.raw, ctx.ws, "english"),
    ),
    Case(
        "due_cards",
        "read",
        lambda ctx: (
            "SELECT card_id, front_text, due_at FROM cards WHERE due_at <= NOW() "
            "ORDER BY due_at LIMIT 20"
        ),
        lambda ctx: hw.orm_due(ctx.ws, services.now_ms()),
        lambda ctx: hw.raw_due(ctx.raw, ctx.ws, services.now_ms()),
    ),
    Case(
        "group_by_tag",
        "read",
        lambda ctx: (
            "SELECT tag, COUNT(*) AS card_count FROM cards GROUP BY tag "
            "ORDER BY card_count DESC LIMIT 20 OFFSET 0"
        ),
        lambda ctx: hw.orm_tag_counts(ctx.ws),
        lambda ctx: hw.raw_tag_counts(ctx.raw, ctx.ws),
    ),
    Case(
        "reviews_by_rating",
        "read",
        lambda ctx: (
            "SELECT rating, COUNT(*) AS reviews FROM review_events GROUP BY rating "
            "ORDER BY reviews DESC LIMIT 10 OFFSET 0"
        ),
        lambda ctx: hw.orm_rating_counts(ctx.ws),
        lambda ctx: hw.raw_rating_counts(ctx.raw, ctx.ws),
    ),
    Case(
        "count",
        "read",
        lambda ctx: "SELECT COUNT(*) FROM cards",
        lambda ctx: hw.orm_count(ctx.ws),
        lambda ctx: hw.raw_count(ctx.raw, ctx.ws),
    ),
    Case(
        "update_20_by_id",
        "write",
        lambda ctx: (
            f"UPDATE cards SET back_text = '{ctx.text()}' "
            f"WHERE card_id IN ({ids_sql(ctx.update_ids)})"
        ),
        lambda ctx: hw.orm_update(ctx.ws, ctx.update_ids, ctx.text()),
        lambda ctx: hw.raw_update(ctx.raw, ctx.ws, ctx.update_ids, ctx.text()),
    ),
    Case(
        "insert_50",
        "write",
        lambda ctx: insert_sql(INSERT_ROWS),
        lambda ctx: hw.orm_insert(ctx.ws, INSERT_ROWS),
        lambda ctx: hw.raw_insert(ctx.raw, ctx.ws, INSERT_ROWS),
        cleanup=_hard_delete,
    ),
    Case(
        "delete_10",
        "write",
        lambda ctx: f"DELETE FROM cards WHERE card_id IN ({ids_sql(ctx.delete_ids)})",
        lambda ctx: hw.orm_delete(ctx.ws, ctx.delete_ids),
        lambda ctx: hw.raw_delete(ctx.raw, ctx.ws, ctx.delete_ids),
        cleanup=_undelete,
    ),
)


# The five ways to run a statement --------------------------------------------------------------


def _finish(data: dict[str, Any], instructions: str) -> dict[str, Any]:
    return {"ok": True, "data": data, "instructions": instructions}


def via_executor(sql: str, ws: Workspace) -> list[dict[str, Any]]:
    with statement_deadline(5.0) as deadline:
        body = execute_batch(
            sql,
            ws,
            mode="any",
            dry_run=False,
            deadline=deadline,
            stats=ExecutionStats(),
            finish=_finish,
        )
    return body["data"]["rows"]


def via_run_sql(sql: str, ws: Workspace) -> list[dict[str, Any]]:
    outcome = run_sql(
        sql=sql,
        workspace=ws,
        user=None,
        api_key=None,
        surface="rest",
        mode="any",
        dry_run=False,
        request_id=str(uuid.uuid4()),
        docs=DOCS,
    )
    assert outcome.status_code == 200, outcome.body
    return outcome.body["data"]["rows"]


def via_http(sql: str, client: Client) -> list[dict[str, Any]]:
    response = client.post("/v1/agent/sql", {"sql": sql}, content_type="application/json")
    body = response.json()
    assert response.status_code == 200, body
    return body["data"]["rows"]


def _runner(case: Case, method: str, ctx: Context) -> Callable[[], Any]:
    if method == "orm":
        return lambda: case.orm(ctx)
    if method == "raw":
        return lambda: case.raw(ctx)
    if method == "executor":
        return lambda: via_executor(case.sql(ctx), ctx.ws)
    if method == "run_sql":
        return lambda: via_run_sql(case.sql(ctx), ctx.ws)
    return lambda: via_http(case.sql(ctx), ctx.client)


def _written_ids(result: Any) -> list[str]:
    rows = result[0] if isinstance(result, tuple) else result
    return [row["card_id"] for row in rows if "card_id" in row]


@dataclass
class Timing:
    samples: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in METHODS})

    def median_ms(self, method: str) -> float:
        return statistics.median(self.samples[method]) * 1000

    def paired_ratio(self, method: str, baseline: str) -> float:
        """The median over rounds of method / baseline within the same round: the two ran back
        to back, so load from elsewhere on the machine cancels out of each ratio."""
        pairs = zip(self.samples[method], self.samples[baseline], strict=True)
        return statistics.median(a / b for a, b in pairs)


def time_case(case: Case, ctx: Context, *, budget: float, min_n: int, max_n: int) -> Timing:
    timing = Timing()
    runners = {method: _runner(case, method, ctx) for method in METHODS}
    for _ in range(3):  # warm-up: caches, plans, the thread's parser
        for method in METHODS:
            result = runners[method]()
            if case.cleanup:
                case.cleanup(ctx, _written_ids(result))
    started = time.perf_counter()
    rounds = 0
    gc.collect()
    while rounds < max_n and (rounds < min_n or time.perf_counter() - started < budget):
        order = METHODS[rounds % len(METHODS) :] + METHODS[: rounds % len(METHODS)]
        for method in order:
            begin = time.perf_counter()
            result = runners[method]()
            timing.samples[method].append(time.perf_counter() - begin)
            if case.cleanup:
                case.cleanup(ctx, _written_ids(result))
        rounds += 1
    return timing


SCALED = ("executor", "orm", "raw")


def paired_scaling(
    case: Case, small: Context, big: Context, *, budget: float, min_n: int = 15, max_n: int = 40
) -> dict[str, float]:
    """How much slower ``case`` is on the big workspace than on the small one, per method: the
    median over rounds of big / small, the two sizes run back to back in each round. The VM's
    speed drifts during a run (docs/benchmarks.md), and the sizes are otherwise measured a
    minute or more apart, so a plain ratio of the two sizes' medians can carry that drift."""
    runners = {
        (method, which): _runner(case, method, ctx)
        for method in SCALED
        for which, ctx in (("small", small), ("big", big))
    }
    for _ in range(3):
        for run in runners.values():
            run()
    ratios: dict[str, list[float]] = {method: [] for method in SCALED}
    started = time.perf_counter()
    rounds = 0
    gc.collect()
    while rounds < max_n and (rounds < min_n or time.perf_counter() - started < budget):
        for method in SCALED:
            took = {}
            for which in ("small", "big") if rounds % 2 == 0 else ("big", "small"):
                begin = time.perf_counter()
                runners[(method, which)]()
                took[which] = time.perf_counter() - begin
            ratios[method].append(took["big"] / took["small"])
        rounds += 1
    return {method: round(statistics.median(values), 3) for method, values in ratios.items()}


def same_rows(case: Case, ctx: Context) -> bool:
    """The dialect and the hand-written ORM return the same rows (reads only)."""
    if case.kind != "read":
        return True
    dialect = via_executor(case.sql(ctx), ctx.ws)
    rows, _ = case.orm(ctx)
    return dialect == rows


def peak_memory_kib(case: Case, ctx: Context) -> float:
    run = _runner(case, "executor", ctx)
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        baseline, _ = tracemalloc.get_traced_memory()
        result = run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    if case.cleanup:
        case.cleanup(ctx, _written_ids(result))
    return (peak - baseline) / 1024


def write_statement_counts(ctx: Context) -> list[list[Any]]:
    """SQL statements per write through the executor, for 1, 10 and 100 rows."""
    ids = list(
        Card.objects.filter(workspace=ctx.ws, deleted_at__isnull=True)
        .order_by("created_at", "id")
        .values_list("id", flat=True)[:100]
    )
    lines = []
    for count in (1, 10, 100):
        subset = ids[:count]
        statements = {
            "INSERT": insert_sql(_insert_rows(count)),
            "UPDATE": f"UPDATE cards SET back_text = 'counted' WHERE card_id IN ({ids_sql(subset)})",
            "UPDATE tags": (
                f"UPDATE cards SET tags = ('english', 'grammar') WHERE card_id IN ({ids_sql(subset)})"
            ),
            "DELETE": f"DELETE FROM cards WHERE card_id IN ({ids_sql(subset)})",
        }
        row: list[Any] = [count]
        for verb, sql in statements.items():
            with CaptureQueriesContext(connection) as captured:
                rows = via_executor(sql, ctx.ws)
            row.append(len(captured.captured_queries))
            if verb == "INSERT":
                _hard_delete(ctx, [r["card_id"] for r in rows])
        Card.objects.filter(id__in=subset).update(deleted_at=None)
        lines.append(row)
    return lines


def explain(case: Case, ctx: Context) -> str:
    """The plan of the dialect's own compiled queryset (ANALYZE on PostgreSQL)."""
    batch = parse_batch(case.sql(ctx), current_limits())
    plan = validator.validate_batch(batch, current_limits())[0]
    compiled = compiler.compile_select(plan, ctx.ws, now=services.now_ms())
    limit = plan.limit or 100
    queryset = compiled.queryset[(plan.offset or 0) : (plan.offset or 0) + limit + 1]
    if connection.vendor == "postgresql":
        return queryset.explain(analyze=True)
    return queryset.explain()


def _context(pair: seed.Pair, client: Client) -> Context:
    ids = list(
        Card.objects.filter(workspace=pair.target, deleted_at__isnull=True)
        .order_by("created_at", "id")
        .values_list("id", flat=True)[:30]
    )
    db = settings.DATABASES["default"]
    return Context(pair.target, hw.RawDb(connection.vendor, db), client, ids[:20], ids[20:30])


def run() -> dict[str, Any]:
    seed.ensure_database()
    budget = float(os.environ.get("BENCH_BUDGET_SECONDS", "4"))
    results: dict[str, Any] = {"machine": machine(), "vendor": connection.vendor, "sizes": {}}
    user = seed.bench_user()
    contexts: dict[str, Context] = {}
    for size in seed.sizes_from_env():
        pair = seed.ensure_pair(size)
        before = seed.fingerprint(pair.bystander)
        key, plaintext = services.create_api_key(user, "bench", workspace=pair.target)
        client = Client(HTTP_AUTHORIZATION=f"ApiKey {plaintext}")
        ctx = _context(pair, client)
        label = seed.label(size)
        print(f"\n== {connection.vendor} {label} ==", flush=True)
        per_size: dict[str, Any] = {"queries": {}, "memory_kib": {}, "same_rows": {}}
        for case in CASES:
            per_size["same_rows"][case.name] = same_rows(case, ctx)
            timing = time_case(case, ctx, budget=budget, min_n=15, max_n=60)
            per_size["queries"][case.name] = {m: round(timing.median_ms(m), 3) for m in METHODS} | {
                "n": len(timing.samples["executor"]),
                "kind": case.kind,
                "exec_orm": round(timing.paired_ratio("executor", "orm"), 3),
                "exec_raw": round(timing.paired_ratio("executor", "raw"), 3),
            }
            per_size["memory_kib"][case.name] = round(peak_memory_kib(case, ctx), 1)
            print(f"  {case.name}: {per_size['queries'][case.name]}", flush=True)
        per_size["write_statements"] = write_statement_counts(ctx)
        if size == max(seed.sizes_from_env()):
            per_size["explain"] = {
                case.name: explain(case, ctx) for case in CASES if case.kind == "read"
            }
        after = seed.fingerprint(pair.bystander)
        per_size["bystander_untouched"] = before == after
        services.revoke_api_key(key)
        contexts[label] = ctx
        results["sizes"][label] = per_size
    labels = list(contexts)
    if len(labels) > 1:
        small, big = contexts[labels[0]], contexts[labels[-1]]
        print(f"\n== {connection.vendor} paged reads, {labels[-1]} / {labels[0]} ==", flush=True)
        results["paired_scaling"] = {}
        for case in CASES:
            if case.name in PAGED_READS:
                ratios = paired_scaling(case, small, big, budget=budget)
                results["paired_scaling"][case.name] = ratios
                print(f"  {case.name}: {ratios}", flush=True)
    for ctx in contexts.values():
        ctx.raw.close()
    return results


# Report ----------------------------------------------------------------------------------------


def report(results: dict[str, Any]) -> str:
    vendor = results["vendor"]
    lines = [f"### Query mix on {vendor}", ""]
    sizes = results["sizes"]
    for label, per_size in sizes.items():
        rows = []
        for name, q in per_size["queries"].items():
            rows.append(
                [
                    name,
                    *(f"{q[m]:.3f}" for m in METHODS),
                    f"{q['exec_orm']:.2f}x",
                    f"{q['exec_raw']:.2f}x",
                    f"{per_size['memory_kib'][name]:.0f}",
                    "yes" if per_size["same_rows"][name] else "NO",
                    q["n"],
                ]
            )
        lines += [
            f"**{label} cards** (median ms; the ratios are medians of per-round ratios; "
            "bystander workspace untouched: "
            f"{'yes' if per_size['bystander_untouched'] else 'NO'})",
            "",
            table(
                [
                    "query",
                    *METHODS,
                    "exec/orm",
                    "exec/raw",
                    "peak KiB",
                    "same rows",
                    "n",
                ],
                rows,
            ),
            "",
        ]
    lines += _scaling(sizes, results.get("paired_scaling", {})) + _writes(sizes) + _goals(results)
    return "\n".join(lines)


def _scaling(sizes: dict[str, Any], paired: dict[str, dict[str, float]]) -> list[str]:
    labels = list(sizes)
    if len(labels) < 2:
        return []
    first, last = labels[0], labels[-1]
    rows = []
    for name in sizes[first]["queries"]:
        small, big = sizes[first]["queries"][name], sizes[last]["queries"][name]
        pairs = paired.get(name)
        rows.append(
            [name]
            + [f"{big[m] / small[m]:.2f}x" for m in SCALED]
            + [f"{pairs[m]:.2f}x" if pairs else "" for m in SCALED]
            + [f"{sizes[first]['memory_kib'][name]:.0f} → {sizes[last]['memory_kib'][name]:.0f}"]
        )
    return [
        f"**Scaling {first} → {last}** (ratio of the sizes' medians; for the paged reads also the "
        "paired ratio: the median of big / small with both sizes run back to back in each round; "
        "executor peak KiB)",
        "",
        table(
            [
                "query",
                "executor",
                "orm",
                "raw",
                "executor paired",
                "orm paired",
                "raw paired",
                "peak KiB",
            ],
            rows,
        ),
        "",
    ]


def _writes(sizes: dict[str, Any]) -> list[str]:
    label, per_size = list(sizes.items())[-1]
    return [
        f"**SQL statements per write through the executor** ({label} workspace)",
        "",
        table(["rows", "INSERT", "UPDATE", "UPDATE tags", "DELETE"], per_size["write_statements"]),
        "",
    ]


def goal_checks(results: dict[str, Any]) -> list[tuple[str, bool, str]]:
    sizes = results["sizes"]
    labels = list(sizes)
    checks: list[tuple[str, bool, str]] = []
    worst = max(
        (
            (q["exec_orm"], label, name)
            for label, s in sizes.items()
            for name, q in s["queries"].items()
            if q["kind"] == "read"
        ),
    )
    checks.append(
        (
            "executor ≤ 1.15x hand-written ORM for every read",
            worst[0] <= 1.15,
            f"worst {worst[0]:.2f}x ({worst[2]} at {worst[1]})",
        )
    )
    last = sizes[labels[-1]]
    if results["vendor"] == "postgresql":
        for name in PAGED_READS:
            q = last["queries"][name]
            ratio = q["exec_raw"]
            checks.append(
                (f"{name}: executor ≤ 1.5x raw SQL at {labels[-1]}", ratio <= 1.5, f"{ratio:.2f}x")
            )
    if len(labels) > 1:
        first = sizes[labels[0]]
        paired = results.get("paired_scaling", {})
        for name in PAGED_READS:
            ratio = last["queries"][name]["executor"] / first["queries"][name]["executor"]
            if name in paired:
                ratio = paired[name]["executor"]
                detail = f"{ratio:.2f}x (paired; ratio of medians {last['queries'][name]['executor'] / first['queries'][name]['executor']:.2f}x)"
            else:
                detail = f"{ratio:.2f}x"
            checks.append((f"{name}: {labels[-1]} ≤ 2x {labels[0]}", ratio <= 2.0, detail))
    # "Constant" allows the few extra INSERTs of Django's bulk_create batches (on SQLite, 999
    # parameters per statement: 43 cards); one statement per row would add ~99.
    counts = [row[1:] for row in last["write_statements"]]
    growth = max(big - small for small, big in zip(counts[0], counts[-1], strict=True))
    checks.append(
        (
            "writes: SQL statements for 100 rows within 2 of 1 row",
            growth <= 2,
            " / ".join(f"{row[0]} rows: {row[1:]}" for row in last["write_statements"]),
        )
    )
    if len(labels) > 1:
        growth = max(
            last["memory_kib"][name] / max(sizes[labels[0]]["memory_kib"][name], 1.0)
            for name in last["memory_kib"]
        )
        checks.append(
            (
                "peak memory per query does not grow with size",
                growth <= 1.5,
                f"max growth {growth:.2f}x",
            )
        )
    untouched = all(s["bystander_untouched"] for s in sizes.values())
    checks.append(("bystander workspaces untouched", untouched, ""))
    return checks


def _goals(results: dict[str, Any]) -> list[str]:
    rows = [[goal, "met" if ok else "NOT met", detail] for goal, ok, detail in goal_checks(results)]
    return [f"**Goals ({results['vendor']})**", "", table(["goal", "result", "measured"], rows), ""]


def explain_report(results: dict[str, Any]) -> str:
    label, per_size = list(results["sizes"].items())[-1]
    parts = [f"### Plans of the dialect's reads on {results['vendor']}, {label} cards", ""]
    for name, plan in per_size.get("explain", {}).items():
        parts += [f"`{name}`", "", "```", plan, "```", ""]
    return "\n".join(parts)


def main() -> None:
    results = run()
    RESULTS_DIR.mkdir(exist_ok=True)
    vendor = results["vendor"]
    (RESULTS_DIR / f"queries-{vendor}.json").write_text(json.dumps(results, indent=2))
    text = report(results)
    (RESULTS_DIR / f"queries-{vendor}.md").write_text(text + "\n\n" + explain_report(results))
    print()
    print(text)
    print(f"\nPlans: {RESULTS_DIR / f'queries-{vendor}.md'}")


if __name__ == "__main__":
    main()
