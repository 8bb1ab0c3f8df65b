"""Anki packages (.apkg, .colpkg) as card drafts: the collection is unpacked to a temporary file
and read with SQLite, read-only and under a time limit; notes and cards stream out in Anki card
id order, merged with the review log, in batches.

Layouts read (see docs/import-export.md for every mapping):
- ``collection.anki21b``: zstd-compressed SQLite, schema 18, media map a zstd protobuf
  ``MediaEntries`` and a ``meta`` protobuf ``PackageMetadata`` (version 3, "latest");
- ``collection.anki21`` (schema 11, package version 2) and ``collection.anki2`` (schema 11,
  version 1, also what genanki writes), with a JSON media map.
Schemas 11 to 18 are read: note types and decks are JSON in ``col`` up to 14, tables from 15 on.
"""

from __future__ import annotations

import re
import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from flashcards import safe_json
from flashcards.interchange import anki_schedule, protowire
from flashcards.interchange.anki_schedule import AnkiCardState, Preset
from flashcards.interchange.archive import PackageArchive
from flashcards.interchange.cloze import cloze_numbers, render_cloze
from flashcards.interchange.errors import ImportRejected
from flashcards.interchange.html_text import html_to_text
from flashcards.interchange.limits import ImportBudget, ImportLimits
from flashcards.interchange.templates import render_card
from flashcards.scheduling import CardSchedule
from flashcards.services.imports import CardDraft, ReviewDraft

# Card and review-event ids are uuid5 names in this namespace: the same Anki card imported into
# the same workspace always gets the same id, so a re-import finds what it created before.
ANKI_NAMESPACE = uuid.UUID("6f1d3c52-52a4-4b8e-9f0e-2c8d1a7e4b10")
COLLECTIONS = ("collection.anki21b", "collection.anki21", "collection.anki2")
PACKAGE_VERSIONS = {1: "legacy 1", 2: "legacy 2", 3: "latest"}
SCHEMAS = range(11, 19)
REQUIRED_TABLES = ("col", "notes", "cards", "revlog")
# Every table this importer reads (the last four only from schema 15 on).
USED_TABLES = (*REQUIRED_TABLES, "notetypes", "fields", "templates", "decks")
DEFAULT_DECK_ID = 1
# revlog.type: 0 learn, 1 review, 2 relearn, 3 filtered (cram); 4 manual and 5 rescheduled are
# not answers (ease 0): they carry no rating to replay.
ANSWER_TYPES = (0, 1, 2, 3)
# reviewed_at_client must stay a date the scheduler can add a century to.
LATEST_REVIEW_MS = int(datetime(9000, 1, 1, tzinfo=UTC).timestamp() * 1000)
_FIELD_REF = re.compile(r"\{\{([^{}]+)\}\}")


@dataclass(frozen=True)
class NoteType:
    id: int
    name: str
    is_cloze: bool
    fields: tuple[str, ...]
    # template ord -> question format
    questions: dict[int, str]
    # template ord -> (answer format, template name)
    answers: dict[int, tuple[str, str]] = field(default_factory=dict)


@dataclass
class AnkiStats:
    package_version: str = ""
    schema_version: int = 0
    collection_member: str = ""
    notes: int = 0
    anki_cards: int = 0
    review_log_entries: int = 0
    review_log_skipped: int = 0
    empty_cloze_cards: int = 0
    media_in_package: int = 0
    media_referenced: dict[str, None] = field(default_factory=dict)
    media_referenced_count: int = 0
    note_types: dict[str, int] = field(default_factory=dict)
    schedules_from_anki: int = 0
    not_generated: int = 0
    image_occlusion: int = 0
    schedules_to_replay: int = 0
    suspended: int = 0
    buried: int = 0


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return "" if value is None else str(value)


def question_fields(question: str, fields: tuple[str, ...]) -> set[str]:
    """Fields a template shows on its question side (``{{Front}}``, ``{{text:Front}}``,
    ``{{type:Back}}``), not the ones it only tests (``{{#Back}}...{{/Back}}``)."""
    shown: set[str] = set()
    for ref in _FIELD_REF.findall(question):
        ref = ref.strip()
        if ref[:1] in "#^/!":
            continue
        name = ref.rsplit(":", 1)[-1].strip()
        if name in fields:
            shown.add(name)
    return shown


