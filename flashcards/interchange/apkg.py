"""A workspace as an Anki package: a schema-11 ``collection.anki2`` (the layout every Anki since
2.1 imports) written with the standard library's sqlite3 into a temporary file and zipped with
an empty media map. Cards become notes of one "Basic" note type (Front, Back), their deck is
the tag tree's (docs/import-export.md), tags become note tags, review events the revlog, and
the FSRS state goes into ``cards.data`` (``s``, ``d``, ``dr``, ``lrt``) with Anki's due: a day
number for review cards (days since ``crt``, UTC days starting at the rollover hour), epoch
seconds for (re)learning cards."""

from __future__ import annotations

import html
import json
import os
import sqlite3
import tempfile
import time
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import IO, Any

from flashcards.models import Card, ReviewEvent, Workspace

NOTE_TYPE_ID = 1_700_000_000_000
DEFAULT_DECK_ID = 1
DECK_CONFIG_ID = 1
ROLLOVER_HOUR = 4
DAY_SECONDS = 86_400
# cards.type / queue by this product's state
TYPES = {"new": 0, "learning": 1, "review": 2, "relearning": 3}
# revlog.type: 0 learn, 1 review, 2 relearn (the state the card was in when answered)
REVLOG_TYPES = {"new": 0, "learning": 0, "review": 1, "relearning": 2}

SCHEMA = """
CREATE TABLE col (id integer primary key, crt integer not null, mod integer not null,
  scm integer not null, ver integer not null, dty integer not null, usn integer not null,
  ls integer not null, conf text not null, models text not null, decks text not null,
  dconf text not null, tags text not null);
CREATE TABLE notes (id integer primary key, guid text not null, mid integer not null,
  mod integer not null, usn integer not null, tags text not null, flds text not null,
  sfld integer not null, csum integer not null, flags integer not null, data text not null);
CREATE TABLE cards (id integer primary key, nid integer not null, did integer not null,
  ord integer not null, mod integer not null, usn integer not null, type integer not null,
  queue integer not null, due integer not null, ivl integer not null, factor integer not null,
  reps integer not null, lapses integer not null, left integer not null, odue integer not null,
  odid integer not null, flags integer not null, data text not null);
CREATE TABLE revlog (id integer primary key, cid integer not null, usn integer not null,
  ease integer not null, ivl integer not null, lastIvl integer not null,
  factor integer not null, time integer not null, type integer not null);
CREATE TABLE graves (usn integer not null, oid integer not null, type integer not null);
CREATE INDEX ix_notes_usn on notes (usn);
CREATE INDEX ix_cards_usn on cards (usn);
CREATE INDEX ix_revlog_usn on revlog (usn);
CREATE INDEX ix_cards_nid on cards (nid);
CREATE INDEX ix_cards_sched on cards (did, queue, due);
CREATE INDEX ix_revlog_cid on revlog (cid);
CREATE INDEX ix_notes_csum on notes (csum);
"""


def _field_html(text: str) -> str:
    return html.escape(text, quote=False).replace("\n", "<br>")


def card_deck(card: Card) -> str | None:
    """The deck a card goes to: the Anki deck it came from when that is still one of its tags,
    else its first hierarchical tag (``a::b``), else none (Anki's Default deck)."""
    source = card.metadata.get("source") if isinstance(card.metadata, dict) else None
    deck = source.get("deck") if isinstance(source, dict) else None
    if isinstance(deck, str) and deck in card.tags:
        return deck
    return next((t for t in card.tags if "::" in t), None)


def _note_type(now: int) -> dict[str, Any]:
    return {
        "id": NOTE_TYPE_ID,
        "name": "Basic (flashcards)",
        "type": 0,
        "mod": now,
        "usn": -1,
        "sortf": 0,
        "did": DEFAULT_DECK_ID,
        "tmpls": [
            {
                "name": "Card 1",
                "ord": 0,
                "qfmt": "{{Front}}",
                "afmt": "{{FrontSide}}\n\n<hr id=answer>\n\n{{Back}}",
                "bqfmt": "",
                "bafmt": "",
                "did": None,
                "bfont": "",
                "bsize": 0,
            }
        ],
        "flds": [
            {"name": name, "ord": i, "sticky": False, "rtl": False, "font": "Arial", "size": 20}
            for i, name in enumerate(("Front", "Back"))
        ],
        "css": ".card { font-family: arial; font-size: 20px; text-align: center; }",
        "latexPre": "",
        "latexPost": "",
        "latexsvg": False,
        "req": [[0, "any", [0]]],
        "tags": [],
        "vers": [],
    }


