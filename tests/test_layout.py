"""The tree shows the pipeline (docs/architecture.md): small folders, and every module's first line
names its one concern."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = [p for top in ("dsl", "flashcards") for p in [REPO / top, *(REPO / top).rglob("*")]]
FOLDERS = [
    p
    for p in PACKAGES
    if p.is_dir()
    and (p / "__init__.py").exists()
    and p.name not in {"migrations", "commands", "__pycache__"}
]
MAX_MODULES = 15


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: str(p.relative_to(REPO)))
def test_no_folder_holds_more_than_fifteen_modules(folder):
    modules = [p.name for p in folder.glob("*.py") if p.name != "__init__.py"]
    assert len(modules) <= MAX_MODULES, f"{folder.relative_to(REPO)}: {sorted(modules)}"


def _modules() -> list[Path]:
    return [
        p
        for folder in FOLDERS
        for p in folder.glob("*.py")
        if p.name != "__init__.py" or p.read_text().strip()
    ]


@pytest.mark.parametrize("module", _modules(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_module_opens_with_its_concern(module):
    docstring = ast.get_docstring(ast.parse(module.read_text()))
    assert docstring and docstring.splitlines()[0].strip(), (
        f"{module.relative_to(REPO)} has no docstring"
    )