class CollectionField(ValueError):
    """A value of the collection that is not what Anki writes there; ``field`` names it
    (``cards.ord``, ``col.models``) and ``where`` the row, for the refusal."""

    def __init__(self, field: str, message: str, where: dict[str, Any] | None = None) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.where = where or {}


def _int(value: object, field: str, where: dict[str, Any] | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        kind = "text" if isinstance(value, (bytes, str)) else type(value).__name__
        raise CollectionField(field, f"is {kind}, not an integer", where)
    return value


def _json_object(raw: object, field: str) -> dict[str, Any]:
    try:
        value = safe_json.loads(_text(raw) or "{}")
    except ValueError as exc:
        raise CollectionField(field, f"is not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise CollectionField(field, f"is a JSON {type(value).__name__}, not an object")
    return value


def _json_note_type(raw: object) -> NoteType:
    if not isinstance(raw, dict):
        raise CollectionField("col.models", "holds a note type that is not an object")
    flds, tmpls = raw.get("flds", []), raw.get("tmpls", [])
    if not isinstance(flds, list) or not all(
        isinstance(f, dict) and isinstance(f.get("ord"), int) for f in flds
    ):
        raise CollectionField("col.models", "a note type's flds is not a list of fields")
    if not isinstance(tmpls, list) or not all(
        isinstance(t, dict) and isinstance(t.get("ord"), int) for t in tmpls
    ):
        raise CollectionField("col.models", "a note type's tmpls is not a list of templates")
    note_type_id = raw.get("id")
    if isinstance(note_type_id, str) and note_type_id.lstrip("-").isdigit():
        note_type_id = int(note_type_id)
    return NoteType(
        id=_int(note_type_id, "col.models"),
        name=str(raw.get("name", "")),
        is_cloze=raw.get("type") == 1,
        fields=tuple(str(f.get("name", "")) for f in sorted(flds, key=lambda f: f["ord"])),
        questions={int(t["ord"]): str(t.get("qfmt", "")) for t in tmpls},
        answers={int(t["ord"]): (str(t.get("afmt", "")), str(t.get("name", ""))) for t in tmpls},
    )


class AnkiCollection:
    """An unpacked collection file, opened read-only and immutable, with untrusted schema
    functions off, a bound on every value SQLite may build, and the import's time budget.

    Before anything is read, every object this importer reads (the tables of ``USED_TABLES``
    that exist) must be a plain table — no view, no virtual table — whose columns are all plain:
    no generated column, no hidden one. Anything else is refused as ``unsafe_collection``: the
    SQL of such an object was written by the uploader and would run here."""

    def __init__(
        self,
        path: str,
        filename: str,
        limits: ImportLimits,
        stats: AnkiStats,
        budget: ImportBudget | None = None,
    ) -> None:
        self.filename = filename
        self.stats = stats
        self.budget = budget or ImportBudget(limits.max_import_seconds, filename)
        self.db = sqlite3.connect(
            f"file:{quote(path)}?mode=ro&immutable=1", uri=True, check_same_thread=False
        )
        self.db.text_factory = bytes
        self.db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, limits.max_collection_value_bytes)
        self.db.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, 100_000)
        self.db.set_progress_handler(lambda: int(self.budget.exceeded()), 10_000)
        try:
            self.db.execute("PRAGMA trusted_schema = OFF")
            self.db.execute("PRAGMA query_only = 1")
            self._check_objects()
            self._check_tables()
            self.schema = self._schema_version()
            stats.schema_version = self.schema
            self.note_types, self.decks = (
                self._tables_layout() if self._has_table("notetypes") else self._json_layout()
            )
            self.config = self._config()
            self.presets, self.deck_presets = (
                self._tables_presets() if self._has_table("deck_config") else self._json_presets()
            )
            crt = self.db.execute("SELECT crt FROM col").fetchone()[0]
            self.day = anki_schedule.day_settings(
                crt if isinstance(crt, int) else 0, self.config, None
            )
        except sqlite3.DatabaseError as exc:
            self.close()
            raise self._broken(exc) from exc
        except CollectionField as exc:
            self.close()
            raise self.field_refusal(exc) from exc
        except (ValueError, KeyError, TypeError, OverflowError, protowire.WireError) as exc:
            self.close()
            raise ImportRejected(
                f"the collection's note types or decks cannot be read ({exc}).",
                reason="corrupt_collection",
                file=filename,
            ) from exc
        except BaseException:
            self.close()
            raise

    def field_refusal(self, exc: CollectionField) -> ImportRejected:
        return ImportRejected(
            f"the collection's {exc}; it is not what Anki writes there.",
            reason="corrupt_collection",
            file=self.filename,
            problems=[{**exc.where, "field": exc.field, "message": str(exc)}],
        )

    def _broken(self, exc: sqlite3.DatabaseError) -> ImportRejected:
        if "interrupt" in str(exc):
            return self.budget.refusal()  # type: ignore[return-value]
        if "too big" in str(exc):
            return ImportRejected(
                "the collection holds a value larger than the import accepts.",
                reason="corrupt_collection",
                file=self.filename,
            )
        return ImportRejected(
            f"the collection is not a readable SQLite database ({exc}).",
            reason="corrupt_collection",
            file=self.filename,
        )

    def close(self) -> None:
        self.db.close()

    def _unsafe(self, message: str) -> ImportRejected:
        return ImportRejected(
            f"{message}; an Anki collection holds only plain tables, so it is refused unread.",
            reason="unsafe_collection",
            file=self.filename,
        )

    def _check_objects(self) -> None:
        """Every object named like a table this importer reads is a plain table of plain
        columns (sqlite_master and PRAGMA table_xinfo read nothing the uploader wrote as SQL)."""
        placeholders = ", ".join("?" for _ in USED_TABLES)
        rows = self.db.execute(
            "SELECT type, name, sql FROM sqlite_master "
            f"WHERE lower(name) IN ({placeholders}) OR lower(tbl_name) IN ({placeholders})",
            (*USED_TABLES, *USED_TABLES),
        ).fetchall()
        for kind, name, sql in rows:
            label = _text(name)
            if kind in (b"index", b"trigger"):
                if label.lower() in USED_TABLES:
                    raise self._unsafe(f"{_text(kind)} {label!r} takes the name of a table")
                continue
            if kind != b"table":
                raise self._unsafe(f"{label!r} is a {_text(kind)}, not a table")
            if re.match(rb"\s*create\s+virtual\s", sql or b"", re.IGNORECASE):
                raise self._unsafe(f"{label!r} is a virtual table")
            for column in self.db.execute(f'PRAGMA table_xinfo("{label}")').fetchall():
                if column[6] != 0:
                    raise self._unsafe(
                        f"column {label}.{_text(column[1])} is generated or hidden, not a plain "
                        "column"
                    )

    def _has_table(self, name: str) -> bool:
        row = self.db.execute(
            "SELECT type FROM sqlite_master WHERE name = ? COLLATE NOCASE", (name,)
        ).fetchone()
        return row is not None and row[0] == b"table"

    def _check_tables(self) -> None:
        missing = [t for t in REQUIRED_TABLES if not self._has_table(t)]
        if missing:
            raise ImportRejected(
                f"the collection has no table {', '.join(missing)}; it is not an Anki collection.",
                reason="missing_collection",
                file=self.filename,
            )

    def _schema_version(self) -> int:
        row = self.db.execute("SELECT ver FROM col").fetchone()
        version = row[0] if row else None
        if not isinstance(version, int) or version not in SCHEMAS:
            raise ImportRejected(
                f"the collection has schema version {_text(version)[:40]!r}; this importer reads "
                f"Anki schema versions {SCHEMAS.start} to {SCHEMAS.stop - 1}. Export it again "
                "from a current Anki (File > Export, with 'Support older Anki versions' if it "
                "still fails).",
                reason="unsupported_schema",
                file=self.filename,
            )
        return version

    def _json_layout(self) -> tuple[dict[int, NoteType], dict[int, str]]:
        row = self.db.execute("SELECT models, decks FROM col").fetchone()
        models = _json_object(row[0], "col.models")
        decks = _json_object(row[1], "col.decks")
        note_types: dict[int, NoteType] = {}
        for raw in models.values():
            note_type = _json_note_type(raw)
            note_types[note_type.id] = note_type
        deck_names: dict[int, str] = {}
        for raw in decks.values():
            if not isinstance(raw, dict):
                raise CollectionField("col.decks", "holds a deck that is not an object")
            deck_id = raw.get("id")
            if isinstance(deck_id, str) and deck_id.lstrip("-").isdigit():
                deck_id = int(deck_id)
            deck_names[_int(deck_id, "col.decks")] = str(raw.get("name", ""))
        return note_types, deck_names

    def _config(self) -> dict[str, Any]:
        if self._has_table("config"):
            config: dict[str, Any] = {}
            for key, value in self.db.execute("SELECT key, val FROM config"):
                try:
                    config[_text(key)] = safe_json.loads(_text(value))
                except ValueError:
                    continue
            return config
        row = self.db.execute("SELECT conf FROM col").fetchone()
        return _json_object(row[0], "col.conf") if row else {}

    def _json_presets(self) -> tuple[dict[int, Preset], dict[int, int]]:
        row = self.db.execute("SELECT decks, dconf FROM col").fetchone()
        decks = _json_object(row[0], "col.decks")
        dconf = _json_object(row[1], "col.dconf")
        # Presets only inform the schedule: an entry that is not what Anki writes is left out.
        presets: dict[int, Preset] = {}
        for raw in dconf.values():
            try:
                preset = anki_schedule.preset_from_json(raw)
            except (AttributeError, TypeError, ValueError):
                continue
            presets[preset.id] = preset
        deck_presets: dict[int, int] = {}
        for deck in decks.values():
            if isinstance(deck, dict) and not deck.get("dyn"):
                deck_id, conf = deck.get("id"), deck.get("conf", 1)
                if isinstance(deck_id, int) and isinstance(conf, int):
                    deck_presets[deck_id] = conf
        return presets, deck_presets

    def _tables_presets(self) -> tuple[dict[int, Preset], dict[int, int]]:
        presets = {
            preset_id: anki_schedule.preset_from_proto(preset_id, _text(name), config)
            for preset_id, name, config in self.db.execute(
                "SELECT id, name, config FROM deck_config"
            )
        }
        deck_presets: dict[int, int] = {}
        for deck_id, kind in self.db.execute("SELECT id, kind FROM decks"):
            preset = anki_schedule.deck_config_id(kind if isinstance(kind, bytes) else b"")
            if preset is not None:
                deck_presets[deck_id] = preset
        return presets, deck_presets

    def preset_of(self, deck_id: int) -> Preset | None:
        return self.presets.get(self.deck_presets.get(deck_id, 1))

    def _tables_layout(self) -> tuple[dict[int, NoteType], dict[int, str]]:
        fields: dict[int, list[str]] = {}
        for ntid, ordinal, name in self.db.execute(
            "SELECT ntid, ord, name FROM fields ORDER BY 1, 2"
        ):
            _int(ordinal, "fields.ord")
            fields.setdefault(_int(ntid, "fields.ntid"), []).append(_text(name))
        questions: dict[int, dict[int, str]] = {}
        answers: dict[int, dict[int, tuple[str, str]]] = {}
        for ntid, ordinal, name, config in self.db.execute(
            "SELECT ntid, ord, name, config FROM templates"
        ):
            parsed = protowire.decode(_blob(config, "templates.config"))
            ntid, ordinal = _int(ntid, "templates.ntid"), _int(ordinal, "templates.ord")
            questions.setdefault(ntid, {})[ordinal] = protowire.first_text(parsed, 1)
            answers.setdefault(ntid, {})[ordinal] = (protowire.first_text(parsed, 2), _text(name))
        note_types: dict[int, NoteType] = {}
        for ntid, name, config in self.db.execute("SELECT id, name, config FROM notetypes"):
            ntid = _int(ntid, "notetypes.id")
            kind = protowire.first_int(protowire.decode(_blob(config, "notetypes.config")), 1)
            note_types[ntid] = NoteType(
                id=ntid,
                name=_text(name),
                is_cloze=kind == 1,
                fields=tuple(fields.get(ntid, ())),
                questions=questions.get(ntid, {}),
                answers=answers.get(ntid, {}),
            )
        decks = {
            _int(deck_id, "decks.id"): _text(name).replace("\x1f", "::")
            for deck_id, name in self.db.execute("SELECT id, name FROM decks")
        }
        return note_types, decks

    def cards(self) -> Iterator[tuple[Any, ...]]:
        """(card id, note id, ord, deck, original deck, guid, note type id, tags, fields,
        type, queue, due, ivl, reps, lapses, left, odue, data, note mtime,
        [(revlog id, ease, type), ...]) in card id order. Every integer column is checked to
        hold an integer: a crafted collection may store text anywhere."""
        try:
            self.stats.notes = self.db.execute("SELECT count(*) FROM notes").fetchone()[0]
            cards = self.db.execute(
                "SELECT c.id, c.nid, c.ord, c.did, c.odid, n.guid, n.mid, n.tags, n.flds, "
                "c.type, c.queue, c.due, c.ivl, c.reps, c.lapses, c.left, c.odue, c.data, n.mod "
                "FROM cards c JOIN notes n ON n.id = c.nid ORDER BY c.id"
            )
            log = self.db.execute("SELECT id, cid, ease, type FROM revlog ORDER BY cid, id")
            pending = _log_row(log.fetchone())
            for row in cards:
                where = {"card": row[0]}
                card_id = _int(row[0], "cards.id", where)
                for index, name in CARD_INTEGERS:
                    _int(row[index], name, where)
                reviews: list[tuple[int, int, int]] = []
                while pending is not None and pending[1] <= card_id:
                    if pending[1] == card_id:
                        reviews.append((pending[0], pending[2], pending[3]))
                    pending = _log_row(log.fetchone())
                yield (*row, reviews)
        except sqlite3.DatabaseError as exc:
            raise self._broken(exc) from exc
        except CollectionField as exc:
            raise self.field_refusal(exc) from exc


