"""Entity mentions from surface cues: capitalisation, @handles, emails, phones, URLs, dates, amounts, quotes.

Without a tagger the only strong signal for a proper name in English is capitalisation away from the start of a
sentence, so that is the core rule; the first word of a sentence counts only when it is part of a longer run
("New York is ...") or is already known (seen capitalised mid-sentence, the speaker, a triple subject).
Machine-shaped tokens (emails, URLs, phones, handles) are found first and masked, so "Bob.Smith@Example.com" does
not also yield "Bob" and "Example".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from neusym.extraction._text import ABBREV_DOT, COMMON_WORDS, MONTHS, UPPER, WEEKDAYS
from neusym.language import regex as rx

__all__ = ["EMAIL", "PHONE", "URL", "Mention", "find_mentions", "is_name_like"]

EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
URL = r"(?:https?://|www\.)[^\s<>\"']+"
PHONE = r"(?<![\w+])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{2,4}(?:[\s.-]\d{2,4}){1,4}(?![\w-])"

_MACHINE = rx.compile(
    rf"(?P<email>{EMAIL})|(?P<url>{URL})|(?P<handle>(?<![\w@.])@[A-Za-z0-9_](?:[A-Za-z0-9_.]{{0,38}}[A-Za-z0-9_])?)"
    rf"|(?P<phone>{PHONE})"
)
_MONTH_RX = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_ABS_DATE = rx.compile(
    r"\b(?:(?:19|20)\d{2}-\d{1,2}-\d{1,2}"
    rf"|{_MONTH_RX}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+(?:19|20)\d{{2}})?"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?(?:\s+of)?\s+{_MONTH_RX}(?:,?\s+(?:19|20)\d{{2}})?"
    rf"|{_MONTH_RX}\s+(?:19|20)\d{{2}})\b",
    re.IGNORECASE,
)
_AMOUNT = rx.compile(
    r"(?:[$\u20ac\u00a3\u00a5]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|bn|million|billion|thousand))?\b"
    r"|\b\d[\d,]*(?:\.\d+)?\s?(?:%|percent\b|km\b|kilomet(?:er|re)s?\b|miles?\b|mi\b|m\b|met(?:er|re)s?\b|cm\b|mm\b"
    r"|kg\b|kilos?\b|g\b|grams?\b|lbs?\b|pounds\b|oz\b|ounces?\b|l\b|lit(?:er|re)s?\b|ml\b|gb\b|mb\b|tb\b|kb\b"
    r"|ghz\b|mhz\b|kwh\b|kw\b|mph\b|km/h|kph\b|\u00b0\s?[cf]\b|degrees?\b|dollars?\b|euros?\b|usd\b|eur\b|gbp\b"
    r"|bucks\b|calories\b|kcal\b|steps\b|floors\b|stars\b|followers\b))",
    re.IGNORECASE,
)
_QUOTED = rx.compile(r"\"([^\"\n]{2,80})\"|(?<![\w'])'([^'\n]{2,80})'(?![\w'])")
_TOKEN = rf"(?:(?:Mr|Mrs|Ms|Dr|Prof|St|Mt)[.{ABBREV_DOT}]|(?!I\b)[{UPPER}][\w\-]*(?:'[{UPPER}][\w\-]*)?|[a-z]+[A-Z][\w\-]*)"
_RUN = rx.compile(
    rf"(?<![\w'])(?<!\w{ABBREV_DOT}){_TOKEN}(?:(?:\s+(?:of|de|da|del|der|van|von|la|le|du|di|bin|al|&)\s+|'s\s+(?=[{UPPER}])|\s+){_TOKEN})*",
)
_PLACE_CUE = rx.compile(r"\b(?:in|at|from|to|near|visit(?:ed|ing)?)\s+$", re.IGNORECASE)
_TRIM_SUFFIX = rx.compile(r"'s?$")


@dataclass(frozen=True, slots=True)
class Mention:
    text: str
    start: int
    end: int
    kind: str  # name | place | email | url | handle | phone | date | amount | title


def _edge_common(word: str) -> bool:
    low = word.lower().rstrip(".\u2024")
    return low in COMMON_WORDS or low in WEEKDAYS or low in MONTHS or low == "i"


def is_name_like(text: str) -> bool:
    """True if ``text`` looks like a proper name (capitalised, not a filler word)."""
    words = text.split()
    return bool(words) and words[0][:1].isupper() and not all(_edge_common(w) for w in words)


def _first_alpha(sentence: str) -> int:
    for i, ch in enumerate(sentence):
        if ch.isalnum():
            return i
    return len(sentence)


def _masked(sentence: str, out: list[Mention]) -> str:
    if not any(c in sentence for c in "@:/.") and not any(map(str.isdigit, sentence)):
        return sentence
    chars = list(sentence)
    for m in _MACHINE.finditer(sentence):
        kind = m.lastgroup or "phone"
        text = m.group(0).rstrip(".,;:!?)")
        if kind == "phone" and not (7 <= sum(map(str.isdigit, text)) <= 15):
            continue
        out.append(Mention(text, m.start(), m.start() + len(text), kind))
        chars[m.start() : m.end()] = " " * (m.end() - m.start())
    return "".join(chars)


def find_mentions(sentence: str, known: Iterable[str] = ()) -> list[Mention]:
    """Entity mentions in one (normalised, abbreviation-protected) sentence, in order of appearance.

    Args:
        sentence: one sentence.
        known: lowercase names already known (the speaker, names from context); a known name counts at the start
            of a sentence too.
    """
    out: list[Mention] = []
    text = _masked(sentence, out)
    has_digit = any(map(str.isdigit, text))
    if has_digit or any(
        m in text.lower() for m in ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep")
    ):
        for m in _ABS_DATE.finditer(text):
            out.append(Mention(m.group(0), m.start(), m.end(), "date"))
    if has_digit:
        for m in _AMOUNT.finditer(text):
            out.append(Mention(m.group(0).strip(), m.start(), m.end(), "amount"))
    if '"' in text or "'" in text:
        titles = []
        for m in _QUOTED.finditer(text):
            inner = (m.group(1) or m.group(2)).strip().rstrip(",.;:!?")
            if inner[:1].isupper() and len(inner.split()) <= 12 and inner.lower() not in COMMON_WORDS:
                out.append(Mention(inner, m.start(), m.end(), "title"))
                titles.append((m.start(), m.end()))
        for a, b in titles:  # a title is one entity: its capitalised words are not names of their own
            text = text[:a] + " " * (b - a) + text[b:]
    first = _first_alpha(text)
    known_set = set(known)
    for m in _RUN.finditer(text):
        words = m.group(0).split()
        start = m.start()
        while words and _edge_common(words[0]):
            start = text.index(words[0], start) + len(words[0])
            words.pop(0)
        while words and _edge_common(words[-1]):
            words.pop()
        if not words:
            continue
        name = _TRIM_SUFFIX.sub("", " ".join(words)).replace(ABBREV_DOT, ".")
        begin = text.index(words[0], start)
        if name.isupper() and len(name) <= 1:
            continue
        place = _PLACE_CUE.search(text, max(0, begin - 12), begin) is not None
        at_start = begin == first
        if at_start and len(words) == 1 and name.lower() not in known_set and not place:
            continue
        out.append(Mention(name, begin, begin + len(name), "place" if place else "name"))
    out.sort(key=lambda mention: mention.start)
    return out
