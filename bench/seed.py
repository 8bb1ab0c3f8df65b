"""Seed the benchmark database fast: pairs of workspaces (a target the benchmark works on and a
bystander of the same size it must never touch) of N cards, each with 3 review events, written
with bulk_create in consistent states (FSRS state ``review`` with every scheduling field set, the
indexed tag rows, one change-log entry per card and per review event, the workspace counters).

Pairs that already hold the right number of cards are reused, so only the first run pays.
``python -m bench.seed`` seeds the sizes of BENCH_SIZES (default 1000,10000,100000)."""

from __future__ import annotations

import os
import random
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.db.models import Count, Max, Sum  # noqa: E402

from flashcards import services  # noqa: E402
from flashcards.models import (  # noqa: E402
    SERVER_REPLICA,
    Card,
    CardTag,
    ChangeLog,
    ReviewEvent,
    Tag,
    Workspace,
)

DEFAULT_SIZES = (1_000, 10_000, 100_000)
BATCH = 5_000
REVIEWS_PER_CARD = 3
# The moment the data is "as of": due dates straddle it, so about a third of the cards are due.
EPOCH = datetime(2026, 3, 1, tzinfo=UTC)
# (tag, share of cards carrying it): 'english' is common, as in a real language-learning set.
TAG_WEIGHTS = [
    ("english", 0.30),
    ("grammar", 0.15),
    ("verbs", 0.12),
    ("spanish", 0.20),
    ("french", 0.08),
    ("biology", 0.08),
    ("chemistry", 0.06),
    ("history", 0.06),
    ("geography", 0.05),
    ("math", 0.05),
    *((f"topic-{n:02d}", 0.02) for n in range(30)),
]
SEARCH_WORD = "photosynthesis"  # in about 1 card in 100: the MATCH benchmark's needle
RATING_WEIGHTS = (0.1, 0.15, 0.6, 0.15)


def sizes_from_env() -> tuple[int, ...]:
    raw = os.environ.get("BENCH_SIZES")
    if not raw:
        return DEFAULT_SIZES
    return tuple(int(part) for part in raw.split(",") if part.strip())


def label(size: int) -> str:
    return f"{size // 1000}k" if size % 1000 == 0 else str(size)


@dataclass(frozen=True)
class Pair:
    size: int
    target: Workspace
    bystander: Workspace


def ensure_database() -> None:
    """Create the PostgreSQL benchmark database if missing, then migrate."""
    if settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
        import psycopg

        db = settings.DATABASES["default"]
        admin_dsn = f"host={db['HOST']} port={db['PORT'] or 5432} user={db['USER']} dbname=postgres"
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", [db["NAME"]]
            ).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{db["NAME"]}"')
    call_command("migrate", verbosity=0, interactive=False)


def bench_user():
    user, _ = get_user_model().objects.get_or_create(username="bench")
    return user


def _card_count(ws: Workspace) -> int:
    return Card.objects.filter(workspace=ws, deleted_at__isnull=True).count()


def _existing(name: str, size: int) -> Workspace | None:
    ws = Workspace.objects.filter(name=name, deleted_at__isnull=True).first()
    if ws is not None and _card_count(ws) == size:
        return ws
    if ws is not None:
        ws.delete()
    return None


def ensure_pair(size: int) -> Pair:
    user = bench_user()
    workspaces = []
    for role in ("target", "bystander"):
        name = f"bench-{label(size)}-{role}"
        ws = _existing(name, size)
        if ws is None:
            started = time.perf_counter()
            ws = seed_workspace(user, name, size, seed=size * 2 + (role == "bystander"))
            print(f"  seeded {name}: {size} cards in {time.perf_counter() - started:.1f} s")
        workspaces.append(ws)
    return Pair(size, workspaces[0], workspaces[1])


def _pick_tags(rng: random.Random) -> list[str]:
    tags = [name for name, share in TAG_WEIGHTS if rng.random() < share]
    return tags[:4]


def _front(rng: random.Random, index: int, tags: list[str]) -> str:
    topic = tags[0] if tags else "general"
    if rng.random() < 0.01:
        return f"Card {index}: what does {SEARCH_WORD} produce in a leaf?"
    return f"Card {index}: a {topic} question number {rng.randint(1, 10**6)}?"