# (index in a cards() row, column) of the integers besides the card id.
CARD_INTEGERS: tuple[tuple[int, str], ...] = (
    (1, "cards.nid"),
    (2, "cards.ord"),
    (3, "cards.did"),
    (4, "cards.odid"),
)
CARD_INTEGERS += ((6, "notes.mid"),)


def _log_row(row: tuple[Any, ...] | None) -> tuple[int, int, int, int] | None:
    if row is None:
        return None
    where = {"review": row[0]}
    return (
        _int(row[0], "revlog.id", where),
        _int(row[1], "revlog.cid", where),
        _int(row[2], "revlog.ease", where),
        _int(row[3], "revlog.type", where),
    )


def _blob(value: object, field: str) -> bytes:
    if value is None:
        return b""
    if not isinstance(value, bytes):
        raise CollectionField(field, f"is {type(value).__name__}, not a blob")
    return value


@dataclass(frozen=True)
class FieldChoice:
    front: int
    back: int | None


def _field_choices(
    collection: AnkiCollection, mapping: dict[str, list[str]] | None, filename: str
) -> dict[int, FieldChoice]:
    """Which field is the front and which the back, per note type: the first two by default, or
    the ones ``mapping`` names ({"note type": ["front field", "back field"]})."""
    by_name = {nt.name: nt for nt in collection.note_types.values()}
    for name, pair in (mapping or {}).items():
        if name not in by_name:
            raise ImportRejected(
                f"field mapping names the note type {name!r}, which the package does not have; "
                f"its note types are {', '.join(sorted(by_name)) or 'none'}.",
                reason="bad_field_mapping",
                file=filename,
            )
        unknown = [f for f in pair if f not in by_name[name].fields]
        if unknown:
            raise ImportRejected(
                f"field mapping for {name!r} names {', '.join(map(repr, unknown))}; its fields "
                f"are {', '.join(by_name[name].fields)}.",
                reason="bad_field_mapping",
                file=filename,
            )
    choices: dict[int, FieldChoice] = {}
    for nt in collection.note_types.values():
        chosen = (mapping or {}).get(nt.name)
        if chosen:
            front = nt.fields.index(chosen[0])
            back = nt.fields.index(chosen[1]) if len(chosen) > 1 else None
        else:
            front, back = 0, (1 if len(nt.fields) > 1 else None)
        choices[nt.id] = FieldChoice(front, back)
    return choices


