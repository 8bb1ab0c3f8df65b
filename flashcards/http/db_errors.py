"""A database outage: noticed once (a circuit breaker) and answered 503 SERVICE_UNAVAILABLE with
``Retry-After`` on every /v1/ route, in the dsl.md §2 envelope, instead of a 500.

The breaker (PostgreSQL; SQLite is a file and never refuses a connection): the first connection
attempt that fails — a request's, or the pool's own background attempt — opens it. While it is
open, opening a connection fails at once (no request waits the pool timeout for a database that is
known to be down), so the 503 takes milliseconds and routes that need no database (``GET /v1/``)
keep answering. Every ``DB_BREAKER_PROBE_SECONDS`` (default 0.5) one request probes with a direct
connection; the first that succeeds closes the breaker, so service returns within about that time
of the database. The pool's own reconnection attempts are made at the same fixed interval, never
backed off exponentially. Opening and closing are each logged once (docs/deployment.md).

Django raises ``OperationalError`` / ``InterfaceError`` for these (connection refused, connection
terminated, server shutting down, deadlock or serialization failure on PostgreSQL, "database is
locked" on SQLite). They are transient: the client should wait and retry. Nothing needs resetting
for the server to recover either: Django discards an unusable connection at the end of the request
(``close_if_unusable_or_obsolete``) and opens a fresh one on the next.

``error.details`` says whether the outcome of the request is known:
- ``"outcome": "not_applied"`` — the error came before the transaction committed, so the
  database rolled everything back (a connection that dies mid-transaction commits nothing);
- ``"outcome": "unknown"`` — the error came while committing, so the write may or may not have
  been applied: read it back before retrying a non-idempotent write.

Two entry points, because DRF turns exceptions raised inside its views into responses before any
middleware sees them:
- ``exception_handler``: the DRF EXCEPTION_HANDLER (settings.REST_FRAMEWORK); anything that is not
  a database-availability error goes on to ``flashcards.http.envelope.exception_handler``.
- ``DatabaseUnavailableMiddleware``: the same answer for plain Django views under /v1/.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from rest_framework.response import Response

from flashcards.http import envelope

logger = logging.getLogger(__name__)

API_PREFIX = "/v1/"
RETRY_AFTER_SECONDS = 5
SERVICE_UNAVAILABLE = "SERVICE_UNAVAILABLE"
# PostgreSQL's "query_canceled": a statement time limit, reported by the dialect as QUERY_TIMEOUT,
# not an outage.
QUERY_CANCELED = "57014"
# SQLSTATEs of conflicts between concurrent transactions: retrying succeeds.
CONFLICT_REASONS = {"40001": "serialization_failure", "40P01": "deadlock_detected"}
_COMMIT_FUNCTIONS = frozenset({"commit", "_commit"})


# Only these say the database (not the statement) is the problem. PostgreSQL, by SQLSTATE class:
# connection exception, transaction rollback (serialization, deadlock), insufficient resources,
# object not in prerequisite state (lock not available), operator intervention (shutdown; 57014
# is the statement time limit, above), system error, internal error. A statement the server
# refuses — a data exception (22), a program limit exceeded (54, "statement too complex") — is not.
OUTAGE_SQLSTATE_CLASSES = frozenset({"08", "40", "53", "55", "57", "58", "XX"})
# SQLite, by primary result code: a refused statement is SQLITE_ERROR ("LIKE or GLOB pattern too
# complex"), SQLITE_TOOBIG or SQLITE_MISMATCH ("datatype mismatch").
OUTAGE_SQLITE_ERRORS = frozenset(
    {"SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_IOERR", "SQLITE_CANTOPEN", "SQLITE_FULL",
     "SQLITE_NOMEM", "SQLITE_PROTOCOL", "SQLITE_READONLY", "SQLITE_CORRUPT", "SQLITE_NOTADB"}
)  # fmt: skip


def is_database_unavailable(exc: BaseException) -> bool:
    """True for the transient database errors this module answers with a 503: the connection or
    the server is unavailable. A statement the database refuses is not an outage."""
    if isinstance(exc, InterfaceError):
        return True
    if not isinstance(exc, OperationalError):
        return False
    cause = exc.__cause__
    sqlstate = getattr(cause, "sqlstate", None)
    if sqlstate is not None:
        return sqlstate != QUERY_CANCELED and sqlstate[:2] in OUTAGE_SQLSTATE_CLASSES
    sqlite_name = getattr(cause, "sqlite_errorname", None)
    if isinstance(sqlite_name, str):
        # Extended codes ("SQLITE_IOERR_READ", "SQLITE_BUSY_SNAPSHOT") share their primary's name.
        return sqlite_name in OUTAGE_SQLITE_ERRORS or any(
            sqlite_name.startswith(name + "_") for name in OUTAGE_SQLITE_ERRORS
        )
    # No server answer at all (connection refused or dropped: psycopg gives no SQLSTATE).
    return True


def _sqlstate(exc: BaseException) -> str | None:
    return getattr(exc.__cause__, "sqlstate", None)


def _raised_while_committing(exc: BaseException) -> bool:
    """Whether the error escaped from the database wrapper's commit: the one moment at which the
    server may have applied the transaction without the client learning it."""
    traceback: TracebackType | None = exc.__traceback__
    while traceback is not None:
        code = traceback.tb_frame.f_code
        if code.co_name in _COMMIT_FUNCTIONS and code.co_filename.endswith(
            ("db/backends/base/base.py", "db/transaction.py")
        ):
            return True
        traceback = traceback.tb_next
    return False


def outcome_of(exc: BaseException) -> str:
    return "unknown" if _raised_while_committing(exc) else "not_applied"


def _reason(exc: BaseException) -> str:
    sqlstate = _sqlstate(exc)
    if sqlstate in CONFLICT_REASONS:
        return CONFLICT_REASONS[sqlstate]
    if isinstance(exc, InterfaceError):
        return "connection_lost"
    return "database_unavailable"


def _message(outcome: str, reason: str) -> str:
    if outcome == "unknown":
        return (
            "The database connection failed while the request was being committed, so it is "
            "not known whether it was applied. Read the affected rows back before retrying a "
            "write; reads can simply be retried."
        )
    if reason in CONFLICT_REASONS.values():
        return (
            "The request collided with a concurrent transaction and was rolled back; nothing "
            f"was applied. Retry it in {RETRY_AFTER_SECONDS} seconds."
        )
    return (
        "The database is unavailable and the request was not applied; nothing was written. "
        f"Retry in {RETRY_AFTER_SECONDS} seconds."
    )


def unavailable_error(exc: BaseException) -> tuple[str, dict[str, Any]]:
    """The message and ``error.details`` of the 503, for callers that build their own envelope
    (dsl.runtime.service.run_sql)."""
    outcome, reason = outcome_of(exc), _reason(exc)
    details = {
        "reason": reason,
        "retryable": True,
        "outcome": outcome,
        "retryAfterSeconds": RETRY_AFTER_SECONDS,
    }
    return _message(outcome, reason), details


def unavailable_body(request: Any, exc: BaseException) -> dict[str, Any]:
    message, details = unavailable_error(exc)
    return envelope.error_body(request, SERVICE_UNAVAILABLE, message, details=details)


def _log(request: Any, exc: BaseException) -> None:
    if refused_by_breaker(exc):  # the breaker logged the outage once when it opened
        return
    # The message of a driver error names the server, never credentials; no request data here.
    logger.warning(
        "Database unavailable while serving %s: %s: %s",
        getattr(request, "path", "?"),
        type(exc).__name__,
        str(exc).splitlines()[0] if str(exc) else "",
    )


class CircuitBreaker:
    """Whether the database is known to refuse connections, and when to try it again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.open_since: float | None = None
        self.next_probe = 0.0
        self.last_error = ""

    @property
    def is_open(self) -> bool:
        return self.open_since is not None

    def failed(self, exc: BaseException) -> None:
        with self._lock:
            now = time.monotonic()
            self.next_probe = now + probe_seconds()
            if self.open_since is not None:
                return
            self.open_since = now
            self.last_error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        logger.error(
            "Database unreachable (%s): refusing requests that need it with 503 and probing "
            "every %.2f s",
            self.last_error,
            probe_seconds(),
        )

    def succeeded(self) -> None:
        if self.open_since is None:
            return
        with self._lock:
            since, self.open_since = self.open_since, None
        if since is not None:
            logger.warning("Database reachable again after %.2f s", time.monotonic() - since)

    def may_try(self) -> bool:
        """False while open and before the next probe; True for the one caller that probes."""
        if self.open_since is None:
            return True
        with self._lock:
            now = time.monotonic()
            if now < self.next_probe:
                return False
            self.next_probe = now + probe_seconds()
            return True


