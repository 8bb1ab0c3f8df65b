"""Every limit of file import and export in one object, overridable with the Django setting
``FLASHCARDS_IMPORTS`` (a dict of the names below), like the dialect's ``FLASHCARDS_DSL``."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

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
    # Seconds of SQLite work on one uploaded collection before the import is refused.
    max_collection_seconds: float = 300.0
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