def _media_names(archive: PackageArchive, limits: ImportLimits, zstd: bool) -> set[str]:
    """The names of the package's media files (only counted and compared with the names the
    notes use). The protobuf map is walked one entry at a time, only each entry's name decoded,
    and refused past ``max_media_entries``: a few KB of zstd must not become millions of
    objects."""
    if not archive.has("media"):
        return set()
    raw = archive.read("media", cap=limits.max_media_map_bytes, zstd=zstd)
    problem = "the media map cannot be read"
    names: set[str] = set()
    entries = 0
    try:
        if zstd:
            for number, entry in protowire.iter_fields(raw):
                if number != 1 or not isinstance(entry, bytes):
                    continue
                entries += 1
                if entries > limits.max_media_entries:
                    raise _too_many_media(archive, limits)
                for inner, value in protowire.iter_fields(entry):
                    if inner == 1 and isinstance(value, bytes):
                        names.add(value.decode("utf-8", errors="replace"))
                        break
            return names
        mapping = safe_json.loads(raw.decode("utf-8") or "{}")
        if isinstance(mapping, dict):
            if len(mapping) > limits.max_media_entries:
                raise _too_many_media(archive, limits)
            return {str(v) for v in mapping.values()}
    except (ValueError, UnicodeDecodeError, protowire.WireError) as exc:
        problem += f" ({exc})"
    raise ImportRejected(problem + ".", reason="corrupt_archive", file=archive.filename)


