"""The fresh-clone promise: the suite reads nothing outside the repository (issue 11)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.fixtures import FSRS_VECTORS_PATH

REPO = Path(__file__).resolve().parent.parent
OUTSIDE = re.compile(r"\.\./shared|[p]arents?\b[^\n]*\bshared\b|FLASHCARDS_[S]HARED_DIR")
CHECKED = ("tests", "flashcards", "dsl", "config", "bench", ".ci")


def _checked_files() -> list[Path]:
    files = [REPO / "Makefile"]
    for folder in CHECKED:
        files += [p for p in (REPO / folder).rglob("*") if p.is_file() and p.suffix in {".py", ""}]
    return [p for p in files if p.resolve() != Path(__file__).resolve()]


def test_no_code_points_outside_the_repository():
    offenders = [
        f"{path.relative_to(REPO)}:{number}"
        for path in _checked_files()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert offenders == []


def test_the_fsrs_vectors_live_in_the_repository_with_their_licence():
    assert FSRS_VECTORS_PATH.is_relative_to(REPO)
    notice = (FSRS_VECTORS_PATH.parent / "LICENSE-fsrs-full-vectors.txt").read_text()
    assert "MIT License" in notice and "Copyright (c) 2026 Kirill Markin" in notice
