"""What a reflection may read, and what a derived memory inherits from what it read.

A reflection is written as an active memory and shown in prompts like any other. If it could read what prompts
withhold (a memory awaiting review: status ``pending``, flagged ``suspicious``/``injection``/``dedup_review``; a
quarantined or deleted one), consolidation would launder that text into an active, unflagged memory that
``build_context`` then shows. So the rule is the prompt's own (:func:`neusym.prompting.withheld_reason`) plus
"current": only active memories that a prompt would show, not expired, feed a reflection.

What the sources' careful-use flags say about them (low confidence, an open conflict or contradiction) stays true
of a summary of them, so a derived memory carries the union of those flags, the lowest confidence of its sources
and the earliest expiry: it is never easier to trust, and never outlives, what it was made from.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from neusym.prompting import withheld_reason
from neusym.record import Flag, MemoryRecord, MemoryStatus, utcnow

__all__ = ["INHERITED_FLAGS", "Inherited", "inherited", "usable", "usable_sources"]

INHERITED_FLAGS: tuple[str, ...] = (Flag.LOW_CONFIDENCE.value, Flag.CONFLICT_PENDING.value,
                                    Flag.CONTRADICTION.value)
"""Careful-use flags a derived memory takes over from any of its sources (prompts mark them)."""

_MAX_CONFIDENCE = 0.95  # a summary is never as certain as a statement the user made


def usable(record: MemoryRecord, *, now: datetime | None = None) -> bool:
    """True if ``record`` may feed a reflection: active, shown by a default prompt, not expired."""
    if record.status is not MemoryStatus.ACTIVE:
        return False
    if withheld_reason(record) is not None:
        return False
    return record.expires_at is None or record.expires_at > (now or utcnow())


def usable_sources(records: Iterable[MemoryRecord], *, now: datetime | None = None) -> list[MemoryRecord]:
    """``records`` that may feed a reflection (see :func:`usable`), in their order."""
    at = now or utcnow()
    return [r for r in records if usable(r, now=at)]


@dataclass(frozen=True)
class Inherited:
    """The restrictions a derived memory takes over from its sources."""

    flags: list[str] = field(default_factory=list)
    confidence: float = _MAX_CONFIDENCE
    expires_at: datetime | None = None


def inherited(sources: Sequence[MemoryRecord]) -> Inherited:
    """The most restrictive flags, confidence and expiry of ``sources`` (see the module docstring)."""
    have = {f for s in sources for f in s.flags}
    flags = [f for f in INHERITED_FLAGS if f in have]
    confidence = min([_MAX_CONFIDENCE, *(s.confidence for s in sources)])
    if confidence < 0.5 and Flag.LOW_CONFIDENCE.value not in flags:
        flags.insert(0, Flag.LOW_CONFIDENCE.value)
    expiries = [s.expires_at for s in sources if s.expires_at is not None]
    return Inherited(flags=flags, confidence=round(confidence, 3), expires_at=min(expiries) if expiries else None)
