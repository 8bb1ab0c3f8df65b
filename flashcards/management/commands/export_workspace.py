"""`manage.py export_workspace <workspace id or unique name> <file.json | ->` (domain.md §7)."""

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
        parser.add_argument(
            "workspace", help="id of the workspace to export (or its name, when no other has it)"
        )
        parser.add_argument("path", help="file to write, or - for standard output")

    def handle(self, *args: Any, **options: Any) -> None:
        workspace = find_workspace(options["workspace"])
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


def find_workspace(given: str) -> Workspace:
    """The live workspace with this id; failing that, the only one with this exact name. Names are
    not unique (every user has a `Personal`), so an ambiguous name asks for the id."""
    live = Workspace.objects.filter(deleted_at__isnull=True)
    try:
        workspace = live.filter(pk=uuid.UUID(given)).first()
    except ValueError:
        workspace = None
    if workspace is not None:
        return workspace
    named = list(live.filter(name=given).order_by("created_at", "id")[:2])
    if len(named) == 1:
        return named[0]
    if named:
        raise CommandError(
            f"Several workspaces are named {given!r}; pass the workspace id instead "
            "(the admin lists them)."
        )
    raise CommandError(f"Workspace {given!r} not found: pass a workspace id.")
