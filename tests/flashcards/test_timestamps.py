"""The one clock and the one ISO-8601 parser (flashcards.services.timestamps)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from flashcards.services import timestamps
from flashcards.services.timestamps import parse_timestamp


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-03-05", datetime(2026, 3, 5, tzinfo=UTC)),
        (" 2026-03-05T10:00:00Z ", datetime(2026, 3, 5, 10, tzinfo=UTC)),
        ("2026-03-05 10:00", datetime(2026, 3, 5, 10, tzinfo=UTC)),
        ("2026-03-05T10:00:00.1234-05:00", datetime(2026, 3, 5, 15, 0, 0, 123400, tzinfo=UTC)),
        ("yesterday", None),
        ("0001-01-01T00:00:00+01:00", None),  # before year 1 in UTC
        (20260305, None),
        ("", None),
    ],
)
def test_one_parser_for_every_surface(text, expected):
    assert parse_timestamp(text) == expected


def test_an_offset_can_be_required():
    assert parse_timestamp("2026-03-05T10:00:00", require_offset=True) is None
    assert parse_timestamp("2026-03-05T10:00:00+00:00", require_offset=True) is not None


def test_the_clock_is_injected_not_slept_past(frozen_clock):
    first = timestamps.now_ms()
    frozen_clock.advance(timedelta(seconds=61))
    assert timestamps.now_ms() - first == timedelta(seconds=61)
    assert timestamps.epoch_seconds() == first.timestamp() + 61