def _too_many_media(archive: PackageArchive, limits: ImportLimits) -> ImportRejected:
    return ImportRejected(
        f"its media map lists more than {limits.max_media_entries} files; refused.",
        reason="archive_too_large",
        file=archive.filename,
    )


def _package_version(archive: PackageArchive) -> int | None:
    if not archive.has("meta"):
        return None
    raw = archive.read("meta", cap=4096)
    try:
        version = protowire.first_int(protowire.decode(raw), 1)
    except protowire.WireError as exc:
        raise ImportRejected(
            f"its meta file is damaged ({exc}).", reason="corrupt_archive", file=archive.filename
        ) from exc
    if version not in PACKAGE_VERSIONS:
        raise ImportRejected(
            f"is an Anki package of version {version}, which this importer does not know "
            f"(it reads {', '.join(PACKAGE_VERSIONS.values())}).",
            reason="unsupported_schema",
            file=archive.filename,
        )
    return version


def open_package(
    archive: PackageArchive,
    tmpdir: str,
    limits: ImportLimits,
    stats: AnkiStats,
    budget: ImportBudget | None = None,
) -> tuple[AnkiCollection, set[str]]:
    """Pick the newest collection in the package, unpack it into ``tmpdir`` and open it."""
    version = _package_version(archive)
    member = next((name for name in COLLECTIONS if archive.has(name)), None)
    if version == 3 and member != "collection.anki21b":
        member = None
    if member is None:
        raise ImportRejected(
            "holds no Anki collection (collection.anki21b, collection.anki21 or "
            "collection.anki2); is it an .apkg or .colpkg exported by Anki?",
            reason="missing_collection",
            file=archive.filename,
        )
    zstd = member.endswith("b")
    stats.collection_member = member
    stats.package_version = PACKAGE_VERSIONS.get(version or (3 if zstd else 1), "")
    path = f"{tmpdir}/collection.sqlite"
    archive.extract(member, path, cap=limits.max_collection_bytes, zstd=zstd)
    media = _media_names(archive, limits, zstd)
    stats.media_in_package = len(media)
    return AnkiCollection(path, archive.filename, limits, stats, budget), media


