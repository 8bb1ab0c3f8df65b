"""FSRS-6 scheduler, a pure-Python port of the flashcards-open-source-app scheduler.

Reference: kirill-markin/flashcards-open-source-app ``apps/backend/src/schedule.ts`` (MIT,
Copyright (c) 2026 Kirill Markin), which mirrors the ts-fsrs 5.2.3 scheduler flow. Web and phone
clients run that same algorithm locally, so this port must agree with them to the millisecond and
to the last float bit; the golden vectors in ``tests/fixtures/fsrs-full-vectors.json`` decide.

Porting rules that matter for parity:
- every intermediate the reference rounds goes through ``toFixed(8)`` semantics (``_round_to_8``);
- integer rounding is ``Math.round`` (half towards +infinity), never Python's ``round``;
- timestamps are handled as integer epoch milliseconds, like JS ``Date``;
- the fuzz seed embeds ``difficulty * stability`` printed the way JS prints numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Literal

from .alea import Alea
from .jsnum import js_number_to_string, js_round, js_to_fixed

__all__ = [
    "CARD_STATES",
    "FSRS_WEIGHTS",
    "CardSchedule",
    "CardState",
    "InvalidScheduleStateError",
    "ReviewBeforeLastReviewError",
    "SchedulerSettings",
    "format_js_timestamp",
    "rebuild_schedule",
    "review_card",
]

CardState = Literal["new", "learning", "review", "relearning"]
_Grade = Literal[1, 2, 3, 4]

CARD_STATES: tuple[str, ...] = ("new", "learning", "review", "relearning")
# API ratings 0..3 (again, hard, good, easy) are FSRS grades 1..4.
_GRADES: tuple[_Grade, _Grade, _Grade, _Grade] = (1, 2, 3, 4)

# Official FSRS-6 defaults; pinned because they are not user-configurable in the product.
FSRS_WEIGHTS: tuple[float, ...] = (
    0.212,
    1.2931,
    2.3065,
    8.2956,
    6.4133,
    0.8334,
    3.0194,
    0.001,
    1.8722,
    0.1666,
    0.796,
    1.4835,
    0.0614,
    0.2629,
    1.6483,
    0.6014,
    1.8729,
    0.5425,
    0.0912,
    0.0658,
    0.1542,
)
_W = FSRS_WEIGHTS
_S_MIN = 0.001
_S_MAX = 36_500.0
_W17_W18_CEILING = 2.0
# (start, end, factor) bands of ts-fsrs's fuzz delta.
_FUZZ_RANGES: tuple[tuple[float, float, float], ...] = (
    (2.5, 7.0, 0.15),
    (7.0, 20.0, 0.1),
    (20.0, math.inf, 0.05),
)

_MS_PER_MINUTE = 60_000
_MS_PER_DAY = 86_400_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS = timedelta(milliseconds=1)


def _round_to_8(value: float) -> float:
    return float(js_to_fixed(value, 8))


def _clamp(value: float, low: float, high: float) -> float:
    # Same argument order as Math.min(Math.max(value, low), high).
    return min(max(value, low), high)


_DECAY = -_W[20]
_FACTOR = _round_to_8(math.exp(math.pow(_DECAY, -1) * math.log(0.9)) - 1)


class ReviewBeforeLastReviewError(ValueError):
    """The review timestamp is earlier than the card's last review."""


class InvalidScheduleStateError(ValueError):
    """The persisted scheduler fields of a card are inconsistent (see domain.md §2)."""


@dataclass(frozen=True)
class SchedulerSettings:
    desired_retention: float = 0.9
    learning_steps_minutes: tuple[int, ...] = (1, 10)
    relearning_steps_minutes: tuple[int, ...] = (10,)
    maximum_interval_days: int = 36500
    enable_fuzz: bool = True

    def __post_init__(self) -> None:
        # Values often arrive from JSON / DecimalField; normalise so the dataclass stays hashable
        # and the arithmetic stays in doubles like the clients'.
        retention = float(self.desired_retention)
        if not 0 < retention < 1:
            raise ValueError("desired_retention must be strictly between 0 and 1")
        object.__setattr__(self, "desired_retention", retention)
        for name in ("learning_steps_minutes", "relearning_steps_minutes"):
            steps = tuple(getattr(self, name))
            _validate_steps(name, steps)
            object.__setattr__(self, name, steps)
        maximum = self.maximum_interval_days
        if isinstance(maximum, bool) or not isinstance(maximum, int) or maximum < 1:
            raise ValueError("maximum_interval_days must be an integer >= 1")
        object.__setattr__(self, "enable_fuzz", bool(self.enable_fuzz))


