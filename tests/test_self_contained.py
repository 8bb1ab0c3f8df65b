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


def test_the_lock_pins_every_dependency_with_hashes():
    """requirements*.lock (make lock) hold every transitive version with its hashes, and every
    dependency the code declares is in them at its declared version."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for declared, lock in (
        ("requirements.txt", "requirements.lock"),
        ("requirements-dev.txt", "requirements-dev.lock"),
    ):
        text = (root / lock).read_text(encoding="utf-8")
        pins = re.findall(
            r"^([A-Za-z0-9_.\[\]-]+)==(\S+) \\\n((?:\s+--hash=sha256:\w+ ?\\?\n?)+)", text, re.M
        )
        locked = {
            name.split("[")[0].lower().replace("_", "-"): version for name, version, _ in pins
        }
        assert pins and all(hashes.strip() for _, _, hashes in pins), lock
        for line in (root / declared).read_text(encoding="utf-8").splitlines():
            match = re.match(r"^([A-Za-z0-9_.\[\]-]+)==(\S+)", line)
            if match:
                name = match.group(1).split("[")[0].lower().replace("_", "-")
                assert locked.get(name) == match.group(2), (lock, name)