def card_uuid(workspace_id: uuid.UUID, guid: str, ordinal: int) -> uuid.UUID:
    return uuid.uuid5(ANKI_NAMESPACE, f"{workspace_id}:card:{guid}:{ordinal}")


def _reviews(
    card_id: uuid.UUID, log: list[tuple[int, int, int]], stats: AnkiStats
) -> tuple[list[ReviewDraft], str | None]:
    reviews: list[ReviewDraft] = []
    for revlog_id, ease, kind in log:
        stats.review_log_entries += 1
        if kind not in ANSWER_TYPES or not 1 <= ease <= 4:
            stats.review_log_skipped += 1
            continue
        if not 0 <= revlog_id < LATEST_REVIEW_MS:
            return [], f"review log entry {revlog_id} is not a time between 1970 and 9000."
        reviews.append(
            ReviewDraft(
                review_event_id=uuid.uuid5(ANKI_NAMESPACE, f"{card_id}:review:{revlog_id}"),
                client_event_id=f"anki:{card_id}:{revlog_id}",
                rating=ease - 1,
                reviewed_at=datetime.fromtimestamp(revlog_id / 1000, tz=UTC),
            )
        )
    return reviews, None


def _reverses(note_type: NoteType, ordinal: int, shown: set[str], front: str, back: str) -> bool:
    """A card of a later template that asks the other way round from the first template (the
    second card of "Basic (and reversed card)") gets front and back swapped; the first
    template's cards never are, so a field mapping is taken as it is written."""
    if not note_type.questions or ordinal == min(note_type.questions):
        return False
    first = question_fields(note_type.questions[min(note_type.questions)], note_type.fields)
    return (front in first and back in shown and front not in shown) or (
        back in first and front in shown and back not in shown
    )


