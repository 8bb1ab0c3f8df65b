"""HTTP throughput (docs/benchmarks.md §3): the served app (``manage.py serve``, one worker, rate
limiter and query log on) under wrk on loopback at concurrency 16, the dialect's paged SELECT on
POST /v1/agent/sql against a minimal DRF view returning the same rows from ``.values()`` with the
same authentication, workspace resolution and throttle (bench/views.py). Goal: the dialect at least
0.85 times its requests per second. Runs alternate (A B A B) and are averaged, so drift hits both
alike. On PostgreSQL the connection pool is on (SERVER_THREADS + 2 connections).

Run: ``BENCH_DB=postgres python -m bench.throughput`` (BENCH_THROUGHPUT_SECONDS, default 15;
BENCH_THROUGHPUT_SIZE, default 100000 — the seeded workspace to read)."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
django.setup()

from django.conf import settings  # noqa: E402

from bench import seed  # noqa: E402
from bench.report import RESULTS_DIR, machine, table  # noqa: E402
from bench.server import serve  # noqa: E402
from flashcards import services  # noqa: E402

SQL = (
    "SELECT * FROM cards WHERE tags OVERLAP ('english') AND effort_level IN ('fast', 'medium') "
    "ORDER BY updated_at DESC LIMIT 20 OFFSET 0"
)
PLAIN_PATH = "/bench/cards?tag=english&effort=fast,medium&limit=20&offset=0"
CONCURRENCY = 16
GOAL = 0.85


def _request(
    port: int, method: str, path: str, headers: dict[str, str], body: str | None = None
) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    data = json.loads(response.read())
    conn.close()
    assert response.status == 200, data
    return data


def same_rows(port: int, auth: dict[str, str]) -> bool:
    dialect = _request(
        port,
        "POST",
        "/v1/agent/sql",
        {**auth, "Content-Type": "application/json"},
        json.dumps({"sql": SQL}),
    )["data"]["rows"]
    plain = _request(port, "GET", PLAIN_PATH, auth)["results"]
    return [r["card_id"] for r in dialect] == [r["card_id"] for r in plain] and len(plain) == 20


def _lua(auth: str, directory: Path, statement: str = SQL) -> Path:
    script = directory / "post.lua"
    script.write_text(
        'wrk.method = "POST"\n'
        f"wrk.body = {json.dumps(json.dumps({'sql': statement}))}\n"
        'wrk.headers["Content-Type"] = "application/json"\n'
        f'wrk.headers["Authorization"] = "{auth}"\n'
    )
    return script


def wrk(
    port: int,
    path: str,
    seconds: int,
    auth: str = "",
    script: Path | None = None,
    *,
    concurrency: int = CONCURRENCY,
) -> dict[str, float]:
    command = ["wrk", f"-t{min(2, concurrency)}", f"-c{concurrency}", f"-d{seconds}s", "--latency"]
    if auth:
        command += ["-H", f"Authorization: {auth}"]
    if script is not None:
        command += ["-s", str(script)]
    output = subprocess.run(
        [*command, f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True, check=True
    ).stdout
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    socket_errors = re.search(r"Socket errors: (.*)", output)
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),  # type: ignore[union-attr]
        "p50_ms": _ms(re.search(r"50%\s+([\d.]+\w+)", output).group(1)),  # type: ignore[union-attr]
        "p99_ms": _ms(re.search(r"99%\s+([\d.]+\w+)", output).group(1)),  # type: ignore[union-attr]
        "non_2xx": float(errors.group(1)) if errors else 0.0,
        "socket_errors": 1.0 if socket_errors else 0.0,
    }


def _ms(value: str) -> float:
    number = float(re.match(r"[\d.]+", value).group())  # type: ignore[union-attr]
    unit = value[len(re.match(r"[\d.]+", value).group()) :]  # type: ignore[union-attr]
    return number * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def run() -> dict[str, Any]:
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed: apt-get install wrk")
    seed.ensure_database()
    size = int(os.environ.get("BENCH_THROUGHPUT_SIZE", "100000"))
    seconds = int(os.environ.get("BENCH_THROUGHPUT_SECONDS", "15"))
    pair = seed.ensure_pair(size)
    key, plaintext = services.create_api_key(seed.bench_user(), "throughput", workspace=pair.target)
    auth = f"ApiKey {plaintext}"
    runs: dict[str, list[dict[str, float]]] = {"dialect": [], "plain": []}
    env = {}
    if os.environ.get("BENCH_DB") == "postgres":
        env = {"DB_POOL_MAX_SIZE": str(settings.SERVER_THREADS + 2), "DB_POOL_MIN_SIZE": "2"}
    with serve(workers=1, env=env) as port, tempfile.TemporaryDirectory() as tmp:
        script = _lua(auth, Path(tmp))
        rows_match = same_rows(port, {"Authorization": auth})
        wrk(port, "/v1/agent/sql", 3, auth, script)  # warm-up: connections, caches
        wrk(port, PLAIN_PATH, 3, auth)
        for _ in range(2):
            runs["dialect"].append(wrk(port, "/v1/agent/sql", seconds, auth, script))
            runs["plain"].append(wrk(port, PLAIN_PATH, seconds, auth))
    services.revoke_api_key(key)
    summary = {
        name: {field: statistics.mean(r[field] for r in results) for field in results[0]}
        for name, results in runs.items()
    }
    return {
        "machine": machine(),
        "vendor": os.environ.get("BENCH_DB", "sqlite"),
        "size": size,
        "seconds": seconds,
        "same_rows": rows_match,
        "runs": runs,
        "summary": summary,
        "ratio": summary["dialect"]["rps"] / summary["plain"]["rps"],
    }


def report(results: dict[str, Any]) -> str:
    rows = [
        [
            name,
            f"{s['rps']:.0f}",
            f"{s['p50_ms']:.1f}",
            f"{s['p99_ms']:.1f}",
            f"{s['non_2xx']:.0f}",
            " / ".join(f"{r['rps']:.0f}" for r in results["runs"][name]),
        ]
        for name, s in results["summary"].items()
    ]
    ratio = results["ratio"]
    return "\n".join(
        [
            f"### HTTP throughput on {results['vendor']}: manage.py serve (1 worker, rate limiter and "
            f"query log on), wrk -c{CONCURRENCY}, "
            f"{results['seconds']} s x 2 runs each, {seed.label(results['size'])}-card workspace",
            "",
            table(["endpoint", "req/s", "p50 ms", "p99 ms", "non-2xx", "runs req/s"], rows),
            "",
            f"Same 20 rows from both: {'yes' if results['same_rows'] else 'NO'}. "
            f"Dialect / plain DRF .values() = {ratio:.2f}x (goal ≥ {GOAL}x: {'met' if ratio >= GOAL else 'NOT met'}).",
        ]
    )


def main() -> None:
    results = run()
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / f"throughput-{results['vendor']}.json").write_text(json.dumps(results, indent=2))
    print(report(results))


if __name__ == "__main__":
    main()
