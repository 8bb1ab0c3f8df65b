"""Pieces every service function shares: domain errors, the per-workspace lock and change-log
allocation (time lives in flashcards.services.timestamps, re-exported here for callers)."""

from __future__ import annotations

import functools
import math
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from django.db import transaction

from flashcards.models import SERVER_REPLICA, ChangeLog, Workspace
from flashcards.services.bulk_rows import insert_rows
from flashcards.services.timestamps import truncate_ms

MAX_BULK = 100
CHANGE_COLUMNS = (
    "workspace_id",
    "change_id",
    "entity_type",
    "entity_id",
    "action",
    "replica_id",
    "operation_id",
    "recorded_at",
)

_Service = TypeVar("_Service", bound=Callable[..., Any])
_all_or_nothing: ContextVar[bool] = ContextVar("services_all_or_nothing", default=False)


@contextmanager
def all_or_nothing() -> Iterator[None]:
    """One transaction for several service calls that share one fate: any error leaves the block
    and rolls everything back (the dialect runs a request's statements this way). Write services
    called inside need no savepoint of their own, which saves two statements per call."""
    with transaction.atomic():
        token = _all_or_nothing.set(True)
        try:
            yield
        finally:
            _all_or_nothing.reset(token)


def write_service(function: _Service) -> _Service:
    """``transaction.atomic`` for a write service: its own transaction, or a savepoint inside a
    caller's — except inside ``all_or_nothing``, where a failure ends the whole block anyway."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with transaction.atomic(savepoint=not _all_or_nothing.get()):
            return function(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


class DomainError(Exception):
    """A request that breaks a domain rule. The API layer turns it into a 400 with this message;
    `code` is a short machine reason (invalid_value, not_found, too_many_rows, conflict...)."""

    def __init__(self, message: str, *, code: str = "invalid_value", field: str | None = None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.field = field


class NotFoundError(DomainError):
    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(message, code="not_found", field=field)


@dataclass(frozen=True)
class WriteContext:
    """Who is writing, for sync metadata. Server-side writers (dialect, admin, commands) use the
    server replica with a fresh operation id per write; sync push passes the client's values."""

    replica_id: str = SERVER_REPLICA
    operation_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    client_updated_at: datetime | None = None

    def stamp(self, at: datetime) -> tuple[datetime, str, str]:
        client_at = truncate_ms(self.client_updated_at) if self.client_updated_at else at
        return client_at, self.replica_id, self.operation_id


def server_context() -> WriteContext:
    return WriteContext()


def lock_workspace(workspace: Workspace | uuid.UUID | str) -> Workspace:
    """Take the per-workspace row lock. Must run inside a transaction; every writer goes through
    here first, so change numbers are handed out and committed in order."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("lock_workspace() must be called inside transaction.atomic()")
    workspace_id = workspace.pk if isinstance(workspace, Workspace) else workspace
    try:
        return Workspace.objects.select_for_update().get(pk=workspace_id, deleted_at__isnull=True)
    except (Workspace.DoesNotExist, ValueError, TypeError) as exc:
        raise NotFoundError("Workspace not found.") from exc


def record_changes(
    workspace: Workspace,
    entity_type: str,
    entity_ids: Iterable[object],
    *,
    action: str,
    context: WriteContext,
    at: datetime,
) -> list[int]:
    """Append one change-log entry per entity, numbered from the locked workspace's counter."""
    ids = [str(entity_id) for entity_id in entity_ids]
    if not ids:
        return []
    first = workspace.last_change_id + 1
    numbers = list(range(first, first + len(ids)))
    insert_rows(
        ChangeLog,
        CHANGE_COLUMNS,
        (
            (
                workspace.pk,
                number,
                entity_type,
                entity_id,
                action,
                context.replica_id,
                context.operation_id,
                at,
            )
            for number, entity_id in zip(numbers, ids, strict=True)
        ),
    )
    workspace.last_change_id = numbers[-1]
    Workspace.objects.filter(pk=workspace.pk).update(last_change_id=workspace.last_change_id)
    return numbers


MAX_NESTING = 32


def check_storable(value: object, path: str) -> None:
    """Refuse values no database can store — NUL characters, lone surrogates, NaN / Infinity
    (which Python's JSON parser accepts) and nesting deeper than MAX_NESTING — naming where they
    are, before they reach a query. Iterative, so no input can exhaust the stack."""
    pending: list[tuple[object, str, int]] = [(value, path, 0)]
    while pending:
        item, where, depth = pending.pop()
        if depth > MAX_NESTING:
            raise DomainError(f"{path} is nested more than {MAX_NESTING} levels deep.", field=path)
        if isinstance(item, str):
            if "\x00" in item:
                raise DomainError(f"{where} must not contain NUL characters.", field=path)
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise DomainError(
                    f"{where} is not valid Unicode text (lone surrogate).", field=path
                ) from exc
        elif isinstance(item, float) and not math.isfinite(item):
            raise DomainError(f"{where}: {item} is not a JSON number.", field=path)
        elif isinstance(item, dict):
            for key, child in item.items():
                pending.append((key, where, depth + 1))
                pending.append((child, f"{where}.{key}", depth + 1))
        elif isinstance(item, (list, tuple)):
            pending.extend((child, f"{where}[{i}]", depth + 1) for i, child in enumerate(item))


def check_bulk_size(count: int, what: str) -> None:
    if count > MAX_BULK:
        raise DomainError(f"At most {MAX_BULK} {what} per call; got {count}.", code="too_many_rows")
