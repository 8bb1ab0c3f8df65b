"""What the dialect stores about its own requests: the query log and idempotency records.
Neither holds an Authorization header or key material."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from flashcards.models import ApiKey, Workspace

SURFACES = (
    ("rest", "rest"),
    ("mcp", "mcp"),
    ("browsable", "browsable"),
    ("console", "console"),
)
OUTCOME_OK = "ok"


class QueryLog(models.Model):
    """One row per dialect request, successful or not (domain.md §1 "Query log")."""

    created_at = models.DateTimeField(db_index=True)
    api_key = models.ForeignKey(
        ApiKey, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    workspace = models.ForeignKey(
        Workspace, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    surface = models.CharField(max_length=20, choices=SURFACES)
    sql = models.TextField(blank=True, default="")
    # Comma-separated, in statement order without repeats, e.g. "select,update".
    statement_types = models.CharField(max_length=200, blank=True, default="")
    resources = models.CharField(max_length=200, blank=True, default="")
    outcome = models.CharField(max_length=40, help_text='"ok" or the error code.')
    reason = models.CharField(max_length=40, blank=True, default="")
    error_message = models.TextField(blank=True, default="")
    status_code = models.PositiveSmallIntegerField()
    rows_returned = models.PositiveIntegerField(default=0)
    rows_affected = models.PositiveIntegerField(default=0)
    duration_ms = models.FloatField(default=0)
    result_size = models.PositiveIntegerField(default=0, help_text="Envelope size in characters.")
    request_id = models.CharField(max_length=64, db_index=True)
    dry_run = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["outcome", "-created_at"], name="querylog_outcome")]

    def __str__(self) -> str:
        return f"{self.request_id} {self.outcome}"


class IdempotencyRecord(models.Model):
    """The stored response of a request sent with an Idempotency-Key (dsl.md §1).

    ``scope`` names the principal and the workspace ("key:<api key pk>/ws:<workspace id>" or
    "user:<user pk>/ws:<workspace id>"), so two keys, or one key in two workspaces, can use the
    same Idempotency-Key independently. ``fingerprint`` is a hash of what was asked (endpoint,
    body), so a reuse with a different body can be told from a retry."""

    scope = models.CharField(max_length=64)
    key = models.CharField(max_length=200)
    api_key = models.ForeignKey(
        ApiKey, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    fingerprint = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField()
    body = models.JSONField()
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scope", "key"], name="idempotency_unique_key"),
        ]
        indexes = [models.Index(fields=["scope", "created_at"], name="idempotency_expiry")]

    def __str__(self) -> str:
        return f"{self.scope} {self.key}"
