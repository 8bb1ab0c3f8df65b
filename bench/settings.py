"""Settings of the benchmarks: the product's settings on a separate benchmark database, without
the rate limit, with a URLconf that adds the comparison endpoint of bench/urls.py.

BENCH_DB picks the database: ``sqlite`` (default; the file bench/bench.sqlite3, gitignored) or
``postgres`` (BENCH_PG_URL, default the database ``fc_bench`` on the local server). The product's
own DATABASE_URL is ignored on purpose so a benchmark can never seed a real database."""

from __future__ import annotations

import os
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
SQLITE_URL = f"sqlite:///{BENCH_DIR / 'bench.sqlite3'}"
PG_URL = os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432/fc_bench")
BENCH_DB = os.environ.get("BENCH_DB", "sqlite")
if BENCH_DB not in ("sqlite", "postgres"):
    raise RuntimeError(f"BENCH_DB must be sqlite or postgres; got {BENCH_DB!r}")

os.environ["DATABASE_URL"] = PG_URL if BENCH_DB == "postgres" else SQLITE_URL
os.environ["AGENT_RATE_LIMIT"] = os.environ.get("BENCH_RATE_LIMIT", "0")
# One benchmark key sends every request: the per-user bound on statements in flight would refuse
# most of wrk's 16 connections (BENCH_CONCURRENT_STATEMENTS to measure it on).
os.environ["AGENT_CONCURRENT_STATEMENTS"] = os.environ.get("BENCH_CONCURRENT_STATEMENTS", "0")
os.environ.setdefault("DJANGO_ALLOW_INSECURE_KEY", "1")
os.environ.setdefault("DEBUG", "0")

from config.settings import *  # noqa: E402, F403

ROOT_URLCONF = "bench.urls"
# The throughput run serves plain HTTP on loopback.
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
