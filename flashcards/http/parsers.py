"""A JSON parser that turns every malformed body into a 400, never a 500."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


def _has_lone_surrogate(data: object) -> bool:
    """True when some string (key or value) holds a lone surrogate: valid JSON (`"\\ud800"`),
    but not Unicode, so it could be neither stored nor rendered back. Iterative on purpose."""
    pending = [data]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


class SafeJSONParser(JSONParser):
    """DRF's JSONParser lets RecursionError (deeply nested arrays) escape as a 500, and accepts
    lone surrogate escapes that break rendering later; both are bad bodies (400)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise ParseError("JSON parse error - the body is nested too deeply.") from exc
        except (UnicodeDecodeError, ValueError) as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc
        if _has_lone_surrogate(data):
            raise ParseError(
                "JSON parse error - a string holds an invalid \\u escape (lone surrogate)."
            )
        return data


class AnyBodyAsJSONParser(SafeJSONParser):
    """The last resort for a body sent without `Content-Type: application/json` (curl -d, many
    HTTP clients' defaults): read it as JSON anyway, so the caller gets either a result or a
    400 REQUEST_INVALID that says what is wrong with the body — never a bare 415."""

    media_type = "*/*"
