"""`manage.py seed_demo [--user demo] [--print-login] [--print-key]`: a demo workspace to explore
the product, and (DEBUG only) a browser login for its user."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from flashcards.services import DomainError, create_api_key
from flashcards.services.demo import seed_demo_workspace
from flashcards.services.workspaces import get_or_create_user, set_random_password

DEFAULT_USER = "demo"
LOGIN_PREFIX = "Login:"


class Command(BaseCommand):
    help = (
        "Create a demo workspace (about 60 cards, 4 decks, review history) for a user. Running "
        "it again changes nothing; --print-key prints a new API key alone on the last line."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", default=DEFAULT_USER, help="username; created if missing")
        parser.add_argument(
            "--print-login",
            action="store_true",
            help="DEBUG only: give the user a fresh random password and print it, to sign in to "
            "the console, the browsable API and the API-key page",
        )
        parser.add_argument(
            "--print-key",
            action="store_true",
            help="create an API key for the user, selecting the demo workspace, and print it",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["print_login"] and not settings.DEBUG:
            raise CommandError(
                "--print-login sets a password and prints it: only with DEBUG on (make run)."
            )
        try:
            user, _ = get_or_create_user(options["user"])
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        result = seed_demo_workspace(user)
        workspace = result.workspace
        if result.created:
            self.stdout.write(
                f'Seeded workspace {workspace.pk} "{workspace.name}" for {user.get_username()}: '
                f"{result.cards} cards, {result.decks} decks, {result.reviews} reviews."
            )
        else:
            self.stdout.write(
                f'Workspace {workspace.pk} "{workspace.name}" of {user.get_username()} is '
                "already seeded; nothing changed."
            )
        if options["print_login"]:
            # make run prints the admin URL beside this login: under DEBUG it must open the admin.
            if not user.is_staff:
                user.is_staff = True
                user.save(update_fields=["is_staff"])
            password = set_random_password(user)
            self.stdout.write(f"{LOGIN_PREFIX} {user.get_username()} / {password}")
        if options["print_key"]:
            api_key, plaintext = create_api_key(user, "demo", workspace=workspace)
            self.stdout.write(f"API key {api_key.key_id}, shown once, on the next line:")
            self.stdout.write(plaintext)
