"""Soak (docs/reliability.md): the served app (uvicorn, 2 workers) under a steady mixed read/write
load for SOAK_LOAD_SECONDS (default 60) at SOAK_RATE requests per second (default 40), then a burst
against the per-key rate limit. Goals: zero errors; p50/p99 recorded; change numbers still exactly
1..N afterwards; the rate limit lets at most its budget through.

Run: ``BENCH_DB=postgres python -m bench.soak``."""

from __future__ import annotations

import json
import os
import random
import time
import uuid
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
django.setup()

from bench import seed  # noqa: E402
from bench.loadgen import Request, burst, run_load  # noqa: E402
from bench.report import RESULTS_DIR, machine, percentile, table  # noqa: E402
from bench.server import serve  # noqa: E402
from flashcards import services  # noqa: E402
from flashcards.models import Card, ChangeLog, Workspace  # noqa: E402

RATE_LIMIT = 60


class Mix:
    """The request mix: 60 % reads, 40 % writes, through the dialect, the review command and
    sync push."""

    def __init__(self, workspace: Workspace, plaintext: str, card_ids: list[str]) -> None:
        self.workspace = workspace
        self.card_ids = card_ids
        self.rng = random.Random(7)
        self.auth = {"Authorization": f"ApiKey {plaintext}", "Content-Type": "application/json"}

    def _sql(self, label: str, sql: str) -> Request:
        return label, "POST", "/v1/agent/sql", self.auth, json.dumps({"sql": sql}).encode()

    def request(self, n: int) -> Request:
        card = self.rng.choice(self.card_ids)
        kind = self.rng.choices(
            ["paged", "due", "count", "by_tag", "history", "insert", "update", "review", "push"],
            [20, 10, 10, 10, 10, 10, 10, 10, 10],
        )[0]
        if kind == "paged":
            offset = self.rng.randrange(0, 200, 20)
            return self._sql(
                kind,
                "SELECT * FROM cards WHERE tags OVERLAP ('english') AND effort_level IN "
                f"('fast', 'medium') ORDER BY updated_at DESC LIMIT 20 OFFSET {offset}",
            )
        if kind == "due":
            return self._sql(
                kind,
                "SELECT card_id, front_text, due_at FROM cards WHERE due_at <= NOW() ORDER BY due_at LIMIT 20",
            )
        if kind == "count":
            return self._sql(kind, "SELECT COUNT(*) FROM cards")
        if kind == "by_tag":
            return self._sql(
                kind, "SELECT tag, COUNT(*) AS n FROM cards GROUP BY tag ORDER BY n DESC LIMIT 10"
            )
        if kind == "history":
            return self._sql(
                kind,
                f"SELECT * FROM review_events WHERE card_id = '{card}' ORDER BY reviewed_at_client DESC",
            )
        if kind == "insert":
            values = ", ".join(
                f"('soak {n}.{i}', 'answer', ('english', 'soak'))"
                for i in range(self.rng.randint(1, 3))
            )
            return self._sql(
                kind, f"INSERT INTO cards (front_text, back_text, tags) VALUES {values}"
            )
        if kind == "update":
            return self._sql(
                kind, f"UPDATE cards SET back_text = 'soak {n}' WHERE card_id = '{card}'"
            )
        if kind == "review":
            body = {
                "card_id": card,
                "rating": self.rng.randint(0, 3),
                "client_event_id": f"soak-{n}",
            }
            return kind, "POST", "/v1/agent/reviews", self.auth, json.dumps(body).encode()
        at = datetime.now(UTC) + timedelta(minutes=1)
        operation = {
            "operation_id": str(uuid.uuid4()),
            "entity_type": "card",
            "entity_id": card,
            "action": "upsert",
            "client_updated_at": services.format_timestamp(at),
            "payload": {"front_text": f"pushed {n}", "back_text": "pushed"},
        }
        body = {"installation_id": "soak-device", "platform": "web", "operations": [operation]}
        path = f"/v1/workspaces/{self.workspace.pk}/sync/push"
        return kind, "POST", path, self.auth, json.dumps(body).encode()


def _ms(values: list[float], fraction: float) -> float:
    return percentile(values, fraction) * 1000