def _schedule(
    collection: AnkiCollection, state: AnkiCardState, deck_id: int, reviews: list[ReviewDraft]
) -> CardSchedule | None:
    """Anki's own schedule for the card when it carries an FSRS memory state; None (the log is
    replayed) otherwise. Counted per way and per preset."""
    if state.type == anki_schedule.NEW:
        collection.stats.schedules_to_replay += bool(reviews)
        return None
    preset = collection.preset_of(deck_id)
    last_ms = int(reviews[-1].reviewed_at.timestamp() * 1000) if reviews else None
    learning = preset is not None and state.type == anki_schedule.LEARNING
    steps = preset.learning_steps if preset is not None and learning else None
    if steps is None and preset is not None:
        steps = preset.relearning_steps
    schedule = anki_schedule.anki_schedule(state, collection.day, len(steps or ()), last_ms)
    if schedule is None:
        collection.stats.schedules_to_replay += bool(reviews)
        return None
    collection.stats.schedules_from_anki += 1
    if preset is not None:
        preset.cards += 1
    return schedule


def _note_modified(mod: object) -> datetime:
    """notes.mod: epoch seconds (0 when missing, so any edit here is newer)."""
    seconds = mod if isinstance(mod, int) and 0 <= mod < 253_402_300_799 else 0
    return datetime.fromtimestamp(seconds, tz=UTC)


def _deck_tag(collection: AnkiCollection, deck_id: int) -> str | None:
    """The deck as a tag: every deck but the untouched "Default" one (a renamed Default deck
    is a deck the user named, so it keeps its tag)."""
    name = collection.decks.get(deck_id)
    if deck_id == DEFAULT_DECK_ID and name in (None, "Default"):
        return None
    return name


def _note_tags(raw: object, deck: str | None) -> list[str]:
    tags = _text(raw).split()
    if deck:
        tags.append(deck)
    return tags


