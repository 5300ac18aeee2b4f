"""Literal prefilters for tables of regex rules (injection screening runs ~70 patterns on every memory).

Most rule patterns cannot match unless one of a few words occurs in the text: ``ignore|disregard ... instructions``
needs "ignore" or "disregard". :func:`required_literals` reads that set off the compiled pattern's parse tree, so a
rule table stays the single source of truth (no hand-kept keyword lists drifting from the patterns), and a
substring test on the folded text skips the regex whenever none of the literals is there. On short memories that
makes screening several times cheaper, and it never changes a verdict: the gate only skips patterns that provably
cannot match.

Why folding needs care: with ``re.IGNORECASE`` Python matches ``ı`` (dotless i), ``İ``, ``ſ`` (long s) and the
Kelvin sign ``K`` against ASCII letters, and ``str.lower()`` turns ``İ`` into two characters. :func:`fold` maps
exactly the code points that case-match an ASCII letter (checked against the ``re`` module in the unit tests)
before lowering, and literals are only used when they are ASCII; anything else disables the gate for that rule.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any, Protocol

# The parser behind re.compile: private, but stable across 3.11-3.13 (sre_parse before); typed as Any on purpose.
try:
    _c: Any = importlib.import_module("re._constants")
    _parser: Any = importlib.import_module("re._parser")
except ImportError:  # pragma: no cover - Python < 3.11
    _c = importlib.import_module("sre_constants")
    _parser = importlib.import_module("sre_parse")

__all__ = ["RuleGate", "fold", "required_literals"]

# Every non-ASCII code point that re.IGNORECASE matches against an ASCII letter (exhaustive for Python 3.11's re).
CASE_TWINS = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}
_FOLD = str.maketrans(CASE_TWINS)

Literals = frozenset[str]


class _Compiled(Protocol):
    """What the gate reads of a compiled pattern (``re.Pattern`` or :class:`neusym.language.regex.TextPattern`)."""

    @property
    def pattern(self) -> str: ...

    @property
    def flags(self) -> int: ...


def fold(text: str) -> str:
    """The text as the gate compares it: case twins of ASCII letters mapped, then lower-cased."""
    return text.translate(_FOLD).lower()


class RuleGate:
    """The gates of a whole rule table: which of its patterns could match a text, decided in one pass.

    Every distinct literal of the table is looked up once per text (a C substring search each), then each rule is
    a set intersection; per-rule ``any(lit in text ...)`` generators cost more than the regexes they skipped.
    """

    def __init__(self, patterns: Iterable[_Compiled]) -> None:
        self.gates: tuple[Literals | None, ...] = tuple(required_literals(p) for p in patterns)
        self.literals: tuple[str, ...] = tuple(sorted(set().union(*[g for g in self.gates if g is not None])))

    def possible(self, text: str) -> list[bool]:
        """Per pattern: False only when it provably cannot match ``text``."""
        folded = fold(text)
        present = {lit for lit in self.literals if lit in folded}
        return [g is None or not g.isdisjoint(present) for g in self.gates]


def required_literals(pattern: _Compiled) -> Literals | None:
    """Lower-cased strings one of which occurs in every text ``pattern`` matches, or None if none can be proven.

    Sound, not complete: None just means "always run the pattern".
    """
    try:
        tree = _parser.parse(pattern.pattern, pattern.flags)
        found = _sequence(list(tree))
    except Exception:  # noqa: BLE001 - an unfamiliar construct only costs the optimisation
        return None
    if not found or any(not lit or not lit.isascii() for lit in found):
        return None
    return frozenset(fold(lit) for lit in found)


def _quality(lits: Literals) -> tuple[int, int]:
    return min(len(x) for x in lits), -len(lits)  # the rarer the shortest literal, the better the gate


def _sequence(items: Iterable[tuple[Any, Any]]) -> Literals | None:
    """Items that must all match in order: any one of them with a literal set gives a set for the whole."""
    best: Literals | None = None
    run: list[str] = []

    def consider(cand: Literals | None) -> None:
        nonlocal best
        if cand and (best is None or _quality(cand) > _quality(best)):
            best = cand

    for op, av in items:
        if op is _c.LITERAL:
            run.append(chr(av))
            continue
        if run:
            consider(frozenset(["".join(run)]))
            run = []
        consider(_node(op, av))
    if run:
        consider(frozenset(["".join(run)]))
    return best


def _node(op: Any, av: Any) -> Literals | None:
    if op is _c.SUBPATTERN:
        return _sequence(av[-1])
    if op is _c.BRANCH:
        alternatives = [_sequence(alt) for alt in av[1]]
        if any(a is None for a in alternatives):
            return None
        return frozenset().union(*[a for a in alternatives if a is not None])
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", None)):
        low, _high, body = av
        return _sequence(body) if low >= 1 else None
    if op is getattr(_c, "ATOMIC_GROUP", None):
        return _sequence(av)
    return None  # classes, anchors, lookarounds, back references: nothing provable
