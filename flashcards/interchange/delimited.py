"""CSV and TSV: card drafts from a file whose header names dialect columns, and rows of cards and
review events in the dialect's columns and value formats (dsl.md §2.4, §5) for export.

Both directions use the csv module's quoting (TSV is the same with tabs), so text holding
separators, quotes or line breaks survives a round trip. ``tags`` is written ``a;b`` — or, when
a tag holds ``;`` or the first starts with ``[``, as a JSON list — and read back from either.
"""

from __future__ import annotations

import codecs
import csv
import difflib
import io
import json
import re
import uuid
from collections.abc import Iterable, Iterator
from typing import IO, Any

from flashcards.interchange.errors import ImportRejected
from flashcards.interchange.limits import ImportBudget, ImportLimits
from flashcards.rows import CARD_COLUMNS, REVIEW_EVENT_COLUMNS
from flashcards.services.content import CARD_WRITABLE
from flashcards.services.imports import CardDraft

DELIMITERS = {"csv": ",", "tsv": "\t"}
# Read-only columns an export writes: accepted in an import's header and ignored, so an exported
# file can be edited and imported back as it is.
IGNORED = tuple(c for c in CARD_COLUMNS if c not in CARD_WRITABLE and c != "card_id")
KNOWN = ("card_id", *CARD_WRITABLE, *IGNORED)
# csv's default field limit is 128 KiB; a card's text is at most 20,000 characters anyway.
csv.field_size_limit(1024 * 1024)


# OWASP's CSV-injection rule: a cell a spreadsheet would read as a formula starts with one of
# these. An export prefixes such a cell with a single quote — and also a cell that is already
# quotes followed by one of them, so that an import can take exactly one quote off every cell of
# the form ``'…'=…`` and get back the text (docs/decisions.md "Formula cells in exports").
FORMULA_START = re.compile(r"'*[=+\-@\t\r]")


def escape_formula(text: str) -> str:
    return "'" + text if FORMULA_START.match(text) else text


def unescape_formula(text: str) -> str:
    return text[1:] if text.startswith("'") and FORMULA_START.match(text, 1) else text


def format_tags(tags: list[str]) -> str:
    if any(";" in tag for tag in tags) or (tags and tags[0].startswith("[")):
        return json.dumps(tags, ensure_ascii=False)
    return ";".join(tags)


def parse_tags(text: str) -> list[str]:
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            value = json.loads(stripped)
        except ValueError as exc:
            raise ValueError(f"tags look like a JSON list but are not valid JSON ({exc})") from exc
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError('tags as JSON must be a list of strings, e.g. ["a", "b"]')
        return value
    return stripped.split(";") if stripped else []


def _header(row: list[str], filename: str, limits: ImportLimits) -> list[str]:
    """The header's column names, checked in one pass (a set of the names seen, a suggestion
    only for the first few unknown ones); at most ``max_header_problems`` are reported, with a
    count of the rest, and a header of more than ``max_csv_columns`` is refused unread."""
    if len(row) > limits.max_csv_columns:
        raise ImportRejected(
            f"line 1: the header names {len(row)} columns; at most {limits.max_csv_columns} are "
            f"accepted (the columns are {', '.join(('card_id', *CARD_WRITABLE))}).",
            reason="bad_header",
            file=filename,
            problems=[{"line": 1, "message": f"{len(row)} columns"}],
        )
    names = [name.strip().lower() for name in row]
    problems: list[dict[str, Any]] = []
    seen: set[str] = set()
    duplicates: dict[str, None] = {}
    known = set(KNOWN)
    for name in names:
        if name in seen:
            duplicates[name] = None
        seen.add(name)
        if name not in known:
            close = difflib.get_close_matches(name[:100], KNOWN, n=1)
            hint = f" Did you mean {close[0]}?" if close else ""
            problems.append({"line": 1, "message": f"Unknown column {name[:100]!r}.{hint}"})
    if duplicates:
        problems.append(
            {"line": 1, "message": f"Column(s) named twice: {', '.join(sorted(duplicates))}."}
        )
    if "front_text" not in seen and "card_id" not in seen:
        problems.append(
            {"line": 1, "message": "The header must name front_text (or card_id, to update)."}
        )
    if problems:
        shown = problems[: limits.max_header_problems]
        omitted = len(problems) - len(shown)
        more = f" ({omitted} more problem(s) not listed.)" if omitted else ""
        raise ImportRejected(
            "line 1: the header row is wrong: "
            + " ".join(p["message"] for p in shown)
            + more
            + f" The columns are {', '.join(('card_id', *CARD_WRITABLE))} (and the read-only "
            "columns of an export, which are ignored).",
            reason="bad_header",
            file=filename,
            problems=shown + ([{"line": 1, "omitted": omitted}] if omitted else []),
        )
    return names


