"""`manage.py add_member USERNAME WORKSPACE [--role member|owner]`: give an existing user (e.g. one
made with createsuperuser) access to a workspace, such as the demo workspace."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from flashcards.management.commands.export_workspace import find_workspace
from flashcards.models import Membership
from flashcards.services import DomainError, add_member


class Command(BaseCommand):
    help = (
        "Add an existing user to a workspace (by id, or by name when no other workspace has it), "
        "e.g. `add_member admin Demo`. Running it again changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", help="an existing user")
        parser.add_argument("workspace", help="workspace id, or a name no other workspace has")
        parser.add_argument(
            "--role",
            choices=[role for role, _ in Membership.ROLES],
            help="member (the default for a new membership) or owner; an existing membership "
            "keeps its role unless this is given",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        user_model = get_user_model()
        username = options["username"]
        user = user_model._default_manager.filter(**{user_model.USERNAME_FIELD: username}).first()
        if user is None:
            raise CommandError(
                f"No user {username!r}: create one first (manage.py createsuperuser)."
            )
        workspace = find_workspace(options["workspace"])
        try:
            membership, created = add_member(user, workspace, options["role"])
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        verb = "Added" if created else "Kept"
        self.stdout.write(
            f'{verb} {username} in workspace {workspace.pk} "{workspace.name}" as '
            f"{membership.role}. Sign in and pick it in the console's workspace picker."
        )
