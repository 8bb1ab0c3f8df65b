"""Eight threads writing one workspace at once on PostgreSQL, through every writer: the dialect
(run_sql), services.submit_review and the sync push service. Afterwards no update is lost, and the
change numbers are exactly 1..N with no gap or duplicate; a reader polling the change log meanwhile
never sees a gap (a puller can never skip a change that commits later).

~3 s in the suite; ``make soak`` runs SOAK_SECONDS=30. SQLite serialises writers with one
database lock, so the test is PostgreSQL-only."""

from __future__ import annotations

import os
import random
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import connection, connections

from dsl.runtime.service import run_sql
from flashcards import services
from flashcards.models import Card, ChangeLog, ReviewEvent, Workspace
from flashcards.services.sync import PushOperation, push_operations
from tests.factories import UserFactory, make_cards

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="concurrent writers need PostgreSQL"
    ),
]

THREADS = 8
SECONDS = float(os.environ.get("SOAK_SECONDS", "3"))
DOCS = {"discoveryUrl": "http://testserver/v1/", "grammarUrl": "http://testserver/v1/agent/grammar"}
# Failures a client may see under contention: each says to retry; none is a 500.
RETRYABLE = {"SERVICE_UNAVAILABLE", "QUERY_TIMEOUT"}


@dataclass
class Tally:
    """What one writer thread did, checked against the database afterwards."""

    inserted: set[str] = field(default_factory=set)
    last_sql_value: str | None = None
    last_push_value: str | None = None
    reviews: Counter[str] = field(default_factory=Counter)
    changes: int = 0
    retryable: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)


def _sql(workspace: Workspace, sql: str) -> tuple[int, dict[str, Any]]:
    outcome = run_sql(
        sql=sql,
        workspace=workspace,
        user=None,
        api_key=None,
        surface="rest",
        mode="any",
        dry_run=False,
        request_id=str(uuid.uuid4()),
        docs=DOCS,
    )
    return outcome.status_code, outcome.body


def _stamp() -> str:
    return services.format_timestamp(datetime.now(UTC))  # type: ignore[return-value]


class Writer:
    def __init__(
        self, index: int, workspace: Workspace, own: Card, pushed: Card, shared: list[Card]
    ):
        self.index = index
        self.workspace = workspace
        self.own = own
        self.pushed = pushed
        self.shared = shared
        self.tally = Tally()
        self.rng = random.Random(index)

    def run(self, deadline: float) -> None:
        step = 0
        try:
            while time.monotonic() < deadline:
                step += 1
                action = self.rng.choice((self.insert, self.update, self.review, self.push))
                try:
                    action(step)
                except Exception as exc:  # every failure is recorded, then asserted on
                    self.tally.failures.append(f"{action.__name__}: {type(exc).__name__}: {exc}")
        finally:
            connections.close_all()

    def _dialect(self, sql: str) -> dict[str, Any] | None:
        status, body = _sql(self.workspace, sql)
        if status == 200:
            return body["data"]
        code = body["error"]["code"]
        if code in RETRYABLE:
            self.tally.retryable[code] += 1
        else:
            self.tally.failures.append(f"{status} {code}: {body['error']['message']}")
        return None

    def insert(self, step: int) -> None:
        texts = [f"ins-{self.index}-{step}-{n}" for n in range(self.rng.randint(1, 3))]
        values = ", ".join(f"('{t}', 'answer', ('english', 'w{self.index}'))" for t in texts)
        if self._dialect(f"INSERT INTO cards (front_text, back_text, tags) VALUES {values}"):
            self.tally.inserted.update(texts)
            self.tally.changes += len(texts)

    def update(self, step: int) -> None:
        value = f"w{self.index} v{step}"
        sql = f"UPDATE cards SET back_text = '{value}' WHERE card_id = '{self.own.pk}'"
        if self._dialect(sql):
            self.tally.last_sql_value = value
            self.tally.changes += 1

    def review(self, step: int) -> None:
        card = self.rng.choice(self.shared)
        services.submit_review(
            self.workspace, card.pk, self.rng.randint(0, 3), client_event_id=f"{self.index}-{step}"
        )
        self.tally.reviews[str(card.pk)] += 1
        self.tally.changes += 2  # the review event and the card

    def push(self, step: int) -> None:
        value = f"w{self.index} push {step}"
        operation = PushOperation(
            operation_id=f"op-{self.index}-{step}",
            entity_type="card",
            entity_id=str(self.pushed.pk),
            action="upsert",
            client_updated_at=_stamp(),
            payload={"front_text": value, "back_text": "pushed"},
        )
        (result,) = push_operations(
            self.workspace,
            installation_id=f"device-{self.index}",
            platform="web",
            operations=[operation],
        )
        if result.status == "applied":
            self.tally.last_push_value = value
            self.tally.changes += 1
        elif result.status == "rejected":
            self.tally.failures.append(f"push rejected: {result.error}")


