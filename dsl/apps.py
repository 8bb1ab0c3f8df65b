from django.apps import AppConfig


class DslConfig(AppConfig):
    name = "dsl"
    verbose_name = "Agent SQL dialect"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from dsl import checks  # noqa: F401  (registers the registry check)