def _validate_steps(name: str, steps: tuple[int, ...]) -> None:
    if not steps:
        raise ValueError(f"{name} must not be empty")
    for step in steps:
        if isinstance(step, bool) or not isinstance(step, int) or not 0 < step < 1440:
            raise ValueError(f"{name} must contain integers between 1 and 1439")
    if any(later <= earlier for earlier, later in pairwise(steps)):
        raise ValueError(f"{name} must be strictly increasing")


@dataclass(frozen=True)
class CardSchedule:
    state: str
    due_at: datetime | None
    reps: int
    lapses: int
    step_index: int | None
    stability: float | None
    difficulty: float | None
    last_reviewed_at: datetime | None
    scheduled_days: int | None

    @classmethod
    def new(cls) -> CardSchedule:
        return cls(
            state="new",
            due_at=None,
            reps=0,
            lapses=0,
            step_index=None,
            stability=None,
            difficulty=None,
            last_reviewed_at=None,
            scheduled_days=None,
        )


@dataclass(frozen=True)
class _Memory:
    stability: float
    difficulty: float


# --- time helpers ---------------------------------------------------------------------------


def _to_epoch_ms(value: datetime) -> int:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("datetimes passed to the scheduler must be timezone-aware")
    # Floor division truncates sub-millisecond precision the way a JS Date cannot hold it.
    return (value - _EPOCH) // _ONE_MS


def _from_epoch_ms(ms: int) -> datetime:
    return _EPOCH + timedelta(milliseconds=ms)


def _utc_day_number(ms: int) -> int:
    return ms // _MS_PER_DAY


def format_js_timestamp(value: datetime) -> str:
    """``Date.prototype.toISOString`` for a timezone-aware datetime (truncated to milliseconds)."""
    utc = _from_epoch_ms(_to_epoch_ms(value))
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


# --- FSRS math (names follow the reference so the two can be diffed side by side) ----------


def _interval_modifier(request_retention: float) -> float:
    return _round_to_8((math.pow(request_retention, 1 / _DECAY) - 1) / _FACTOR)


def _format_seed_number(value: float) -> str:
    return "0" if value == 0 else js_number_to_string(value)


def _init_stability(grade: _Grade) -> float:
    return max(_W[grade - 1], 0.1)


def _init_difficulty(grade: _Grade) -> float:
    return _round_to_8(_W[4] - math.exp((grade - 1) * _W[5]) + 1)


def _mean_reversion(initial_difficulty: float, current_difficulty: float) -> float:
    return _round_to_8(_W[7] * initial_difficulty + (1 - _W[7]) * current_difficulty)


def _linear_damping(delta_difficulty: float, difficulty: float) -> float:
    return _round_to_8(delta_difficulty * (10 - difficulty) / 9)


def _next_difficulty(difficulty: float, grade: _Grade) -> float:
    delta_difficulty = -_W[6] * (grade - 3)
    next_value = difficulty + _linear_damping(delta_difficulty, difficulty)
    return _clamp(_mean_reversion(_init_difficulty(4), next_value), 1, 10)


def _forgetting_curve(elapsed_days: int, stability: float) -> float:
    return _round_to_8(math.pow(1 + _FACTOR * elapsed_days / stability, _DECAY))


def _next_recall_stability(
    difficulty: float, stability: float, retrievability: float, grade: _Grade
) -> float:
    hard_penalty = _W[15] if grade == 2 else 1
    easy_bound = _W[16] if grade == 4 else 1
    return _round_to_8(
        _clamp(
            stability
            * (
                1
                + math.exp(_W[8])
                * (11 - difficulty)
                * math.pow(stability, -_W[9])
                * (math.exp((1 - retrievability) * _W[10]) - 1)
                * hard_penalty
                * easy_bound
            ),
            _S_MIN,
            _S_MAX,
        )
    )


