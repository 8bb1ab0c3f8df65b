from django.apps import AppConfig


class DslConfig(AppConfig):
    name = "dsl"
    verbose_name = "Agent SQL dialect"
    default_auto_field = "django.db.models.BigAutoField"
