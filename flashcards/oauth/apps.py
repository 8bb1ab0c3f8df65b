"""The OAuth app's registration with Django."""

from django.apps import AppConfig


class OAuthConfig(AppConfig):
    name = "flashcards.oauth"
    label = "flashcards_oauth"
    verbose_name = "OAuth connections"
    default_auto_field = "django.db.models.BigAutoField"