def _next_forget_stability(difficulty: float, stability: float, retrievability: float) -> float:
    return _round_to_8(
        _clamp(
            _W[11]
            * math.pow(difficulty, -_W[12])
            * (math.pow(stability + 1, _W[13]) - 1)
            * math.exp((1 - retrievability) * _W[14]),
            _S_MIN,
            _S_MAX,
        )
    )


def _short_term_weights(settings: SchedulerSettings) -> tuple[float, float]:
    # ts-fsrs 5.2.3 clips w17/w18 when there are several relearning steps, so that the
    # short-term stability cannot grow past what the long-term model would allow.
    step_count = len(settings.relearning_steps_minutes)
    if step_count <= 1:
        return _W[17], _W[18]
    value = -(math.log(_W[11]) + math.log(math.pow(2, _W[13]) - 1) + _W[14] * 0.3) / step_count
    ceiling = _clamp(_round_to_8(value), 0.01, _W17_W18_CEILING)
    return _clamp(_W[17], 0, ceiling), _clamp(_W[18], 0, ceiling)


def _next_short_term_stability(
    stability: float, grade: _Grade, settings: SchedulerSettings
) -> float:
    w17, w18 = _short_term_weights(settings)
    sinc = math.pow(stability, -_W[19]) * math.exp(w17 * (grade - 3 + w18))
    masked_sinc = max(sinc, 1) if grade >= 3 else sinc
    return _round_to_8(_clamp(stability * masked_sinc, _S_MIN, _S_MAX))


def _initial_memory(grade: _Grade) -> _Memory:
    return _Memory(
        stability=_init_stability(grade),
        difficulty=_clamp(_init_difficulty(grade), 1, 10),
    )


def _next_short_term_memory(memory: _Memory, grade: _Grade, settings: SchedulerSettings) -> _Memory:
    return _Memory(
        stability=_next_short_term_stability(memory.stability, grade, settings),
        difficulty=_next_difficulty(memory.difficulty, grade),
    )


def _next_review_memory(
    memory: _Memory, elapsed_days: int, grade: _Grade, settings: SchedulerSettings
) -> _Memory:
    retrievability = _forgetting_curve(elapsed_days, memory.stability)
    after_success = _next_recall_stability(
        memory.difficulty, memory.stability, retrievability, grade
    )
    after_failure = _next_forget_stability(memory.difficulty, memory.stability, retrievability)
    next_stability = after_success
    if grade == 1:
        w17, w18 = _short_term_weights(settings)
        stability_floor = memory.stability / math.exp(w17 * w18)
        next_stability = _clamp(_round_to_8(stability_floor), _S_MIN, after_failure)
    return _Memory(
        stability=next_stability,
        difficulty=_next_difficulty(memory.difficulty, grade),
    )


def _fuzz_range(interval: int, elapsed_days: int, maximum_interval: int) -> tuple[int, int]:
    delta = 1.0
    for start, end, factor in _FUZZ_RANGES:
        delta += factor * max(min(interval, end) - start, 0)
    clamped = min(interval, maximum_interval)
    min_interval = max(2, js_round(clamped - delta))
    max_interval = min(js_round(clamped + delta), maximum_interval)
    if clamped > elapsed_days:
        min_interval = max(min_interval, elapsed_days + 1)
    min_interval = min(min_interval, max_interval)
    return min_interval, max_interval


def _interval_seed(now_ms: int, reps: int, memory: _Memory | None) -> str:
    product = 0.0 if memory is None else memory.difficulty * memory.stability
    return f"{now_ms}_{reps}_{_format_seed_number(product)}"


def _next_interval(
    stability: float, elapsed_days: int, settings: SchedulerSettings, seed: str
) -> int:
    modifier = _interval_modifier(settings.desired_retention)
    raw = int(_clamp(js_round(stability * modifier), 1, settings.maximum_interval_days))
    if not settings.enable_fuzz or raw < 3:
        return raw
    fuzz_factor = Alea(seed).next()
    min_interval, max_interval = _fuzz_range(raw, elapsed_days, settings.maximum_interval_days)
    return math.floor(fuzz_factor * (max_interval - min_interval + 1) + min_interval)


# --- card state ------------------------------------------------------------------------------


