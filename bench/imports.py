"""Importing a large Anki package (docs/benchmarks.md §7): a schema-11 collection of N Basic
notes, every 10th card with a 3-review history, zipped as an .apkg and imported into a fresh
workspace through ``flashcards.interchange.run.import_file`` — the code the HTTP route runs.
Each size runs in a process of its own, so its peak resident memory is its own: flat memory
means the peak barely grows with N (the import streams the collection in batches).

Run: ``BENCH_DB=sqlite python -m bench.imports`` (or postgres; BENCH_IMPORT_SIZES, default
5000,25000,50000). Each size measures the first import, a re-import of the same package
(everything unchanged) and a dry run of it in a new workspace."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
import zipfile
from pathlib import Path

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
django.setup()

from bench import seed  # noqa: E402
from bench.report import RESULTS_DIR, machine, table  # noqa: E402
from flashcards import services  # noqa: E402
from flashcards.interchange.run import import_file  # noqa: E402
from tests.fixtures.anki_packages import synthetic_collection  # noqa: E402

DEFAULT_SIZES = (5_000, 25_000, 50_000)


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _current_rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def build_package(folder: Path, notes: int) -> Path:
    collection = folder / "collection.anki2"
    synthetic_collection(collection, notes)
    package = folder / f"bench-{notes}.apkg"
    with zipfile.ZipFile(package, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(collection, "collection.anki2")
        archive.writestr("media", "{}")
    collection.unlink()
    return package


def run_one(notes: int) -> dict[str, object]:
    seed.ensure_database()
    user = seed.bench_user()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        package = build_package(Path(tmp), notes)
        built = time.perf_counter() - started
        workspace = services.create_workspace(user, f"import-bench-{notes}-{time.time_ns()}")
        before = _current_rss_mib()
        results: dict[str, object] = {
            "notes": notes,
            "package_mib": round(package.stat().st_size / 2**20, 2),
            "build_seconds": round(built, 2),
            "rss_before_mib": round(before, 1),
        }
        for label, target, dry_run in (
            ("first", workspace, False),
            ("again", workspace, False),
            ("dry_run", None, True),
        ):
            ws = target or services.create_workspace(user, f"dry-{notes}-{time.time_ns()}")
            started = time.perf_counter()
            with package.open("rb") as file:
                report = import_file(ws, file, package.name, dry_run=dry_run, surface="bench")
            results[f"{label}_seconds"] = round(time.perf_counter() - started, 2)
            results[f"{label}_created"] = report["cards"]["created"]
            results[f"{label}_unchanged"] = report["cards"]["unchanged"]
            results[f"{label}_review_events"] = report["reviewEvents"]["created"]
        results["peak_rss_mib"] = round(_rss_mib(), 1)
        results["peak_over_start_mib"] = round(_rss_mib() - before, 1)
        # Resident memory also counts the database's pages (SQLite reads through a memory map
        # and caches the pages of the growing transaction): the Python heap is what the
        # import's own streaming keeps flat, measured on one more dry run (tracemalloc slows it).
        ws = services.create_workspace(user, f"heap-{notes}-{time.time_ns()}")
        tracemalloc.start()
        with package.open("rb") as file:
            import_file(ws, file, package.name, dry_run=True, surface="bench")
        results["python_heap_peak_mib"] = round(tracemalloc.get_traced_memory()[1] / 2**20, 1)
        tracemalloc.stop()
    return results


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        print(json.dumps(run_one(int(sys.argv[2]))))
        return
    sizes = [
        int(s) for s in os.environ.get("BENCH_IMPORT_SIZES", "").split(",") if s.strip()
    ] or list(DEFAULT_SIZES)
    rows = []
    for size in sizes:
        out = (
            subprocess.run(
                [sys.executable, "-m", "bench.imports", "--one", str(size)],
                capture_output=True,
                text=True,
                check=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        rows.append(json.loads(out))
        print(rows[-1], flush=True)
    headers = [
        "notes",
        "package MiB",
        "import s",
        "notes/s",
        "re-import s",
        "dry run s",
        "review events",
        "peak RSS MiB",
        "peak over start MiB",
        "Python heap peak MiB",
    ]
    body = [
        [
            r["notes"],
            r["package_mib"],
            r["first_seconds"],
            round(int(r["notes"]) / float(r["first_seconds"])),
            r["again_seconds"],
            r["dry_run_seconds"],
            r["first_review_events"],
            r["peak_rss_mib"],
            r["peak_over_start_mib"],
            r["python_heap_peak_mib"],
        ]
        for r in rows
    ]
    text = table(headers, body)
    print(text)
    RESULTS_DIR.mkdir(exist_ok=True)
    database = os.environ.get("BENCH_DB", "sqlite")
    (RESULTS_DIR / f"imports-{database}.json").write_text(
        json.dumps({"machine": machine(), "database": database, "rows": rows}, indent=2)
    )


if __name__ == "__main__":
    main()
