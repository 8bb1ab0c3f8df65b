"""One worker process against two (docs/benchmarks.md §5): ``manage.py serve --workers 1`` and
``--workers 2`` side by side on PostgreSQL with the connection pool, rate limiter and query log on,
the paged read of the 100k-card workspace under wrk at concurrency 1 to 64. The two servers run at
once and are loaded in turn (1, 2, 1, 2 for each concurrency), so drift hits both alike.

Goal: two workers at least as fast as one at every concurrency — the keep-alive delay of uvicorn's
own ``--workers`` (docs/deployment.md) made two workers ~5x slower at concurrency 1.

Run: ``python -m bench.workers`` (needs wrk; BENCH_WORKERS_SECONDS per run, default 5)."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

os.environ["BENCH_DB"] = "postgres"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")

import django

django.setup()

from django.conf import settings  # noqa: E402

from bench import seed  # noqa: E402
from bench.questions import questions  # noqa: E402
from bench.report import RESULTS_DIR, machine, table  # noqa: E402
from bench.server import serve  # noqa: E402
from bench.throughput import _lua, wrk  # noqa: E402
from flashcards import services  # noqa: E402

CONCURRENCIES = (1, 2, 4, 8, 16, 32, 64)
WORKERS = (1, 2)
ROUNDS = 3
SIZE = 100_000


def run() -> dict[str, Any]:
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed: apt-get install wrk")
    seed.ensure_database()
    pair = seed.ensure_pair(SIZE)
    seconds = int(os.environ.get("BENCH_WORKERS_SECONDS", "5"))
    key, plaintext = services.create_api_key(seed.bench_user(), "workers", workspace=pair.target)
    auth = f"ApiKey {plaintext}"
    pool = {"DB_POOL_MAX_SIZE": str(settings.SERVER_THREADS + 2), "DB_POOL_MIN_SIZE": "2"}
    statement = questions("", "")["paged read"]["dialect"]
    cells: dict[int, dict[int, list[dict[str, float]]]] = {}
    with ExitStack() as stack:
        ports = {n: stack.enter_context(serve(workers=n, env=pool)) for n in WORKERS}
        script = _lua(auth, Path(stack.enter_context(tempfile.TemporaryDirectory())), statement)
        for port in ports.values():
            wrk(port, "/v1/agent/sql", 3, auth, script, concurrency=16)  # warm-up: pools, caches
        for concurrency in CONCURRENCIES:
            cells[concurrency] = {n: [] for n in WORKERS}
            for _ in range(ROUNDS):
                for n, port in ports.items():
                    cells[concurrency][n].append(
                        wrk(port, "/v1/agent/sql", seconds, auth, script, concurrency=concurrency)
                    )
    services.revoke_api_key(key)
    return {"machine": machine(), "seconds": seconds, "rounds": ROUNDS, "cells": cells}


def report(results: dict[str, Any]) -> str:
    rows = []
    met = True
    for concurrency, by_workers in results["cells"].items():
        summary = {
            n: {f: statistics.mean(r[f] for r in runs) for f in runs[0]}
            for n, runs in by_workers.items()
        }
        one, two = summary[1], summary[2]
        # The median of per-round ratios: each round loads the two servers back to back.
        ratio = statistics.median(
            b["rps"] / a["rps"] for a, b in zip(by_workers[1], by_workers[2], strict=True)
        )
        met = met and ratio >= 1.0
        rows.append(
            [
                str(concurrency),
                f"{one['rps']:.0f}",
                f"{two['rps']:.0f}",
                f"{ratio:.2f}x",
                f"{one['p50_ms']:.1f} / {two['p50_ms']:.1f}",
                f"{one['p99_ms']:.1f} / {two['p99_ms']:.1f}",
                f"{one['non_2xx'] + two['non_2xx']:.0f}",
            ]
        )
    return "\n".join(
        [
            "### One worker against two: PostgreSQL with the pool, paged read, 100k-card "
            f"workspace, {results['rounds']} x {results['seconds']} s per cell, interleaved",
            "",
            table(
                [
                    "concurrency",
                    "1 worker req/s",
                    "2 workers req/s",
                    "2 / 1 (median of rounds)",
                    "p50 ms (1 / 2)",
                    "p99 ms (1 / 2)",
                    "non-2xx",
                ],
                rows,
            ),
            "",
            f"Goal: 2 workers ≥ 1 worker at every concurrency: {'met' if met else 'NOT met'}.",
        ]
    )


def main() -> None:
    results = run()
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / "workers.json").write_text(json.dumps(results, indent=2))
    print(report(results))


if __name__ == "__main__":
    main()
