"""Discourse markers and corrections: what a sentence says about *change*, separated from what it states.

"Btw, I'm vegetarian now" states ``diet vegetarian``; "btw" is noise that used to stop every rule anchored at the
start of the sentence, and "now" is a signal (the value changed) rather than part of the value. So markers are
taken off before extraction and reported as signals, and corrections ("Berlin, not Munich"; "not vegan, just
vegetarian"; "switched from Android to an iPhone") become explicit *retracting* triples that governance can act on
(end the named value, also for multi-valued predicates) instead of a second value.
"""

from __future__ import annotations

import re
from dataclasses import replace

from neusym.extraction._grammar import RawTriple
from neusym.extraction.base import entity_key
from neusym.knowledge.isa import is_a
from neusym.language import regex as rx
from neusym.language.places import find_object, proximity_before

__all__ = ["apply_corrections", "markers_of", "near_not_home", "strip_markers"]

_LEADING = rx.compile(
    r"^(?:(?:btw|by\s+the\s+way|oh(?:\s+and)?|and|so|well|anyway|anyways|also|plus|ok(?:ay)?|alright|right|"
    r"just\s+so\s+you\s+know|fyi|quick\s+update|update|heads\s+up|actually|in\s+fact|as\s+it\s+turns\s+out|"
    r"turns\s+out|correction|sorry|wait|hmm|um|uh|lol|haha|hey|hi|one\s+more\s+thing|news)\s*[,:!\-]*\s+)+",
    re.IGNORECASE,
)
_INNER_ACTUALLY = rx.compile(
    r"(?<=\s)(?:actually|in\s+fact)\s+|,\s*actually\s*,|\s+actually(?=[.!?]*$)", re.IGNORECASE
)
_TRAILING = rx.compile(
    r"(?:\s*,)?\s+(?:now|anymore|any\s+more|these\s+days|nowadays|from\s+now\s+on)"
    r"(?=\s*[.!?]*\s*$)",
    re.IGNORECASE,
)
_CHANGE = rx.compile(
    r"\b(?:now|anymore|any\s+more|no\s+longer|switched|switching|changed|moved|new|started|starting|quit|"
    r"stopped|left|became|become|these\s+days|nowadays|from\s+now\s+on|since\s+then|recently|just\s+(?:got|"
    r"started|moved|joined))\b",
    re.IGNORECASE,
)
_CORRECTION = rx.compile(
    r"^(?:actually|in\s+fact|correction|sorry|wait)\b|\b(?:actually|i\s+meant|i\s+mean|not\s+\w+\s*,\s*(?:but|just|"
    r"only))\b|,\s*not\s+\w",
    re.IGNORECASE,
)


def strip_markers(sentence: str) -> str:
    """``sentence`` without leading discourse markers, inner "actually" and a trailing "now"/"anymore".

    The result is what the rules read; the original text stays the memory's content.
    """
    out = _LEADING.sub("", sentence, count=1)
    if out and out[0].islower() and out[:2] != "i ":
        out = out[0].upper() + out[1:] if out.split(" ", 1)[0].lower() in {"my", "our", "the"} else out
    out = _INNER_ACTUALLY.sub(" ", out)
    out = _TRAILING.sub("", out)
    return rx.sub(r"\s{2,}", " ", out).strip() or sentence


def markers_of(lower: str) -> list[str]:
    """Intent signals for change and correction markers in a lowercased sentence."""
    out = []
    if _CHANGE.search(lower):
        out.append("update_marker")
    if _CORRECTION.search(lower):
        out.append("correction")
    return out


_NOT_Y = rx.compile(
    r"(?P<x>[^,;]+?)\s*,?\s+(?:and\s+)?(?:not|rather\s+than|instead\s+of)\s+(?:in\s+|at\s+|to\s+|an?\s+|the\s+|"
    r"with\s+|for\s+)?(?P<y>[^,;.!?]+?)(?=\s*(?:$|[,;.!?]|\s+(?:anymore|any\s+more)\b))",
    re.IGNORECASE,
)
_NOT_X_BUT_Y = rx.compile(
    r"\bnot\s+(?:an?\s+|the\s+|in\s+|at\s+)?(?P<x>[^,;.!?]+?)\s*,?\s+(?:but|just|only|rather)\s+(?:an?\s+|the\s+|"
    r"in\s+|at\s+)?(?P<y>[^,;.!?]+?)(?=\s*(?:$|[,;.!?]))",
    re.IGNORECASE,
)
_SWITCH = rx.compile(
    r"\b(?:switched|switching|changed|moved|went|upgraded|converted)\s+(?:over\s+)?from\s+(?:an?\s+|the\s+|my\s+)?"
    r"(?P<x>[^,;.!?]+?)\s+to\s+(?:an?\s+|the\s+|my\s+)?(?P<y>[^,;.!?]+?)(?=\s*(?:$|[,;.!?]|\s+(?:because|since|"
    r"last|this|in|after|when|for|with|at|on|and|but|so|as|about)\b))",
    re.IGNORECASE,
)


