"""Anki's stored schedule as this product's: a card's FSRS memory state (``cards.data``), its due
day or learning timestamp, interval, reps and lapses become a ``CardSchedule``; deck presets
(desired retention, steps, weights) become proposed workspace settings.

Anki's day numbers (rslib ``sched/timing.rs``): a review card's ``due`` counts days since the
collection's creation day, a day starting at the rollover hour (config ``rollover``, default 4)
in the learner's local offset (config ``localOffset`` / ``creationOffset``, minutes west of UTC).
Day ``n`` therefore starts at (creation date, moved back a day when ``crt`` falls before the
rollover) + n days, at the rollover hour. Learning cards (queue 1) hold epoch seconds; day
learning (queue 3) holds a day number. A filtered deck keeps the home deck's due in ``odue``.
"""

from __future__ import annotations

import itertools
import math
import struct
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Any, TypeGuard
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from flashcards import safe_json
from flashcards.interchange import protowire
from flashcards.scheduling import CardSchedule

DEFAULT_ROLLOVER = 4
# cards.type
NEW, LEARNING, REVIEW, RELEARNING = 0, 1, 2, 3
STATES = {LEARNING: "learning", REVIEW: "review", RELEARNING: "relearning"}
# cards.queue
SUSPENDED, SIBLING_BURIED, MANUALLY_BURIED = -1, -2, -3
LEARN_QUEUE, DAY_LEARN_QUEUE = 1, 3
# DeckConfig.Config fields (anki/proto/anki/deck_config.proto)
CFG_LEARN_STEPS, CFG_RELEARN_STEPS = 1, 2
CFG_PARAMS_4, CFG_PARAMS_5, CFG_PARAMS_6 = 3, 5, 6
CFG_MAX_INTERVAL, CFG_DESIRED_RETENTION = 16, 37
# A desired retention the product accepts (domain.md §2: strictly between 0 and 1).
RETENTION_RANGE = (0.7, 0.99)


@dataclass(frozen=True)
class AnkiDay:
    """When Anki's day ``n`` of this collection starts."""

    creation: int
    rollover: int = DEFAULT_ROLLOVER
    zone: tzinfo = UTC

    def start_of(self, day: int) -> datetime:
        created = datetime.fromtimestamp(self.creation, tz=self.zone)
        if created.hour < self.rollover:
            created -= timedelta(days=1)
        date = created.date() + timedelta(days=day)
        local = datetime(date.year, date.month, date.day, self.rollover, tzinfo=self.zone)
        return local.astimezone(UTC)


def day_settings(crt: int, config: dict[str, Any], time_zone: str | None = None) -> AnkiDay:
    """The collection's day: ``crt`` and the rollover from its config; the zone named
    ``time_zone`` when known (the workspace's), else the offset Anki recorded, else UTC."""
    rollover = config.get("rollover", DEFAULT_ROLLOVER)
    if isinstance(rollover, bool) or not isinstance(rollover, int) or not 0 <= rollover <= 23:
        rollover = DEFAULT_ROLLOVER
    zone: tzinfo = UTC
    if time_zone:
        try:
            zone = ZoneInfo(time_zone)
        except (ZoneInfoNotFoundError, ValueError):
            zone = UTC
    else:
        offset = config.get("localOffset", config.get("creationOffset"))
        if isinstance(offset, int) and not isinstance(offset, bool) and abs(offset) <= 14 * 60:
            zone = timezone(-timedelta(minutes=offset))
    return AnkiDay(creation=crt, rollover=rollover, zone=zone)


@dataclass(frozen=True)
class AnkiCardState:
    """The scheduling columns of one Anki card."""

    type: int
    queue: int
    due: int
    interval: int
    reps: int
    lapses: int
    left: int
    original_due: int
    original_deck: int
    data: str


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def memory_state(data: str) -> dict[str, float] | None:
    """``cards.data``'s ``s`` (stability, days), ``d`` (difficulty 1..10), ``dr`` and ``lrt``
    (last review, epoch seconds) when it holds a usable FSRS memory state."""
    if not data:
        return None
    try:
        parsed = safe_json.loads(data)
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    s, d = parsed.get("s"), parsed.get("d")
    if not (_is_number(s) and _is_number(d)):
        return None
    if not (math.isfinite(s) and math.isfinite(d) and s > 0 and 1 <= d <= 10):
        return None
    state = {"s": float(s), "d": float(d)}
    for key in ("dr", "lrt"):
        value = parsed.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            state[key] = float(value)
    return state


