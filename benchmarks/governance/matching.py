"""How an expected value is recognised in a memory's text, and the expiry windows of TTL phrases.

Values match on word boundaries, case- and accent-insensitively, allowing a plural or ordinal suffix ("cortado" in
"cortados", "March 14" in "March 14th") but not a longer word ("Anna" is not in "Hanna", "York" is not "Yorkshire"
unless followed by a boundary).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

_SLACK = timedelta(hours=14)  # the phrase may be read in any time zone from UTC-12 to UTC+14
_MIN_LEAD = timedelta(seconds=60)


def fold(text: str) -> str:
    """Lower-case and strip accents, so "Düsseldorf" matches "Dusseldorf" and "célibataire" matches itself."""
    nfkd = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in nfkd if not unicodedata.combining(ch)).casefold()


@lru_cache(maxsize=4096)
def _pattern(value: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)" + re.escape(fold(value)) + r"(?:s|es|th|st|nd|rd)?(?!\w)")


def mentions(text: str | None, values: Iterable[str]) -> bool:
    if not text:
        return False
    folded = fold(text)
    return any(_pattern(v).search(folded) for v in values)


def _midnight(day: datetime) -> datetime:
    return day.replace(hour=0, minute=0, second=0, microsecond=0)


def expiry_windows(expect: dict[str, Any], t0: datetime, t1: datetime) -> list[tuple[datetime, datetime]]:
    """Acceptable ``expires_at`` intervals for a phrase said between ``t0`` and ``t1`` (both UTC).

    Durations: the stated length +- a tolerance (the case's, else max(60 s, 10 %)). Calendar phrases ("until
    Friday", "only for today", "this week only", "until the end of the month") are accepted anywhere on the named day
    in any time zone: from its start minus 14 h to its end plus 14 h, never earlier than a minute after the add.
    """
    kind = expect["kind"]
    if kind == "none":
        return []
    if kind == "duration":
        secs = float(expect["seconds"])
        tol = float(expect.get("tolerance_s", max(60.0, 0.1 * secs)))
        return [(t0 + timedelta(seconds=secs - tol), t1 + timedelta(seconds=secs + tol))]
    today = _midnight(t0.astimezone(UTC))
    days: list[tuple[datetime, datetime]] = []
    if kind == "end_of_day":
        return [(t0 + _MIN_LEAD, today + timedelta(days=1) + _SLACK)]
    if kind == "tomorrow":
        days = [(today + timedelta(days=1), today + timedelta(days=2))]
    elif kind == "weekday":
        ahead = (int(expect["weekday"]) - today.weekday()) % 7
        for d in ([0, 7] if ahead == 0 else [ahead]):
            start = today + timedelta(days=d)
            days.append((start, start + timedelta(days=1)))
    elif kind == "end_of_week":
        to_sunday = 6 - today.weekday()
        friday = today + timedelta(days=to_sunday - 2)
        days = [(friday, today + timedelta(days=to_sunday + 1))]
    elif kind == "end_of_month":
        first_next = (today.replace(day=28) + timedelta(days=4)).replace(day=1)
        days = [(first_next - timedelta(days=1), first_next)]
    else:
        raise ValueError(f"unknown expiry kind {kind!r}")
    return [(max(start - _SLACK, t0 + _MIN_LEAD), end + _SLACK) for start, end in days]


def within(when: datetime | None, windows: list[tuple[datetime, datetime]]) -> bool:
    if when is None:
        return False
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return any(lo <= when <= hi for lo, hi in windows)
