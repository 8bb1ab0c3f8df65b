"""Shared output helpers: where results go, the machine description, markdown tables."""

from __future__ import annotations

import os
import platform
import sqlite3
import statistics
import subprocess
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def _command(*args: str) -> str:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def machine() -> dict[str, str]:
    memory = _command("free", "-h").splitlines()
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpus": str(os.cpu_count()),
        "cpu": _cpu_model(),
        "memory": memory[1].split()[1] if len(memory) > 1 else "unknown",
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "postgres": _command(
            "psql", "-h", "127.0.0.1", "-U", "postgres", "-tAc", "SHOW server_version"
        ),
        "kernel": platform.release(),
        "load_average": " ".join(f"{value:.2f}" for value in os.getloadavg()),
    }


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (p99 of 100 values is the 99th smallest)."""
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, round(fraction * len(ordered) + 0.5) - 1))
    return ordered[index]


def summary(values: Sequence[float]) -> dict[str, float]:
    return {
        "median": statistics.median(values),
        "p99": percentile(values, 0.99),
        "min": min(values),
        "max": max(values),
    }
