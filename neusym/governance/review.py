"""The review queue: quarantined items, pending conflicts, the dedup middle band, contradictions, suspicious items.

Everything governance was unsure about ends up here instead of being silently decided: a human (or an agent with
the right permission) approves, rejects or edits (:mod:`neusym.services.review` applies the decision), and every
outcome is audited like any other decision.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from neusym.record import REVIEW_FLAGS, REVIEW_KINDS, MemoryRecord, MemoryStatus, ReviewKind, Scope
from neusym.symbolic.convert import props_to_record
from neusym.symbolic.governance_store import GovernanceQueries

__all__ = ["REVIEW_KINDS", "ReviewItem", "ReviewKind", "classify", "list_review"]  # kinds: from neusym.record

_REVIEW_FLAGS = tuple(f.value for f in REVIEW_FLAGS.values())


class ReviewItem(BaseModel):
    """One memory awaiting a reviewer. ``id`` is the memory's id, as everywhere else: what ``review_approve``,
    ``review_reject`` and ``review_edit`` take (they also take the item itself)."""

    memory_id: str
    kind: ReviewKind
    record: MemoryRecord
    related: list[str] = Field(default_factory=list)  # conflicting memories / duplicate target
    reason: str = ""

    @property
    def id(self) -> str:
        return self.memory_id


def classify(rec: MemoryRecord) -> ReviewKind | None:
    """The review kind of a memory (``None`` when it needs no review)."""
    if rec.status is MemoryStatus.QUARANTINED:
        return "quarantine"
    for kind, flag in REVIEW_FLAGS.items():
        if flag.value in rec.flags:
            return kind
    return None


_REASONS: dict[ReviewKind, str] = {
    "quarantine": "looks like prompt injection / memory poisoning",
    "conflict": "conflicts with another value of the same attribute",
    "dedup": "possible duplicate of another memory",
    "contradiction": "contradicts another memory",
    "suspicious": "borderline injection risk",
}


def list_review(queries: GovernanceQueries, scope: Scope, kind: ReviewKind | None, limit: int) -> list[ReviewItem]:
    statuses, flags = [MemoryStatus.QUARANTINED.value], list(_REVIEW_FLAGS)
    if kind is not None:  # filter in the query, so ``limit`` counts items of the requested kind
        statuses = [MemoryStatus.QUARANTINED.value] if kind == "quarantine" else []
        flags = [] if kind == "quarantine" else [REVIEW_FLAGS[kind].value]
    rows = queries.review_items(scope, statuses, flags, limit)
    out = []
    for row in rows:
        rec = props_to_record(row)
        k = classify(rec)
        if k is None or (kind is not None and k != kind):
            continue
        related = [str(link["id"]) for link in row.get("links") or [] if isinstance(link, dict) and link.get("id")]
        screening = rec.metadata.get("screening") if isinstance(rec.metadata.get("screening"), dict) else None
        reason = _REASONS[k] + (f" (risk {screening.get('risk')})" if screening else "")
        out.append(ReviewItem(memory_id=rec.id, kind=k, record=rec, related=list(dict.fromkeys(related)),
                              reason=reason))
    return out
