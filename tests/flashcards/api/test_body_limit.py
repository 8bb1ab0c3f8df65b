"""The 256 KiB body limit (dsl.md §1) for bodies sent without Content-Length.

A `Transfer-Encoding: chunked` request reaches Django through ASGI with no content-length header.
Django's ASGI handler buffers the body, but DRF's Request takes a missing CONTENT_LENGTH for an
empty body, so before the middleware read such bodies a valid chunked POST was answered "the body
needs sql", and a chunked body was never held to the limit. These tests send real chunked bodies:
through Django's ASGI handler with the body split over several `http.request` messages (what
uvicorn does with a chunked body), and over real HTTP against uvicorn."""

from __future__ import annotations

import asyncio
import http.client
import json
from collections.abc import Iterator
from contextlib import contextmanager
from io import BytesIO
from typing import Any
from urllib.parse import urlsplit

import pytest
from asgiref.sync import async_to_sync
from django.core.handlers.asgi import ASGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory

from dsl.models import QueryLog
from flashcards.http.middleware import MAX_BODY_BYTES, RequestIdMiddleware
from flashcards.models import Workspace
from tests.factories import make_card
from tests.flashcards.api.helpers import assert_envelope_error, assert_envelope_ok

SQL_URL = "/v1/agent/sql"


class AsgiResponse:
    """What the handler sent, with the accessors the envelope helpers use."""

    def __init__(self, status_code: int, headers: dict[str, str], content: bytes) -> None:
        self.status_code = status_code
        self.headers = headers
        self.content = content

    def json(self) -> Any:
        return json.loads(self.content)

    def __getitem__(self, name: str) -> str:
        return self.headers[name.lower()]


