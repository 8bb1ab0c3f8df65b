"""The published development SECRET_KEY, and the rule that nothing serves requests with it unless
DEBUG is on (operator commands that sign nothing may load the settings with it, see manage.py)."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

DEVELOPMENT_SECRET_KEY = "django-insecure-dev-only-key-do-not-use-in-production"


def refuse_development_key(settings: object) -> None:
    """Raise unless the served application has a real key (or DEBUG is on): sessions, CSRF tokens
    and OAuth consent are signed with it, and this one is in the public repository."""
    if getattr(settings, "SECRET_KEY", "") == DEVELOPMENT_SECRET_KEY and not getattr(
        settings, "DEBUG", False
    ):
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DEBUG is off: the development key cannot serve requests."
        )
