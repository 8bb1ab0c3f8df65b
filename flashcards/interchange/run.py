"""One entry point per direction for every surface: ``import_file`` (format detection, limits,
temporary folder, reader, the writing service, the report, the log line) and ``export_text`` /
``export_page`` (streamed CSV/TSV of cards or review events), ``export_package`` (.apkg)."""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from collections.abc import Iterator
from typing import IO, Any

from django.db import transaction

from flashcards.interchange import anki, apkg, delimited
from flashcards.interchange.archive import PackageArchive
from flashcards.interchange.errors import ImportRejected
from flashcards.interchange.limits import ImportBudget, ImportLimits, import_limits
from flashcards.models import Card, ReviewEvent, Workspace
from flashcards.rows import CARD_COLUMNS, REVIEW_EVENT_COLUMNS, card_row, review_event_row
from flashcards.services.imports import ImportTally, import_cards
from flashcards.services.scheduling import update_scheduler_settings

logger = logging.getLogger("flashcards.imports")

FORMATS = ("apkg", "colpkg", "csv", "tsv")
EXPORTS = {"cards": CARD_COLUMNS, "review_events": REVIEW_EVENT_COLUMNS}
EXPORT_FORMATS = ("csv", "tsv")


def detect_format(filename: str, requested: str | None) -> str:
    if requested:
        fmt = requested.strip().lower().lstrip(".")
        if fmt not in FORMATS:
            raise ImportRejected(
                f"format {requested!r} is not one of {', '.join(FORMATS)}.",
                reason="unknown_format",
                file=filename,
            )
        return fmt
    ext = os.path.splitext(filename)[1].lower().lstrip(".")
    if ext == "txt":
        ext = "tsv"  # Anki's own "Notes in plain text" export
    if ext not in FORMATS:
        raise ImportRejected(
            f"the format cannot be told from the file name; name the file *.apkg, *.colpkg, "
            f"*.csv or *.tsv, or pass format = one of {', '.join(FORMATS)}.",
            reason="unknown_format",
            file=filename,
        )
    return ext


def _size(fileobj: IO[bytes]) -> int:
    fileobj.seek(0, os.SEEK_END)
    size = fileobj.tell()
    fileobj.seek(0)
    return size


def _anki_section(stats: anki.AnkiStats) -> dict[str, Any]:
    return {
        "packageVersion": stats.package_version,
        "schemaVersion": stats.schema_version,
        "collection": stats.collection_member,
        "notes": stats.notes,
        "ankiCards": stats.anki_cards,
        "noteTypes": stats.note_types,
        "reviewLog": {"entries": stats.review_log_entries, "skipped": stats.review_log_skipped},
        "emptyClozeCards": stats.empty_cloze_cards,
        "notGenerated": stats.not_generated,
        "imageOcclusion": stats.image_occlusion,
        "suspended": stats.suspended,
        "buried": stats.buried,
    }


def _schedule_section(
    collection: anki.AnkiCollection, tally: ImportTally, proposed: dict[str, Any] | None
) -> dict[str, Any]:
    stats = collection.stats
    used = [p for p in collection.presets.values() if p.cards]
    return {
        "fromAnki": stats.schedules_from_anki,
        "replayed": stats.schedules_to_replay,
        "taken": tally.schedules_taken,
        "rebuilt": tally.schedules_rebuilt,
        "presets": [p.report() for p in sorted(used, key=lambda p: -p.cards)],
        "proposedSettings": proposed,
        "settingsApplied": bool(proposed) and not tally.rolled_back,
        "dayStartsAtHour": collection.day.rollover,
        "timeZone": str(collection.day.zone),
    }


def single_preset_settings(collection: anki.AnkiCollection) -> dict[str, Any] | None:
    """The settings proposed by the one FSRS preset every scheduled card uses; None when
    no card carries a memory state or they use several presets."""
    used = [p for p in collection.presets.values() if p.cards]
    if len(used) != 1:
        return None
    return used[0].settings() or None


def _media_section(stats: anki.AnkiStats, names: set[str]) -> dict[str, Any]:
    referenced = list(stats.media_referenced)
    return {
        "referenced": referenced,
        "referencedCount": stats.media_referenced_count,
        "referencedOmitted": stats.media_referenced_count - len(referenced),
        "inPackage": stats.media_in_package,
        "missing": [name for name in referenced if name not in names],
        "stored": False,
    }


