"""A connection: one user's consent to one OAuth client, held as an agent connection (ApiKey)."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.db import models

from flashcards.models import ApiKey


class Connection(models.Model):
    """The API-key row a client's tokens act as. At most one active connection per user and
    client: consenting again updates it (workspace, label) instead of adding another."""

    api_key = models.OneToOneField(
        ApiKey, on_delete=models.CASCADE, related_name="oauth_connection"
    )
    application = models.ForeignKey(
        "oauth2_provider.Application", on_delete=models.CASCADE, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # The host of the redirect URI the user approved (the consent page showed it), kept as it was:
    # the key page shows it, whatever the client's registration says later.
    approved_host = models.CharField(max_length=255, blank=True, default="")

    class Meta:
        verbose_name = "OAuth connection"

    def __str__(self) -> str:
        return f"{self.client_name} → {self.api_key.label}"

    @property
    def client_name(self) -> str:
        return self.application.name or self.application.client_id

    @property
    def redirect_host(self) -> str:
        """Where the client receives its answers, as the consent page showed it."""
        if self.approved_host:
            return self.approved_host
        uris = self.application.redirect_uris.split()
        return urlsplit(uris[0]).netloc if uris else ""
