"""Writing the query log: one ``QueryLog`` row per dialect request, success or failure.

Rows are built here and stored off the request path by ``dsl.runtime.querylog_writer`` (batched, flushed at
shutdown, never dropped silently). Logging never breaks a request: a failed insert is reported to
the server log and swallowed. Rows are written outside the request transaction, so a rolled-back
batch is still logged."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from dsl.models import OUTCOME_OK, QueryLog
from dsl.runtime.querylog_writer import writer
from flashcards.models import ApiKey, Workspace

logger = logging.getLogger(__name__)


@dataclass
class ExecutionStats:
    """What the executor learned about a request, filled in as it runs (so a failure still logs
    the statements it got to)."""

    statement_types: list[str] = field(default_factory=list)
    resources: list[str] = field(default_factory=list)
    rows_returned: int = 0
    rows_affected: int = 0
    # 1-based index of the running statement in a batch of several (None for one statement).
    current_statement: int | None = None
    # The envelope the executor built and its size in characters (see ``size_of``).
    _measured: tuple[dict[str, Any], int] | None = field(default=None, repr=False)

    def measured(self, body: dict[str, Any], size: int) -> None:
        """Remember the size of the envelope the executor built (see ``size_of``)."""
        self._measured = (body, size)

    def size_of(self, body: dict[str, Any]) -> int:
        """The envelope's size: the executor's measurement if ``body`` is that very envelope."""
        measured = self._measured
        if measured is not None and measured[0] is body:
            return measured[1]
        return envelope_size(body)

    def add_statement(self, statement_type: str, resource: str | None) -> None:
        if statement_type not in self.statement_types:
            self.statement_types.append(statement_type)
        if resource and resource not in self.resources:
            self.resources.append(resource)


def envelope_size(body: dict[str, Any]) -> int:
    """Characters of the JSON as the API renders it (compact, non-ASCII kept). Measured on the
    ASCII-escaped encoding first, which CPython's encoder produces about twice as fast: without a
    ``\\u`` escape in it, both encodings have exactly the same characters (every other escape is
    spelled alike in both); with one, the text is encoded again as rendered."""
    ascii_text = json.dumps(body, separators=(",", ":"))
    if "\\u" not in ascii_text:
        return len(ascii_text)
    return len(json.dumps(body, ensure_ascii=False, separators=(",", ":")))


def _storable(text: str) -> str:
    # Neither NUL nor a lone surrogate can be stored as text; the log keeps a visible stand-in
    # instead of losing the row.
    text = text.encode("utf-8", "replace").decode("utf-8")
    return text.replace("\x00", "\ufffd")


def _principal(user: Any) -> Any:
    return user if getattr(user, "pk", None) is not None else None


def record(
    *,
    request_id: str,
    surface: str,
    sql: str,
    body: dict[str, Any],
    status_code: int,
    duration_ms: float,
    user: Any = None,
    api_key: ApiKey | None = None,
    workspace: Workspace | None = None,
    stats: ExecutionStats | None = None,
    dry_run: bool = False,
    reason: str | None = None,
) -> None:
    """Store one log row describing ``body``, the envelope sent back."""
    stats = stats or ExecutionStats()
    error = body.get("error") or {}
    details = error.get("details") or {}
    try:
        row = QueryLog(
            created_at=timezone.now(),
            api_key_id=getattr(api_key, "pk", None),
            user_id=getattr(_principal(user), "pk", None),
            workspace_id=getattr(workspace, "pk", None),
            surface=surface,
            sql=_storable(sql),
            statement_types=",".join(stats.statement_types)[:200],
            resources=",".join(stats.resources)[:200],
            outcome=error.get("code", OUTCOME_OK),
            reason=(reason or details.get("reason") or "")[:40],
            error_message=_storable(error.get("message", "")),
            status_code=status_code,
            rows_returned=stats.rows_returned,
            rows_affected=stats.rows_affected,
            duration_ms=round(duration_ms, 3),
            result_size=stats.size_of(body),
            request_id=str(body.get("requestId") or request_id)[:64],
            dry_run=dry_run,
        )
        writer.submit(row)
    except Exception:
        # Logging must never turn an answered request into a failure (the database may be the
        # very thing that is down).
        logger.exception("Could not write the query log row of request %s", request_id)


def log_failure(
    request: Any,
    *,
    surface: str,
    body: dict[str, Any],
    status_code: int,
    duration_ms: float = 0.0,
    sql: object = "",
    workspace: Workspace | None = None,
) -> None:
    """Log a request the view refused before the dialect ran (bad body, auth, workspace, an
    outage). Only the principal is recorded, never the Authorization header or key, and only
    a principal already established: reading ``request.user`` of a request whose authentication
    failed would run it again (DRF authenticates lazily), and during an outage that raises again
    and loses the row. Never raises: what cannot be queued is one log line with the request id."""
    request_id = str(body.get("requestId", ""))
    try:
        user, auth = established_principal(request)
        record(
            request_id=request_id,
            surface=surface,
            sql=sql if isinstance(sql, str) else "",
            body=body,
            status_code=status_code,
            duration_ms=duration_ms,
            user=user,
            api_key=auth if isinstance(auth, ApiKey) else None,
            workspace=workspace,
        )
    except Exception:
        logger.exception(
            "Could not log refused request %s (%s %s)", request_id, surface, status_code
        )


def established_principal(request: Any) -> tuple[Any, Any]:
    """(user, auth) as far as they are known without querying: DRF's once it authenticated (also
    when that failed: it then stores the anonymous user); for a plain Django request (refused by
    middleware, or an MCP call, whose key is a plain ``auth`` attribute) its user, unless loading
    it fails; (None, None) when DRF's
    authentication itself failed with an error."""
    state = getattr(request, "__dict__", {})
    if "_request" in state:  # a DRF Request
        if "_user" not in state:
            return None, None
        return state.get("_user"), state.get("_auth")
    auth = state.get("auth")  # set as a plain attribute by surfaces that authenticate (MCP)
    try:
        return getattr(request, "user", None), auth
    except Exception:
        return None, auth


SQL_PATH_PREFIX = "/v1/agent/sql"


def log_refused_request(
    sender: object, *, request: Any, body: dict[str, Any], status_code: int, **kwargs: Any
) -> None:
    """Receiver of flashcards.http.signals.request_refused: a SQL request that middleware refused
    (e.g. 413) is still a dialect request, so it gets its query-log row. The body was never read,
    so the row has no SQL text."""
    if request.path.startswith(SQL_PATH_PREFIX):
        log_failure(request, surface="rest", body=body, status_code=status_code)