def _report(
    filename: str, fmt: str, dry_run: bool, tally: ImportTally, extra: dict[str, Any]
) -> dict[str, Any]:
    return {
        "file": filename,
        "format": fmt,
        "dryRun": dry_run,
        "written": not tally.rolled_back,
        "cards": {
            "created": tally.created,
            "updated": tally.updated,
            "unchanged": tally.unchanged,
            "skipped": tally.skipped,
            "rejected": tally.rejected,
        },
        "reviewEvents": {
            "created": tally.review_events_created,
            "alreadyPresent": tally.review_events_existing,
        },
        "schedulesRebuilt": tally.schedules_rebuilt,
        "changes": tally.changes if not tally.rolled_back else 0,
        "problems": tally.problems,
        "skippedRows": tally.skipped_rows,
        "edits": tally.edits,
        "items": tally.items,
        "itemsOmitted": tally.items_omitted,
        **extra,
    }


def import_file(
    workspace: Workspace,
    fileobj: IO[bytes],
    filename: str,
    *,
    format: str | None = None,
    dry_run: bool = False,
    field_mapping: dict[str, list[str]] | None = None,
    surface: str = "rest",
    limits: ImportLimits | None = None,
    raw: bool = False,
) -> dict[str, Any]:
    """Import one file into ``workspace``, all or nothing; returns the report. Raises
    ImportRejected (nothing written) for a file that cannot be read or a row that breaks a rule."""
    limits = limits or import_limits()
    filename = os.path.basename(filename or "upload") or "upload"
    started = time.perf_counter()
    try:
        fmt = detect_format(filename, format)
        size = _size(fileobj)
        if size > limits.max_upload_bytes:
            raise ImportRejected(
                f"is {size} bytes; the import limit is {limits.max_upload_bytes} bytes.",
                reason="file_too_large",
                file=filename,
            )
        if fmt in ("csv", "tsv"):
            info: dict[str, Any] = {}
            budget = ImportBudget(limits.max_import_seconds, filename)
            batches = delimited.drafts(
                fileobj,
                filename,
                fmt,
                limits.batch_size,
                info,
                limits=limits,
                budget=budget,
                raw=raw,
            )
            tally = import_cards(
                workspace,
                budget.reading(batches),
                dry_run=dry_run,
                report_limit=limits.max_report_items,
            )
            extra: dict[str, Any] = {
                "csv": {
                    "columns": info.get("columns", []),
                    "ignoredColumns": info.get("ignored_columns", []),
                }
            }
        else:
            tally, extra = _import_anki(
                workspace, fileobj, filename, dry_run, field_mapping, limits
            )
        report = _report(filename, fmt, dry_run, tally, extra)
    except ImportRejected as exc:
        logger.warning(
            "import refused: workspace=%s surface=%s file=%r reason=%s message=%s",
            workspace.pk,
            surface,
            filename,
            exc.reason,
            exc.message,
        )
        raise
    if tally.rejected and not dry_run:
        first = tally.problems[0]["message"] if tally.problems else ""
        logger.warning(
            "import refused: workspace=%s surface=%s file=%r reason=invalid_rows rejected=%d",
            workspace.pk,
            surface,
            filename,
            tally.rejected,
        )
        raise ImportRejected(
            f"{tally.rejected} row(s) break a rule, so nothing was imported. First: {first} "
            "Fix them (a dry run lists every one) and import again.",
            reason="invalid_rows",
            file=filename,
            problems=tally.problems,
            report=report,
        )
    logger.info(
        "import %s: workspace=%s surface=%s file=%r format=%s created=%d updated=%d "
        "unchanged=%d skipped=%d rejected=%d review_events=%d seconds=%.2f",
        "previewed" if dry_run else "done",
        workspace.pk,
        surface,
        filename,
        fmt,
        tally.created,
        tally.updated,
        tally.unchanged,
        tally.skipped,
        tally.rejected,
        tally.review_events_created,
        time.perf_counter() - started,
    )
    return report