def anki_schedule(
    card: AnkiCardState,
    day: AnkiDay,
    learning_steps: int,
    last_review_ms: int | None,
) -> CardSchedule | None:
    """The card's schedule as Anki stored it, or None when it has no FSRS memory state (SM-2,
    new cards) or its columns cannot be one (the caller then replays the log)."""
    if card.type not in STATES:
        return None
    memory = memory_state(card.data)
    if memory is None:
        return None
    if "lrt" in memory and 0 < memory["lrt"] < 253_402_300_799:
        last = datetime.fromtimestamp(int(memory["lrt"]), tz=UTC)
    elif last_review_ms is not None:
        last = datetime.fromtimestamp(last_review_ms / 1000, tz=UTC)
    else:
        return None
    due_value = card.original_due if card.original_deck and card.original_due else card.due
    try:
        if card.type == REVIEW or card.queue == DAY_LEARN_QUEUE:
            if not -100_000 < due_value < 1_000_000:
                return None
            due_at = day.start_of(due_value)
        else:
            if not 0 < due_value < 253_402_300_799:
                return None
            due_at = datetime.fromtimestamp(due_value, tz=UTC)
    except (OverflowError, ValueError, OSError):
        return None
    state = STATES[card.type]
    step_index = None
    if state != "review":
        remaining = card.left % 1000
        step_index = max(0, learning_steps - remaining)
    return CardSchedule(
        state=state,
        due_at=due_at.replace(microsecond=(due_at.microsecond // 1000) * 1000),
        reps=max(0, card.reps),
        lapses=max(0, card.lapses),
        step_index=step_index,
        stability=round(memory["s"], 8),
        difficulty=round(memory["d"], 8),
        last_reviewed_at=last,
        scheduled_days=max(0, card.interval) if state == "review" else 0,
    )


# ---------------------------------------------------------------- presets


@dataclass
class Preset:
    """One deck options preset, as far as this product's settings go."""

    id: int
    name: str
    learning_steps: list[float] = field(default_factory=list)
    relearning_steps: list[float] = field(default_factory=list)
    desired_retention: float | None = None
    weights: list[float] = field(default_factory=list)
    maximum_interval: int | None = None
    cards: int = 0

    def settings(self) -> dict[str, Any]:
        """The workspace scheduler settings this preset proposes (only those the product
        accepts: whole-minute, strictly increasing steps under a day; a retention in range)."""
        proposed: dict[str, Any] = {}
        if self.desired_retention is not None and (
            RETENTION_RANGE[0] <= self.desired_retention <= RETENTION_RANGE[1]
        ):
            proposed["desired_retention"] = round(self.desired_retention, 4)
        for name, steps in (
            ("learning_steps_minutes", self.learning_steps),
            ("relearning_steps_minutes", self.relearning_steps),
        ):
            minutes = [round(s) for s in steps]
            if (
                minutes
                and all(0 < m < 1440 for m in minutes)
                and all(b > a for a, b in itertools.pairwise(minutes))
            ):
                proposed[name] = minutes
        if self.maximum_interval and 1 <= self.maximum_interval <= 36500:
            proposed["maximum_interval_days"] = self.maximum_interval
        return proposed

    def report(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "cards": self.cards,
            "desiredRetention": self.desired_retention,
            "learningStepsMinutes": self.learning_steps,
            "relearningStepsMinutes": self.relearning_steps,
            "weights": self.weights,
            "maximumIntervalDays": self.maximum_interval,
        }


def _floats(values: list[int | bytes]) -> list[float]:
    out: list[float] = []
    for value in values:
        if isinstance(value, bytes):
            count = len(value) // 4
            out.extend(struct.unpack(f"<{count}f", value[: count * 4]))
        else:
            out.append(struct.unpack("<f", int(value).to_bytes(4, "little"))[0])
    return [round(v, 6) for v in out]


def preset_from_proto(preset_id: int, name: str, config: bytes) -> Preset:
    fields = protowire.decode(config or b"")
    weights = (
        _floats(fields.get(CFG_PARAMS_6, []))
        or _floats(fields.get(CFG_PARAMS_5, []))
        or _floats(fields.get(CFG_PARAMS_4, []))
    )
    retention = _floats(fields.get(CFG_DESIRED_RETENTION, []))
    return Preset(
        id=preset_id,
        name=name,
        learning_steps=_floats(fields.get(CFG_LEARN_STEPS, [])),
        relearning_steps=_floats(fields.get(CFG_RELEARN_STEPS, [])),
        desired_retention=round(retention[0], 4) if retention else None,
        weights=weights,
        maximum_interval=protowire.first_int(fields, CFG_MAX_INTERVAL) or None,
    )


def _numbers(value: object) -> list[float]:
    if not isinstance(value, list):
        return []
    return [float(v) for v in value if isinstance(v, (int, float)) and not isinstance(v, bool)]


def preset_from_json(raw: dict[str, Any]) -> Preset:
    """A schema-11 ``dconf`` entry (what legacy exports carry)."""
    retention = raw.get("desiredRetention")
    new, lapse = raw.get("new") or {}, raw.get("lapse") or {}
    rev = raw.get("rev") or {}
    weights = (
        _numbers(raw.get("fsrsParams6"))
        or _numbers(raw.get("fsrsParams5"))
        or _numbers(raw.get("fsrsWeights"))
    )
    maximum = rev.get("maxIvl") if isinstance(rev, dict) else None
    return Preset(
        id=int(raw.get("id", 0)),
        name=str(raw.get("name", "")),
        learning_steps=_numbers(new.get("delays") if isinstance(new, dict) else None),
        relearning_steps=_numbers(lapse.get("delays") if isinstance(lapse, dict) else None),
        desired_retention=float(retention) if isinstance(retention, (int, float)) else None,
        weights=weights,
        maximum_interval=maximum if isinstance(maximum, int) else None,
    )


def deck_config_id(kind: bytes) -> int | None:
    """The preset id of a normal deck from ``decks.kind`` (DeckKindContainer: normal = 1,
    its config_id = 1); None for a filtered deck."""
    fields = protowire.decode(kind or b"")
    normal = next((v for v in fields.get(1, ()) if isinstance(v, bytes)), None)
    if normal is None:
        return 1 if not fields else None
    return protowire.first_int(protowire.decode(normal), 1, default=1)