def _draft(
    line: int, names: list[str], row: list[str], filename: str, raw: bool = False
) -> CardDraft:
    where = {"line": line}
    if len(row) != len(names):
        return CardDraft(
            where,
            None,
            {},
            problem=f"line {line} has {len(row)} values; the header names {len(names)} columns.",
        )
    cells = dict(zip(names, row, strict=True))
    if not raw:
        cells = {name: unescape_formula(text) for name, text in cells.items()}
    card_id: uuid.UUID | None = None
    raw_id = cells.get("card_id", "").strip()
    if raw_id:
        try:
            card_id = uuid.UUID(raw_id)
        except ValueError:
            return CardDraft(
                where, None, {}, problem=f"line {line}: card_id {raw_id[:60]!r} is not a UUID."
            )
    values: dict[str, Any] = {}
    for name in CARD_WRITABLE:
        if name not in cells:
            continue
        text = cells[name]
        if name == "tags":
            try:
                values["tags"] = parse_tags(text)
            except ValueError as exc:
                return CardDraft(where, card_id, {}, problem=f"line {line}: {exc}.")
        elif name == "effort_level":
            if text.strip():
                values["effort_level"] = text.strip().lower()
        else:
            values[name] = text
    return CardDraft(
        where,
        card_id,
        values,
        metadata={"version": 1, "source": {"kind": "csv", "file": filename}},
    )


def drafts(
    stream: IO[bytes],
    filename: str,
    format: str,
    batch_size: int,
    info: dict[str, Any],
    *,
    limits: ImportLimits | None = None,
    budget: ImportBudget | None = None,
    raw: bool = False,
) -> Iterator[list[CardDraft]]:
    """Card drafts in batches, one per data line; ``info`` receives the header's columns.
    Cells an export escaped as formulas (``'=…``) are read back unescaped unless ``raw``."""
    limits = limits or ImportLimits()
    budget = budget or ImportBudget(limits.max_import_seconds, filename)
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", newline="", errors="strict")
    reader = csv.reader(text, delimiter=DELIMITERS[format], strict=True)
    line = 1
    detached = False
    try:
        header = next(reader, None)
        if header is None:
            raise ImportRejected(
                "is empty: expected a header row.", reason="bad_header", file=filename
            )
        names = _header(header, filename, limits)
        info["columns"] = names
        info["ignored_columns"] = [n for n in names if n in IGNORED]
        batch: list[CardDraft] = []
        line = reader.line_num + 1
        for count, row in enumerate(reader, 1):
            if not count % 256:
                budget.check()
            if row and any(cell.strip() for cell in row):
                batch.append(_draft(line, names, row, filename, raw))
            line = reader.line_num + 1
            if len(batch) >= batch_size:
                yield batch
                batch = []
        if batch:
            yield batch
    except UnicodeDecodeError as exc:
        detached = True
        text.detach()
        line, offset = _first_bad_utf8(stream)
        raise ImportRejected(
            f"line {line}: the file is not valid UTF-8 (byte {offset} cannot be decoded); save "
            "it as UTF-8 and retry.",
            reason="bad_encoding",
            file=filename,
            problems=[{"line": line, "message": "not valid UTF-8"}],
        ) from exc
    except csv.Error as exc:
        raise ImportRejected(
            f"line {line}: {exc}.",
            reason="bad_csv",
            file=filename,
            problems=[{"line": line, "message": str(exc)}],
        ) from exc
    finally:
        # Leave the caller's file open: closing the wrapper would close it.
        if not detached:
            text.detach()


def _first_bad_utf8(stream: IO[bytes]) -> tuple[int, int]:
    """(line, byte offset) of the first byte that is not UTF-8: the text reader reads ahead in
    blocks, so the line it had reached is not where the bad byte is."""
    stream.seek(0)
    decoder = codecs.getincrementaldecoder("utf-8")()
    line, offset = 1, 0
    while chunk := stream.read(64 * 1024):
        try:
            decoder.decode(chunk)
        except UnicodeDecodeError as exc:
            return line + chunk.count(b"\n", 0, max(exc.start, 0)), offset + max(exc.start, 0)
        line += chunk.count(b"\n")
        offset += len(chunk)
    return line, offset


# ---------------------------------------------------------------- export


def _cell(column: str, value: Any, raw: bool = False) -> str:
    if value is None:
        return ""
    if column == "tags":
        return format_tags(value) if raw else escape_formula(format_tags(value))
    if isinstance(value, str) and not raw:
        return escape_formula(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


class _Line:
    """csv.writer target that hands back what was written."""

    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> int:
        self.text += text
        return len(text)


def rows_as_text(
    columns: tuple[str, ...], rows: Iterable[dict[str, Any]], format: str, raw: bool = False
) -> Iterator[str]:
    """The header, then one line per row (a line may hold quoted line breaks). Text cells a
    spreadsheet would run as a formula are prefixed with ``'`` unless ``raw``."""
    target = _Line()
    writer = csv.writer(target, delimiter=DELIMITERS[format], lineterminator="\r\n")
    writer.writerow(columns)
    yield target.text
    for row in rows:
        target.text = ""
        writer.writerow([_cell(c, row[c], raw) for c in columns])
        yield target.text


CARD_EXPORT_COLUMNS = CARD_COLUMNS
REVIEW_EVENT_EXPORT_COLUMNS = REVIEW_EVENT_COLUMNS
