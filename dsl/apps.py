"""The dialect's Django app: at start-up it registers the system checks, the SQLite functions
every connection needs (dsl.backends) and the query-log receiver of refused requests."""

from django.apps import AppConfig


class DslConfig(AppConfig):
    name = "dsl"
    verbose_name = "Agent SQL dialect"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from dsl import checks  # noqa: F401  (registers the registry check)
        from dsl.backends import register_sqlite_functions
        from dsl.querylog import log_refused_request
        from flashcards.api.signals import request_refused

        connection_created.connect(register_sqlite_functions)
        request_refused.connect(log_refused_request)