def seed_workspace(user, name: str, size: int, *, seed: int) -> Workspace:
    """One workspace of ``size`` cards written with bulk operations in one transaction."""
    rng = random.Random(seed)
    with transaction.atomic():
        ws = services.create_workspace(user, name)
        tags = {
            key: Tag(workspace=ws, key=key, name=key.capitalize() if key == "english" else key)
            for key, _ in TAG_WEIGHTS
        }
        Tag.objects.bulk_create(tags.values())
        tag_rows = {t.key: t for t in Tag.objects.filter(workspace=ws)}
        change_id = ws.last_change_id
        sequence = ws.last_review_sequence
        for start in range(0, size, BATCH):
            cards, card_tags, events, changes = [], [], [], []
            for index in range(start, min(start + BATCH, size)):
                card_tag_keys = _pick_tags(rng)
                created = EPOCH - timedelta(days=90) + timedelta(seconds=rng.randint(0, 60 * 86400))
                reviews = sorted(
                    created + timedelta(seconds=rng.randint(3600, 30 * 86400))
                    for _ in range(REVIEWS_PER_CARD)
                )
                last = reviews[-1]
                scheduled_days = rng.randint(1, 60)
                card = Card(
                    id=uuid.uuid4(),
                    workspace=ws,
                    front_text=_front(rng, index, card_tag_keys),
                    back_text=f"The answer to card {index}, explained in one sentence.",
                    card_type="basic",
                    tags=[tag_rows[key].name for key in card_tag_keys],
                    effort_level=rng.choice(("fast", "fast", "medium", "long")),
                    metadata={"version": 1, "source": {"kind": "bench"}},
                    due_at=last + timedelta(days=scheduled_days),
                    reps=REVIEWS_PER_CARD,
                    lapses=rng.choice((0, 0, 0, 1)),
                    fsrs_card_state="review",
                    fsrs_step_index=None,
                    fsrs_stability=round(rng.uniform(1, 60), 8),
                    fsrs_difficulty=round(rng.uniform(1, 10), 8),
                    fsrs_last_reviewed_at=last,
                    fsrs_scheduled_days=scheduled_days,
                    created_at=created,
                    updated_at=last,
                    client_updated_at=last,
                    last_modified_by_replica_id=SERVER_REPLICA,
                    last_operation_id=f"seed-{index}",
                )
                cards.append(card)
                card_tags += [
                    CardTag(workspace=ws, card_id=card.id, tag=tag_rows[key], position=position)
                    for position, key in enumerate(card_tag_keys)
                ]
                for number, reviewed in enumerate(reviews):
                    sequence += 1
                    event = ReviewEvent(
                        id=uuid.uuid4(),
                        workspace=ws,
                        card_id=card.id,
                        client_event_id=f"seed-{index}-{number}",
                        replica_id=SERVER_REPLICA,
                        rating=rng.choices(range(4), RATING_WEIGHTS)[0],
                        reviewed_at_client=reviewed,
                        reviewed_at_server=reviewed,
                        sequence=sequence,
                    )
                    events.append(event)
                for entity_type, entity_id, action, at in (
                    ("card", card.id, "upsert", last),
                    *(("review_event", e.id, "append", e.reviewed_at_server) for e in events[-3:]),
                ):
                    change_id += 1
                    changes.append(
                        ChangeLog(
                            workspace=ws,
                            change_id=change_id,
                            entity_type=entity_type,
                            entity_id=str(entity_id),
                            action=action,
                            replica_id=SERVER_REPLICA,
                            operation_id=f"seed-{index}",
                            recorded_at=at,
                        )
                    )
            Card.objects.bulk_create(cards, batch_size=BATCH)
            CardTag.objects.bulk_create(card_tags, batch_size=BATCH)
            ReviewEvent.objects.bulk_create(events, batch_size=BATCH)
            ChangeLog.objects.bulk_create(changes, batch_size=BATCH)
        Workspace.objects.filter(pk=ws.pk).update(
            last_change_id=change_id, last_review_sequence=sequence
        )
    # Planner statistics, as PostgreSQL's autovacuum would gather them. SQLite has no automatic
    # equivalent: without them it picks the wrong index for id lookups (docs/benchmarks.md).
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    ws.refresh_from_db()
    return ws


def fingerprint(ws: Workspace) -> dict[str, object]:
    """What "never touched" is checked against: counts, sums and the newest stamps."""
    ws.refresh_from_db()
    cards = Card.objects.filter(workspace=ws).aggregate(
        n=Count("id"), reps=Sum("reps"), newest=Max("updated_at"), deleted=Count("deleted_at")
    )
    return {
        "cards": cards["n"],
        "reps": cards["reps"],
        "newest_update": str(cards["newest"]),
        "deleted": cards["deleted"],
        "card_tags": CardTag.objects.filter(workspace=ws).count(),
        "review_events": ReviewEvent.objects.filter(workspace=ws).count(),
        "changes": ChangeLog.objects.filter(workspace=ws).count(),
        "last_change_id": ws.last_change_id,
        "name": ws.name,
    }


def main() -> None:
    ensure_database()
    for size in sizes_from_env():
        pair = ensure_pair(size)
        print(f"{label(size)}: target {pair.target.pk}, bystander {pair.bystander.pk}")


if __name__ == "__main__":
    main()
