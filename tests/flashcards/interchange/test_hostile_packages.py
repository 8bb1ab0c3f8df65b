"""Bad and hostile input: each refused with a clear error naming the file (and the line or note)
and what is wrong, with nothing written and never a 500."""

from __future__ import annotations

import io
import sqlite3
import struct
import zipfile
from pathlib import Path

import pytest
import zstandard
from django.test import override_settings

from flashcards.models import Card, ChangeLog, ReviewEvent
from tests.fixtures.anki_packages import genanki_package, synthetic_collection

MIB = 1024 * 1024


def _zip(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _collection(tmp_path: Path, notes: int = 2, **changes: str) -> bytes:
    path = tmp_path / "c.anki2"
    synthetic_collection(path, notes)
    db = sqlite3.connect(path)
    for statement in changes.values():
        db.execute(statement)
    db.commit()
    db.close()
    return path.read_bytes()


def _refused(upload, content: bytes, name: str, reason: str, status: int = 400, **fields):
    code, body = upload(content=content, name=name, **fields)
    assert code == status, body
    assert body["ok"] is False
    assert body["error"]["details"]["reason"] == reason, body
    assert name in body["error"]["message"]
    assert Card.objects.count() == 0 and ReviewEvent.objects.count() == 0
    assert ChangeLog.objects.filter(entity_type="card").count() == 0
    return body["error"]


def test_a_corrupt_zip_is_refused(upload):
    _refused(upload, b"PK\x03\x04 this is not really a zip", "deck.apkg", "corrupt_archive")


def test_a_truncated_zip_is_refused(upload, tmp_path):
    data = genanki_package(tmp_path).path.read_bytes()
    _refused(upload, data[: len(data) // 2], "deck.apkg", "corrupt_archive")


def test_a_package_without_a_collection_is_refused(upload):
    error = _refused(upload, _zip({"media": b"{}"}), "deck.apkg", "missing_collection")
    assert "collection.anki21b" in error["message"]


def test_a_latest_package_without_its_collection_is_refused(upload, tmp_path):
    data = _zip({"meta": b"\x08\x03", "collection.anki2": _collection(tmp_path)})
    _refused(upload, data, "deck.apkg", "missing_collection")


def test_an_unknown_schema_version_is_refused(upload, tmp_path):
    data = _zip({"collection.anki2": _collection(tmp_path, ver="UPDATE col SET ver = 99")})
    error = _refused(upload, data, "deck.apkg", "unsupported_schema")
    assert "99" in error["message"] and "11 to 18" in error["message"]


def test_an_unknown_package_version_is_refused(upload, tmp_path):
    data = _zip({"meta": b"\x08\x07", "collection.anki2": _collection(tmp_path)})
    _refused(upload, data, "deck.apkg", "unsupported_schema")


def test_a_collection_that_is_not_sqlite_is_refused(upload):
    data = _zip({"collection.anki2": b"definitely not a database" * 100})
    _refused(upload, data, "deck.colpkg", "corrupt_collection")


def test_a_database_that_is_not_a_collection_is_refused(upload, tmp_path):
    path = tmp_path / "x.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE something (x)")
    db.commit()
    db.close()
    _refused(upload, _zip({"collection.anki2": path.read_bytes()}), "d.apkg", "missing_collection")


def test_a_card_anki_would_not_generate_is_named_skipped_and_the_rest_imports(upload, tmp_path):
    # A front of only <br> is empty to Anki (rslib field_is_empty): Anki shows no such card.
    data = _zip(
        {
            "collection.anki2": _collection(
                tmp_path,
                notes=3,
                empty="UPDATE notes SET flds = '<br>' || char(31) || 'x' WHERE guid = 'g1'",
            )
        }
    )
    code, body = upload(content=data, name="deck.apkg")
    assert code == 200, body
    report = body["data"]
    assert report["written"] is True
    assert report["cards"]["skipped"] == 1 and report["cards"]["created"] == 2
    assert report["anki"]["notGenerated"] == 1
    (skipped,) = report["skippedRows"]
    assert skipped["note"] == 1_700_000_000_001
    assert "note 1700000000001" in skipped["message"] and "no card" in skipped["message"]
    assert Card.objects.count() == 2


def test_a_note_over_a_limit_is_listed_by_the_dry_run_and_the_rest_imports(upload, tmp_path):
    long_front = "x" * 20_001
    data = _zip(
        {
            "collection.anki2": _collection(
                tmp_path,
                notes=3,
                big=f"UPDATE notes SET flds = '{long_front}' || char(31) || 'x' WHERE guid = 'g2'",
            )
        }
    )
    code, body = upload(content=data, name="deck.apkg", dry_run="1")
    assert code == 200
    assert body["data"]["cards"]["skipped"] == 1 and body["data"]["cards"]["created"] == 2
    assert body["data"]["cards"]["rejected"] == 0
    assert [i["action"] for i in body["data"]["items"]] == ["created", "created", "skipped"]
    (skipped,) = body["data"]["skippedRows"]
    assert skipped["note"] == 1_700_000_000_002 and "20000 characters" in skipped["message"]
    assert Card.objects.count() == 0
    code, body = upload(content=data, name="deck.apkg")
    assert code == 200 and body["data"]["written"] is True
    assert Card.objects.count() == 2


@override_settings(FLASHCARDS_IMPORTS={"max_compression_ratio": 50})
def test_a_zip_bomb_is_refused_before_it_is_unpacked(upload):
    bomb = _zip({"collection.anki2": b"\x00" * (64 * MIB)})
    assert len(bomb) < MIB
    error = _refused(upload, bomb, "bomb.apkg", "archive_too_large")
    assert "ZIP bomb" in error["message"]


@override_settings(FLASHCARDS_IMPORTS={"max_collection_bytes": 2 * MIB})
def test_an_oversized_member_is_refused_by_its_declared_size(upload):
    data = _zip({"collection.anki2": b"\x00" * (3 * MIB)}, zipfile.ZIP_STORED)
    error = _refused(upload, data, "big.apkg", "archive_too_large")
    assert "unpacks to" in error["message"]


@override_settings(FLASHCARDS_IMPORTS={"max_collection_bytes": 2 * MIB})
def test_a_zstd_bomb_inside_the_zip_stops_at_the_limit(upload):
    compressor = zstandard.ZstdCompressor()
    zeros = io.BytesIO()
    with compressor.stream_writer(zeros, closefd=False) as writer:
        for _ in range(16):
            writer.write(b"\x00" * MIB)
    data = _zip({"meta": b"\x08\x03", "collection.anki21b": zeros.getvalue()}, zipfile.ZIP_STORED)
    error = _refused(upload, data, "bomb.apkg", "archive_too_large")
    assert "more than" in error["message"]


@pytest.mark.parametrize("name", ["../../etc/passwd", "/abs/path", "a\\..\\b", "C:evil"])
def test_a_member_path_that_leaves_the_archive_is_refused(upload, tmp_path, name):
    data = _zip({"collection.anki2": _collection(tmp_path), name: b"x"})
    error = _refused(upload, data, "deck.apkg", "unsafe_archive")
    assert "leaves the archive" in error["message"]


@override_settings(FLASHCARDS_IMPORTS={"max_archive_members": 10})
def test_too_many_members_are_refused_from_the_end_record(upload):
    data = _zip({str(i): b"x" for i in range(20)})
    error = _refused(upload, data, "many.apkg", "archive_too_large")
    assert "20 members" in error["message"]


def test_a_forged_member_count_is_refused_before_parsing():
    from flashcards.interchange.archive import PackageArchive
    from flashcards.interchange.errors import ImportRejected
    from flashcards.interchange.limits import ImportLimits

    data = bytearray(_zip({"a": b"x"}))
    end = data.rfind(b"PK\x05\x06")
    data[end + 8 : end + 12] = struct.pack("<HH", 60_000, 60_000)
    with pytest.raises(ImportRejected) as caught:
        PackageArchive(io.BytesIO(bytes(data)), "f.apkg", ImportLimits(max_archive_members=1000))
    assert caught.value.reason == "archive_too_large"


@override_settings(FLASHCARDS_IMPORTS={"max_upload_bytes": 64 * 1024})
def test_an_upload_over_the_import_limit_is_413(upload):
    code, body = upload(content=b"x" * (80 * 1024), name="deck.csv")
    assert code == 413
    assert body["error"]["code"] == "REQUEST_TOO_LARGE"
    assert body["error"]["details"]["limitBytes"] == 64 * 1024


def test_the_import_route_accepts_more_than_the_api_body_limit(upload, tmp_path):
    rows = "".join(f"card {i} {'x' * 300},back\n" for i in range(1000))
    code, body = upload(content=("front_text,back_text\n" + rows).encode(), name="big.csv")
    assert code == 200, body
    assert body["data"]["cards"]["created"] == 1000


def test_an_unknown_format_is_refused(upload):
    error = _refused(upload, b"hello", "notes.docx", "unknown_format")
    assert "apkg, colpkg, csv, tsv" in error["message"] or "*.apkg" in error["message"]


def test_a_missing_file_field_is_a_400(api, workspace):
    response = api.post(f"/v1/workspaces/{workspace.pk}/imports", {"format": "csv"})
    assert response.status_code == 400
    assert response.json()["error"]["details"]["field"] == "file"


def test_a_json_body_is_told_to_use_multipart(api, workspace):
    response = api.post(f"/v1/workspaces/{workspace.pk}/imports", {"x": 1}, format="json")
    assert response.status_code == 400
    assert "multipart/form-data" in response.json()["error"]["message"]


def test_without_credentials_the_route_is_401(client, workspace):
    response = client.post(f"/v1/workspaces/{workspace.pk}/imports")
    assert response.status_code == 401


@pytest.mark.parametrize("legacy", [True, False])
def test_damaged_bytes_anywhere_in_a_real_package_never_give_a_500(upload, tmp_path, legacy):
    import random

    from tests.fixtures.anki_packages import official_package

    original = official_package(tmp_path, "apkg", legacy=legacy).path.read_bytes()
    rng = random.Random(14)
    for _ in range(40):
        data = bytearray(original)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        code, body = upload(content=bytes(data), name="damaged.apkg")
        assert code in (200, 400), body
        assert body["ok"] is (code == 200)


def test_a_note_whose_fields_are_not_utf8_is_named(upload, tmp_path):
    data = _zip(
        {
            "collection.anki2": _collection(
                tmp_path,
                notes=2,
                bad="UPDATE notes SET flds = CAST(X'66ff1f62' AS TEXT) WHERE guid = 'g0'",
            )
        }
    )
    error = _refused(upload, data, "deck.apkg", "invalid_rows")
    assert error["details"]["problems"][0]["note"] == 1_700_000_000_000
    assert "not UTF-8" in error["details"]["problems"][0]["message"]


def test_the_temporary_folder_is_removed(upload, tmp_path, monkeypatch):
    import tempfile

    (tmp_path / "c").mkdir()
    data = _zip({"collection.anki2": _collection(tmp_path / "c", notes=1)})
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "t"))
    (tmp_path / "t").mkdir()
    code, _ = upload(content=data, name="deck.apkg")
    assert code == 200
    assert list((tmp_path / "t").iterdir()) == []
