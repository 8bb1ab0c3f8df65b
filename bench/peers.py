"""The dialect over HTTP against Datasette (docs/benchmarks.md §4): both serve the same SQLite file
(bench/bench.sqlite3, the 100k-card benchmark workspace), one process each, on loopback; wrk sends
the same question to both — a paged read and the due cards — at concurrency 1 and 16. The dialect
runs as in production (``manage.py serve``, rate limiter and query log on, the default file
cache); Datasette answers the equivalent hand-written SQL through its JSON API (``?sql=…``). Runs
alternate (dialect, Datasette, dialect, Datasette) so drift hits both alike.

Goal: the dialect ≥ 0.5x Datasette's requests per second in every cell.

Run: ``python -m bench.peers`` (needs wrk and ``pip install -r requirements-bench.txt``;
BENCH_PEERS_SECONDS per run, default 10)."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

os.environ["BENCH_DB"] = "sqlite"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")

import django

django.setup()

from django.conf import settings  # noqa: E402

from bench import seed  # noqa: E402
from bench.questions import questions  # noqa: E402
from bench.report import RESULTS_DIR, machine, table  # noqa: E402
from bench.server import free_port, serve  # noqa: E402
from bench.throughput import wrk  # noqa: E402
from flashcards import services  # noqa: E402

CONCURRENCIES = (1, 16)
GOAL = 0.5
ROUNDS = 2
SIZE = 100_000


@contextmanager
def datasette(database: Path) -> Iterator[int]:
    executable = Path(sys.executable).with_name("datasette")
    if not executable.exists():
        raise SystemExit("Datasette is not installed: pip install -r requirements-bench.txt")
    port = free_port()
    command = [
        str(executable), "serve", str(database), "--host", "127.0.0.1", "--port", str(port),
        "--setting", "sql_time_limit_ms", "5000", "--setting", "num_sql_threads", "3",
    ]  # fmt: skip
    process = subprocess.Popen(
        command, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                conn.request("GET", "/-/versions.json")
                if conn.getresponse().status == 200:
                    break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("Datasette did not start")
            time.sleep(0.2)
        yield port
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def _get(port: int, path: str) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", path)
    response = conn.getresponse()
    body = json.loads(response.read())
    assert response.status == 200, body
    return body


def _post(port: int, auth: str, statement: str) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request(
        "POST",
        "/v1/agent/sql",
        body=json.dumps({"sql": statement}),
        headers={"Authorization": auth, "Content-Type": "application/json"},
    )
    response = conn.getresponse()
    body = json.loads(response.read())
    assert response.status == 200 and body["ok"], body
    return body


def _datasette_path(database: str, sql: str, params: dict[str, str]) -> str:
    query = urllib.parse.urlencode({"sql": sql, "_shape": "objects", **params})
    return f"/{database}.json?{query}"


def _lua(directory: Path, name: str, auth: str, statement: str) -> Path:
    script = directory / f"{name.replace(' ', '-')}.lua"
    script.write_text(
        'wrk.method = "POST"\n'
        f"wrk.body = {json.dumps(json.dumps({'sql': statement}))}\n"
        'wrk.headers["Content-Type"] = "application/json"\n'
        f'wrk.headers["Authorization"] = "{auth}"\n'
    )
    return script


def _wrk(port: int, path: str, seconds: int, concurrency: int, **kwargs: Any) -> dict[str, float]:
    return wrk(port, path, seconds, concurrency=concurrency, **kwargs)


def run() -> dict[str, Any]:
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed: apt-get install wrk")
    seed.ensure_database()
    pair = seed.ensure_pair(SIZE)
    seconds = int(os.environ.get("BENCH_PEERS_SECONDS", "10"))
    key, plaintext = services.create_api_key(seed.bench_user(), "peers", workspace=pair.target)
    auth = f"ApiKey {plaintext}"
    database = Path(settings.DATABASES["default"]["NAME"])
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")
    asked = questions(pair.target.pk.hex, now)
    params = {"ws": pair.target.pk.hex, "now": now}
    cells: dict[str, dict[int, dict[str, list[dict[str, float]]]]] = {}
    same: dict[str, bool] = {}
    with (
        serve(workers=1) as port,
        datasette(database) as peer,
        tempfile.TemporaryDirectory() as tmp,
    ):
        for name, question in asked.items():
            dialect_rows = _post(port, auth, question["dialect"])["data"]["rows"]
            path = _datasette_path(database.stem, question["sql"], params)
            peer_rows = _get(peer, path)["rows"][:20]
            same[name] = [r["card_id"] for r in dialect_rows] == [
                str(uuid.UUID(r["card_id"])) for r in peer_rows
            ] and len(dialect_rows) == 20
            script = _lua(Path(tmp), name, auth, question["dialect"])
            cells[name] = {}
            for concurrency in CONCURRENCIES:
                runs: dict[str, list[dict[str, float]]] = {"dialect": [], "datasette": []}
                _wrk(port, "/v1/agent/sql", 2, concurrency, auth=auth, script=script)  # warm-up
                _wrk(peer, path, 2, concurrency, auth="")
                for _ in range(ROUNDS):
                    runs["dialect"].append(
                        _wrk(port, "/v1/agent/sql", seconds, concurrency, auth=auth, script=script)
                    )
                    runs["datasette"].append(_wrk(peer, path, seconds, concurrency, auth=""))
                cells[name][concurrency] = runs
    services.revoke_api_key(key)
    return {
        "machine": machine(),
        "seconds": seconds,
        "rounds": ROUNDS,
        "size": SIZE,
        "same_rows": same,
        "cells": cells,
    }


def summary(runs: list[dict[str, float]]) -> dict[str, float]:
    return {field: statistics.mean(r[field] for r in runs) for field in runs[0]}


def report(results: dict[str, Any]) -> str:
    rows = []
    ratios = []
    for name, by_concurrency in results["cells"].items():
        for concurrency, runs in by_concurrency.items():
            dialect, peer = summary(runs["dialect"]), summary(runs["datasette"])
            ratio = dialect["rps"] / peer["rps"]
            ratios.append(ratio)
            rows.append(
                [
                    name,
                    str(concurrency),
                    f"{dialect['rps']:.0f}",
                    f"{peer['rps']:.0f}",
                    f"{ratio:.2f}x",
                    f"{dialect['p50_ms']:.1f} / {peer['p50_ms']:.1f}",
                    f"{dialect['p99_ms']:.1f} / {peer['p99_ms']:.1f}",
                    f"{dialect['non_2xx']:.0f} / {peer['non_2xx']:.0f}",
                ]
            )
    met = all(ratio >= GOAL for ratio in ratios)
    return "\n".join(
        [
            f"### The dialect against Datasette: SQLite, {seed.label(results['size'])}-card "
            f"workspace, one process each, {results['rounds']} x {results['seconds']} s per cell "
            "and server, interleaved",
            "",
            table(
                [
                    "question",
                    "concurrency",
                    "dialect req/s",
                    "Datasette req/s",
                    "dialect / Datasette",
                    "p50 ms (dialect / Datasette)",
                    "p99 ms",
                    "non-2xx",
                ],
                rows,
            ),
            "",
            "Same 20 cards from both: "
            + ", ".join(
                f"{name} {'yes' if ok else 'NO'}" for name, ok in results["same_rows"].items()
            )
            + f". Goal ≥ {GOAL}x in every cell: {'met' if met else 'NOT met'} "
            f"(worst {min(ratios):.2f}x).",
        ]
    )


def main() -> None:
    results = run()
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / "peers.json").write_text(json.dumps(results, indent=2))
    print(report(results))


if __name__ == "__main__":
    main()
