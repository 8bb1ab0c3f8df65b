"""A bounded open-loop load generator: requests are scheduled at a fixed rate whatever the
server's speed, and each latency is measured from its scheduled start (so a stalled server shows
up in the figures instead of silently slowing the load: no coordinated omission).

Worker threads each keep one persistent HTTP/1.1 connection to the loopback server."""

from __future__ import annotations

import http.client
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# A request: (label, method, path, headers, body) built fresh for each send.
Request = tuple[str, str, str, dict[str, str], bytes | None]


@dataclass
class Sample:
    label: str
    status: int
    latency: float  # from the scheduled start, seconds
    service: float  # from the actual send, seconds
    retry_after: str | None = None
    error: str | None = None
    body: Any = None


@dataclass
class LoadResult:
    samples: list[Sample] = field(default_factory=list)
    late: int = 0  # requests that started more than 100 ms after their slot


def _send(conn: http.client.HTTPConnection, request: Request) -> tuple[int, str | None, bytes]:
    _, method, path, headers, body = request
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    return response.status, response.getheader("Retry-After"), response.read()


def run_load(
    port: int,
    make_request: Callable[[int], Request],
    *,
    rate: float,
    seconds: float,
    workers: int = 16,
    keep_body: bool = False,
) -> LoadResult:
    """Send ``rate`` requests per second for ``seconds``; request ``n`` is ``make_request(n)``."""
    jobs: queue.Queue[tuple[float, Request] | None] = queue.Queue()
    result = LoadResult()
    lock = threading.Lock()

    def worker() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while (job := jobs.get()) is not None:
            scheduled, request = job
            started = time.monotonic()
            try:
                status, retry_after, raw = _send(conn, request)
                error = None
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                status, retry_after, raw, error = 0, None, b"", f"{type(exc).__name__}: {exc}"
            done = time.monotonic()
            sample = Sample(
                request[0], status, done - scheduled, done - started, retry_after, error,
                raw if keep_body else None,
            )  # fmt: skip
            with lock:
                result.samples.append(sample)
                if started - scheduled > 0.1:
                    result.late += 1
        conn.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(workers)]
    for thread in threads:
        thread.start()
    begin = time.monotonic()
    total = int(rate * seconds)
    for n in range(total):
        slot = begin + n / rate
        delay = slot - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        jobs.put((slot, make_request(n)))
    for _ in threads:
        jobs.put(None)
    for thread in threads:
        thread.join(timeout=120)
    return result


def burst(
    port: int, make_request: Callable[[int], Request], *, count: int, workers: int = 16
) -> LoadResult:
    """``count`` requests as fast as ``workers`` connections allow."""
    return run_load(
        port, make_request, rate=10_000, seconds=count / 10_000, workers=workers, keep_body=True
    )