def steady_load(seconds: float, rate: float) -> dict[str, Any]:
    user = seed.bench_user()
    name = f"soak-{datetime.now(UTC):%Y%m%d-%H%M%S}"
    workspace = seed.seed_workspace(user, name, 1000, seed=7)
    key, plaintext = services.create_api_key(user, "soak", workspace=workspace)
    card_ids = [
        str(pk) for pk in Card.objects.filter(workspace=workspace).values_list("pk", flat=True)
    ]
    mix = Mix(workspace, plaintext, card_ids)
    with serve(workers=2) as port:
        result = run_load(port, mix.request, rate=rate, seconds=seconds)
    services.revoke_api_key(key)
    by_label: dict[str, list[float]] = defaultdict(list)
    for sample in result.samples:
        by_label[sample.label].append(sample.latency)
    errors = [s for s in result.samples if not 200 <= s.status < 300]
    workspace.refresh_from_db()
    numbers = list(
        ChangeLog.objects.filter(workspace=workspace)
        .order_by("change_id")
        .values_list("change_id", flat=True)
    )
    contiguous = (
        numbers == list(range(1, len(numbers) + 1)) and numbers[-1] == workspace.last_change_id
    )
    workspace.delete()  # the soak workspace is throwaway; the benchmark pairs stay as seeded
    everything = [s.latency for s in result.samples]
    return {
        "seconds": seconds,
        "rate": rate,
        "requests": len(result.samples),
        "errors": len(errors),
        "error_statuses": dict(Counter(s.status for s in errors)),
        "error_examples": [s.error or s.status for s in errors[:5]],
        "late_starts": result.late,
        "p50_ms": _ms(everything, 0.5),
        "p99_ms": _ms(everything, 0.99),
        "max_ms": max(everything) * 1000,
        "by_label": {
            label: {"n": len(v), "p50_ms": _ms(v, 0.5), "p99_ms": _ms(v, 0.99)}
            for label, v in sorted(by_label.items())
        },
        "changes_contiguous": contiguous,
        "changes": len(numbers),
    }


def rate_limit_burst(count: int = 200) -> dict[str, Any]:
    """``count`` requests at once with one key against a server limited to RATE_LIMIT per minute.
    It starts early in a window: the sliding estimate forgives a growing share of the previous
    minute's count as the next one goes on (flashcards.http.throttling), so a burst straddling a
    boundary may get a few more through; within one window the check is exact."""
    user = seed.bench_user()
    key, plaintext = services.create_api_key(user, "burst", workspace=seed.ensure_pair(1000).target)
    auth = {"Authorization": f"ApiKey {plaintext}", "Content-Type": "application/json"}
    body = json.dumps({"sql": "SHOW TABLES"}).encode()
    with serve(workers=2, rate_limit=RATE_LIMIT) as port:
        if time.time() % 60 > 40:
            time.sleep(61 - time.time() % 60)
        result = burst(port, lambda n: ("burst", "POST", "/v1/agent/sql", auth, body), count=count)
    services.revoke_api_key(key)
    statuses = Counter(s.status for s in result.samples)
    limited = [s for s in result.samples if s.status == 429]
    return {
        "requests": count,
        "limit": RATE_LIMIT,
        "allowed": statuses.get(200, 0),
        "statuses": dict(statuses),
        "retry_after_on_every_429": all(s.retry_after for s in limited),
        "held": statuses.get(200, 0) <= RATE_LIMIT,
    }


def report(results: dict[str, Any]) -> str:
    load, limit = results["load"], results["rate_limit"]
    rows = [
        [label, v["n"], f"{v['p50_ms']:.1f}", f"{v['p99_ms']:.1f}"]
        for label, v in load["by_label"].items()
    ]
    rows.append(["**all**", load["requests"], f"{load['p50_ms']:.1f}", f"{load['p99_ms']:.1f}"])
    return "\n".join(
        [
            f"### Soak: {load['seconds']:g} s at {load['rate']:g} req/s (uvicorn, 2 workers, {results['vendor']})",
            "",
            table(["request", "n", "p50 ms", "p99 ms"], rows),
            "",
            f"Errors: {load['errors']} {load['error_statuses'] or ''} (goal 0: {'met' if load['errors'] == 0 else 'NOT met'}). "
            f"Max latency {load['max_ms']:.0f} ms; requests started > 100 ms late: {load['late_starts']}. "
            f"Change numbers 1..{load['changes']} without gap: {'yes' if load['changes_contiguous'] else 'NO'}.",
            "",
            f"Rate limit {limit['limit']}/min, {limit['requests']} requests at once from 16 connections: "
            f"{limit['allowed']} allowed, statuses {limit['statuses']}, Retry-After on every 429: "
            f"{'yes' if limit['retry_after_on_every_429'] else 'NO'} (holds: {'yes' if limit['held'] else 'NO'}).",
        ]
    )


def main() -> None:
    seed.ensure_database()
    seconds = float(os.environ.get("SOAK_LOAD_SECONDS", "60"))
    rate = float(os.environ.get("SOAK_RATE", "40"))
    results = {
        "machine": machine(),
        "vendor": os.environ.get("BENCH_DB", "sqlite"),
        "load": steady_load(seconds, rate),
        "rate_limit": rate_limit_burst(),
    }
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / f"soak-{results['vendor']}.json").write_text(json.dumps(results, indent=2))
    print(report(results))


if __name__ == "__main__":
    main()
