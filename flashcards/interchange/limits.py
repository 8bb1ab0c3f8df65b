"""Every limit of file import and export in one object, overridable with the Django setting
``FLASHCARDS_IMPORTS`` (a dict of the names below), like the dialect's ``FLASHCARDS_DSL``."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields, replace
from typing import TypeVar

from django.conf import settings

MIB = 1024 * 1024


@dataclass(frozen=True)
class ImportLimits:
    # The upload itself: its own limit, apart from the API's 256 KiB body limit.
    max_upload_bytes: int = 50 * MIB
    # An Anki collection once unzipped (and un-zstd'ed): refused above this before unpacking.
    max_collection_bytes: int = 512 * MIB
    # The package's media map (names only; media files themselves are never unpacked).
    max_media_map_bytes: int = 32 * MIB
    max_archive_members: int = 200_000
    # Uncompressed / compressed size of one member above 1 MiB; real collections stay far below.
    max_compression_ratio: int = 100
    # Seconds of reading one upload (SQLite work on a collection, parsing CSV rows; not the
    # writes) before the import is refused as import_too_slow: one budget for every format.
    max_import_seconds: float = 20.0
    # The largest value SQLite may produce while reading a collection (SQLITE_LIMIT_LENGTH): a
    # note's fields, a note type's JSON. A card's text is at most 20,000 characters.
    max_collection_value_bytes: int = 4 * MIB
    # Entries of a package's media map; real ones hold one per media file.
    max_media_entries: int = 100_000
    # Columns of a CSV/TSV header (the dialect has a dozen), and the header problems reported.
    max_csv_columns: int = 64
    max_header_problems: int = 20
    # Line-by-line entries kept in a report; counts are always complete.
    max_report_items: int = 500
    # Names kept in the report's media list; the count is always complete.
    max_report_media: int = 1000
    # Rows per write batch: bounds memory and statement size, not correctness.
    batch_size: int = 1000
    # Rows of one MCP export page.
    max_export_page: int = 1000


def import_limits() -> ImportLimits:
    overrides = getattr(settings, "FLASHCARDS_IMPORTS", None) or {}
    known = {f.name for f in fields(ImportLimits)}
    unknown = set(overrides) - known
    if unknown:
        raise ValueError(f"Unknown FLASHCARDS_IMPORTS key(s): {', '.join(sorted(unknown))}")
    return replace(ImportLimits(), **overrides)


T = TypeVar("T")


class ImportBudget:
    """The seconds an import may spend reading its upload. Only time inside the reader counts
    (``reading`` pauses the clock while the writing service works on a batch), so a large file
    that writes slowly is not refused, and a crafted one that makes SQLite or the CSV parser
    spin is refused within seconds."""

    def __init__(self, seconds: float, filename: str | None = None) -> None:
        self.seconds = seconds
        self.filename = filename
        self.spent = 0.0
        self._since: float | None = None

    def resume(self) -> None:
        if self._since is None:
            self._since = time.monotonic()

    def pause(self) -> None:
        if self._since is not None:
            self.spent += time.monotonic() - self._since
            self._since = None

    def exceeded(self) -> bool:
        running = time.monotonic() - self._since if self._since is not None else 0.0
        return self.spent + running > self.seconds

    def refusal(self) -> Exception:
        from flashcards.interchange.errors import ImportRejected

        return ImportRejected(
            f"reading the file took longer than the import time limit ({self.seconds:g} s); "
            "split it into smaller files.",
            reason="import_too_slow",
            file=self.filename,
        )

    def check(self) -> None:
        if self.exceeded():
            raise self.refusal()

    def reading(self, items: Iterable[T]) -> Iterator[T]:
        """``items``, with the clock running only while the next one is produced."""
        iterator = iter(items)
        while True:
            self.resume()
            try:
                item = next(iterator)
            except StopIteration:
                return
            finally:
                self.pause()
            yield item