def drafts(
    collection: AnkiCollection,
    workspace_id: uuid.UUID,
    *,
    mapping: dict[str, list[str]] | None,
    batch_size: int,
    media_limit: int,
) -> Iterator[list[CardDraft]]:
    """Card drafts in batches: one per Anki card (one per cloze number for cloze notes)."""
    stats, filename = collection.stats, collection.filename
    choices = _field_choices(collection, mapping, filename)
    batch: list[CardDraft] = []
    for row in collection.cards():
        cid, nid, ordinal, did, odid, guid, mid, tags, flds, *columns, data, note_mod, log = row
        kind, queue, due, ivl, reps, lapses, left, odue = (
            c if isinstance(c, int) else 0 for c in columns
        )
        state = AnkiCardState(
            kind, queue, due, ivl, reps, lapses, left, odue, odid or 0, data=_text(data)
        )
        stats.anki_cards += 1
        if not stats.anki_cards % 256:
            collection.budget.check()
        guid = _text(guid) or str(nid)
        where = {"note": nid, "card": cid}
        note_type = collection.note_types.get(mid)
        card_id = card_uuid(workspace_id, guid, ordinal)
        if note_type is None:
            batch.append(
                CardDraft(where, card_id, {}, problem=f"note {nid} has an unknown note type {mid}.")
            )
            continue
        stats.note_types[note_type.name] = stats.note_types.get(note_type.name, 0) + 1
        deck_id = odid or did
        deck = _deck_tag(collection, deck_id)
        try:
            raw_fields = flds if isinstance(flds, bytes) else _text(flds).encode()
            values = raw_fields.decode("utf-8").split("\x1f")
        except UnicodeDecodeError:
            batch.append(
                CardDraft(where, card_id, {}, problem=f"note {nid}: its fields are not UTF-8.")
            )
            continue
        choice = choices[note_type.id]
        kept_fields: dict[str, str] = {}
        rendered = None
        if mapping is None or note_type.name not in mapping:
            rendered = render_card(note_type, ordinal, values, deck, _text(tags))

        def field_value(index: int | None, values: list[str] = values) -> str:
            return values[index] if index is not None and index < len(values) else ""

        if rendered is not None:
            card_type, front_html, back_html, extra = rendered.kind, *rendered.sides, ""
            if rendered.skip == "empty_cloze":
                stats.empty_cloze_cards += 1
                continue
            if rendered.skip:
                stats.not_generated += 1
                batch.append(
                    CardDraft(
                        where,
                        card_id,
                        {},
                        problem=f"note {nid} ({note_type.name}): Anki generates no card "
                        f"{ordinal + 1} for it (its question shows only empty fields).",
                        skip_invalid=True,
                    )
                )
                continue
            stats.image_occlusion += card_type == "image-occlusion"
            kept_fields = rendered.other_fields
        elif note_type.is_cloze:
            text = field_value(choice.front)
            if ordinal + 1 not in cloze_numbers(text):
                stats.empty_cloze_cards += 1
                continue
            front_html, back_html = render_cloze(text, ordinal + 1)
            extra = field_value(choice.back) if choice.back != choice.front else ""
            card_type = "cloze"
        else:
            front_html, back_html = field_value(choice.front), field_value(choice.back)
            extra, card_type = "", "basic"
            shown = question_fields(note_type.questions.get(ordinal, ""), note_type.fields)
            front_name = (
                note_type.fields[choice.front] if choice.front < len(note_type.fields) else ""
            )
            back_name = (
                note_type.fields[choice.back]
                if choice.back is not None and choice.back < len(note_type.fields)
                else ""
            )
            if _reverses(note_type, ordinal, shown, front_name, back_name):
                front_html, back_html, card_type = back_html, front_html, "reversed"
        front, front_media = html_to_text(front_html)
        back, back_media = html_to_text(back_html)
        if extra:
            extra_text, extra_media = html_to_text(extra)
            back = f"{back}\n\n{extra_text}".strip()
            back_media += extra_media
        media = list(dict.fromkeys(front_media + back_media))
        for name in media:
            stats.media_referenced_count += name not in stats.media_referenced
            if len(stats.media_referenced) < media_limit:
                stats.media_referenced[name] = None
        reviews, problem = _reviews(card_id, log, stats)
        schedule = _schedule(collection, state, odid or did, reviews)
        suspended = state.queue == anki_schedule.SUSPENDED
        stats.suspended += suspended
        stats.buried += state.queue in (
            anki_schedule.SIBLING_BURIED,
            anki_schedule.MANUALLY_BURIED,
        )
        source: dict[str, Any] = {
            "kind": "anki",
            "file": filename,
            "note_id": nid,
            "note_guid": guid,
            "card_id": cid,
            "card_ord": ordinal,
            "note_type": note_type.name,
            "deck": deck,
        }
        if media:
            source["media"] = media
        if suspended:
            source["suspended"] = True
        if kept_fields:
            source["fields"] = kept_fields
        if problem is None and not front:
            problem = f"note {nid} ({note_type.name}): the front is empty once HTML is removed."
        batch.append(
            CardDraft(
                where,
                card_id,
                {
                    "front_text": front,
                    "back_text": back,
                    "card_type": card_type,
                    "tags": _note_tags(tags, deck),
                },
                metadata={"version": 1, "source": source},
                reviews=reviews,
                schedule=schedule,
                suspended=suspended,
                skip_invalid=True,
                source_modified_at=_note_modified(note_mod),
                problem=f"note {nid}: {problem}"
                if problem and not problem.startswith("note")
                else problem,
            )
        )
        if len(batch) >= batch_size:
            yield batch
            batch = []
    if batch:
        yield batch
