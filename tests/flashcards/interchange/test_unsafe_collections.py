"""Issue #21: an uploaded collection runs none of the uploader's SQL, holds no value larger than
the import accepts, spends seconds (not minutes) being read, and every crafted value is a 400
that names the field — through the REST import route."""

from __future__ import annotations

import io
import json
import sqlite3
import zipfile
from pathlib import Path

import pytest
import zstandard
from django.test import override_settings

from flashcards.models import Card
from tests.fixtures.anki_packages import official_package, synthetic_collection

MIB = 1024 * 1024


def _zip(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def legacy_package(tmp_path: Path, *statements: str, notes: int = 2) -> bytes:
    """A schema-11 collection changed by ``statements``, as an .apkg."""
    path = tmp_path / "legacy.anki2"
    path.unlink(missing_ok=True)
    synthetic_collection(path, notes)
    db = sqlite3.connect(path)
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()
    return _zip({"collection.anki2": path.read_bytes()})


@pytest.fixture(scope="module")
def latest_parts(tmp_path_factory) -> dict[str, bytes]:
    """The members of a current (anki21b, schema 18) package exported by the anki library."""
    built = official_package(tmp_path_factory.mktemp("latest"), "apkg", legacy=False)
    with zipfile.ZipFile(built.path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def latest_package(parts: dict[str, bytes], tmp_path: Path, *statements: str) -> bytes:
    """The current package with its collection changed by ``statements``."""
    path = tmp_path / "latest.sqlite"
    path.unlink(missing_ok=True)
    raw = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(parts["collection.anki21b"]))
    path.write_bytes(raw.read())
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = DELETE")
    db.create_collation("unicase", lambda a, b: (a.lower() > b.lower()) - (a.lower() < b.lower()))
    for statement in statements:
        db.executescript(statement)
    db.commit()
    db.close()
    members = dict(parts)
    members["collection.anki21b"] = zstandard.ZstdCompressor().compress(path.read_bytes())
    return _zip(members, zipfile.ZIP_STORED)


def refused(upload, data: bytes, reason: str, name: str = "deck.apkg") -> dict:
    code, body = upload(content=data, name=name)
    assert code == 400, body
    assert body["error"]["details"]["reason"] == reason, body
    assert Card.objects.count() == 0
    return body["error"]


# ---------------------------------------------------------------- only plain tables, plain columns


def test_the_latest_package_still_imports(upload, latest_parts, tmp_path):
    code, body = upload(content=latest_package(latest_parts, tmp_path), name="deck.apkg")
    assert code == 200, body
    assert body["data"]["cards"]["created"] == 5


@pytest.mark.parametrize("table", ["fields", "templates", "decks", "notetypes"])
def test_a_view_in_place_of_a_table_is_refused_unread(upload, latest_parts, tmp_path, table):
    # The view would run a recursive CTE of zeroblobs: gigabytes from a kilobyte upload.
    columns = {
        "fields": "ntid, ord, name",
        "templates": "ntid, ord, config",
        "decks": "id, name",
        "notetypes": "id, name, config",
    }[table]
    width = len(columns.split(","))
    selects = ", ".join(["zeroblob(1000000)"] * width)
    data = latest_package(
        latest_parts,
        tmp_path,
        f"ALTER TABLE {table} RENAME TO {table}_old; "
        f"CREATE VIEW {table} ({columns}) AS WITH RECURSIVE r(n) AS "
        f"(SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 2000) SELECT {selects} FROM r;",
    )
    error = refused(upload, data, "unsafe_collection")
    assert f"'{table}' is a view" in error["message"]


def test_a_generated_column_is_refused_unread(upload, tmp_path):
    data = legacy_package(
        tmp_path,
        "ALTER TABLE notes ADD COLUMN evil text GENERATED ALWAYS AS (hex(zeroblob(1000))) VIRTUAL",
    )
    error = refused(upload, data, "unsafe_collection")
    assert "notes.evil is generated" in error["message"]


def test_a_generated_note_text_never_becomes_a_card(upload, tmp_path):
    data = legacy_package(
        tmp_path,
        "ALTER TABLE notes RENAME TO notes_old",
        "CREATE TABLE notes (id integer primary key, guid text, mid integer, mod integer, "
        "usn integer, tags text, sfld integer, csum integer, flags integer, data text, "
        "flds text GENERATED ALWAYS AS ('computed by the uploader' || char(31) || 'x') VIRTUAL)",
        "INSERT INTO notes (id, guid, mid, mod, usn, tags, sfld, csum, flags, data) "
        "SELECT id, guid, mid, mod, usn, tags, sfld, csum, flags, data FROM notes_old",
    )
    refused(upload, data, "unsafe_collection")


def test_a_virtual_table_is_refused_unread(upload, tmp_path):
    data = legacy_package(
        tmp_path,
        "DROP TABLE revlog",
        "CREATE VIRTUAL TABLE revlog USING fts4(id, cid, ease, type)",
    )
    error = refused(upload, data, "unsafe_collection")
    assert "virtual table" in error["message"]


def test_a_value_over_the_value_bound_is_refused(upload, tmp_path):
    data = legacy_package(tmp_path, "UPDATE notes SET flds = randomblob(5 * 1024 * 1024)")
    error = refused(upload, data, "corrupt_collection")
    assert "larger than the import accepts" in error["message"]


def test_the_collection_is_opened_read_only_immutable_and_untrusting(tmp_path, monkeypatch):
    from flashcards.interchange import anki
    from flashcards.interchange.limits import ImportLimits

    path = tmp_path / "c.anki2"
    synthetic_collection(path, 1)
    collection = anki.AnkiCollection(str(path), "c.apkg", ImportLimits(), anki.AnkiStats())
    try:
        assert collection.db.execute("PRAGMA trusted_schema").fetchone()[0] == 0
        assert collection.db.getlimit(sqlite3.SQLITE_LIMIT_LENGTH) == 4 * MIB
        with pytest.raises(sqlite3.OperationalError):
            collection.db.execute("PRAGMA query_only = 0")
            collection.db.execute("CREATE TABLE x (a)")
    finally:
        collection.close()


# ---------------------------------------------------------------- one time budget for every format


@override_settings(FLASHCARDS_IMPORTS={"max_import_seconds": 0.0})
def test_a_collection_over_the_time_budget_is_refused(upload, tmp_path):
    error = refused(upload, legacy_package(tmp_path, notes=3000), "import_too_slow")
    assert "time limit" in error["message"]


@override_settings(FLASHCARDS_IMPORTS={"max_import_seconds": 0.0})
def test_a_csv_over_the_time_budget_is_refused(upload):
    rows = "".join(f"front {i},back {i}\n" for i in range(3000))
    refused(upload, ("front_text,back_text\n" + rows).encode(), "import_too_slow", "deck.csv")


def test_the_budget_counts_reading_not_writing():
    import time

    from flashcards.interchange.limits import ImportBudget

    budget = ImportBudget(0.05)

    def slow_reader():
        yield 1
        yield 2

    for _ in budget.reading(slow_reader()):
        time.sleep(0.06)  # the writer's time: not counted
    assert not budget.exceeded()


# ---------------------------------------------------------------- crafted values: 400, field named


def _field_refusal(upload, data: bytes, field: str) -> None:
    error = refused(upload, data, "corrupt_collection")
    assert field in error["message"], error
    assert error["details"]["problems"][0]["field"] == field


def test_models_as_a_list_names_col_models(upload, tmp_path):
    _field_refusal(
        upload, legacy_package(tmp_path, "UPDATE col SET models = '[1, 2]'"), "col.models"
    )


def test_models_holding_infinity_names_col_models(upload, tmp_path):
    model = json.dumps({"1": {"id": 1, "name": "Basic", "flds": [], "tmpls": []}})
    model = model.replace('"id": 1', '"id": Infinity')
    data = legacy_package(tmp_path, f"UPDATE col SET models = '{model}'")
    _field_refusal(upload, data, "col.models")


def test_deeply_nested_models_name_col_models(upload, tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    data = legacy_package(tmp_path, f"UPDATE col SET models = '{{\"a\": {deep}}}'")
    _field_refusal(upload, data, "col.models")


def test_review_ease_as_text_names_revlog_ease(upload, tmp_path):
    data = legacy_package(tmp_path, "UPDATE revlog SET ease = 'three'")
    _field_refusal(upload, data, "revlog.ease")


def test_card_ord_as_text_names_cards_ord(upload, tmp_path):
    data = legacy_package(tmp_path, "UPDATE cards SET ord = 'zero'")
    _field_refusal(upload, data, "cards.ord")


def test_note_fields_as_a_number_are_a_problem_not_a_500(upload, tmp_path):
    code, body = upload(
        content=legacy_package(tmp_path, "UPDATE notes SET flds = 12345"), name="deck.apkg"
    )
    assert code in (200, 400), body


# ---------------------------------------------------------------- zstd and the media map


def test_zstd_output_gets_the_zip_ratio_bound(upload):
    zeros = zstandard.ZstdCompressor().compress(b"\x00" * (16 * MIB))
    assert len(zeros) < 64 * 1024
    data = _zip({"meta": b"\x08\x03", "collection.anki21b": zeros}, zipfile.ZIP_STORED)
    error = refused(upload, data, "archive_too_large")
    assert "compression bomb" in error["message"]


def test_a_media_map_of_too_many_entries_is_refused_without_decoding_it(
    upload, latest_parts, tmp_path
):
    entry = b"\x0a\x02\x0a\x00"  # MediaEntries.entries: one entry with an empty name
    media = zstandard.ZstdCompressor().compress(entry * 100_001)
    members = {**latest_parts, "media": media}
    error = refused(upload, _zip(members, zipfile.ZIP_STORED), "archive_too_large")
    assert "media map" in error["message"]


# ---------------------------------------------------------------- mutated collections: never a 500

COLUMNS = {
    "col": ["ver", "models", "decks"],
    "notes": ["id", "guid", "mid", "tags", "flds"],
    "cards": ["id", "nid", "did", "ord", "odid"],
    "revlog": ["id", "cid", "ease", "type"],
}
VALUES = [
    "NULL",
    "'text'",
    "X'00ff'",
    "1.5",
    "-1",
    "9223372036854775807",
    "'[1, 2]'",
    "'{\"1\": 1}'",
    '\'{"1": {"id": "x"}}\'',
    '\'{"1": {"id": 1, "flds": 3}}\'',
    '\'{"1": {"id": 1e400}}\'',
    "'NaN'",
    "'" + "[" * 5000 + "'",
]


def test_mutated_collections_never_give_a_500(upload, tmp_path):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    mutation = st.tuples(
        st.sampled_from(sorted(COLUMNS)).flatmap(
            lambda t: st.tuples(st.just(t), st.sampled_from(COLUMNS[t]))
        ),
        st.sampled_from(VALUES),
    )

    @settings(
        max_examples=40,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(st.lists(mutation, min_size=1, max_size=3))
    def check(mutations):
        statements = [f"UPDATE {t} SET {c} = {v}" for (t, c), v in mutations]
        try:
            data = legacy_package(tmp_path, *statements)
        except sqlite3.IntegrityError:
            return  # the mutation breaks a primary key: no such file can exist
        code, body = upload(content=data, name="mutated.apkg")
        assert code in (200, 400), body
        assert body["ok"] is (code == 200)

    check()


# ---------------------------------------------------------------- presets only inform the schedule


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE deck_config SET config = 'not a message'",
        "UPDATE deck_config SET config = x'ffffffffffffffffffff'",
        "UPDATE decks SET kind = 'not a message'",
        "UPDATE decks SET kind = x'0affffffff'",
    ],
    ids=["config-text", "config-truncated", "kind-text", "kind-truncated"],
)
def test_a_crafted_preset_never_answers_500(upload, latest_parts, tmp_path, statement):
    """A preset or deck kind Anki would not write: the cards import without it (replayed), or
    the package is refused with a 400 naming the field; never a 500."""
    code, body = upload(content=latest_package(latest_parts, tmp_path, statement), name="deck.apkg")
    assert code in (200, 400), body
    if code == 200:
        assert body["data"]["cards"]["created"] == 5


@pytest.mark.parametrize(
    "dconf",
    [
        '{"1": []}',
        '{"1": {"id": "one", "new": {"delays": "soon"}}}',
        '{"1": {"id": 1, "desiredRetention": "high", "rev": []}}',
        "[1, 2]",
    ],
)
def test_a_crafted_legacy_preset_never_answers_500(upload, tmp_path, dconf):
    data = legacy_package(tmp_path, f"UPDATE col SET dconf = '{dconf}'")
    code, body = upload(content=data, name="deck.apkg")
    assert code in (200, 400), body
    if code == 400:
        assert body["error"]["details"]["reason"], body