def _import_anki(
    workspace: Workspace,
    fileobj: IO[bytes],
    filename: str,
    dry_run: bool,
    field_mapping: dict[str, list[str]] | None,
    limits: ImportLimits,
) -> tuple[ImportTally, dict[str, Any]]:
    stats = anki.AnkiStats()
    budget = ImportBudget(limits.max_import_seconds, filename)
    archive = PackageArchive(fileobj, filename, limits)
    with tempfile.TemporaryDirectory(prefix="flashcards-import-") as tmpdir:
        budget.resume()
        try:
            collection, media = anki.open_package(archive, tmpdir, limits, stats, budget)
        finally:
            budget.pause()
        try:
            batches = anki.drafts(
                collection,
                workspace.pk,
                mapping=field_mapping,
                batch_size=limits.batch_size,
                media_limit=limits.max_report_media,
            )
            with transaction.atomic():
                tally = import_cards(
                    workspace,
                    budget.reading(batches),
                    dry_run=dry_run,
                    report_limit=limits.max_report_items,
                )
                proposed = single_preset_settings(collection)
                if proposed and not tally.rolled_back:
                    update_scheduler_settings(workspace, proposed)
            schedules = _schedule_section(collection, tally, proposed)
        finally:
            collection.close()
    return tally, {
        "anki": _anki_section(stats),
        "schedules": schedules,
        "media": _media_section(stats, media),
    }


# ---------------------------------------------------------------- export


def _rows(
    workspace: Workspace, what: str, start: int = 0, stop: int | None = None
) -> Iterator[dict[str, Any]]:
    if what == "cards":
        cards = Card.objects.filter(workspace=workspace, deleted_at__isnull=True).order_by(
            "created_at", "id"
        )[start:stop]
        return (card_row(c) for c in cards.iterator(chunk_size=1000))
    events = ReviewEvent.objects.filter(workspace=workspace).order_by("sequence")[start:stop]
    return (review_event_row(e) for e in events.iterator(chunk_size=1000))


def export_package(workspace: Workspace) -> Iterator[bytes]:
    """The workspace's live cards, their review history and FSRS state as an Anki .apkg
    (schema 11), in chunks spooled through a temporary file."""
    return apkg.package_chunks(workspace)


def export_text(workspace: Workspace, what: str, fmt: str, raw: bool = False) -> Iterator[str]:
    """The whole export, a line at a time: cards oldest first (so an import replays tag
    spellings in their original order), review events in review sequence order. Formula cells
    are escaped unless ``raw`` (delimited.escape_formula)."""
    return delimited.rows_as_text(EXPORTS[what], _rows(workspace, what), fmt, raw)


# An export page's offset: any row count a workspace can hold, far below SQL's 64-bit bound.
MAX_EXPORT_OFFSET = 10**12


def export_page(
    workspace: Workspace, what: str, fmt: str, offset: int, limit: int, raw: bool = False
) -> tuple[str, int, bool]:
    """One page of an export as text with its header: (text, rows, has_more)."""
    rows = list(_rows(workspace, what, offset, offset + limit + 1))
    has_more = len(rows) > limit
    rows = rows[:limit]
    return "".join(delimited.rows_as_text(EXPORTS[what], rows, fmt, raw)), len(rows), has_more


# ---------------------------------------------------------------- options as forms send them


def parse_flag(value: object, name: str = "dry_run") -> bool:
    """A boolean from a form or JSON: true/false, 1/0, yes/no, on/off; absent or empty is False."""
    if value is None or value == "":
        return False
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off"}:
        return False
    raise ImportRejected(
        f"{name} must be true or false; got {str(value)[:40]!r}.", reason="bad_option"
    )


def parse_field_mapping(value: object) -> dict[str, list[str]] | None:
    """``{"note type": ["front field", "back field"]}``, as a JSON object or its text."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ImportRejected(
                f"field_mapping is not valid JSON ({exc}).", reason="bad_option"
            ) from exc
    if not isinstance(value, dict) or not all(
        isinstance(k, str)
        and isinstance(v, list)
        and 1 <= len(v) <= 2
        and all(isinstance(f, str) for f in v)
        for k, v in value.items()
    ):
        raise ImportRejected(
            "field_mapping must map note type names to [front field, back field], e.g. "
            '{"Basic": ["Front", "Back"]}.',
            reason="bad_option",
        )
    return value
