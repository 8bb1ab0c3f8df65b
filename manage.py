#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # Operator commands (create_api_key, import/export, migrate) sign nothing, so they may run
    # without SECRET_KEY; the served application (config.asgi / config.wsgi) still refuses to
    # start without one unless DEBUG is on.
    os.environ.setdefault("DJANGO_ALLOW_INSECURE_KEY", "1")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
