"""Every "dsl.md §N" / "domain.md §N" cited in code, tests and docs names a section of the contract
in docs/spec/ (the repository's copy is the contract, and changes with the code)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "docs" / "spec"
CITATION = re.compile(r"\b(dsl|domain)\.md\s*§\s*(\d+[a-z]?(?:\.\d+)*)")
HEADING = re.compile(r"^#{1,6}\s+(\d+[a-z]?(?:\.\d+)*)\.?\s", re.M)


def sections(name: str) -> set[str]:
    return set(HEADING.findall((SPEC / f"{name}.md").read_text()))


def tracked_texts() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    return [
        ROOT / f for f in listed if f.endswith((".py", ".md", ".html", ".txt", ".jsonl", ".toml"))
    ]


def test_the_contract_is_in_the_repository():
    for name in ("dsl", "domain"):
        assert (SPEC / f"{name}.md").is_file()
        assert len(sections(name)) >= 8, f"docs/spec/{name}.md lost its numbered sections"


def test_every_citation_names_a_section_that_exists():
    known = {name: sections(name) for name in ("dsl", "domain")}
    missing = []
    cited = 0
    for path in tracked_texts():
        try:
            text = path.read_text()
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for doc, section in CITATION.findall(line):
                cited += 1
                if section not in known[doc]:
                    missing.append(f"{path.relative_to(ROOT)}:{number}: {doc}.md §{section}")
    assert cited > 100, "the scan found almost no citations: is the pattern still right?"
    assert not missing, "citations of sections that do not exist:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("see dsl.md §9.1", ("dsl", "9.1")),
        ("domain.md §4a", ("domain", "4a")),
        ("dsl.md§2", ("dsl", "2")),
    ],
)
def test_the_citation_pattern(line, expected):
    assert CITATION.findall(line) == [expected]
