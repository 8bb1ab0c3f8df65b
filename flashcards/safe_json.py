"""JSON from outside (an uploaded collection's note types, a client's cursor) parsed without
trusting it: nesting deeper than a few dozen levels is refused before the parser recurses (a
100,000-deep array is a RecursionError inside ``json``), and ``NaN`` / ``Infinity``, which
Python's parser accepts but JSON does not, are refused as well. One linear pass, then ``json``."""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64


class UnsafeJSON(ValueError):
    pass


def nesting_depth(text: str | bytes) -> int:
    """The deepest ``[``/``{`` nesting outside strings, counted in one pass."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif char in "]}":
            depth -= 1
    return deepest


def _refuse_constant(name: str) -> Any:
    raise UnsafeJSON(f"{name} is not a JSON number")


def loads(text: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` for untrusted text; raises UnsafeJSON (a ValueError) for what it refuses."""
    depth = nesting_depth(text)
    if depth > max_depth:
        raise UnsafeJSON(f"nested {depth} levels deep; at most {max_depth} are accepted")
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except RecursionError as exc:  # pragma: no cover - the depth check comes first
        raise UnsafeJSON("nested too deeply") from exc