@contextmanager
def keep_test_connection() -> Iterator[None]:
    """Django's ASGI handler closes old connections when a request starts and finishes; inside a
    test's transaction that would break it. Django's own test client detaches the same hook."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def asgi_chunked(key: str, path: str, chunks: list[bytes], method: str = "POST") -> AsgiResponse:
    """One request through Django's ASGI handler (the whole middleware stack and URLconf), its body
    delivered in `chunks` with no content-length header, as uvicorn delivers a chunked body."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"testserver"),
            (b"authorization", f"ApiKey {key}".encode()),
            (b"content-type", b"application/json"),
            (b"transfer-encoding", b"chunked"),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    messages = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks or [b""])
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        await asyncio.Future()  # the client stays connected until the response is sent
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    with keep_test_connection():
        async_to_sync(ASGIHandler())(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    content = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return AsgiResponse(start["status"], headers, content)


def split(payload: bytes, size: int = 1000) -> list[bytes]:
    return [payload[i : i + size] for i in range(0, len(payload), size)]


def sql_payload(sql: str, pad: int = 0) -> bytes:
    body: dict[str, Any] = {"sql": sql}
    if pad:
        body["pad"] = "x" * pad
    return json.dumps(body).encode()


def payload_of_exactly(size: int) -> bytes:
    """A JSON body of exactly `size` bytes (a comment-padded SELECT)."""
    prefix = '{"sql": "SELECT * FROM cards -- '
    payload = (prefix + "x" * (size - len(prefix) - 2) + '"}').encode()
    assert len(payload) == size
    return payload


# Through Django's ASGI handler ------------------------------------------------------------------


def test_a_chunked_select_runs(api_key, workspace):
    make_card(workspace, front_text="chunked")
    payload = sql_payload("SELECT front_text FROM cards")
    response = asgi_chunked(api_key.plaintext, SQL_URL, split(payload, 7))
    data = assert_envelope_ok(response)
    assert data["rows"] == [{"front_text": "chunked"}]


def test_a_chunked_write_to_another_view_is_parsed(api_key):
    """Not only the SQL view: every DRF view sees the chunked body."""
    payload = json.dumps({"name": "Chunked"}).encode()
    response = asgi_chunked(api_key.plaintext, "/v1/agent/workspaces", split(payload, 5))
    data = assert_envelope_ok(response)
    assert Workspace.objects.get(pk=data["workspace"]["workspace_id"]).name == "Chunked"


def test_a_chunked_body_over_256_kib_is_413(api_key):
    before = QueryLog.objects.count()
    payload = sql_payload("SHOW TABLES", pad=300 * 1024)
    response = asgi_chunked(api_key.plaintext, SQL_URL, split(payload, 64 * 1024))
    error = assert_envelope_error(response, 413, "REQUEST_TOO_LARGE")
    # Reading stopped one byte past the limit: the real size is unknown, and said so.
    assert error["details"] == {"limitBytes": MAX_BODY_BYTES, "receivedBytes": None}
    assert f"more than {MAX_BODY_BYTES} bytes" in error["message"]
    # The refusal still gets its query-log row (the request_refused signal).
    assert QueryLog.objects.count() == before + 1
    row = QueryLog.objects.latest("pk")
    assert row.outcome == "REQUEST_TOO_LARGE"
    assert row.request_id == response.json()["requestId"]


def test_a_chunked_body_one_byte_over_is_413(api_key):
    payload = payload_of_exactly(MAX_BODY_BYTES + 1)
    response = asgi_chunked(api_key.plaintext, SQL_URL, split(payload, 4096))
    assert_envelope_error(response, 413, "REQUEST_TOO_LARGE")


def test_a_chunked_body_of_exactly_256_kib_is_not_too_large(api_key):
    payload = payload_of_exactly(MAX_BODY_BYTES)
    response = asgi_chunked(api_key.plaintext, SQL_URL, split(payload, 4096))
    # Read and parsed: the sql itself is over 65,536 bytes, a 400 from the dialect, not a 413.
    error = assert_envelope_error(response, 400, "QUERY_INVALID_SQL")
    assert error["details"]["reason"] == "too_long"


def test_an_empty_chunked_body_is_still_a_bad_body(api_key):
    response = asgi_chunked(api_key.plaintext, SQL_URL, [])
    assert_envelope_error(response, 400, "REQUEST_INVALID")


def test_a_chunked_body_on_a_get_is_not_read(api_key):
    """A GET's body is never parsed, so its size does not matter and it is not read."""
    response = asgi_chunked(api_key.plaintext, "/v1/agent/me", [b"x" * (300 * 1024)], method="GET")
    assert_envelope_ok(response)


# Requests with Content-Length keep today's behaviour ---------------------------------------------


def test_a_declared_body_is_left_in_the_stream_for_the_view():
    """With Content-Length the middleware decides from the header alone and reads nothing."""
    payload = sql_payload("SHOW TABLES")
    stream = BytesIO(payload)
    request = RequestFactory().generic(
        "POST", SQL_URL, payload, content_type="application/json", **{"wsgi.input": stream}
    )
    seen: dict[str, Any] = {}

    def view(request: HttpRequest) -> HttpResponse:
        seen["position"] = stream.tell()
        seen["body"] = request.body
        return HttpResponse()

    RequestIdMiddleware(view)(request)
    assert seen == {"position": 0, "body": payload}


def test_a_declared_body_over_256_kib_reports_its_size(api):
    payload = sql_payload("SHOW TABLES", pad=257 * 1024)
    response = api.generic("POST", SQL_URL, payload, content_type="application/json")
    error = assert_envelope_error(response, 413, "REQUEST_TOO_LARGE")
    assert error["details"] == {"limitBytes": MAX_BODY_BYTES, "receivedBytes": len(payload)}
    assert f"is {len(payload)} bytes" in error["message"]


def test_a_declared_body_within_the_limit_runs(api):
    response = api.post(SQL_URL, {"sql": "SHOW TABLES"}, format="json")
    assert assert_envelope_ok(response)["statementType"] == "show_tables"


# Over real HTTP against uvicorn ------------------------------------------------------------------


def post_chunked(base_url: str, key: str, path: str, chunks: list[bytes]) -> tuple[int, Any]:
    """A POST whose body http.client sends with `Transfer-Encoding: chunked` (no Content-Length)."""
    url = urlsplit(base_url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        connection.request(
            "POST",
            path,
            body=iter(chunks),
            headers={"Authorization": f"ApiKey {key}", "Content-Type": "application/json"},
            encode_chunked=True,
        )
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


@pytest.mark.slow
def test_chunked_bodies_over_http(live_server_url, api_key, workspace):
    make_card(workspace, front_text="over the wire")
    payload = sql_payload("SELECT front_text FROM cards")
    status, body = post_chunked(live_server_url, api_key.plaintext, SQL_URL, split(payload, 9))
    assert status == 200, body
    assert body["data"]["rows"] == [{"front_text": "over the wire"}]

    payload = sql_payload("SHOW TABLES", pad=300 * 1024)
    status, body = post_chunked(
        live_server_url, api_key.plaintext, SQL_URL, split(payload, 64 * 1024)
    )
    assert status == 413, body
    assert body["error"]["code"] == "REQUEST_TOO_LARGE"
    assert body["error"]["details"] == {"limitBytes": MAX_BODY_BYTES, "receivedBytes": None}


# The rest of an oversized upload is never received (config.asgi, flashcards.http.body_limit) ----


def raw_exchange(base_url: str, head: bytes, body_parts: list[bytes]) -> tuple[int, dict]:
    """Send a request head and only ``body_parts`` of its body over a socket, then read the
    response without sending more. A server that waits for the whole declared or chunked body
    never answers, and the socket times out."""
    import socket

    parts = urlsplit(base_url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(head)
        for part in body_parts:
            sock.sendall(part)
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = sock.recv(65536)
            assert chunk, "the server closed the connection without a response"
            received += chunk
        header_block, _, rest = received.partition(b"\r\n\r\n")
        lines = header_block.decode("latin1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        if "content-length" in headers:
            length = int(headers["content-length"])
            while len(rest) < length:
                rest += sock.recv(65536)
            return status, json.loads(rest[:length])
        assert headers.get("transfer-encoding") == "chunked", headers
        while not rest.endswith(b"0\r\n\r\n"):
            rest += sock.recv(65536)
        content = b""
        while True:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line, 16)
            if size == 0:
                return status, json.loads(content)
            content, rest = content + rest[:size], rest[size + 2 :]


def request_head(key: str, extra: str, method: str = "POST", path: str = SQL_URL) -> bytes:
    return (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ApiKey {key}\r\n"
        f"Content-Type: application/json\r\n{extra}\r\n"
    ).encode()


@pytest.mark.slow
def test_a_declared_huge_body_is_refused_before_it_is_sent(live_server_url, api_key):
    declared = 1024**3  # 1 GiB announced, 1 KiB sent
    head = request_head(api_key.plaintext, f"Content-Length: {declared}\r\n")
    status, body = raw_exchange(live_server_url, head, [b'{"sql": "' + b"x" * 1024])
    assert status == 413, body
    assert body["error"]["code"] == "REQUEST_TOO_LARGE"
    assert body["error"]["details"] == {"limitBytes": MAX_BODY_BYTES, "receivedBytes": declared}


@pytest.mark.slow
def test_a_chunked_upload_is_refused_once_past_the_limit(live_server_url, api_key):
    head = request_head(api_key.plaintext, "Transfer-Encoding: chunked\r\n")
    chunk = b"x" * (64 * 1024)
    framed = b"%x\r\n%s\r\n" % (len(chunk), chunk)
    # 320 KiB sent and the upload left open (no final 0-length chunk).
    status, body = raw_exchange(live_server_url, head, [framed] * 5)
    assert status == 413, body
    assert body["error"]["details"] == {"limitBytes": MAX_BODY_BYTES, "receivedBytes": None}


@pytest.mark.slow
def test_bodies_within_the_limit_still_arrive_whole_over_http(live_server_url, api_key):
    """A body of exactly 256 KiB reaches the view whole, declared or chunked: its sql is read to
    the end and refused for its own length (a SQL error, not REQUEST_TOO_LARGE)."""
    payload = payload_of_exactly(MAX_BODY_BYTES)
    head = request_head(api_key.plaintext, f"Content-Length: {len(payload)}\r\n")
    declared_status, declared = raw_exchange(live_server_url, head, [payload])
    chunked_status, chunked = post_chunked(
        live_server_url, api_key.plaintext, SQL_URL, split(payload, 64 * 1024)
    )
    for status, body in ((declared_status, declared), (chunked_status, chunked)):
        assert status == 400, body
        assert body["error"]["details"]["reason"] == "too_long", body


@pytest.mark.slow
def test_a_get_with_a_huge_body_is_answered_without_receiving_it(live_server_url, api_key):
    """A GET's body is never read by a view, but Django's ASGI handler would still receive all of
    it before answering: a declared oversize is the 413 at once, an open chunked upload is cut
    at the limit and the route answers as usual."""
    declared = 1024**3
    head = request_head(api_key.plaintext, f"Content-Length: {declared}\r\n", "GET", "/v1/")
    status, body = raw_exchange(live_server_url, head, [b"x" * 1024])
    assert status == 413, body
    assert body["error"]["details"] == {"limitBytes": MAX_BODY_BYTES, "receivedBytes": declared}

    head = request_head(api_key.plaintext, "Transfer-Encoding: chunked\r\n", "GET", "/v1/")
    chunk = b"x" * (64 * 1024)
    framed = b"%x\r\n%s\r\n" % (len(chunk), chunk)
    status, body = raw_exchange(live_server_url, head, [framed] * 5)
    assert status == 200, body
    assert body["ok"] is True


# A client that leaves before its body is whole ----------------------------------------------------


def _through_the_limit(headers: list[tuple[bytes, bytes]], messages: list[dict[str, Any]]):
    """Run ``limit_api_bodies`` around a recording application; what it saw and what was sent."""
    from flashcards.http.body_limit import limit_api_bodies

    seen: dict[str, Any] = {"called": False}

    async def inner(scope, receive, send) -> None:
        seen["called"] = True
        seen["body"] = b""
        while True:
            message = await receive()
            seen["body"] += message.get("body", b"")
            if not message.get("more_body", False):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": SQL_URL, "headers": headers}
    asyncio.run(limit_api_bodies(inner)(scope, receive, send))
    return seen, sent


@pytest.mark.parametrize(
    "headers",
    [[(b"content-length", b"40")], [(b"transfer-encoding", b"chunked")]],
    ids=["declared", "chunked"],
)
def test_a_client_that_disconnects_before_its_body_ends_gets_nothing_run(headers):
    part = {"type": "http.request", "body": b'{"sql": "DELETE FROM ca', "more_body": True}
    for messages in ([{"type": "http.disconnect"}], [part, {"type": "http.disconnect"}]):
        seen, sent = _through_the_limit(headers, list(messages))
        assert seen == {"called": False} and sent == []


def test_a_body_in_several_messages_reaches_the_application_whole():
    body = b'{"sql": "SELECT * FROM cards LIMIT 1"}'
    messages = [
        {"type": "http.request", "body": body[:10], "more_body": True},
        {"type": "http.request", "body": body[10:], "more_body": False},
    ]
    seen, sent = _through_the_limit([(b"content-length", str(len(body)).encode())], messages)
    assert seen == {"called": True, "body": body}
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
