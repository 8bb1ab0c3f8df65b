"""`manage.py export_workspace <workspace-id> <file.json | ->` (domain.md §7)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from flashcards.models import Workspace
from flashcards.services.transfer import export_workspace


class Command(BaseCommand):
    help = "Write a workspace's live cards, decks, review events and settings to a JSON file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("workspace_id", help="id of the workspace to export")
        parser.add_argument("path", help="file to write, or - for standard output")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            workspace_id = uuid.UUID(options["workspace_id"])
        except ValueError as exc:
            raise CommandError(f"Not a workspace id: {options['workspace_id']!r}.") from exc
        workspace = Workspace.objects.filter(pk=workspace_id, deleted_at__isnull=True).first()
        if workspace is None:
            raise CommandError(f"Workspace {workspace_id} not found.")
        data = export_workspace(workspace)
        # Rows in the exporter's fixed order, indented, UTF-8: re-exporting an import of this file
        # gives a byte-identical file.
        text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
        summary = (
            f"Exported workspace {workspace.pk}: {len(data['cards'])} cards, "
            f"{len(data['decks'])} decks, {len(data['review_events'])} review events."
        )
        if options["path"] == "-":
            self.stdout.write(text, ending="")
            self.stderr.write(summary)
            return
        try:
            Path(options["path"]).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"Cannot write {options['path']}: {exc.strerror}.") from exc
        self.stdout.write(f"{summary} Written to {options['path']}.")
