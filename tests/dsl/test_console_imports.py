"""The console's import page: a plain multipart form (preview, then import) and download links."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from flashcards.models import Card


@pytest.fixture
def signed_in(client, user):
    client.force_login(user)
    return client


def test_the_console_links_to_the_import_page_and_the_export(signed_in, workspace):
    page = signed_in.get("/console/").content.decode()
    assert "/console/import?workspace_id=" in page
    assert f"/v1/workspaces/{workspace.pk}/exports/cards.csv" in page


def test_preview_then_import_a_csv(signed_in, workspace):
    def post(dry_run: bool):
        data = {
            "workspace_id": str(workspace.pk),
            "file": SimpleUploadedFile("w.csv", b"front_text,back_text\nhola,hello\n"),
        }
        if dry_run:
            data["dry_run"] = "on"
        return signed_in.post("/console/import", data)

    preview = post(True)
    assert preview.status_code == 200
    assert "Preview of w.csv (nothing written)" in preview.content.decode()
    assert Card.objects.count() == 0
    done = post(False)
    assert "Imported w.csv" in done.content.decode()
    assert Card.objects.get(workspace=workspace).front_text == "hola"


def test_a_bad_file_shows_the_problem_lines(signed_in, workspace):
    response = signed_in.post(
        "/console/import",
        {
            "workspace_id": str(workspace.pk),
            "file": SimpleUploadedFile("b.csv", b"front_text\n \n x\n\xff\n"),
        },
    )
    assert response.status_code == 400
    assert "Nothing imported" in response.content.decode()


def test_the_import_page_lists_the_downloads(signed_in, workspace):
    page = signed_in.get(f"/console/import?workspace_id={workspace.pk}").content.decode()
    for name in ("cards.csv", "cards.tsv", "review_events.csv"):
        assert f"/v1/workspaces/{workspace.pk}/exports/{name}" in page


def test_a_session_downloads_the_export(signed_in, workspace):
    response = signed_in.get(f"/v1/workspaces/{workspace.pk}/exports/cards.csv")
    assert response.status_code == 200
    assert b"".join(response.streaming_content).startswith(b"card_id,front_text")


def test_a_strange_workspace_id_falls_back_to_ones_own(signed_in, workspace):
    assert signed_in.get("/console/import?workspace_id=a/b").status_code == 200
    assert signed_in.get("/console/?workspace_id=a/b").status_code == 200