def _deck(deck_id: int, name: str, now: int) -> dict[str, Any]:
    return {
        "id": deck_id,
        "name": name,
        "mod": now,
        "usn": -1,
        "lrnToday": [0, 0],
        "revToday": [0, 0],
        "newToday": [0, 0],
        "timeToday": [0, 0],
        "collapsed": False,
        "browserCollapsed": False,
        "desc": "",
        "dyn": 0,
        "conf": DECK_CONFIG_ID,
        "extendNew": 0,
        "extendRev": 0,
    }


def _deck_config(workspace: Workspace, now: int) -> dict[str, Any]:
    return {
        "id": DECK_CONFIG_ID,
        "name": "Default",
        "mod": now,
        "usn": -1,
        "maxTaken": 60,
        "autoplay": True,
        "timer": 0,
        "replayq": True,
        "dyn": False,
        "new": {
            "delays": [float(m) for m in workspace.learning_steps_minutes],
            "ints": [1, 4, 0],
            "initialFactor": 2500,
            "order": 1,
            "perDay": 20,
            "bury": False,
        },
        "lapse": {
            "delays": [float(m) for m in workspace.relearning_steps_minutes],
            "mult": 0.0,
            "minInt": 1,
            "leechFails": 8,
            "leechAction": 1,
        },
        "rev": {
            "perDay": 200,
            "ease4": 1.3,
            "ivlFct": 1.0,
            "maxIvl": workspace.maximum_interval_days,
            "bury": False,
            "hardFactor": 1.2,
        },
        "desiredRetention": workspace.desired_retention,
    }


def _ms(value: datetime) -> int:
    return int(value.timestamp() * 1000)


class _Ids:
    """Anki ids are epoch milliseconds and must be unique per table."""

    def __init__(self) -> None:
        self.used: set[int] = set()

    def take(self, wanted: int) -> int:
        while wanted in self.used:
            wanted += 1
        self.used.add(wanted)
        return wanted


def _anki_card(card: Card, crt: int, position: int, workspace: Workspace) -> dict[str, Any]:
    state = card.fsrs_card_state
    if state == "new" or card.due_at is None:
        return {"type": 0, "queue": 0, "due": position, "ivl": 0, "left": 0, "data": "{}"}
    data: dict[str, Any] = {
        "s": round(card.fsrs_stability or 0.0, 4),
        "d": round(card.fsrs_difficulty or 0.0, 3),
        "dr": None,
    }
    if card.fsrs_last_reviewed_at is not None:
        data["lrt"] = int(card.fsrs_last_reviewed_at.timestamp())
    if state == "review":
        due = (int(card.due_at.timestamp()) - crt) // DAY_SECONDS
        interval = card.fsrs_scheduled_days or 0
        return {"type": 2, "queue": 2, "due": due, "ivl": interval, "left": 0, "data": data}
    # (Re)learning: Anki's ``left`` counts the steps still to do.
    steps = (
        workspace.learning_steps_minutes
        if state == "learning"
        else workspace.relearning_steps_minutes
    )
    return {
        "type": TYPES[state],
        "queue": 1,
        "due": int(card.due_at.timestamp()),
        "ivl": card.fsrs_scheduled_days or 0,
        "left": max(1, len(steps) - (card.fsrs_step_index or 0)),
        "data": data,
    }


