"""Forwarded headers only from the proxies in FORWARDED_ALLOW_IPS: uvicorn's middleware applies
them for those peers, and from any other peer they are removed before anything reads them —
Django's ``SECURE_PROXY_SSL_HEADER`` reads X-Forwarded-Proto from the request, so a direct client
would otherwise choose the scheme (the token audience, the HTTPS redirect)."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

FORWARDED = (b"x-forwarded-proto", b"x-forwarded-for", b"x-forwarded-host", b"forwarded")


class TrustedProxyHeadersMiddleware(ProxyHeadersMiddleware):
    def __init__(self, app: ASGIApp, trusted_hosts: list[str] | str = "127.0.0.1") -> None:
        super().__init__(app, trusted_hosts=trusted_hosts)  # type: ignore[arg-type]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:  # type: ignore[override]
        if scope["type"] in ("http", "websocket"):
            client = scope.get("client")
            host = client[0] if client else None
            if host is None or host not in self.trusted_hosts:
                scope = {
                    **scope,
                    "headers": [(k, v) for k, v in scope["headers"] if k.lower() not in FORWARDED],
                }
        await super().__call__(scope, receive, send)  # type: ignore[arg-type]
