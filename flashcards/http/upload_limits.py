"""Which API routes take a larger body than the 256 KiB of the rest of the API: the file
upload of ``POST /v1/workspaces/{workspace_id}/imports``, up to the import limit (50 MiB by
default, ``FLASHCARDS_IMPORTS["max_upload_bytes"]``). Read by both body-limit layers (the ASGI
wrapper and ``RequestIdMiddleware``) so they always agree."""

from __future__ import annotations

import re

from flashcards.interchange.limits import MIB, import_limits

UPLOAD_PATH = re.compile(r"^/v1/workspaces/[^/]+/imports/?$")


def body_limit_for(path: str, default: int) -> int:
    if UPLOAD_PATH.match(path):
        return import_limits().max_upload_bytes
    return default


def describe_bytes(limit: int) -> str:
    if limit % MIB == 0:
        return f"{limit // MIB} MiB"
    return f"{limit // 1024} KiB" if limit % 1024 == 0 else f"{limit} bytes"
