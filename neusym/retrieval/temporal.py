"""Time expressions in a query -> an event-time window, without an LLM.

Stage 2 uses the window as a boost (not a filter): "what did I do last May?" should prefer memories from May but
still answer from others when May has nothing.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from neusym.extraction.dates import MONTH_PATTERN, MONTHS
from neusym.language import regex as rx

__all__ = ["parse_time_window"]

_MONTHS = MONTHS  # one spelling of month names for extraction and retrieval (neusym.extraction.dates)
_MONTH_RE = MONTH_PATTERN
_RE_MONTH_YEAR = rx.compile(rf"\b({_MONTH_RE})\.?,?\s+(\d{{4}})\b", re.IGNORECASE)
_RE_DAY_MONTH_YEAR = rx.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH_RE})\.?,?\s+(\d{{4}})\b", re.IGNORECASE)
_RE_MONTH_DAY_YEAR = rx.compile(rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.IGNORECASE)
_RE_ISO = rx.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_RE_YEAR = rx.compile(r"\b(?:in|during|of|since)\s+(19\d{2}|20\d{2})\b", re.IGNORECASE)
_RE_IN_MONTH = rx.compile(rf"\b(?:in|during|last|this)\s+({_MONTH_RE})\b", re.IGNORECASE)
_RE_AGO = rx.compile(r"\b(\d+|a|an|one|two|three|four|five|six)\s+(day|week|month|year)s?\s+ago\b", re.IGNORECASE)
_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def _month_window(year: int, month: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return start, end - timedelta(seconds=1)


def parse_time_window(query: str, now: datetime | None = None) -> tuple[float, float] | None:
    """Return (from, to) epoch seconds for the first time expression found, or None."""
    now = now or datetime.now(UTC)
    text = query.lower()
    try:
        if m := _RE_ISO.search(text):
            d = datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), tzinfo=UTC)
            return d.timestamp(), (d + timedelta(days=1)).timestamp() - 1
        if m := _RE_DAY_MONTH_YEAR.search(text):
            d = datetime(int(m.group(3)), _MONTHS[m.group(2).lower()], int(m.group(1)), tzinfo=UTC)
            return (d - timedelta(days=1)).timestamp(), (d + timedelta(days=2)).timestamp()
        if m := _RE_MONTH_DAY_YEAR.search(text):
            d = datetime(int(m.group(3)), _MONTHS[m.group(1).lower()], int(m.group(2)), tzinfo=UTC)
            return (d - timedelta(days=1)).timestamp(), (d + timedelta(days=2)).timestamp()
        if m := _RE_MONTH_YEAR.search(text):
            s, e = _month_window(int(m.group(2)), _MONTHS[m.group(1).lower()])
            return s.timestamp(), e.timestamp()
        if m := _RE_YEAR.search(text):
            y = int(m.group(1))
            return datetime(y, 1, 1, tzinfo=UTC).timestamp(), datetime(y + 1, 1, 1, tzinfo=UTC).timestamp() - 1
        if m := _RE_AGO.search(text):
            n = _NUM.get(m.group(1).lower()) or int(m.group(1))
            unit = {"day": 1, "week": 7, "month": 30, "year": 365}[m.group(2).lower()]
            center = now - timedelta(days=n * unit)
            half = timedelta(days=max(1, unit // 2))
            return (center - half).timestamp(), (center + half).timestamp()
        if "yesterday" in text:
            d = (now - timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
            return d.timestamp(), (d + timedelta(days=1)).timestamp() - 1
        if "today" in text or "tonight" in text:
            d = now.replace(hour=0, minute=0, second=0, microsecond=0)
            return d.timestamp(), now.timestamp()
        for word, days in (("last week", 7), ("last month", 31), ("last year", 365)):
            if word in text:
                start = now - timedelta(days=2 * days)
                return start.timestamp(), (now - timedelta(days=days // 2)).timestamp()
        for word, days in (("this week", 7), ("this month", 31), ("this year", 365), ("recently", 30)):
            if word in text:
                return (now - timedelta(days=days)).timestamp(), now.timestamp()
        if m := _RE_IN_MONTH.search(text):
            month = _MONTHS[m.group(1).lower()]
            year = now.year if month <= now.month else now.year - 1
            s, e = _month_window(year, month)
            return s.timestamp(), e.timestamp()
    except ValueError:  # impossible dates such as 31 February
        return None
    return None
