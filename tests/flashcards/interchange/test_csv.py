"""CSV and TSV import (preview line by line, all or nothing) and export (streamed, the dialect's
columns), through the real routes; an export edited and imported back is exact."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime

import pytest

from flashcards import services
from flashcards.models import Card, ChangeLog
from flashcards.rows import CARD_COLUMNS, REVIEW_EVENT_COLUMNS, card_row
from tests.factories import make_card


def _export(api, workspace, name: str) -> str:
    response = api.get(f"/v1/workspaces/{workspace.pk}/exports/{name}")
    assert response.status_code == 200
    assert response.streaming
    return b"".join(response.streaming_content).decode("utf-8")


def test_csv_import_creates_cards_with_tags_in_both_spellings(upload, workspace):
    content = (
        "front_text,back_text,tags,effort_level\n"
        "hola,hello,spanish;greetings,medium\n"
        '"adiós","good\nbye","[""spanish"", ""a;b""]",\n'
    ).encode()
    code, body = upload(content=content, name="words.csv")
    assert code == 200, body
    assert body["data"]["cards"]["created"] == 2
    assert [(i["line"], i["action"]) for i in body["data"]["items"]] == [
        (2, "created"),
        (3, "created"),
    ]
    first, second = (
        Card.objects.get(front_text="hola"),
        Card.objects.get(front_text="adiós"),
    )
    assert (first.tags, first.effort_level) == (["spanish", "greetings"], "medium")
    assert (second.back_text, second.tags, second.effort_level) == (
        "good\nbye",
        ["spanish", "a;b"],
        "fast",
    )
    assert second.metadata["source"] == {"kind": "csv", "file": "words.csv"}
    assert ChangeLog.objects.filter(workspace=workspace, entity_type="card").count() == 2


def test_dry_run_previews_created_updated_and_rejected_lines(upload, workspace, other_workspace):
    mine = make_card(workspace, front_text="old", back_text="b")
    theirs = make_card(other_workspace, front_text="secret")
    content = (
        "card_id,front_text,back_text,effort_level\n"
        f"{mine.pk},new front,b,fast\n"
        ",fresh,x,fast\n"
        ",  ,x,fast\n"
        f"{theirs.pk},steal,x,fast\n"
        ",bad effort,x,huge\n"
        "not-a-uuid,a,b,fast\n"
        ",too,many,values,here\n"
    ).encode()
    code, body = upload(content=content, name="edit.csv", dry_run="true")
    assert code == 200
    items = [(i["line"], i["action"]) for i in body["data"]["items"]]
    assert items == [
        (2, "updated"),
        (3, "created"),
        (4, "rejected"),
        (5, "rejected"),
        (6, "rejected"),
        (7, "rejected"),
        (8, "rejected"),
    ]
    messages = {p["line"]: p["message"] for p in body["data"]["problems"]}
    assert "front_text must not be empty" in messages[4]
    assert "another workspace" in messages[5]
    assert "effort_level must be one of" in messages[6]
    assert "not a UUID" in messages[7]
    assert "has 5 values; the header names 4 columns" in messages[8]
    mine.refresh_from_db()
    assert mine.front_text == "old" and Card.objects.filter(workspace=workspace).count() == 1
    # The same file for real: refused whole, naming the lines.
    code, body = upload(content=content, name="edit.csv")
    assert code == 400
    assert body["error"]["details"]["reason"] == "invalid_rows"
    assert "edit.csv: 5 row(s) break a rule" in body["error"]["message"]
    assert [p["line"] for p in body["error"]["details"]["problems"]] == [4, 5, 6, 7, 8]
    mine.refresh_from_db()
    assert mine.front_text == "old" and Card.objects.filter(workspace=workspace).count() == 1


def test_a_wrong_header_is_refused_with_the_valid_columns(upload):
    code, body = upload(content=b"fron_text,answer\nx,y\n", name="w.csv")
    assert code == 400
    error = body["error"]
    assert error["details"]["reason"] == "bad_header"
    assert "w.csv: line 1" in error["message"]
    assert "Did you mean front_text?" in error["message"]
    assert "'answer'" in error["message"]
    assert Card.objects.count() == 0


def test_bad_utf8_names_the_line(upload):
    content = b"front_text,back_text\n" + b"ok,fine\n" * 3 + b"caf\xe9,latin-1\n"
    code, body = upload(content=content, name="latin.csv")
    assert code == 400
    assert body["error"]["details"]["reason"] == "bad_encoding"
    assert "latin.csv: line 5" in body["error"]["message"]
    assert Card.objects.count() == 0


def test_a_nul_character_is_an_invariant_failure_not_a_500(upload):
    code, body = upload(content=b"front_text,back_text\na\x00b,c\n", name="nul.csv")
    assert code == 400 and body["error"]["details"]["problems"][0]["line"] == 2


def test_an_empty_file_is_a_bad_header(upload):
    code, body = upload(content=b"", name="empty.csv")
    assert code == 400 and body["error"]["details"]["reason"] == "bad_header"


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_export_edit_import_round_trip_is_exact(api, upload, workspace, fmt):
    services.create_cards(
        workspace,
        [
            {"front_text": "plain", "back_text": "one", "tags": ["a", "b"]},
            {"front_text": 'quote " and, comma', "back_text": "tab\there\nnew line"},
            {"front_text": "semi", "back_text": "", "tags": ["x;y", "[z"], "effort_level": "long"},
            {"front_text": "bracket", "back_text": "b", "tags": ["[first", "second"]},
            {"front_text": "ünïcödé ✓", "back_text": "b", "card_type": "custom"},
        ],
    )
    card = Card.objects.get(front_text="plain")
    services.submit_review(workspace, card.pk, 2, reviewed_at=datetime(2026, 3, 1, tzinfo=UTC))
    exported = _export(api, workspace, f"cards.{fmt}")
    delimiter = "," if fmt == "csv" else "\t"
    rows = list(csv.reader(io.StringIO(exported, newline=""), delimiter=delimiter))
    assert tuple(rows[0]) == CARD_COLUMNS
    assert len(rows) == 6
    # Unchanged, the file imports as nothing to do.
    code, body = upload(content=exported.encode(), name=f"cards.{fmt}")
    assert code == 200, body
    assert body["data"]["cards"]["unchanged"] == 5
    assert sorted(body["data"]["csv"]["ignoredColumns"]) == sorted(
        c
        for c in CARD_COLUMNS
        if c not in {"card_id", "front_text", "back_text", "card_type", "tags", "effort_level"}
    )
    before = {c.pk: card_row(c) for c in Card.objects.all()}
    # Edit one cell and import back: exactly that card changes, nothing else.
    edited_rows = [list(r) for r in rows]
    back = CARD_COLUMNS.index("back_text")
    target = next(r for r in edited_rows if r[1] == "plain")
    target[back] = "one, edited\nwith a line"
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator="\r\n").writerows(edited_rows)
    code, body = upload(content=buffer.getvalue().encode(), name=f"cards.{fmt}")
    assert code == 200
    assert body["data"]["cards"]["updated"] == 1 and body["data"]["cards"]["unchanged"] == 4
    after = {c.pk: card_row(c) for c in Card.objects.all()}
    for pk, row in before.items():
        if pk == card.pk:
            assert after[pk]["back_text"] == "one, edited\nwith a line"
            assert {k: v for k, v in after[pk].items() if k not in {"back_text", "updated_at"}} == {
                k: v for k, v in row.items() if k not in {"back_text", "updated_at"}
            }
        else:
            assert after[pk] == row
    # And the next export is the edited file, byte for byte, but for that row's updated_at.
    again = list(
        csv.reader(
            io.StringIO(_export(api, workspace, f"cards.{fmt}"), newline=""), delimiter=delimiter
        )
    )
    updated = CARD_COLUMNS.index("updated_at")
    for old, new in zip(edited_rows, again, strict=True):
        assert old[:updated] + old[updated + 1 :] == new[:updated] + new[updated + 1 :]


def test_review_events_export_in_the_dialect_columns(api, workspace):
    card = make_card(workspace)
    services.submit_review(
        workspace, card.pk, "good", reviewed_at=datetime(2026, 3, 1, 10, tzinfo=UTC)
    )
    rows = list(csv.DictReader(io.StringIO(_export(api, workspace, "review_events.csv"))))
    assert list(rows[0]) == list(REVIEW_EVENT_COLUMNS)
    assert rows[0]["rating"] == "2" and rows[0]["review_grade"] == "good"
    assert rows[0]["reviewed_at_client"] == "2026-03-01T10:00:00.000Z"
    assert rows[0]["card_id"] == str(card.pk)


def test_exports_see_only_their_workspace(api, workspace, other_workspace):
    make_card(workspace, front_text="mine")
    make_card(other_workspace, front_text="theirs")
    text = _export(api, workspace, "cards.csv")
    assert "mine" in text and "theirs" not in text
    response = api.get(f"/v1/workspaces/{other_workspace.pk}/exports/cards.csv")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "WORKSPACE_NOT_FOUND"


def test_export_with_an_accept_header_for_csv(api, workspace):
    make_card(workspace)
    response = api.get(f"/v1/workspaces/{workspace.pk}/exports/cards.tsv", HTTP_ACCEPT="text/csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/tab-separated-values")
    assert response["Content-Disposition"] == 'attachment; filename="cards.tsv"'


def test_csv_metadata_is_json_in_the_export(api, workspace):
    make_card(workspace)
    row = next(csv.DictReader(io.StringIO(_export(api, workspace, "cards.csv"))))
    assert json.loads(row["metadata"])["version"] == 1


def test_the_openapi_schema_describes_the_new_routes(api):
    schema = api.get("/v1/openapi.json").json()
    imports = schema["paths"]["/v1/workspaces/{workspace_id}/imports"]["post"]
    body = imports["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert imports["operationId"] == "workspace_import"
    assert body
    exports = [p for p in schema["paths"] if "/exports/" in p]
    assert exports


def test_an_unknown_export_is_a_404_listing_the_exports(api, workspace):
    response = api.get(f"/v1/workspaces/{workspace.pk}/exports/decks.csv")
    assert response.status_code == 404
    assert "cards.csv" in response.json()["error"]["message"]


def test_every_import_is_logged(upload, caplog):
    with caplog.at_level("INFO", logger="flashcards.imports"):
        upload(content=b"front_text,back_text\na,b\n", name="ok.csv")
        upload(content=b"nope\n", name="bad.csv")
    messages = [r.getMessage() for r in caplog.records if r.name == "flashcards.imports"]
    assert any("import done" in m and "file='ok.csv'" in m and "created=1" in m for m in messages)
    assert any("import refused" in m and "reason=bad_header" in m for m in messages)