def _memory_of(card: CardSchedule) -> _Memory | None:
    if card.state not in CARD_STATES:
        raise InvalidScheduleStateError(f"Unknown FSRS card state: {card.state!r}")
    if card.state == "new":
        if (
            card.stability is not None
            or card.difficulty is not None
            or card.last_reviewed_at is not None
            or card.scheduled_days is not None
            or card.step_index is not None
        ):
            raise InvalidScheduleStateError("New card must not have persisted FSRS state")
        return None
    if (
        card.stability is None
        or card.difficulty is None
        or card.last_reviewed_at is None
        or card.scheduled_days is None
    ):
        raise InvalidScheduleStateError("Persisted FSRS card state is incomplete")
    if card.state == "review" and card.step_index is not None:
        raise InvalidScheduleStateError("Review card must not persist step_index")
    if card.state in ("learning", "relearning") and card.step_index is None:
        raise InvalidScheduleStateError("Learning or relearning card is missing step_index")
    return _Memory(stability=float(card.stability), difficulty=float(card.difficulty))


def _steps_for_state(settings: SchedulerSettings, state: str) -> tuple[int, ...]:
    if state in ("relearning", "review"):
        return settings.relearning_steps_minutes
    return settings.learning_steps_minutes


def _learning_strategy_step_index(card: CardSchedule, grade: _Grade) -> int:
    current = card.step_index if card.step_index is not None else 0
    # ts-fsrs 5.2.3 quirk kept on purpose: in `learning`, Good/Easy look one step further
    # ahead, so Good after the first scheduled learning step graduates.
    if card.state == "learning" and grade not in (1, 2):
        return current + 1
    return current


def _hard_step_minutes(steps: tuple[int, ...]) -> int:
    if len(steps) == 1:
        return js_round(steps[0] * 1.5)
    return js_round((steps[0] + steps[1]) / 2)


def _learning_step(
    settings: SchedulerSettings, card: CardSchedule, grade: _Grade
) -> tuple[int | None, int]:
    """(minutes until the next short-term step or None to graduate, next step index)."""
    steps = _steps_for_state(settings, card.state)
    strategy_index = _learning_strategy_step_index(card, grade)
    if card.state == "review" or grade == 1:
        return steps[0], 0
    if grade == 2:
        return _hard_step_minutes(steps), strategy_index
    if grade == 4:
        return None, 0
    next_index = strategy_index + 1
    if next_index >= len(steps):
        return None, 0
    return steps[next_index], next_index


def _graduated(
    memory: _Memory,
    now_ms: int,
    reps: int,
    lapses: int,
    settings: SchedulerSettings,
    elapsed_days: int,
    seed: str,
) -> CardSchedule:
    scheduled_days = _next_interval(memory.stability, elapsed_days, settings, seed)
    return CardSchedule(
        state="review",
        due_at=_from_epoch_ms(now_ms + scheduled_days * _MS_PER_DAY),
        reps=reps,
        lapses=lapses,
        step_index=None,
        stability=memory.stability,
        difficulty=memory.difficulty,
        last_reviewed_at=_from_epoch_ms(now_ms),
        scheduled_days=scheduled_days,
    )


def _short_term(
    card: CardSchedule,
    memory: _Memory,
    grade: _Grade,
    now_ms: int,
    reps: int,
    lapses: int,
    settings: SchedulerSettings,
    next_state: Literal["learning", "relearning"],
    elapsed_days: int,
    seed: str,
) -> CardSchedule:
    minutes, next_index = _learning_step(settings, card, grade)
    if minutes is None:
        return _graduated(memory, now_ms, reps, lapses, settings, elapsed_days, seed)
    return CardSchedule(
        state=next_state,
        due_at=_from_epoch_ms(now_ms + minutes * _MS_PER_MINUTE),
        reps=reps,
        lapses=lapses,
        step_index=next_index,
        stability=memory.stability,
        difficulty=memory.difficulty,
        last_reviewed_at=_from_epoch_ms(now_ms),
        scheduled_days=0,
    )


