"""How a sentence places its speaker: *in* a place, or only *near* one.

"I live near the castle", "we're right by the station", "a few minutes from the beach" say what is close to home,
not where home is: read as ``lives_in``, a landmark would replace the city someone lives in (issue #29: a
landmark never replaces where someone lives). The extractor asks :func:`proximity_before` about the words just
before a place it read; whether the place itself is a city (then "near Boston" may well be a move) is the
knowledge base's call, not this module's.
"""

from __future__ import annotations

import re

from neusym.language import regex as rx

__all__ = ["find_object", "proximity_before"]

_NEAR = rx.compile(
    r"\b(?:near|nearby|close\s+to|next\s+to|right\s+by|just\s+by|by|beside|opposite|across\s+from|"
    r"around\s+the\s+corner\s+from|(?:a\s+)?(?:few\s+|couple\s+of\s+)?(?:minutes?|blocks?|steps?|mins?)\s+"
    r"(?:away\s+)?from|(?:in\s+)?walking\s+distance\s+(?:of|from)|cerca\s+de|junto\s+a|pr[eè]s\s+d[eu]|"
    r"[àa]\s+c[oô]t[ée]\s+d[eu]|in\s+der\s+n[äa]he\s+(?:von|des|der))\s+(?:the\s+|a\s+|an\s+)?$",
    re.IGNORECASE)


def proximity_before(sentence: str, start: int) -> bool:
    """Whether the words right before ``sentence[start:]`` say *near* rather than *in* ("near the castle of ...")."""
    return start > 0 and _NEAR.search(sentence[max(0, start - 48):start]) is not None


def find_object(sentence: str, obj: str) -> int:
    """Where ``obj`` starts in ``sentence`` (case-insensitive; -1 when it is not said verbatim)."""
    m = rx.search(r"(?<!\w)" + re.escape(obj) + r"(?!\w)", sentence, re.IGNORECASE)
    return m.start() if m is not None else -1
