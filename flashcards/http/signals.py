"""Signals of the API layer. `request_refused` is sent when middleware answers a /v1/ request
before any view runs (today: a body over 256 KiB), so that a surface which logs every request —
the dialect's query log — can record it without flashcards importing dsl."""

from django.dispatch import Signal

# Sent with: request (the Django HttpRequest), body (the envelope dict), status_code (int).
request_refused = Signal()
