"""Every surface that exports writes the same .apkg: the console link, the admin download, the
management command (the MCP tool: tests/flashcards/api/test_mcp_imports.py); each package is a readable schema-11 Anki collection."""

from __future__ import annotations

import io
import sqlite3
import zipfile

import pytest
from django.core.management import call_command
from django.test import Client

from tests.factories import UserFactory, make_card


def _fronts(data: bytes, tmp_path) -> list[str]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.read("media") == b"{}"
        (tmp_path / "c.anki2").write_bytes(archive.read("collection.anki2"))
    db = sqlite3.connect(tmp_path / "c.anki2")
    try:
        assert db.execute("SELECT ver FROM col").fetchone() == (11,)
        return sorted(flds.split("\x1f")[0] for (flds,) in db.execute("SELECT flds FROM notes"))
    finally:
        db.close()


@pytest.fixture
def staff(db) -> Client:
    client = Client()
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    return client


def test_console_and_admin_offer_and_serve_the_package(client, user, staff, workspace, tmp_path):
    make_card(workspace, front_text="hola")
    client.force_login(user)
    page = client.get(f"/console/import?workspace_id={workspace.pk}").content.decode()
    assert f"/v1/workspaces/{workspace.pk}/exports/cards.apkg" in page
    response = client.get(f"/v1/workspaces/{workspace.pk}/exports/cards.apkg")
    assert response.status_code == 200
    assert _fronts(b"".join(response.streaming_content), tmp_path) == ["hola"]
    response = staff.get(f"/admin/flashcards/workspace/{workspace.pk}/export/cards.apkg")
    assert response.status_code == 200
    assert _fronts(b"".join(response.streaming_content), tmp_path) == ["hola"]


def test_the_command_writes_the_package(workspace, tmp_path):
    make_card(workspace, front_text="adiós")
    out = tmp_path / "cards.apkg"
    call_command("export_cards", str(workspace.pk), str(out), "--format", "apkg")
    assert _fronts(out.read_bytes(), tmp_path) == ["adiós"]
    csv_out = tmp_path / "cards.csv"
    call_command("export_cards", str(workspace.pk), str(csv_out))
    assert "adiós" in csv_out.read_text(encoding="utf-8")
