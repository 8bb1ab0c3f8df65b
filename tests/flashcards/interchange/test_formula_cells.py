"""Issue #21: CSV/TSV exports escape formula cells (OWASP's CSV-injection rule), ``raw=true``
writes them unchanged, and an import reads back exactly what either export wrote; the CSV header
check is linear, capped and reports a bounded list of problems."""

from __future__ import annotations

import csv
import io
import time

import pytest

from flashcards.models import Card
from tests.factories import make_card

FORMULAS = [
    '=HYPERLINK("http://evil.example","click")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A2)",
    "\tindented",
    "\rcarriage",
    "'=already quoted",
    "''+twice",
    "plain text",
    "it's fine",
    "'quoted but no formula",
]


def _export(api, workspace, fmt: str = "csv", raw: bool = False) -> str:
    url = f"/v1/workspaces/{workspace.pk}/exports/cards.{fmt}" + ("?raw=true" if raw else "")
    response = api.get(url)
    assert response.status_code == 200
    return b"".join(response.streaming_content).decode()


def _cells(text: str, fmt: str, column: str) -> list[str]:
    reader = csv.DictReader(io.StringIO(text), delimiter="," if fmt == "csv" else "\t")
    return [row[column] for row in reader]


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_formula_cells_are_escaped_by_default_and_raw_on_request(api, workspace, fmt):
    for text in FORMULAS:
        make_card(workspace, front_text=text, back_text="b", tags=["=tag"])
    escaped = _cells(_export(api, workspace, fmt), fmt, "front_text")
    for cell in escaped:
        assert cell[:1] not in ("=", "+", "-", "@", "\t", "\r"), cell
    assert "'" + FORMULAS[0] in escaped
    assert "''=already quoted" in escaped and "'''+twice" in escaped
    assert "plain text" in escaped and "'quoted but no formula" in escaped
    assert set(_cells(_export(api, workspace, fmt), fmt, "tags")) == {"'=tag"}
    raw = _cells(_export(api, workspace, fmt, raw=True), fmt, "front_text")
    assert sorted(raw) == sorted(Card.objects.values_list("front_text", flat=True))
    assert FORMULAS[0] in raw and "@SUM(A1:A2)" in raw


@pytest.mark.parametrize("raw", [False, True])
def test_import_reads_back_what_export_wrote(api, workspace, upload, raw):
    for text in FORMULAS:
        make_card(workspace, front_text=text, back_text=text, tags=["=tag", "-x"])
    before = {c.pk: (c.front_text, c.back_text, c.tags) for c in Card.objects.all()}
    exported = _export(api, workspace, raw=raw)
    Card.objects.update(front_text="changed", back_text="changed", tags=[])
    fields = {"raw": "true"} if raw else {}
    code, body = upload(content=exported.encode(), name="cards.csv", **fields)
    assert code == 200, body
    after = {c.pk: (c.front_text, c.back_text, c.tags) for c in Card.objects.all()}
    assert after == before


# ---------------------------------------------------------------- the header check


def test_a_header_of_forty_thousand_columns_is_refused_at_once(upload):
    header = ",".join(f"c{i}" for i in range(40_000))
    started = time.perf_counter()
    code, body = upload(content=(header + "\n").encode(), name="wide.csv")
    assert time.perf_counter() - started < 2
    assert code == 400
    assert body["error"]["details"]["reason"] == "bad_header"
    assert "40000 columns" in body["error"]["message"]
    assert len(body["error"]["message"]) < 1000


def test_unknown_columns_are_reported_a_few_dozen_at_most_with_a_count(upload):
    header = "front_text," + ",".join(f"unknown{i}" for i in range(60))
    code, body = upload(content=(header + "\nx," + "," * 59 + "\n").encode(), name="wide.csv")
    assert code == 400
    problems = body["error"]["details"]["problems"]
    assert len(problems) <= 21
    assert problems[-1]["omitted"] == 40
    assert "40 more problem(s)" in body["error"]["message"]
