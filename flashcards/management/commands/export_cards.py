"""`manage.py export_cards <workspace> <path | -> [--format csv|tsv|apkg]`: the workspace's cards
as the REST export writes them (docs/import-export.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from flashcards.interchange.run import export_package, export_text
from flashcards.management.commands.export_workspace import find_workspace


class Command(BaseCommand):
    help = "Write a workspace's live cards as CSV, TSV or an Anki package (.apkg)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("workspace", help="id of the workspace (or its unique name)")
        parser.add_argument("path", help="file to write, or - for standard output")
        parser.add_argument("--format", choices=("csv", "tsv", "apkg"), default="csv")

    def handle(self, *args: Any, **options: Any) -> None:
        workspace = find_workspace(options["workspace"])
        fmt, path = options["format"], options["path"]
        if fmt == "apkg":
            chunks = export_package(workspace)
            if path == "-":
                for block in chunks:
                    sys.stdout.buffer.write(block)
                sys.stdout.buffer.flush()
                return
            try:
                with open(path, "wb") as out:
                    for block in chunks:
                        out.write(block)
            except OSError as exc:
                raise CommandError(f"Cannot write {path}: {exc.strerror}.") from exc
        else:
            lines = export_text(workspace, "cards", fmt)
            if path == "-":
                for line in lines:
                    self.stdout.write(line, ending="")
                return
            try:
                with Path(path).open("w", encoding="utf-8", newline="") as out:
                    out.writelines(lines)
            except OSError as exc:
                raise CommandError(f"Cannot write {path}: {exc.strerror}.") from exc
        self.stderr.write(f"Exported the cards of workspace {workspace.pk} to {path} ({fmt}).")