def write_collection(workspace: Workspace, path: str) -> dict[str, int]:
    """Write the workspace's live cards and their review events into a new schema-11
    collection at ``path``; returns counts."""
    now = int(time.time())
    today = datetime.now(tz=UTC).replace(hour=ROLLOVER_HOUR, minute=0, second=0, microsecond=0)
    if datetime.now(tz=UTC).hour < ROLLOVER_HOUR:
        today -= timedelta(days=1)
    # The collection was "created" on the earliest day any card is due, so due days stay >= 0.
    first_due = (
        Card.objects.filter(workspace=workspace, deleted_at__isnull=True, due_at__isnull=False)
        .order_by("due_at")
        .values_list("due_at", flat=True)
        .first()
    )
    crt_day = today
    if first_due is not None and first_due < today:
        crt_day = today - timedelta(days=(today - first_due).days + 1)
    crt = int(crt_day.timestamp())
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    decks: dict[str, int] = {}
    deck_ids = _Ids()
    deck_ids.used.add(DEFAULT_DECK_ID)
    note_ids, card_ids, revlog_ids = _Ids(), _Ids(), _Ids()
    counts = {"cards": 0, "reviews": 0, "decks": 0}

    def deck_id(name: str | None) -> int:
        if not name:
            return DEFAULT_DECK_ID
        if name not in decks:
            parent = name.rsplit("::", 1)[0] if "::" in name else None
            if parent:
                deck_id(parent)
            decks[name] = deck_ids.take(NOTE_TYPE_ID + 1 + len(decks))
        return decks[name]

    cards = Card.objects.filter(workspace=workspace, deleted_at__isnull=True).order_by(
        "created_at", "id"
    )
    anki_ids: dict[Any, tuple[int, str]] = {}
    for position, card in enumerate(cards.iterator(chunk_size=1000)):
        nid = note_ids.take(_ms(card.created_at))
        cid = card_ids.take(_ms(card.created_at))
        front, back = _field_html(card.front_text), _field_html(card.back_text)
        tags = " ".join(t.replace(" ", "_") for t in card.tags)
        db.execute(
            "INSERT INTO notes VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                nid,
                str(card.id),
                NOTE_TYPE_ID,
                int(card.updated_at.timestamp()),
                -1,
                f" {tags} " if tags else "",
                f"{front}\x1f{back}",
                card.front_text,
                0,
                0,
                "",
            ),
        )
        anki = _anki_card(card, crt, position, workspace)
        data = anki["data"]
        if isinstance(data, dict):
            data["dr"] = workspace.desired_retention
            data = json.dumps(data, separators=(",", ":"))
        db.execute(
            "INSERT INTO cards VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                cid,
                nid,
                deck_id(card_deck(card)),
                0,
                int(card.updated_at.timestamp()),
                -1,
                anki["type"],
                anki["queue"],
                anki["due"],
                anki["ivl"],
                0 if anki["type"] == 0 else 2500,
                card.reps,
                card.lapses,
                anki["left"],
                0,
                0,
                0,
                data,
            ),
        )
        anki_ids[card.id] = (cid, card.fsrs_card_state)
        counts["cards"] += 1
    events = ReviewEvent.objects.filter(workspace=workspace, card_id__in=list(anki_ids)).order_by(
        "card_id", "reviewed_at_client", "sequence"
    )
    for event in events.iterator(chunk_size=2000):
        cid, _ = anki_ids[event.card_id]
        db.execute(
            "INSERT INTO revlog VALUES (?,?,?,?,?,?,?,?,?)",
            (revlog_ids.take(_ms(event.reviewed_at_client)), cid, -1, event.rating + 1, 0, 0, 0,
             0, 1),
        )  # fmt: skip
        counts["reviews"] += 1
    deck_rows = {str(DEFAULT_DECK_ID): _deck(DEFAULT_DECK_ID, "Default", now)}
    for name, did in decks.items():
        deck_rows[str(did)] = _deck(did, name, now)
    counts["decks"] = len(decks)
    conf = {"nextPos": counts["cards"] + 1, "curModel": NOTE_TYPE_ID, "rollover": ROLLOVER_HOUR}
    db.execute(
        "INSERT INTO col VALUES (1,?,?,?,11,0,0,0,?,?,?,?,?)",
        (
            crt,
            now * 1000,
            now * 1000,
            json.dumps(conf),
            json.dumps({str(NOTE_TYPE_ID): _note_type(now)}),
            json.dumps(deck_rows),
            json.dumps({str(DECK_CONFIG_ID): _deck_config(workspace, now)}),
            "{}",
        ),
    )
    db.commit()
    db.close()
    return counts


def write_package(workspace: Workspace, out: IO[bytes]) -> dict[str, int]:
    """The whole package into ``out`` (a file opened for binary writing)."""
    with tempfile.TemporaryDirectory(prefix="flashcards-export-") as tmpdir:
        path = os.path.join(tmpdir, "collection.anki2")
        counts = write_collection(workspace, path)
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.write(path, "collection.anki2")
            archive.writestr("media", "{}")
    return counts


def package_chunks(workspace: Workspace, chunk: int = 1 << 16) -> Iterator[bytes]:
    """The package as bytes chunks, spooled through a temporary file (never whole in memory)."""
    with tempfile.TemporaryFile() as spool:
        write_package(workspace, spool)
        spool.seek(0)
        while block := spool.read(chunk):
            yield block
