"""Start-up checks (``manage.py check``): every published column (flashcards.schema, as
dsl.schema shows it) maps to a real model field or to an expression the compiler defines, so
the registry cannot drift from the models; SQLite's busy timeout; and the Django and psycopg
versions the adapter below Django's public API was tested with."""

from __future__ import annotations

from typing import Any

from django.core import checks
from django.core.exceptions import FieldDoesNotExist


@checks.register(checks.Tags.models)
def check_registry_columns(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    from dsl.runtime.compiler import EXPRESSION_COLUMNS, MODELS
    from dsl.schema import RESOURCES

    problems: list[checks.CheckMessage] = []
    for resource in RESOURCES:
        model = MODELS.get(resource.name)
        if model is None:
            problems.append(
                checks.Error(
                    f"Resource {resource.name!r} has no model in dsl.runtime.compiler.MODELS.",
                    id="dsl.E001",
                )
            )
            continue
        for column in resource.columns:
            where = f"{resource.name}.{column.name}"
            if column.field is None:
                if (resource.name, column.name) not in EXPRESSION_COLUMNS:
                    problems.append(
                        checks.Error(
                            f"Column {where} has no model field and no compiler expression.",
                            hint="Set Column.field or add it to dsl.runtime.compiler.EXPRESSION_COLUMNS.",
                            id="dsl.E002",
                        )
                    )
                continue
            try:
                model._meta.get_field(column.field)
            except FieldDoesNotExist:
                # Foreign keys are published by their column name (card_id); accept the attname.
                attnames = {f.attname for f in model._meta.concrete_fields}
                if column.field not in attnames:
                    problems.append(
                        checks.Error(
                            f"Column {where} maps to {model.__name__}.{column.field}, "
                            "which does not exist.",
                            id="dsl.E003",
                        )
                    )
    return problems


@checks.register()
def check_sqlite_busy_timeout(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """A SQLite writer must give up waiting for a lock within the statement time limit, so a
    locked database answers 503 within the documented limit on every route."""
    from django.conf import settings

    from dsl.settings import dsl_settings

    database = settings.DATABASES["default"]
    if database["ENGINE"] != "django.db.backends.sqlite3":
        return []
    busy = float(database.get("OPTIONS", {}).get("timeout", 5))
    limit = float(dsl_settings.STATEMENT_TIMEOUT_SECONDS)
    if busy < limit:
        return []
    return [
        checks.Warning(
            f"SQLite's busy timeout ({busy:g} s) is not below the statement time limit "
            f"({limit:g} s): a write behind a lock would answer after the documented limit.",
            hint="Lower SQLITE_BUSY_TIMEOUT_SECONDS (default 4) or raise "
            "FLASHCARDS_DSL_STATEMENT_TIMEOUT_SECONDS.",
            id="dsl.W001",
        )
    ]


# The versions the code below Django's public API (dsl.runtime.ready_sql, prepared_reads and the
# converter copy in dsl.runtime.rows) was read against and tested with, major.minor.
ADAPTER_TESTED_WITH = {"django": (5, 2), "psycopg": (3, 3)}


def _major_minor(version: str) -> tuple[int, int] | None:
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


@checks.register()
def check_adapter_versions(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Refuse a Django or psycopg the adapter below Django's public API was not tested with: its
    private attributes may have moved, and a silently skipped fast path is a slow server."""
    import django

    found = {"django": f"{django.VERSION[0]}.{django.VERSION[1]}"}
    try:
        import psycopg
    except ImportError:
        pass  # SQLite only: the psycopg side of the adapter never runs
    else:
        found["psycopg"] = psycopg.__version__
    errors: list[checks.CheckMessage] = []
    for package, version in found.items():
        tested = ADAPTER_TESTED_WITH[package]
        if _major_minor(version) != tested:
            errors.append(
                checks.Error(
                    f"{package} {version} is installed; the dialect's adapter below Django's "
                    f"public API was tested with {package} {tested[0]}.{tested[1]}.",
                    hint=(
                        "Install the locked versions (requirements.lock), or check "
                        "dsl.runtime.ready_sql, prepared_reads and rows against the new version, "
                        "then update ADAPTER_TESTED_WITH in dsl/checks.py."
                    ),
                    id="dsl.E004",
                )
            )
    return errors
