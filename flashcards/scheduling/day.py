"""The learning day: a workspace's day runs from ``starts_at_hour`` to the same hour the next day,
on the wall clock of its IANA time zone (so a day may last 23 or 25 hours across a DST change).

FSRS never reads it: the scheduler counts elapsed time as the reference scheduler does
(``fsrs``); the learning day is what statistics and "today" mean (dsl.md §6.1, §6.2; domain.md §1)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

DEFAULT_TIME_ZONE = "UTC"
DEFAULT_DAY_STARTS_AT_HOUR = 0


@lru_cache(maxsize=1)
def _zone_names() -> frozenset[str]:
    return frozenset(available_timezones())


@lru_cache(maxsize=256)
def zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def valid_time_zone(name: object) -> str | None:
    """The canonical spelling of an IANA zone name, or None. Case is forgiven ('europe/madrid')."""
    if not isinstance(name, str) or not name.strip() or len(name) > 64:
        return None
    text = name.strip()
    names = _zone_names() | {"UTC"}
    if text not in names:
        folded = {n.casefold(): n for n in names}
        text = folded.get(text.casefold(), "")
        if not text:
            return None
    try:
        zone(text)
    except (ZoneInfoNotFoundError, ValueError):
        return None
    return text


@dataclass(frozen=True, slots=True)
class LearningDay:
    time_zone: str = DEFAULT_TIME_ZONE
    starts_at_hour: int = DEFAULT_DAY_STARTS_AT_HOUR

    @property
    def is_utc_midnight(self) -> bool:
        return self.time_zone == "UTC" and self.starts_at_hour == 0

    def date_of(self, moment: datetime) -> date:
        """The learning day a moment counts for: its local wall clock moved back by the hour."""
        local = moment.astimezone(zone(self.time_zone)).replace(tzinfo=None)
        return (local - timedelta(hours=self.starts_at_hour)).date()

    def start(self, day: date) -> datetime:
        """When a learning day begins, in UTC (a start inside a DST gap moves forward with it)."""
        local = datetime.combine(day, time(self.starts_at_hour), tzinfo=zone(self.time_zone))
        return local.astimezone(UTC)

    def start_of(self, moment: datetime) -> datetime:
        return self.start(self.date_of(moment))


UTC_DAY = LearningDay()
