"""`manage.py create_api_key --user USERNAME [--workspace ID] [--label LABEL]` (domain.md §6).

The plaintext key is printed alone on the last line of the output, once: scripts take the last
line, people read the lines above it."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from flashcards.models import Workspace
from flashcards.services import (
    DomainError,
    NotFoundError,
    create_api_key,
    ensure_personal_workspace,
    get_member_workspace,
    member_workspaces,
)
from flashcards.services.workspaces import get_or_create_user

DEFAULT_LABEL = "cli"


class Command(BaseCommand):
    help = (
        "Create an API key for a user (created with a Personal workspace if missing) and print "
        "it alone on the last line."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="username; created if missing")
        parser.add_argument("--workspace", help="workspace id to select (default: the only one)")
        parser.add_argument("--label", default=DEFAULT_LABEL, help="1-120 characters")

    def handle(self, *args: Any, **options: Any) -> None:
        with transaction.atomic():
            try:
                user, created = get_or_create_user(options["user"])
            except DomainError as exc:
                raise CommandError(exc.message) from exc
            ensure_personal_workspace(user)
            workspace: Workspace | None
            if options["workspace"]:
                try:
                    workspace = get_member_workspace(user, options["workspace"])
                except NotFoundError as exc:
                    raise CommandError(
                        f"Workspace {options['workspace']} not found, or {user.get_username()} "
                        "is not a member of it."
                    ) from exc
            else:
                candidates = list(member_workspaces(user)[:2])
                workspace = candidates[0] if len(candidates) == 1 else None
            try:
                api_key, plaintext = create_api_key(user, options["label"], workspace=workspace)
            except DomainError as exc:
                raise CommandError(exc.message) from exc
        if created:
            self.stdout.write(f"Created user {user.get_username()}.")
        if workspace is None:
            self.stdout.write(
                f"{user.get_username()} has several workspaces and none was given: the key has "
                "no selected workspace until one is selected (POST "
                "/v1/agent/workspaces/{id}/select)."
            )
        else:
            self.stdout.write(f'Selected workspace: {workspace.pk} "{workspace.name}".')
        self.stdout.write(
            f"API key {api_key.key_id} ({api_key.label}) for {user.get_username()}; "
            "it is shown once, on the next line:"
        )
        self.stdout.write(plaintext)