_breakers: dict[tuple[Any, ...], CircuitBreaker] = {}
_breakers_lock = threading.Lock()


def breaker_for(params: dict[str, Any]) -> CircuitBreaker:
    """The breaker of one database server and database (connection parameters name it)."""
    target = (params.get("host"), params.get("port"), params.get("dbname"))
    found = _breakers.get(target)
    if found is None:
        with _breakers_lock:
            found = _breakers.setdefault(target, CircuitBreaker())
    return found


def probe_seconds() -> float:
    from django.conf import settings

    return float(getattr(settings, "DB_BREAKER_PROBE_SECONDS", 0.5))


def _circuit_open_error(breaker: CircuitBreaker) -> Exception:
    import psycopg

    class_ = _CIRCUIT_OPEN.get("class")
    if class_ is None:
        class_ = type("DatabaseCircuitOpen", (psycopg.OperationalError,), {})
        _CIRCUIT_OPEN["class"] = class_
    return class_(f"database unavailable (refused without trying: {breaker.last_error})")


_CIRCUIT_OPEN: dict[str, type] = {}


def refused_by_breaker(exc: BaseException) -> bool:
    cause = exc.__cause__
    return cause is not None and type(cause) is _CIRCUIT_OPEN.get("class")


def install_breaker() -> None:
    """Wrap PostgreSQL's connection opening (and the pool's) with the breaker. Called once from
    flashcards.apps; the wrapped methods keep their signatures."""
    try:
        import psycopg
        from django.db.backends.postgresql import base
    except ImportError:  # psycopg not installed: SQLite only
        return
    try:
        from psycopg_pool import PoolTimeout
    except ImportError:  # no pool installed: nothing raises it
        PoolTimeout = type("PoolTimeout", (Exception,), {})  # type: ignore[misc, assignment]
    wrapper = base.DatabaseWrapper
    if getattr(wrapper.get_new_connection, "breaker", False):
        return
    original = wrapper.get_new_connection
    _slow_down_pool_backoff()

    def get_new_connection(self: Any, conn_params: dict[str, Any]) -> Any:
        breaker = breaker_for(conn_params)
        if not breaker.may_try():
            raise _circuit_open_error(breaker)
        pool = self.pool
        if pool is not None:
            _watch_pool(pool, breaker)
            if breaker.is_open:
                _probe(conn_params, breaker)
        try:
            connection = original(self, conn_params)
        except PoolTimeout:
            # Every pooled connection busy: a full pool, not a database down (the pool's own
            # connection attempts tell the breaker about that).
            raise
        except psycopg.Error as exc:
            if type(exc) is not _CIRCUIT_OPEN.get("class"):
                breaker.failed(exc)
            raise
        breaker.succeeded()
        return connection

    get_new_connection.breaker = True  # type: ignore[attr-defined]
    wrapper.get_new_connection = get_new_connection


