from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def upload(api, workspace):
    """POST a file to the workspace's import route; returns (status, envelope)."""

    def send(
        path: Path | None = None,
        *,
        content: bytes | None = None,
        name: str | None = None,
        workspace_id: object = None,
        **fields: Any,
    ) -> tuple[int, dict[str, Any]]:
        from django.core.files.uploadedfile import SimpleUploadedFile

        data = content if content is not None else Path(path).read_bytes()
        file = SimpleUploadedFile(name or Path(path).name, data)
        url = f"/v1/workspaces/{workspace_id or workspace.pk}/imports"
        response = api.post(url, {"file": file, **fields}, format="multipart")
        return response.status_code, response.json()

    return send
