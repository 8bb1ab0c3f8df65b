#!/usr/bin/env python
import os
import sys

# Operator commands that sign nothing (no session, no CSRF token, no password-reset link) may run
# without SECRET_KEY: the development key stands in. Anything else — above all `runserver` and
# `serve`, whose worker processes inherit this environment — needs a real SECRET_KEY unless DEBUG
# is on (config/settings.py refuses to load otherwise).
KEYLESS_COMMANDS = frozenset(
    {
        "add_member",
        "check",
        "collectstatic",
        "create_api_key",
        "createcachetable",
        "dialect_docs",
        "export_workspace",
        "help",
        "import_cards",
        "import_workspace",
        "makemigrations",
        "migrate",
        "seed_demo",
        "showmigrations",
        "version",
    }
)


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    command = sys.argv[1] if len(sys.argv) > 1 else "help"
    if command in KEYLESS_COMMANDS:
        os.environ.setdefault("DJANGO_ALLOW_INSECURE_KEY", "1")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
