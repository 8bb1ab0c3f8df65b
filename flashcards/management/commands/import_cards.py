"""`manage.py import_cards FILE --workspace ID [--dry-run] [--format F] [--field-mapping JSON]`:
an Anki package or a CSV/TSV file into an existing workspace (docs/import-export.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from flashcards.interchange.errors import ImportRejected
from flashcards.interchange.run import FORMATS, import_file, parse_field_mapping
from flashcards.models import Workspace


def summary(report: dict[str, Any]) -> str:
    cards = report["cards"]
    counts = ", ".join(f"{cards[k]} {k}" for k in cards)
    head = "Dry run, nothing written" if report["dryRun"] else "Imported"
    return (
        f"{head}: {report['file']} ({report['format']}): cards {counts}; "
        f"{report['reviewEvents']['created']} review events "
        f"({report['reviewEvents']['alreadyPresent']} already present); "
        f"{report['changes']} change-log entries."
    )


class Command(BaseCommand):
    help = (
        "Import an Anki package (.apkg, .colpkg) or a CSV/TSV file of cards into a workspace: "
        "all or nothing, change-log entries recorded for sync clients. --dry-run previews."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="the file to import")
        parser.add_argument("--workspace", required=True, help="workspace_id to import into")
        parser.add_argument("--dry-run", action="store_true", help="report, write nothing")
        parser.add_argument("--format", choices=FORMATS, help="default: from the file name")
        parser.add_argument(
            "--field-mapping",
            help='Anki only: JSON {"note type": ["front field", "back field"]}',
        )
        parser.add_argument("--json", action="store_true", help="print the whole report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            workspace = Workspace.objects.get(pk=options["workspace"], deleted_at__isnull=True)
        except (Workspace.DoesNotExist, ValueError, ValidationError) as exc:
            raise CommandError(f"No workspace {options['workspace']}.") from exc
        path = Path(options["path"])
        try:
            with path.open("rb") as file:
                report = import_file(
                    workspace,
                    file,
                    path.name,
                    format=options["format"],
                    dry_run=options["dry_run"],
                    field_mapping=parse_field_mapping(options["field_mapping"]),
                    surface="command",
                )
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror}.") from exc
        except ImportRejected as exc:
            lines = [f"Nothing imported: {exc.message}"]
            lines += [
                f"  {'line ' + str(p['line']) if 'line' in p else 'note ' + str(p.get('note'))}: "
                f"{p['message']}"
                for p in exc.problems[:20]
            ]
            raise CommandError("\n".join(lines)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(report, ensure_ascii=False, indent=2))
        else:
            for problem in report["problems"][:20]:
                self.stdout.write(f"  rejected {problem}")
            self.stdout.write(summary(report))