class ChangeReader:
    """Polls the change log the way a sync puller pages it, and records any gap it sees."""

    def __init__(self, workspace: Workspace, start: int) -> None:
        self.workspace = workspace
        self.cursor = start
        self.seen = 0
        self.gaps: list[tuple[int, int]] = []

    def run(self, stop: threading.Event) -> None:
        try:
            while not stop.is_set():
                self.poll()
        finally:
            connections.close_all()

    def poll(self) -> None:
        numbers = list(
            ChangeLog.objects.filter(workspace=self.workspace, change_id__gt=self.cursor)
            .order_by("change_id")
            .values_list("change_id", flat=True)[:500]
        )
        for number in numbers:
            if number != self.cursor + 1:
                self.gaps.append((self.cursor, number))
            self.cursor = number
            self.seen += 1


def test_concurrent_writers_lose_nothing_and_number_changes_without_gaps():
    workspace = services.create_workspace(UserFactory(), "Contended")
    own = make_cards(workspace, THREADS, back_text="start")
    pushed = make_cards(workspace, THREADS, back_text="start")
    shared = make_cards(workspace, 4)
    workspace.refresh_from_db()
    start = workspace.last_change_id
    writers = [Writer(i, workspace, own[i], pushed[i], shared) for i in range(THREADS)]
    reader = ChangeReader(workspace, start)
    stop = threading.Event()
    deadline = time.monotonic() + SECONDS
    threads = [threading.Thread(target=w.run, args=(deadline,)) for w in writers]
    reader_thread = threading.Thread(target=reader.run, args=(stop,))
    for thread in [*threads, reader_thread]:
        thread.start()
    for thread in threads:
        thread.join(timeout=SECONDS + 60)
    stop.set()
    reader_thread.join(timeout=30)
    reader.poll()

    failures = [f for w in writers for f in w.tally.failures]
    assert failures == [], failures[:10]
    expected_changes = sum(w.tally.changes for w in writers)
    assert expected_changes > THREADS * 5, "the threads barely ran"

    # No lost update: every acknowledged write is in the database, the last one wins.
    inserted = set().union(*(w.tally.inserted for w in writers))
    stored = set(
        Card.objects.filter(workspace=workspace, front_text__startswith="ins-").values_list(
            "front_text", flat=True
        )
    )
    assert stored == inserted
    for writer in writers:
        writer.own.refresh_from_db()
        writer.pushed.refresh_from_db()
        assert writer.own.back_text == (writer.tally.last_sql_value or "start")
        if writer.tally.last_push_value is not None:
            assert writer.pushed.front_text == writer.tally.last_push_value
    reviews = sum((w.tally.reviews for w in writers), Counter())
    for card in shared:
        card.refresh_from_db()
        assert card.reps == reviews[str(card.pk)]
        assert ReviewEvent.objects.filter(card=card).count() == reviews[str(card.pk)]

    # Change numbers: exactly start+1 .. last, one per acknowledged change, no gap, no duplicate.
    workspace.refresh_from_db()
    numbers = list(
        ChangeLog.objects.filter(workspace=workspace, change_id__gt=start)
        .order_by("change_id")
        .values_list("change_id", flat=True)
    )
    assert numbers == list(range(start + 1, start + 1 + expected_changes))
    assert workspace.last_change_id == start + expected_changes
    assert reader.gaps == []
    assert reader.cursor == workspace.last_change_id
    assert reader.seen == expected_changes
    retryable = sum((w.tally.retryable for w in writers), Counter())
    print(
        f"\n{THREADS} writers, {SECONDS:g} s: {expected_changes} changes "
        f"({expected_changes / SECONDS:.0f}/s), {len(inserted)} inserts, "
        f"{sum(reviews.values())} reviews, retryable errors {dict(retryable) or 0}, gaps 0"
    )
