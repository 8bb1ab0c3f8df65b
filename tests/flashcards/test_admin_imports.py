"""The workspace admin's import form and downloads."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from flashcards.models import Card
from tests.factories import UserFactory, make_card
from tests.fixtures.anki_packages import genanki_package


@pytest.fixture
def staff(db) -> Client:
    client = Client()
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    return client


def test_the_change_page_links_to_import_and_downloads(staff, workspace):
    page = staff.get(f"/admin/flashcards/workspace/{workspace.pk}/change/").content.decode()
    assert f"/admin/flashcards/workspace/{workspace.pk}/import/" in page
    assert f"/admin/flashcards/workspace/{workspace.pk}/export/cards.csv" in page


def test_staff_preview_then_import_an_anki_package(staff, workspace, tmp_path):
    url = f"/admin/flashcards/workspace/{workspace.pk}/import/"
    assert staff.get(url).status_code == 200
    package = genanki_package(tmp_path)

    def post(**extra):
        upload = SimpleUploadedFile("deck.apkg", package.path.read_bytes())
        return staff.post(url, {"file": upload, **extra}).content.decode()

    assert "Preview of deck.apkg, nothing written" in post(dry_run="on")
    assert Card.objects.count() == 0
    assert "Imported deck.apkg" in post()
    assert Card.objects.filter(workspace=workspace).count() == 5


def test_a_bad_file_is_shown_and_nothing_written(staff, workspace):
    url = f"/admin/flashcards/workspace/{workspace.pk}/import/"
    page = staff.post(url, {"file": SimpleUploadedFile("x.apkg", b"nope")}).content.decode()
    assert "Nothing imported" in page and "x.apkg" in page
    assert Card.objects.count() == 0


def test_staff_download_the_cards(staff, workspace):
    make_card(workspace, front_text="hola")
    response = staff.get(f"/admin/flashcards/workspace/{workspace.pk}/export/cards.csv")
    assert response.status_code == 200
    assert "hola" in b"".join(response.streaming_content).decode()
    assert staff.get(f"/admin/flashcards/workspace/{workspace.pk}/export/x.csv").status_code == 404


def test_non_staff_cannot_use_them(client, user, workspace):
    client.force_login(user)
    response = client.get(f"/admin/flashcards/workspace/{workspace.pk}/import/")
    assert response.status_code == 302
