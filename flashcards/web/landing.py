"""GET /: the landing page for humans, linking every human-facing surface (console, discovery,
grammar, API keys, OpenAPI, Swagger UI, admin) and showing the two commands of the README."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

COMMANDS = (
    (
        "make run",
        "venv, install, migrate, demo workspace; prints a demo login and an API key; serves :8000",
    ),
    ("make test", "venv, install and the whole test suite on SQLite"),
)


@require_safe
def landing(request: HttpRequest) -> HttpResponse:
    width = max(len(command) for command, _ in COMMANDS)
    lines = [f"{command.ljust(width)}  # {meaning}" for command, meaning in COMMANDS]
    return render(request, "flashcards/landing.html", {"commands": lines})
