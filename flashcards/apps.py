from django.apps import AppConfig


class FlashcardsConfig(AppConfig):
    name = "flashcards"
    verbose_name = "Flashcards"
    default_auto_field = "django.db.models.BigAutoField"
