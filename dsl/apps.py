"""The dialect's Django app: at start-up it registers the system checks, the SQLite functions
every connection needs (dsl.runtime.backends) and the query-log receiver of refused requests."""

from django.apps import AppConfig


class DslConfig(AppConfig):
    name = "dsl"
    verbose_name = "Agent SQL dialect"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from dsl import checks  # noqa: F401  (registers the registry check)
        from dsl.runtime.backends import register_sqlite_functions
        from dsl.runtime.querylog import log_refused_request
        from flashcards.http.signals import request_refused

        connection_created.connect(register_sqlite_functions)
        request_refused.connect(log_refused_request)
