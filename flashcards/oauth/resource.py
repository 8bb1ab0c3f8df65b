"""The protected resource's identity: its URL (the RFC 8707 audience of every token issued here)
and the URL of its RFC 9728 metadata, both on the host the request came in on."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.http import HttpRequest

from flashcards.api.discovery import MCP_PATH

METADATA_PATH = "/.well-known/oauth-protected-resource"


def mcp_resource_url(request: HttpRequest) -> str:
    return request.build_absolute_uri(MCP_PATH)


def resource_metadata_url(request: HttpRequest) -> str:
    """The path form (RFC 9728 §3.1): the well-known prefix, then the resource's path."""
    return request.build_absolute_uri(METADATA_PATH + MCP_PATH)


def is_this_resource(request: HttpRequest, resource: str) -> bool:
    """Whether a client's `resource` parameter names this server's /mcp (scheme and host case,
    a default port and one trailing slash aside)."""
    return _canonical(resource) == _canonical(mcp_resource_url(request))


def _canonical(url: str) -> tuple[str, str, int | None, str] | None:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.query or parts.fragment or parts.username or parts.password or not parts.hostname:
        return None
    scheme = parts.scheme.lower()
    if port is None:
        port = {"http": 80, "https": 443}.get(scheme)
    return scheme, parts.hostname.lower(), port, parts.path.rstrip("/") or "/"
