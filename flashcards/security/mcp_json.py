"""/mcp answers JSON-RPC whatever goes wrong, and never opens a stream: this server is stateless
with JSON responses (docs/mcp.md), so GET (the optional server-to-client event stream) is 405,
and an error the MCP SDK writes as plain text (a missing or wrong Content-Type, an Accept it
cannot satisfy) is rewritten as a JSON-RPC error with the same status. Any method but POST is 405
(``Allow: POST``); CORS preflights are answered before this (flashcards.http.cors)."""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

INVALID_REQUEST = -32600
SERVER_ERROR = -32000


def _error_body(status: int, message: str) -> bytes:
    code = INVALID_REQUEST if status < 500 and status != 405 else SERVER_ERROR
    return json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    ).encode()


async def _send_error(
    send: Send, status: int, message: str, headers: list[tuple[bytes, bytes]]
) -> None:
    body = _error_body(status, message)
    kept = [
        (k, v)
        for k, v in headers
        if k.lower() not in (b"content-type", b"content-length", b"transfer-encoding")
    ]
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *kept,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def json_rpc_errors(app: ASGIApp) -> ASGIApp:
    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        if scope["method"] != "POST":
            # Stateless: no event stream to open (GET), no session to end (DELETE).
            await _send_error(
                send,
                405,
                "This MCP server is stateless and answers each POST with JSON; it opens no "
                f"event stream and holds no session ({scope['method']}). Send JSON-RPC messages "
                "with POST.",
                [(b"allow", b"POST")],
            )
            return
        held: dict[str, Any] = {}

        async def send_json(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                content_type = dict((k.lower(), v) for k, v in headers).get(b"content-type", b"")
                if message["status"] >= 400 and not content_type.startswith(b"application/json"):
                    held.update(start=message, headers=headers, body=b"")
                    return
                await send(message)
                return
            if "start" in held:
                held["body"] += message.get("body", b"")
                if not message.get("more_body", False):
                    text = held["body"].decode("utf-8", errors="replace").strip()
                    await _send_error(
                        send,
                        held["start"]["status"],
                        text or "The request was refused.",
                        held["headers"],
                    )
                return
            await send(message)

        await app(scope, receive, send_json)

    return guarded
