"""`manage.py import_workspace <file.json | -> [--owner USER]` (domain.md §7)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from flashcards.services.transfer import DEFAULT_OWNER, TransferError, import_workspace


class Command(BaseCommand):
    help = (
        "Restore a workspace from a file written by export_workspace: all or nothing, ids and "
        "timestamps kept, change-log entries recorded for sync clients."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="file to read, or - for standard input")
        parser.add_argument(
            "--owner",
            default=DEFAULT_OWNER,
            help=f"username of the owner, created if missing (default: {DEFAULT_OWNER})",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["path"]
        try:
            text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror}.") from exc
        except UnicodeDecodeError as exc:
            raise CommandError(f"{path} is not UTF-8 text: {exc.reason}.") from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CommandError(
                f"{path} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}."
            ) from exc
        except RecursionError as exc:
            raise CommandError(f"{path} is nested too deeply to be an export file.") from exc
        try:
            report = import_workspace(data, options["owner"])
        except TransferError as exc:
            raise CommandError(f"Nothing imported: {exc.message}") from exc
        self.stdout.write(report.summary())
