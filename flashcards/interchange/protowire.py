"""Just enough of the protobuf wire format to read the few fields this importer needs from
Anki's binary columns and files (note type kind, template formats, the media map, the package
version) without generated code. Unknown fields are skipped, as protobuf readers do."""

from __future__ import annotations

from collections.abc import Iterator


class WireError(ValueError):
    pass


def _varint(data: bytes, at: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise WireError("truncated or oversized varint")
        byte = data[at]
        at += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, at
        shift += 7


def decode(data: bytes) -> dict[int, list[int | bytes]]:
    """Field number -> its values in order: ints for varint and fixed fields, bytes for
    length-delimited ones (strings, nested messages, packed arrays)."""
    fields: dict[int, list[int | bytes]] = {}
    for number, value in iter_fields(data):
        fields.setdefault(number, []).append(value)
    return fields


def iter_fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) in order, one at a time: a caller that needs one field, or counts
    entries against a cap, never holds the whole message decoded."""
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire_type = key >> 3, key & 7
        value: int | bytes
        if wire_type == 0:
            value, at = _varint(data, at)
        elif wire_type == 1:
            value, at = int.from_bytes(data[at : at + 8], "little"), at + 8
        elif wire_type == 2:
            length, at = _varint(data, at)
            if at + length > len(data):
                raise WireError("length-delimited field runs past the end")
            value, at = data[at : at + length], at + length
        elif wire_type == 5:
            value, at = int.from_bytes(data[at : at + 4], "little"), at + 4
        else:
            raise WireError(f"unsupported wire type {wire_type}")
        if at > len(data):
            raise WireError("fixed-size field runs past the end")
        yield number, value


def first_int(fields: dict[int, list[int | bytes]], number: int, default: int = 0) -> int:
    for value in fields.get(number, ()):
        if isinstance(value, int):
            return value
    return default


def first_text(fields: dict[int, list[int | bytes]], number: int, default: str = "") -> str:
    for value in fields.get(number, ()):
        if isinstance(value, bytes):
            return value.decode("utf-8", errors="replace")
    return default
