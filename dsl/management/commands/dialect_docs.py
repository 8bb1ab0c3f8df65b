"""``manage.py dialect_docs``: regenerate the generated part of docs/dialect.md (resources,
operators, limits) from the resource registry, so the human reference cannot drift from DESCRIBE.
``--check`` only reports whether the file is current (for CI)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from dsl.schema import RESOURCES, Resource
from dsl.settings import dsl_settings
from dsl.surfaces.reference import operator_rows

BEGIN = "<!-- BEGIN GENERATED: manage.py dialect_docs -->"
END = "<!-- END GENERATED -->"


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(f"`{item}`" for item in value)
    return str(value).replace("|", "\\|").replace("\n", " ")


def resource_section(resource: Resource) -> list[str]:
    order = ", ".join(
        f"{name} {'DESC' if desc else 'ASC'}" for name, desc in resource.default_order
    )
    lines = [
        f"### {resource.name}",
        "",
        f"{resource.description} {'Writable' if resource.writable else 'Read-only'}. "
        f"Default order: `{order}`.",
    ]
    if resource.explicit_command_hint:
        lines += ["", resource.explicit_command_hint]
    lines += [
        "",
        "| column | type | nullable | writable | filterable | sortable | allowed values | description |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for column in resource.columns:
        row = column.describe_row()
        lines.append(
            f"| `{column.name}` | {row['type']} | {_cell(row['nullable'])} | "
            f"{_cell(not row['read_only'])} | {_cell(row['filterable'])} | "
            f"{_cell(row['sortable'])} | {_cell(row['allowed_values'])} | "
            f"{_cell(row['description'])} |"
        )
    return lines


def generated_section() -> str:
    lines = [BEGIN, "", "## Resources", ""]
    lines += ["| table_name | writable | description |", "|---|---|---|"]
    lines += [f"| `{r.name}` | {_cell(r.writable)} | {_cell(r.description)} |" for r in RESOURCES]
    for resource in RESOURCES:
        lines += ["", *resource_section(resource)]
    lines += ["", "## Operators", "", "| form | applies to | meaning |", "|---|---|---|"]
    lines += [
        f"| `{_cell(row['form'])}` | {_cell(row['applies_to'])} | {_cell(row['meaning'])} |"
        for row in operator_rows()
    ]
    lines += ["", "## Limits", "", "| setting (`FLASHCARDS_DSL`) | value |", "|---|---|"]
    lines += [f"| `{key}` | {value:g} |" for key, value in dsl_settings.as_dict().items()]
    lines += ["", END]
    return "\n".join(lines)


def render(text: str) -> str:
    """``text`` with its generated section replaced (appended when the markers are missing)."""
    section = generated_section()
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        return head + section + tail
    return text.rstrip("\n") + "\n\n" + section + "\n"


class Command(BaseCommand):
    help = "Regenerate the tables of docs/dialect.md from the resource registry."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--path",
            default=str(Path(settings.BASE_DIR) / "docs" / "dialect.md"),
            help="The Markdown file to update (default: docs/dialect.md).",
        )
        parser.add_argument(
            "--check", action="store_true", help="Fail if the file is out of date; write nothing."
        )

    def handle(self, *args: Any, path: str, check: bool, **options: Any) -> None:
        target = Path(path)
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        updated = render(current)
        if check:
            if updated != current:
                raise CommandError(f"{target} is out of date; run manage.py dialect_docs.")
            self.stdout.write(f"{target} is up to date.")
            return
        target.write_text(updated, encoding="utf-8")
        self.stdout.write(f"Wrote the generated section of {target}.")
