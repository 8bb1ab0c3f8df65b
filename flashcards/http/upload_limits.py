"""Which routes take a larger body than the rest: the file uploads of
``POST /v1/workspaces/{workspace_id}/imports``, of the console's ``/console/import`` and of the
admin's workspace import page, up to the import limit (50 MiB by default,
``FLASHCARDS_IMPORTS["max_upload_bytes"]``; the two form pages with 64 KiB more for the form's
other fields and multipart framing). Read by both body-limit layers (the ASGI wrapper and
``RequestIdMiddleware``) so they always agree."""

from __future__ import annotations

import re

from flashcards.interchange.limits import MIB, import_limits

UPLOAD_PATH = re.compile(r"^/v1/workspaces/[^/]+/imports/?$")
FORM_UPLOAD_PATH = re.compile(r"^/(console/import|admin/flashcards/workspace/[^/]+/import)/?$")
FORM_OVERHEAD_BYTES = 64 * 1024


def body_limit_for(path: str, default: int) -> int:
    if UPLOAD_PATH.match(path):
        return import_limits().max_upload_bytes
    if FORM_UPLOAD_PATH.match(path):
        return import_limits().max_upload_bytes + FORM_OVERHEAD_BYTES
    return default


def describe_bytes(limit: int) -> str:
    if limit % MIB == 0:
        return f"{limit // MIB} MiB"
    return f"{limit // 1024} KiB" if limit % 1024 == 0 else f"{limit} bytes"
