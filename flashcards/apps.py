"""The flashcards Django app: at start-up it connects the signals that keep the per-process
API-key cache true (flashcards.services.key_cache) and puts the database circuit breaker in place
(flashcards.http.db_errors)."""

from django.apps import AppConfig


class FlashcardsConfig(AppConfig):
    name = "flashcards"
    verbose_name = "Flashcards"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.conf import settings
        from django.db.models.signals import post_delete, post_save

        from flashcards.http.db_errors import install_breaker
        from flashcards.models import ApiKey, Membership, Workspace
        from flashcards.security import logins  # noqa: F401  (its sign-in signal receivers)
        from flashcards.services.key_cache import invalidate_on_change

        # What the per-process key cache holds (flashcards.services.key_cache): a change to any of
        # these forgets the cached keys in every process.
        for model in (ApiKey, Membership, Workspace, settings.AUTH_USER_MODEL):
            post_save.connect(invalidate_on_change, sender=model, dispatch_uid=f"keys-{model}")
            post_delete.connect(invalidate_on_change, sender=model, dispatch_uid=f"keys-{model}")
        install_breaker()
