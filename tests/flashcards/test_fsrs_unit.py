"""Unit tests for the FSRS-6 port and its JavaScript-semantics helpers (no database)."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from fractions import Fraction

import pytest

from flashcards.scheduling import (
    CardSchedule,
    InvalidScheduleStateError,
    ReviewBeforeLastReviewError,
    SchedulerSettings,
    format_js_timestamp,
    rebuild_schedule,
    review_card,
)
from flashcards.scheduling import fsrs as fsrs_module
from flashcards.scheduling.alea import Alea, AleaState, Mash
from flashcards.scheduling.jsnum import (
    js_number_to_string,
    js_round,
    js_to_fixed,
    to_int32,
    to_uint32,
)

AGAIN, HARD, GOOD, EASY = 0, 1, 2, 3
T0 = datetime(2026, 3, 8, 9, 0, tzinfo=UTC)
DEFAULTS = SchedulerSettings()


def _review_card_after_first_easy() -> CardSchedule:
    return review_card(CardSchedule.new(), DEFAULTS, EASY, T0)


# --- JS integer coercions -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.0, 0),
        (-1.0, 4_294_967_295),  # -1 >>> 0
        (-0.5, 0),  # truncation towards zero happens before the modulo
        (2.0**32 + 5.9, 5),
        (4_022_871_197.75, 4_022_871_197),
        (math.nan, 0),
        (math.inf, 0),
    ],
)
def test_to_uint32_matches_unsigned_shift(value: float, expected: int) -> None:
    assert to_uint32(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2.0**31, -(2**31)),  # 2147483648 | 0
        (2.0**31 - 1, 2**31 - 1),
        (-1.5, -1),
        (4_294_967_297.7, 1),
        (1_828_249.63, 1_828_249),
    ],
)
def test_to_int32_matches_bitwise_or_zero(value: float, expected: int) -> None:
    assert to_int32(value) == expected


# --- Math.round, toFixed, String(number) -----------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.5, 1),
        (1.5, 2),
        (2.5, 3),  # Python's round() would give 2
        (-0.5, 0),
        (-1.5, -1),
        (-2.5, -2),
        (5.5, 6),
        (0.49999999999999994, 0),  # floor(x + 0.5) would wrongly give 1
        (8.2956, 8),
    ],
)
def test_js_round_is_half_up(value: float, expected: int) -> None:
    assert js_round(value) == expected


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [
        (1 / 512, 8, "0.00195313"),  # exact tie 0.001953125: half-up, Python round gives ...12
        (-1 / 512, 8, "-0.00195313"),  # ties go away from zero for negatives
        (3 / 512, 8, "0.00585938"),
        (1.005, 2, "1.00"),  # binary value is 1.00499999999999989...
        (1.45, 1, "1.4"),
        (0.5, 0, "1"),
        (2.5, 0, "3"),
        (0.1 + 0.2, 8, "0.30000000"),
        (0.0, 8, "0.00000000"),
        (-0.0, 8, "0.00000000"),  # -0 is not < 0
        (-1e-10, 8, "-0.00000000"),
        (123.456, 0, "123"),
        (1e21, 8, "1e+21"),
        (8.2956, 8, "8.29560000"),
    ],
)
def test_js_to_fixed(value: float, digits: int, expected: str) -> None:
    assert js_to_fixed(value, digits) == expected


def test_round_to_8_parses_back_like_parse_float() -> None:
    assert fsrs_module._round_to_8(1 / 512) == 0.00195313
    assert fsrs_module._round_to_8(0.1 + 0.2) == 0.3
    assert math.copysign(1.0, fsrs_module._round_to_8(-1e-10)) == -1.0


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.1 + 0.2, "0.30000000000000004"),
        (123.0, "123"),
        (-0.0, "0"),
        (1.0, "1"),
        (-42.0, "-42"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1.5e21, "1.5e+21"),
        (123456789012345680000.0, "123456789012345680000"),
        (0.000001, "0.000001"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (-2.5e-8, "-2.5e-8"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (8.2956, "8.2956"),
        (1e16, "10000000000000000"),  # Python's repr would say 1e+16
        (math.nan, "NaN"),
        (math.inf, "Infinity"),
        (-math.inf, "-Infinity"),
    ],
)
def test_js_number_to_string(value: float, expected: str) -> None:
    assert js_number_to_string(value) == expected


# --- Mash / Alea ------------------------------------------------------------------------------


def test_mash_of_empty_string_returns_initial_state_scaled() -> None:
    # With no characters the loop never runs: result = (0xefc8249d >>> 0) * 2**-32, exactly.
    assert Fraction(Mash()("")) == Fraction(0xEFC8249D, 2**32)


def test_mash_is_stateful_across_calls() -> None:
    mash = Mash()
    first = mash(" ")
    # An empty string leaves the state untouched, so it reports the state the previous call left.
    assert mash("") == first
    assert mash(" ") != first
    assert 0 <= first < 1


def test_alea_step_from_imported_state() -> None:
    # t = 2091639*0 + 0*2**-32 = 0 -> returns 0 and shifts s1 <- s2 (reasoned from the JS source).
    generator = Alea.from_state(AleaState(c=0.0, s0=0.0, s1=0.0, s2=-0.5))
    assert generator.next() == 0
    assert generator.state() == AleaState(c=0.0, s0=0.0, s1=-0.5, s2=0.0)


def test_alea_step_arithmetic_on_simple_state() -> None:
    # t = 2091639*0.5 + 3*2**-32; c = t | 0 = 1045819; s2 = t - c = 0.5 + 3*2**-32.
    generator = Alea.from_state(AleaState(c=3.0, s0=0.5, s1=0.25, s2=0.125))
    result = generator.next()
    assert Fraction(result) == Fraction(1, 2) + Fraction(3, 2**32)
    assert generator.state() == AleaState(c=1_045_819.0, s0=0.25, s1=0.125, s2=result)


def test_alea_known_sequence_for_seed_12345() -> None:
    # Known outputs of the JavaScript implementation (ts-fsrs alea.test.ts, same Mash/Alea).
    generator = Alea("12345")
    assert [generator.next() for _ in range(3)] == [
        0.27138191112317145,
        0.19615925149992108,
        0.6810678059700876,
    ]


@pytest.mark.parametrize(
    ("seed", "first", "state"),
    [
        # JS-computed values published in ts-fsrs alea.test.ts; each exercises a "< 0 then +1"
        # branch of the constructor.
        (
            "1727015666066",
            0.6320083506871015,
            AleaState(1_828_249.0, 0.5888567129150033, 0.5074866858776659, 0.6320083506871015),
        ),
        (
            "Seedp5fxh9kf4r0",
            0.14867847645655274,
            AleaState(1_776_946.0, 0.6778371171094477, 0.0770602801349014, 0.14867847645655274),
        ),
        (
            "NegativeS2Seed",
            0.830770346801728,
            AleaState(952_982.0, 0.25224833423271775, 0.9213257452938706, 0.830770346801728),
        ),
    ],
)
def test_alea_first_output_and_state(seed: str, first: float, state: AleaState) -> None:
    generator = Alea(seed)
    assert generator.next() == first
    assert generator.state() == state


# --- seed and timestamps --------------------------------------------------------------------


def test_interval_seed_format() -> None:
    memory = fsrs_module._Memory
    assert fsrs_module._interval_seed(1_772_960_400_000, 1, None) == "1772960400000_1_0"
    assert (
        fsrs_module._interval_seed(1_773_651_600_000, 2, memory(stability=8.2956, difficulty=1.0))
        == "1773651600000_2_8.2956"
    )
    # An integral product prints without ".0", like JavaScript.
    assert fsrs_module._interval_seed(5, 3, memory(stability=5.0, difficulty=2.0)) == "5_3_10"
    product = 0.1 * 0.2
    assert fsrs_module._interval_seed(5, 3, memory(stability=0.2, difficulty=0.1)) == (
        f"5_3_{js_number_to_string(product)}"
    )
    assert js_number_to_string(product) == "0.020000000000000004"


def test_format_js_timestamp() -> None:
    assert format_js_timestamp(datetime(2026, 3, 8, 9, 1, tzinfo=UTC)) == "2026-03-08T09:01:00.000Z"
    assert (
        format_js_timestamp(datetime(2026, 3, 8, 9, 1, 2, 123_999, tzinfo=UTC))
        == "2026-03-08T09:01:02.123Z"
    )
    plus_five_thirty = timezone(timedelta(hours=5, minutes=30))
    assert (
        format_js_timestamp(datetime(2026, 3, 8, 1, 0, tzinfo=plus_five_thirty))
        == "2026-03-07T19:30:00.000Z"
    )


def test_reviewed_at_is_truncated_to_milliseconds_and_converted_to_utc() -> None:
    local = timezone(timedelta(hours=2))
    schedule = review_card(
        CardSchedule.new(), DEFAULTS, AGAIN, datetime(2026, 3, 8, 11, 0, 0, 999_999, tzinfo=local)
    )
    assert schedule.last_reviewed_at == datetime(2026, 3, 8, 9, 0, 0, 999_000, tzinfo=UTC)
    assert schedule.last_reviewed_at is not None
    assert schedule.last_reviewed_at.utcoffset() == timedelta(0)
    assert schedule.due_at == datetime(2026, 3, 8, 9, 1, 0, 999_000, tzinfo=UTC)


def test_naive_datetime_is_rejected() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        review_card(CardSchedule.new(), DEFAULTS, GOOD, datetime(2026, 3, 8, 9, 0))


# --- review rules -----------------------------------------------------------------------------


def test_review_earlier_than_last_review_is_rejected() -> None:
    card = _review_card_after_first_easy()
    with pytest.raises(ReviewBeforeLastReviewError):
        review_card(card, DEFAULTS, GOOD, T0 - timedelta(milliseconds=1))
    # Sub-millisecond precision is dropped first, so this is 08:59:59.999 too.
    with pytest.raises(ReviewBeforeLastReviewError):
        review_card(card, DEFAULTS, GOOD, T0 - timedelta(microseconds=500))
    assert issubclass(ReviewBeforeLastReviewError, ValueError)


def test_review_at_same_millisecond_is_allowed() -> None:
    card = _review_card_after_first_easy()
    result = review_card(card, DEFAULTS, GOOD, T0 + timedelta(microseconds=999))
    assert result.last_reviewed_at == T0
    assert result.reps == 2


@pytest.mark.parametrize("rating", [-1, 4, True, 2.0, "2", None])
def test_invalid_rating_is_rejected(rating: object) -> None:
    with pytest.raises(ValueError, match="rating"):
        review_card(CardSchedule.new(), DEFAULTS, rating, T0)  # type: ignore[arg-type]


def test_reps_and_lapses_rules() -> None:
    card = CardSchedule.new()
    assert (card.reps, card.lapses) == (0, 0)

    card = review_card(card, DEFAULTS, AGAIN, T0)  # new -> learning: not a lapse
    assert (card.state, card.reps, card.lapses) == ("learning", 1, 0)
    card = review_card(card, DEFAULTS, AGAIN, T0 + timedelta(minutes=1))  # again in learning
    assert (card.state, card.reps, card.lapses) == ("learning", 2, 0)
    card = review_card(card, DEFAULTS, EASY, T0 + timedelta(minutes=2))
    assert (card.state, card.reps, card.lapses) == ("review", 3, 0)
    card = review_card(card, DEFAULTS, HARD, T0 + timedelta(days=3))
    assert (card.state, card.reps, card.lapses) == ("review", 4, 0)
    card = review_card(card, DEFAULTS, AGAIN, T0 + timedelta(days=10))  # again from review
    assert (card.state, card.reps, card.lapses) == ("relearning", 5, 1)
    card = review_card(card, DEFAULTS, AGAIN, T0 + timedelta(days=10, minutes=10))
    assert (card.state, card.reps, card.lapses) == ("relearning", 6, 1)
    card = review_card(card, DEFAULTS, GOOD, T0 + timedelta(days=10, minutes=20))
    assert (card.state, card.reps, card.lapses) == ("review", 7, 1)
    card = review_card(card, DEFAULTS, AGAIN, T0 + timedelta(days=20))
    assert (card.state, card.reps, card.lapses) == ("relearning", 8, 2)


def test_first_review_formulas() -> None:
    # Again: S0 = w0, D0 = w4 - e^0 + 1 = w4; step 0 of the learning steps.
    again = review_card(CardSchedule.new(), DEFAULTS, AGAIN, T0)
    assert (again.stability, again.difficulty, again.step_index) == (0.212, 6.4133, 0)
    assert again.due_at == T0 + timedelta(minutes=1)
    # Hard: (1 + 10) / 2 = 5.5 minutes rounds half-up to 6.
    hard = review_card(CardSchedule.new(), DEFAULTS, HARD, T0)
    assert hard.due_at == T0 + timedelta(minutes=6)
    # Easy graduates with difficulty clamped to 1.
    easy = review_card(CardSchedule.new(), DEFAULTS, EASY, T0)
    assert (easy.state, easy.difficulty, easy.step_index) == ("review", 1, None)


def test_single_relearning_step_hard_is_one_and_a_half_steps() -> None:
    settings = SchedulerSettings(relearning_steps_minutes=(5,))
    card = review_card(_review_card_after_first_easy(), settings, AGAIN, T0 + timedelta(days=8))
    assert card.due_at == T0 + timedelta(days=8, minutes=5)
    hard = review_card(card, settings, HARD, T0 + timedelta(days=8, minutes=5))
    # Math.round(5 * 1.5) = Math.round(7.5) = 8 (Python's round would give 8 here too, 2.5 not).
    assert hard.due_at == T0 + timedelta(days=8, minutes=13)
    assert (hard.state, hard.step_index) == ("relearning", 0)


def test_review_intervals_are_ordered_hard_good_easy() -> None:
    card = _review_card_after_first_easy()
    for delay in (timedelta(minutes=30), timedelta(days=4), timedelta(days=8), timedelta(days=30)):
        when = T0 + delay
        days = [review_card(card, DEFAULTS, r, when).scheduled_days for r in (HARD, GOOD, EASY)]
        hard_days, good_days, easy_days = (d for d in days if d is not None)
        assert hard_days <= good_days < easy_days, (delay, days)


def test_elapsed_days_use_utc_calendar_days() -> None:
    card = CardSchedule(
        state="review",
        due_at=datetime(2026, 3, 12, 20, 0, tzinfo=UTC),
        reps=3,
        lapses=0,
        step_index=None,
        stability=4.0,
        difficulty=5.0,
        last_reviewed_at=datetime(2026, 3, 8, 20, 0, tzinfo=UTC),
        scheduled_days=4,
    )
    just_after_midnight = review_card(card, DEFAULTS, GOOD, datetime(2026, 3, 9, 0, 1, tzinfo=UTC))
    late_next_day = review_card(card, DEFAULTS, GOOD, datetime(2026, 3, 9, 22, 0, tzinfo=UTC))
    same_day = review_card(card, DEFAULTS, GOOD, datetime(2026, 3, 8, 23, 59, tzinfo=UTC))
    # 01:30 at +02:00 is 23:30 on 2026-03-08 in UTC, so it is a same-day review too.
    same_utc_day_local_next_day = review_card(
        card, DEFAULTS, GOOD, datetime(2026, 3, 9, 1, 30, tzinfo=timezone(timedelta(hours=2)))
    )
    assert just_after_midnight.stability == late_next_day.stability
    assert same_day.stability != just_after_midnight.stability
    assert same_utc_day_local_next_day.stability == same_day.stability


def test_fuzz_disabled_uses_raw_rounded_interval() -> None:
    settings = SchedulerSettings(enable_fuzz=False)
    card = review_card(CardSchedule.new(), settings, EASY, T0)
    # The interval modifier is exactly 1 at 90 % retention, so the interval is round(S).
    assert card.scheduled_days == js_round(8.2956) == 8
    later = review_card(card, settings, EASY, T0 + timedelta(days=8))
    assert later.stability is not None
    assert later.scheduled_days == js_round(later.stability)


def test_fuzzed_interval_stays_within_fuzz_range() -> None:
    card = _review_card_after_first_easy()
    when = T0 + timedelta(days=8)
    fuzzed = review_card(card, DEFAULTS, GOOD, when)
    unfuzzed = review_card(card, replace(DEFAULTS, enable_fuzz=False), GOOD, when)
    assert fuzzed.stability == unfuzzed.stability
    assert unfuzzed.scheduled_days is not None
    low, high = fsrs_module._fuzz_range(unfuzzed.scheduled_days, 8, DEFAULTS.maximum_interval_days)
    assert fuzzed.scheduled_days is not None
    assert low <= fuzzed.scheduled_days <= high


def test_maximum_interval_caps_graduation() -> None:
    settings = SchedulerSettings(maximum_interval_days=5)
    card = review_card(CardSchedule.new(), settings, EASY, T0)
    assert card.scheduled_days is not None
    assert 1 <= card.scheduled_days <= 5


def test_rebuild_of_empty_history_is_a_new_card() -> None:
    assert rebuild_schedule(DEFAULTS, []) == CardSchedule.new()


def test_rebuild_equals_incremental_reviews() -> None:
    history = [
        (GOOD, T0),
        (GOOD, T0 + timedelta(minutes=10)),
        (GOOD, T0 + timedelta(days=2)),
        (AGAIN, T0 + timedelta(days=9)),
        (GOOD, T0 + timedelta(days=9, minutes=10)),
    ]
    card = CardSchedule.new()
    for rating, when in history:
        card = review_card(card, DEFAULTS, rating, when)
    assert rebuild_schedule(DEFAULTS, history) == card


# --- validation -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "card",
    [
        replace(CardSchedule.new(), stability=1.0),
        replace(CardSchedule.new(), step_index=0),
        replace(_review_card_after_first_easy(), step_index=0),
        replace(_review_card_after_first_easy(), difficulty=None),
        replace(review_card(CardSchedule.new(), DEFAULTS, GOOD, T0), step_index=None),
        replace(CardSchedule.new(), state="suspended"),
    ],
)
def test_inconsistent_card_state_is_rejected(card: CardSchedule) -> None:
    with pytest.raises(InvalidScheduleStateError):
        review_card(card, DEFAULTS, GOOD, T0 + timedelta(days=1))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"desired_retention": 1.0},
        {"desired_retention": 0.0},
        {"learning_steps_minutes": ()},
        {"learning_steps_minutes": (10, 10)},
        {"learning_steps_minutes": (10, 5)},
        {"relearning_steps_minutes": (0,)},
        {"relearning_steps_minutes": (1440,)},
        {"relearning_steps_minutes": (1.5,)},
        {"maximum_interval_days": 0},
    ],
)
def test_invalid_settings_are_rejected(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        SchedulerSettings(**kwargs)  # type: ignore[arg-type]


def test_settings_normalise_lists_to_tuples() -> None:
    settings = SchedulerSettings(learning_steps_minutes=[1, 10], relearning_steps_minutes=[10])  # type: ignore[arg-type]
    assert settings.learning_steps_minutes == (1, 10)
    assert settings.relearning_steps_minutes == (10,)
    assert hash(settings) == hash(SchedulerSettings())


def test_new_card_schedule() -> None:
    card = CardSchedule.new()
    assert card.state == "new"
    assert card.due_at is None
    assert card.last_reviewed_at is None
    assert card.step_index is None
