"""Waiting for a condition instead of sleeping a fixed time: poll until it holds or a bound passes."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T], *, timeout: float = 5.0, interval: float = 0.02, what: str = ""
) -> T:
    """Call ``condition`` until it returns a truthy value (returned) or ``timeout`` seconds pass
    (AssertionError naming ``what``)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"gave up after {timeout} s waiting for {what or condition}")
        time.sleep(interval)
