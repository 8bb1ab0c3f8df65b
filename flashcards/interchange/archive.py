"""Reading an uploaded ZIP package without trusting it.

The central directory is sized up before ``zipfile`` parses it (a small upload can declare a
million members), every member name is checked although none is ever used as a path, and a
member is read only after its declared size and compression ratio pass the limits — the read
itself is capped again, for the ZIP layer and for a zstd layer inside it. What is unpacked goes
to a file in a temporary folder under a name chosen here, never under a name from the archive.
"""

from __future__ import annotations

import re
import struct
import zipfile
import zlib
from collections.abc import Iterator
from typing import IO

import zstandard

from flashcards.interchange.errors import ImportRejected
from flashcards.interchange.limits import MIB, ImportLimits

CHUNK = MIB
# zstd frames declare the window a decoder must hold in memory; Anki writes 2 MiB windows.
MAX_ZSTD_WINDOW = 1 << 27
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_EOCD = b"PK\x05\x06"
_EOCD64 = b"PK\x06\x06"
_DRIVE = re.compile(r"^[A-Za-z]:")


def _central_directory_entries(fileobj: IO[bytes], filename: str) -> int:
    """The member count the archive declares, read from its end record (zip64 included)."""
    fileobj.seek(0, 2)
    size = fileobj.tell()
    tail_size = min(size, 65_535 + 22 + 20 + 56)
    fileobj.seek(size - tail_size)
    tail = fileobj.read(tail_size)
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) - at < 22:
        raise ImportRejected(
            "is not a ZIP archive (no end of central directory record); an .apkg or .colpkg "
            "file is a ZIP archive exported by Anki.",
            reason="corrupt_archive",
            file=filename,
        )
    entries = struct.unpack("<H", tail[at + 10 : at + 12])[0]
    if entries == 0xFFFF:
        at64 = tail.rfind(_EOCD64, 0, at)
        if at64 < 0 or len(tail) - at64 < 56:
            raise ImportRejected(
                "has a damaged zip64 end record.", reason="corrupt_archive", file=filename
            )
        entries = struct.unpack("<Q", tail[at64 + 32 : at64 + 40])[0]
    fileobj.seek(0)
    return entries


def _unsafe_name(name: str) -> bool:
    parts = re.split(r"[\\/]", name)
    return (
        not name
        or "\x00" in name
        or "\\" in name
        or name.startswith("/")
        or bool(_DRIVE.match(name))
        or any(part == ".." for part in parts)
    )


class PackageArchive:
    """An uploaded ZIP, checked as a whole on opening."""

    def __init__(self, fileobj: IO[bytes], filename: str, limits: ImportLimits) -> None:
        self.filename = filename
        self.limits = limits
        declared = _central_directory_entries(fileobj, filename)
        if declared > limits.max_archive_members:
            raise ImportRejected(
                f"declares {declared} members; at most {limits.max_archive_members} are accepted.",
                reason="archive_too_large",
                file=filename,
            )
        try:
            self.zip = zipfile.ZipFile(fileobj)
            infos = self.zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
            raise ImportRejected(
                f"is not a readable ZIP archive ({exc}).", reason="corrupt_archive", file=filename
            ) from exc
        self.members: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            if _unsafe_name(info.filename):
                raise ImportRejected(
                    f"member {info.filename[:200]!r} has a path that leaves the archive "
                    "(absolute, '..' or a backslash); such archives are refused.",
                    reason="unsafe_archive",
                    file=filename,
                )
            if info.filename in self.members:
                raise ImportRejected(
                    f"member {info.filename[:200]!r} appears twice.",
                    reason="unsafe_archive",
                    file=filename,
                )
            self.members[info.filename] = info

    def has(self, name: str) -> bool:
        return name in self.members

    def _checked(self, name: str, cap: int) -> zipfile.ZipInfo:
        info = self.members[name]
        if info.flag_bits & 0x1:
            raise ImportRejected(
                f"member {name!r} is encrypted; export the package again without a password.",
                reason="corrupt_archive",
                file=self.filename,
            )
        if info.file_size > cap:
            raise ImportRejected(
                f"member {name!r} unpacks to {info.file_size} bytes; the limit is {cap} bytes.",
                reason="archive_too_large",
                file=self.filename,
            )
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > MIB and ratio > self.limits.max_compression_ratio:
            raise ImportRejected(
                f"member {name!r} expands {ratio:.0f}-fold ({info.compress_size} to "
                f"{info.file_size} bytes); more than {self.limits.max_compression_ratio}-fold is "
                "refused as a ZIP bomb.",
                reason="archive_too_large",
                file=self.filename,
            )
        return info

    def _chunks(self, name: str, cap: int, zstd: bool) -> Iterator[bytes]:
        """The member's bytes (zstd-decoded when asked), never more than ``cap`` of them."""
        info = self._checked(name, cap if not zstd else self.limits.max_upload_bytes * 2)
        total = 0
        try:
            with self.zip.open(info) as raw:
                stream: IO[bytes] = raw
                if zstd:
                    head = raw.read(4)
                    if head != ZSTD_MAGIC:
                        raise ImportRejected(
                            f"member {name!r} should be zstd-compressed but is not.",
                            reason="corrupt_archive",
                            file=self.filename,
                        )
                    raw.seek(0)
                    decoder = zstandard.ZstdDecompressor(max_window_size=MAX_ZSTD_WINDOW)
                    stream = decoder.stream_reader(raw, read_across_frames=True)
                while chunk := stream.read(CHUNK):
                    total += len(chunk)
                    # The zstd layer gets the ZIP layer's ratio bound: its output against the
                    # member's own (zstd-compressed) size.
                    ratio = total / max(info.file_size, 1)
                    if zstd and total > MIB and ratio > self.limits.max_compression_ratio:
                        raise ImportRejected(
                            f"member {name!r} expands more than "
                            f"{self.limits.max_compression_ratio}-fold under zstd "
                            f"({info.file_size} to over {total} bytes); refused as a "
                            "compression bomb.",
                            reason="archive_too_large",
                            file=self.filename,
                        )
                    if total > cap:
                        raise ImportRejected(
                            f"member {name!r} unpacks to more than {cap} bytes; refused.",
                            reason="archive_too_large",
                            file=self.filename,
                        )
                    yield chunk
        except ImportRejected:
            raise
        except (
            zipfile.BadZipFile,
            zstandard.ZstdError,
            zlib.error,
            OSError,
            EOFError,
            ValueError,
        ) as exc:
            raise ImportRejected(
                f"member {name!r} is damaged ({exc}).", reason="corrupt_archive", file=self.filename
            ) from exc

    def extract(self, name: str, destination: str, *, cap: int, zstd: bool = False) -> None:
        with open(destination, "wb") as out:
            for chunk in self._chunks(name, cap, zstd):
                out.write(chunk)

    def read(self, name: str, *, cap: int, zstd: bool = False) -> bytes:
        return b"".join(self._chunks(name, cap, zstd))
