"""Date, time and duration expressions resolved against an explicit ``now``.

Relative dates are resolved at extraction time because "tomorrow" means nothing once stored; ``now`` is a parameter
(never read from the clock here) so replayed histories and tests resolve exactly. Conventions, chosen to be
predictable rather than clever:

* calendar expressions ("tomorrow", "on Friday", "May 3rd", "next week") resolve to midnight of that day in the
  timezone of ``now`` (UTC when ``now`` is naive); durations ("in 2 hours", "in 2 weeks") are ``now + delta``;
* a weekday or a month-day without a year resolves forward for plans and backward otherwise; "on Friday" said on a
  Friday means a week later (or a week earlier);
* "next week"/"next month"/"next year" add one unit to ``now`` (not "the Monday after").
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from neusym.extraction._text import MONTH_PATTERN, MONTHS, NUMBER_WORDS, WEEKDAYS
from neusym.language import regex as rx

__all__ = ["MONTHS", "MONTH_PATTERN", "DateMention", "find_dates", "find_ttl", "format_day", "resolve_now"]

_MONTH = rf"(?:{MONTH_PATTERN})"
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_NUM = r"(?:\d+(?:\.\d+)?|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|ninety|a few|few|a couple(?: of)?|couple of|several|half an?)"
_UNIT = (
    r"(?P<{0}>sec(?:ond)?s?|min(?:ute)?s?|h(?:ou)?rs?|hours?|days?|weeks?|months?|years?|yrs?|fortnights?)"
)
_SEASON = r"(?:summer|winter|spring|fall|autumn)"

_DATE = rx.compile(
    r"\b(?:"
    r"(?P<iso>(?P<iy>(?:19|20)\d{2})[-/](?P<im>\d{1,2})[-/](?P<id>\d{1,2}))(?:[T ](?P<ih>\d{1,2}):(?P<imin>\d{2}))?"
    rf"|(?P<md>(?P<md_m>{_MONTH})\.?\s+(?P<md_d>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<md_y>(?:19|20)\d{{2}}))?)"
    rf"|(?P<dm>(?:the\s+)?(?P<dm_d>\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+(?P<dm_m>{_MONTH})\.?(?:,?\s+(?P<dm_y>(?:19|20)\d{{2}}))?)"
    rf"|(?P<my>(?P<my_m>{_MONTH})\s+(?P<my_y>(?:19|20)\d{{2}}))"
    r"|(?P<rel>the\s+day\s+after\s+tomorrow|the\s+day\s+before\s+yesterday|today|tonight|tomorrow|yesterday"
    r"|this\s+(?:morning|afternoon|evening)|last\s+night)"
    rf"|(?P<wd>(?:(?P<wd_mod>next|last|this|coming|on|past|until|by|every|each)\s+)?(?P<wd_d>{_WEEKDAY}))"
    rf"|(?P<nl>(?P<nl_mod>next|last|this|coming|past)\s+(?P<nl_u>week|weekend|month|year|{_SEASON}))"
    rf"|(?P<in>in\s+(?P<in_n>{_NUM})\s+{_UNIT.format('in_u')})"
    rf"|(?P<ago>(?P<ago_n>{_NUM})\s+{_UNIT.format('ago_u')}\s+ago)"
    r"|(?P<yr>(?:in|since|from|back\s+in|during|of)\s+(?P<yr_y>(?:19|20)\d{2}))"
    r")\b",
    re.IGNORECASE,
)
_TIME = rx.compile(
    r"\b(?:at\s+)?(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ap>am|pm|a\.m\.|p\.m\.)(?!\w)|\bat\s+(?P<h2>\d{1,2}):(?P<m2>\d{2})\b"
    r"|\bat\s+(?P<noon>noon|midnight)\b",
    re.IGNORECASE,
)
_TTL_TRIGGER = rx.compile(
    r"\b(?:(?:remember|keep|note|store|save|hold(?:\s+on\s+to)?|memori[sz]e)\s+(?:this|that|it|these|those|the\s+\w+|my\s+\w+)"
    r"|(?:valid|good)\s+(?:for|until|till)|expir\w*|temporar\w*|(?:only|just)\s+(?:for|until|till)"
    r"|forget\s+(?:it|this|that)\s+(?:in|after))\b",
    re.IGNORECASE,
)
_TTL = rx.compile(
    r"\b(?:for|within)\s+(?:the\s+next\s+|another\s+|the\s+)?(?P<n>"
    + _NUM
    + r")?\s*"
    + _UNIT.format("u")
    + r"\b"
    r"|\b(?:expires?|expiring|forget\s+(?:it|this|that))\s+(?:in|after)\s+(?P<n2>"
    + _NUM
    + r")\s*"
    + _UNIT.format("u2")
    + r"\b"
    r"|\b(?P<today>for\s+(?:today|tonight|the\s+rest\s+of\s+(?:the|to)day|this\s+evening))\b"
    r"|\b(?:until|till|til)\s+(?P<until>.{3,40})",
    re.IGNORECASE,
)
_UNIT_SECONDS = {
    "s": 1.0,
    "mi": 60.0,
    "h": 3600.0,
    "d": 86400.0,
    "w": 604800.0,
    "f": 1209600.0,
    "mo": 2592000.0,
}
_SEASON_START = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}


@dataclass(frozen=True, slots=True)
class DateMention:
    """A date expression found in a sentence. ``direction`` is what the words say: past, future or either."""

    start: int
    end: int
    text: str
    when: datetime
    direction: str  # "past" | "future" | "either"
    has_year: bool
    precision: str  # "day" | "instant" | "month" | "year"


def resolve_now(now: datetime | None) -> datetime:
    if now is None:
        return datetime.now(UTC)
    return now if now.tzinfo is not None else now.replace(tzinfo=UTC)


def format_day(when: datetime, *, has_year: bool) -> str:
    """Canonical text for a date used as a triple object: ISO with a year, "May 3" without one."""
    return when.date().isoformat() if has_year else f"{calendar.month_name[when.month]} {when.day}"


def _number(text: str) -> float:
    low = " ".join(text.lower().split())
    try:
        return float(low)
    except ValueError:
        return float(NUMBER_WORDS.get(low, 1))


def _unit_seconds(unit: str) -> float:
    low = unit.lower()
    if low.startswith("mo"):
        return _UNIT_SECONDS["mo"]
    if low.startswith("y"):
        return 365.0 * 86400.0
    if low.startswith("mi"):
        return 60.0
    return _UNIT_SECONDS.get(low[0], 60.0)


def _midnight(day: datetime) -> datetime:
    return day.replace(hour=0, minute=0, second=0, microsecond=0)


def _safe_date(now: datetime, year: int, month: int, day: int) -> datetime | None:
    try:
        return _midnight(now.replace(year=year, month=month, day=day))
    except ValueError:
        return None


def _add_months(day: datetime, months: int) -> datetime:
    total = day.month - 1 + months
    year, month = day.year + total // 12, total % 12 + 1
    return day.replace(year=year, month=month, day=min(day.day, calendar.monthrange(year, month)[1]))


def _month_day(
    now: datetime, month: int, day: int, year: str | None, future: bool
) -> tuple[datetime | None, bool]:
    if year:
        return _safe_date(now, int(year), month, day), True
    today = _midnight(now)
    when = _safe_date(now, now.year, month, day)
    if when is None:
        return None, False
    if future and when < today:
        when = _safe_date(now, now.year + 1, month, day)
    elif not future and when > today:
        when = _safe_date(now, now.year - 1, month, day)
    return when, False


def _weekday(now: datetime, target: int, mod: str, future: bool) -> tuple[datetime, str]:
    today = _midnight(now)
    if mod in {"last", "past"} or (mod in {"", "on"} and not future):
        back = (today.weekday() - target) % 7 or 7
        return today - timedelta(days=back), "past"
    ahead = (target - today.weekday()) % 7
    if ahead == 0 and mod != "this":
        ahead = 7
    return today + timedelta(days=ahead), "future" if mod in {
        "next",
        "coming",
        "this",
        "until",
        "by",
    } else "either"


def _season(now: datetime, name: str, mod: str) -> datetime:
    month = _SEASON_START[name]
    start = _midnight(now.replace(month=month, day=1))
    if mod == "last":
        while start + timedelta(days=90) > now:
            start = start.replace(year=start.year - 1)
        return start
    if mod == "this" and start <= now < start + timedelta(days=91):
        return start
    while start <= now:
        start = start.replace(year=start.year + 1)
    return start


def _relative_unit(now: datetime, unit: str, mod: str) -> tuple[datetime, str]:
    sign = {"next": 1, "coming": 1, "last": -1, "past": -1}.get(mod, 0)
    direction = "future" if sign > 0 else "past" if sign < 0 else "either"
    unit = unit.lower()
    if unit in _SEASON_START:
        return _season(now, unit, mod), direction
    if unit == "weekend":
        today = _midnight(now)
        ahead = (5 - today.weekday()) % 7
        if sign < 0:
            return today - timedelta(days=(today.weekday() - 5) % 7 or 7), direction
        return today + timedelta(days=ahead + (7 if sign > 0 and ahead == 0 else 0)), direction
    if unit == "week":
        return _midnight(now + timedelta(weeks=sign)), direction
    if unit == "month":
        return _midnight(_add_months(now, sign)), direction
    return _midnight(_add_months(now, 12 * sign)), direction


def _resolve(m: re.Match[str], now: datetime, future: bool) -> tuple[datetime, str, bool, str] | None:
    g = m.groupdict()
    if g["iso"]:
        when = _safe_date(now, int(g["iy"]), int(g["im"]), int(g["id"]))
        if when is not None and g["ih"] and int(g["ih"]) < 24:
            when = when.replace(hour=int(g["ih"]), minute=min(int(g["imin"]), 59))
        return (when, "either", True, "day") if when else None
    if g["md"] or g["dm"]:
        month = MONTHS[(g["md_m"] or g["dm_m"]).lower().rstrip(".")]
        when, has_year = _month_day(now, month, int(g["md_d"] or g["dm_d"]), g["md_y"] or g["dm_y"], future)
        return (when, "either", has_year, "day") if when else None
    if g["my"]:
        when = _safe_date(now, int(g["my_y"]), MONTHS[g["my_m"].lower()], 1)
        return (when, "either", True, "month") if when else None
    if g["rel"]:
        rel = " ".join(g["rel"].lower().split())
        offsets = {
            "tomorrow": 1,
            "yesterday": -1,
            "the day after tomorrow": 2,
            "the day before yesterday": -2,
        }
        offset = offsets.get(rel, -1 if rel == "last night" else 0)
        direction = "future" if offset > 0 else "past" if offset < 0 else "either"
        return _midnight(now) + timedelta(days=offset), direction, False, "day"
    if g["wd"]:
        if (g["wd_mod"] or "").lower() in {"every", "each"}:
            return None  # a routine, not a date
        when, direction = _weekday(now, WEEKDAYS[g["wd_d"].lower()], (g["wd_mod"] or "").lower(), future)
        return when, direction, False, "day"
    if g["nl"]:
        when, direction = _relative_unit(now, g["nl_u"], g["nl_mod"].lower())
        return when, direction, False, "day"
    if g["in"]:
        return (
            now + timedelta(seconds=_number(g["in_n"]) * _unit_seconds(g["in_u"])),
            "future",
            False,
            "instant",
        )
    if g["ago"]:
        return (
            now - timedelta(seconds=_number(g["ago_n"]) * _unit_seconds(g["ago_u"])),
            "past",
            False,
            "instant",
        )
    if g["yr"]:
        when = _safe_date(now, int(g["yr_y"]), 1, 1)
        return (when, "past" if int(g["yr_y"]) <= now.year else "future", True, "year") if when else None
    return None


def _apply_time(sentence: str, mentions: list[DateMention], now: datetime, future: bool) -> list[DateMention]:
    tm = _TIME.search(sentence)
    if tm is None:
        return mentions
    if tm.group("noon"):
        hour, minute = (12, 0) if tm.group("noon").lower() == "noon" else (0, 0)
    else:
        hour = int(tm.group("h") or tm.group("h2"))
        minute = int(tm.group("m") or tm.group("m2") or 0)
        ap = (tm.group("ap") or "").lower().replace(".", "")
        if ap == "pm" and hour < 12:
            hour += 12
        elif ap == "am" and hour == 12:
            hour = 0
    if hour > 23 or minute > 59:
        return mentions
    for i, mention in enumerate(mentions):
        if mention.precision == "day":
            mentions[i] = DateMention(
                mention.start,
                mention.end,
                mention.text,
                mention.when.replace(hour=hour, minute=minute),
                mention.direction,
                mention.has_year,
                "instant",
            )
            return mentions
    if mentions:
        return mentions
    when = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if future and when < now:
        when += timedelta(days=1)
    return [DateMention(tm.start(), tm.end(), tm.group(0), when, "either", False, "instant")]


def find_dates(sentence: str, now: datetime, *, prefer_future: bool) -> list[DateMention]:
    """Every date expression in ``sentence``, resolved against ``now`` (see the module docstring for conventions)."""
    mentions: list[DateMention] = []
    for m in _DATE.finditer(sentence):
        resolved = _resolve(m, now, prefer_future)
        if resolved is None:
            continue
        when, direction, has_year, precision = resolved
        mentions.append(DateMention(m.start(), m.end(), m.group(0), when, direction, has_year, precision))
    return _apply_time(sentence, mentions, now, prefer_future)


def find_ttl(sentence: str, now: datetime) -> float | None:
    """Seconds a memory should live when the user says so ("remember this code for 10 minutes" -> 600).

    Only counted when the sentence talks about keeping or remembering: "I lived in Paris for 3 years" has a
    duration but no expiry.
    """
    if _TTL_TRIGGER.search(sentence) is None:
        return None
    m = _TTL.search(sentence)
    if m is None:
        return None
    if m.group("today"):
        return max((_midnight(now) + timedelta(days=1) - now).total_seconds(), 1.0)
    if m.group("until"):
        dates = find_dates(m.group("until"), now, prefer_future=True)
        if not dates:
            return None
        seconds = (dates[0].when - now).total_seconds()
        if dates[0].precision == "day":
            seconds += 86400.0  # "until Friday" includes Friday
        return seconds if seconds > 0 else None
    n, unit = (m.group("n"), m.group("u")) if m.group("u") else (m.group("n2"), m.group("u2"))
    if not n and unit.lower().endswith("s"):
        return None  # "for years" is a duration of the past, not an expiry
    seconds = (_number(n) if n else 1.0) * _unit_seconds(unit)
    return seconds if seconds > 0 else None
