"""The one error of file import: what is wrong, where (file, line, note), and why, as data."""

from __future__ import annotations

from typing import Any

from flashcards.services.common import DomainError


class ImportRejected(DomainError):
    """The file cannot be imported; nothing was written. ``reason`` is a short machine code
    (corrupt_archive, missing_collection, unsupported_schema, bad_header, bad_encoding,
    invalid_rows, archive_too_large, unsafe_archive, ...); ``problems`` lists the offending lines
    or notes, each ``{"line" | "note": ..., "message": ...}``."""

    def __init__(
        self,
        message: str,
        *,
        reason: str,
        file: str | None = None,
        problems: list[dict[str, Any]] | None = None,
        report: dict[str, Any] | None = None,
    ) -> None:
        prefix = f"{file}: " if file else ""
        super().__init__(prefix + message, code=reason)
        self.reason = reason
        self.file = file
        self.problems = problems or []
        self.report = report

    def details(self) -> dict[str, Any]:
        details: dict[str, Any] = {"reason": self.reason, "file": self.file}
        if self.problems:
            details["problems"] = self.problems
        if self.report is not None:
            details["report"] = self.report
        return details
