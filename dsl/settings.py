"""Every limit of the dialect (dsl.md §8) in one object, like DRF's ``api_settings``.

Read them as ``dsl_settings.MAX_ROWS_PER_SELECT``. Defaults below; any key can be overridden by the
environment (``FLASHCARDS_DSL_<KEY>``, e.g. ``FLASHCARDS_DSL_STATEMENT_TIMEOUT_SECONDS=2``) and,
taking precedence, by the Django setting ``FLASHCARDS_DSL = {"<KEY>": value}``. The object reloads
when that setting changes (``override_settings`` in tests)."""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed

DEFAULTS: dict[str, int | float] = {
    "MAX_ROWS_PER_SELECT": 100,
    "MAX_ROWS_PER_WRITE": 100,
    "MAX_STATEMENTS": 50,
    "MAX_SQL_BYTES": 65_536,
    "MAX_READ_ENVELOPE_CHARS": 48_000,
    # Writes never fail for size: their rows are dropped (rowsOmitted) to fit this budget.
    "MAX_WRITE_ENVELOPE_CHARS": 48_000,
    "STATEMENT_TIMEOUT_SECONDS": 5.0,
    "MAX_IN_VALUES": 1_000,
    "MAX_DEPTH": 32,
    "MAX_PREDICATES": 500,
    # A LIKE / ILIKE pattern or MATCH text, in UTF-8 bytes: SQLite's own LIKE pattern limit
    # (SQLITE_MAX_LIKE_PATTERN_LENGTH), checked before the database on both backends.
    "MAX_PATTERN_BYTES": 50_000,
    "IDEMPOTENCY_TTL_HOURS": 24,
}

ENV_PREFIX = "FLASHCARDS_DSL_"


def _coerce(key: str, value: object) -> int | float:
    """Limits are numbers; integers stay integers so messages read `100`, not `100.0`."""
    default = DEFAULTS[key]
    try:
        number = float(value) if isinstance(default, float) else int(value)  # type: ignore[arg-type, call-overload]
    except (TypeError, ValueError) as exc:
        raise ImproperlyConfigured(
            f"FLASHCARDS_DSL[{key!r}] must be a number; got {value!r}."
        ) from exc
    if number < 0:
        raise ImproperlyConfigured(f"FLASHCARDS_DSL[{key!r}] must not be negative; got {value!r}.")
    return number


class DslSettings:
    def __init__(self) -> None:
        self._cache: dict[str, int | float] = {}
        # Bumped by every reload, so values derived from the settings know when to rebuild.
        self.generation = 0

    def _user_settings(self) -> dict[str, Any]:
        overrides = getattr(settings, "FLASHCARDS_DSL", None) or {}
        if not isinstance(overrides, dict):
            raise ImproperlyConfigured("FLASHCARDS_DSL must be a dict.")
        unknown = set(overrides) - set(DEFAULTS)
        if unknown:
            raise ImproperlyConfigured(
                f"Unknown FLASHCARDS_DSL keys: {', '.join(sorted(unknown))}. "
                f"Known keys: {', '.join(DEFAULTS)}."
            )
        return overrides

    def __getattr__(self, key: str) -> int | float:
        if key not in DEFAULTS:
            raise AttributeError(f"Invalid dialect setting: {key!r}")
        if key in self._cache:
            return self._cache[key]
        overrides = self._user_settings()
        if key in overrides:
            value = _coerce(key, overrides[key])
        elif ENV_PREFIX + key in os.environ:
            value = _coerce(key, os.environ[ENV_PREFIX + key])
        else:
            value = DEFAULTS[key]
        self._cache[key] = value
        return value

    def reload(self) -> None:
        self._cache.clear()
        self.generation += 1

    def as_dict(self) -> dict[str, int | float]:
        return {key: getattr(self, key) for key in DEFAULTS}


dsl_settings = DslSettings()


def _reload_on_change(*, setting: str, **kwargs: object) -> None:
    if setting == "FLASHCARDS_DSL":
        dsl_settings.reload()


setting_changed.connect(_reload_on_change)


def teaching_is_strict() -> bool:
    """``DSL_TEACHING_STRICT``: a habit row that fails to render raises instead of leaving the
    plain error (the test suite turns it on; production logs the failure and answers)."""
    return bool(getattr(settings, "DSL_TEACHING_STRICT", False))