def _same(a: str, b: str) -> bool:
    ka, kb = entity_key(a), entity_key(b)
    return (
        bool(ka)
        and bool(kb)
        and (
            ka == kb
            or ka.endswith(" " + kb)
            and len(ka.split()) <= len(kb.split()) + 2
            or kb.endswith(" " + ka)
            and len(kb.split()) <= len(ka.split()) + 2
        )
    )


def apply_corrections(sentence: str, triples: list[RawTriple]) -> list[RawTriple]:
    """Add retracting triples for corrections and switches; mark the values they withdraw.

    - "I live in Seattle, not Portland": ``lives_in Seattle`` stays; ``lives_in Portland`` is added with
      ``polarity=False, retracts=True``.
    - "I'm not vegan, just vegetarian": the negated ``diet vegan`` is marked ``retracts`` and ``diet vegetarian``
      is added.
    - "I switched from Android to an iPhone": the value after "to" is current, the one after "from" is retracted.
    """
    if not triples or not any(w in sentence.lower() for w in ("not", "instead", "rather", "from")):
        return triples
    out = list(triples)
    for m in _NOT_X_BUT_Y.finditer(sentence):
        x, y = m.group("x").strip(), m.group("y").strip()
        for t in list(out):
            if not t.polarity and _same(t.object, x):
                out[out.index(t)] = replace(t, retracts=True)
                if not any(u.predicate == t.predicate and _same(u.object, y) for u in out):
                    out.append(
                        replace(
                            t,
                            object=y,
                            polarity=True,
                            retracts=False,
                            derived=False,
                            past=False,
                            aspect="ongoing",
                            span_start=m.start("y"),
                        )
                    )
    for m in _NOT_Y.finditer(sentence):
        x, y = m.group("x"), m.group("y").strip()
        for t in list(out):
            if t.polarity and not t.retracts and x.rstrip().lower().endswith(t.object.lower()):
                if not any(u.predicate == t.predicate and _same(u.object, y) for u in out):
                    out.append(
                        replace(
                            t, object=y, polarity=False, retracts=True, derived=True, span_start=m.start("y")
                        )
                    )
                break
    for m in _SWITCH.finditer(sentence):
        x, y = m.group("x").strip(), m.group("y").strip()
        for t in list(out):
            if t.polarity and _same(t.object, y):
                if not any(u.predicate == t.predicate and _same(u.object, x) for u in out):
                    out.append(
                        replace(
                            t,
                            object=x,
                            polarity=False,
                            retracts=True,
                            derived=True,
                            past=True,
                            aspect="ended",
                            span_start=m.start("x"),
                        )
                    )
                break
    return out


# what a place must be for "I live near X" to say where home is ("near Boston": the Boston area); anything else
# (a castle, a park, the station, an unknown beach) is a landmark next to home
_HOME_AREAS = ("city.n.01", "municipality.n.01", "country.n.02", "state.n.01", "administrative_district.n.01")


def near_not_home(sentence: str, triples: list[RawTriple]) -> list[RawTriple]:
    """``lives_in X`` said as "near X" becomes ``lives_near X`` unless X is a city, region or country.

    A landmark never replaces where someone lives: "I live near the castle of São Jorge" after "I live in Lisbon"
    is a second fact, not a move (``lives_near`` is not functional)."""
    out = []
    for t in triples:
        if t.predicate == "lives_in" and t.polarity and not t.retracts:
            start = t.span_start if t.span_start >= 0 else find_object(sentence, t.object)
            if start > 0 and proximity_before(sentence, start) \
                    and is_a(t.object.lower().replace(" ", "_"), _HOME_AREAS) is None:
                t = replace(t, predicate="lives_near")
        out.append(t)
    return out
