"""The OAuth app's registration with Django."""

from django.apps import AppConfig


class OAuthConfig(AppConfig):
    name = "flashcards.oauth"
    label = "flashcards_oauth"
    verbose_name = "OAuth connections"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_save, pre_save
        from oauth2_provider.models import get_application_model

        from flashcards.models import ApiKey
        from flashcards.oauth.connections import revoke_on_key_revocation
        from flashcards.oauth.registration import keep_public_clients_secretless

        post_save.connect(revoke_on_key_revocation, sender=ApiKey, dispatch_uid="oauth-revoke")
        pre_save.connect(
            keep_public_clients_secretless,
            sender=get_application_model(),
            dispatch_uid="oauth-public-secretless",
        )