def _probe(conn_params: dict[str, Any], breaker: CircuitBreaker) -> None:
    """One direct connection, outside the pool (whose waiters would wait its timeout)."""
    import psycopg

    params = {
        key: value
        for key, value in conn_params.items()
        if key not in ("cursor_factory", "context", "prepare_threshold", "server_side_binding")
    }
    try:
        psycopg.connect(**params).close()
    except psycopg.Error as exc:
        breaker.failed(exc)
        raise
    breaker.succeeded()


def _watch_pool(pool: Any, breaker: CircuitBreaker) -> None:
    """The pool's own connections report to the breaker, and a request waiting for a pooled
    connection gives up as soon as the breaker opens instead of at the pool's timeout."""
    if getattr(pool, "_breaker_watched", False):
        return
    import psycopg
    from psycopg_pool import PoolTimeout

    base_class = pool.connection_class

    class BreakerConnection(base_class):  # type: ignore[misc, valid-type]
        @classmethod
        def connect(cls, *args: Any, **kwargs: Any) -> Any:
            try:
                connection = super().connect(*args, **kwargs)
            except psycopg.Error as exc:
                breaker.failed(exc)
                raise
            breaker.succeeded()
            return connection

    getconn = pool.getconn

    def sliced_getconn(timeout: float | None = None) -> Any:
        total = pool.timeout if timeout is None else timeout
        deadline = time.monotonic() + total
        while True:
            remaining = deadline - time.monotonic()
            try:
                return getconn(timeout=max(0.0, min(remaining, GETCONN_SLICE_SECONDS)))
            except PoolTimeout:
                if breaker.is_open:
                    raise _circuit_open_error(breaker) from None
                if time.monotonic() >= deadline:
                    raise PoolTimeout(f"couldn't get a connection after {total:.2f} sec") from None

    pool.connection_class = BreakerConnection
    pool.getconn = sliced_getconn
    pool._breaker_watched = True


GETCONN_SLICE_SECONDS = 0.05


def _slow_down_pool_backoff() -> None:
    """psycopg-pool retries a failed background connection after 1 s, then 2, 4, 8 … (up to its
    reconnect_timeout); a database back after 8 s would wait up to 8 s more for the pool. Its
    attempts are made at the breaker's probe interval instead, without backing off."""
    try:
        from psycopg_pool.base import AttemptWithBackoff
    except ImportError:
        return
    AttemptWithBackoff.INITIAL_DELAY = probe_seconds()
    AttemptWithBackoff.DELAY_BACKOFF = 1.0


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """DRF EXCEPTION_HANDLER: 503 for database availability errors, else the product's envelope."""
    if not is_database_unavailable(exc):
        return envelope.exception_handler(exc, context)
    request = context.get("request")
    _log(request, exc)
    return Response(
        unavailable_body(request, exc),
        status=503,
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


class DatabaseUnavailableMiddleware:
    """The 503 envelope for database errors escaping plain Django views under /v1/."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if not request.path.startswith(API_PREFIX) or not is_database_unavailable(exc):
            return None
        _log(request, exc)
        response = JsonResponse(
            unavailable_body(request, exc), status=503, json_dumps_params={"ensure_ascii": False}
        )
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