def _review_success(
    now_ms: int,
    reps: int,
    lapses: int,
    settings: SchedulerSettings,
    elapsed_days: int,
    hard: _Memory,
    good: _Memory,
    easy: _Memory,
    grade: _Grade,
    seed: str,
) -> CardSchedule:
    # All branches share one seed and are forced into hard <= good < easy, as in ts-fsrs.
    hard_interval = _next_interval(hard.stability, elapsed_days, settings, seed)
    good_interval = _next_interval(good.stability, elapsed_days, settings, seed)
    hard_interval = min(hard_interval, good_interval)
    good_interval = max(good_interval, hard_interval + 1)
    easy_interval = max(
        _next_interval(easy.stability, elapsed_days, settings, seed), good_interval + 1
    )
    chosen, interval = {
        2: (hard, hard_interval),
        3: (good, good_interval),
        4: (easy, easy_interval),
    }[grade]
    return CardSchedule(
        state="review",
        due_at=_from_epoch_ms(now_ms + interval * _MS_PER_DAY),
        reps=reps,
        lapses=lapses,
        step_index=None,
        stability=chosen.stability,
        difficulty=chosen.difficulty,
        last_reviewed_at=_from_epoch_ms(now_ms),
        scheduled_days=interval,
    )


def _grade_of(rating: int) -> _Grade:
    if isinstance(rating, bool) or not isinstance(rating, int) or not 0 <= rating <= 3:
        raise ValueError(f"rating must be an integer 0..3, got {rating!r}")
    return _GRADES[rating]


def review_card(
    card: CardSchedule, settings: SchedulerSettings, rating: int, reviewed_at: datetime
) -> CardSchedule:
    """Apply one review (rating 0..3 = again, hard, good, easy) and return the new schedule.

    ``reviewed_at`` must be timezone-aware; it is truncated to milliseconds and converted to UTC.
    Raises ReviewBeforeLastReviewError if it is earlier than ``card.last_reviewed_at``,
    ValueError for a rating outside 0..3 and InvalidScheduleStateError for an inconsistent card.
    """
    grade = _grade_of(rating)
    now_ms = _to_epoch_ms(reviewed_at)
    memory = _memory_of(card)

    elapsed_days = 0
    if card.last_reviewed_at is not None:
        last_ms = _to_epoch_ms(card.last_reviewed_at)
        if now_ms < last_ms:
            raise ReviewBeforeLastReviewError(
                "Review timestamp moved backwards: "
                f"last_reviewed_at={format_js_timestamp(card.last_reviewed_at)}, "
                f"reviewed_at={format_js_timestamp(reviewed_at)}"
            )
        elapsed_days = _utc_day_number(now_ms) - _utc_day_number(last_ms)

    reps = card.reps + 1
    lapses = card.lapses + 1 if rating == 0 and card.state == "review" else card.lapses
    seed = _interval_seed(now_ms, reps, memory)

    if memory is None:
        return _short_term(
            card,
            _initial_memory(grade),
            grade,
            now_ms,
            reps,
            lapses,
            settings,
            "learning",
            0,
            seed,
        )

    if card.state in ("learning", "relearning"):
        # Short-term memory update even when answered days later (product rule, see reference).
        short_state: Literal["learning", "relearning"] = (
            "learning" if card.state == "learning" else "relearning"
        )
        return _short_term(
            card,
            _next_short_term_memory(memory, grade, settings),
            grade,
            now_ms,
            reps,
            lapses,
            settings,
            short_state,
            elapsed_days,
            seed,
        )

    if grade == 1:
        return _short_term(
            card,
            _next_review_memory(memory, elapsed_days, 1, settings),
            grade,
            now_ms,
            reps,
            lapses,
            settings,
            "relearning",
            elapsed_days,
            seed,
        )

    return _review_success(
        now_ms,
        reps,
        lapses,
        settings,
        elapsed_days,
        _next_review_memory(memory, elapsed_days, 2, settings),
        _next_review_memory(memory, elapsed_days, 3, settings),
        _next_review_memory(memory, elapsed_days, 4, settings),
        grade,
        seed,
    )


def rebuild_schedule(
    settings: SchedulerSettings, reviews: Iterable[tuple[int, datetime]]
) -> CardSchedule:
    """Replay ``(rating, reviewed_at)`` pairs, in the given order, from a new card."""
    schedule = CardSchedule.new()
    for rating, reviewed_at in reviews:
        schedule = review_card(schedule, settings, rating, reviewed_at)
    return schedule
