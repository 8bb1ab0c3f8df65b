"""FSRS-6 scheduling (pure Python, no Django): see ``fsrs`` for the algorithm."""

from .fsrs import (
    CARD_STATES,
    FSRS_WEIGHTS,
    CardSchedule,
    CardState,
    InvalidScheduleStateError,
    ReviewBeforeLastReviewError,
    SchedulerSettings,
    format_js_timestamp,
    rebuild_schedule,
    review_card,
)

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
