"""The id of each request: made here, or taken from a configured trusted proxy's header, and kept
in a context variable so that every log line written while the request runs carries it.

- ``TRUSTED_PROXY_IPS`` (addresses or networks, default none) lists the peers whose
  ``REQUEST_ID_HEADER`` (default ``X-Request-Id``) is kept as the request's id, so one id follows a
  request from the proxy's log through the envelope, the response header, the query log and this
  server's log. From any other peer the header is ignored: a client must not be able to choose the
  id under which its request is logged. A kept id is 1-64 characters of ``A-Z a-z 0-9 . _ : -``.
- The peer is the address that opened the connection. Behind uvicorn's proxy-header handling that
  address is replaced by the forwarded client's, so ``config.asgi`` records it first
  (``remember_peer``) and handles the forwarded headers itself (``manage.py serve`` turns
  uvicorn's own handling off).
- ``RequestIdFilter`` (config/settings.py LOGGING) puts ``request_id`` on every record: the
  current request's id, or ``-`` outside a request.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.core.signals import request_finished

PEER_SCOPE_KEY = "flashcards.peer"
_VALID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_current: ContextVar[str | None] = ContextVar("flashcards_request_id", default=None)


def current_request_id() -> str | None:
    return _current.get()


@contextmanager
def request_id_context(request_id: str) -> Iterator[None]:
    """Log lines written inside carry ``request_id``."""
    token = _current.set(request_id)
    try:
        yield
    finally:
        _current.reset(token)


def enter_request(request_id: str) -> None:
    """The id of the request this thread now serves, until ``request_finished`` (after Django's
    own log line of the response's status)."""
    _current.set(request_id)


def _leave_request(sender: Any, **kwargs: Any) -> None:
    _current.set(None)


request_finished.connect(_leave_request, dispatch_uid="flashcards.request_id.leave")


class RequestIdFilter(logging.Filter):
    """Adds ``record.request_id``: the running request's id, or ``-``."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = _current.get() or "-"
        return True


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple(ipaddress.ip_network(entry, strict=False) for entry in entries)


def _is_trusted(peer: str | None) -> bool:
    entries = tuple(getattr(settings, "TRUSTED_PROXY_IPS", ()) or ())
    if not peer or not entries:
        return False
    try:
        address = ipaddress.ip_address(peer)
    except ValueError:
        return False
    return any(address in network for network in _networks(entries))


def _peer(request: Any) -> str | None:
    """The address that opened the connection: recorded by ``remember_peer`` under ASGI, the
    WSGI server's REMOTE_ADDR otherwise."""
    scope = getattr(request, "scope", None) or request.META.get("asgi.scope")  # ASGI / a2wsgi
    if isinstance(scope, dict) and PEER_SCOPE_KEY in scope:
        return scope[PEER_SCOPE_KEY]
    return request.META.get("REMOTE_ADDR")


def request_id_for(request: Any) -> str:
    """The trusted proxy's id for this request, else a new one."""
    header = getattr(settings, "REQUEST_ID_HEADER", "X-Request-Id")
    inbound = request.headers.get(header)
    if inbound and _VALID.fullmatch(inbound) and _is_trusted(_peer(request)):
        return inbound
    return str(uuid.uuid4())


def remember_peer(app: Any) -> Any:
    """ASGI wrapper: the connection's own peer address, kept in the scope before anything
    replaces ``client`` with a forwarded address."""

    async def wrapped(scope: dict, receive: Any, send: Any) -> None:
        if scope.get("type") == "http" and PEER_SCOPE_KEY not in scope:
            client = scope.get("client")
            scope = {**scope, PEER_SCOPE_KEY: client[0] if client else None}
        await app(scope, receive, send)

    return wrapped
