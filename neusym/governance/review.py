"""The review queue: quarantined items, pending conflicts, the dedup middle band, contradictions, suspicious items.

Everything governance was unsure about ends up here instead of being silently decided: a human (or an agent with
the right permission) approves, rejects or edits (:mod:`neusym.services.review` applies the decision), and every
outcome is audited like any other decision.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from neusym.governance.decisions import Flag
from neusym.record import MemoryRecord, MemoryStatus, Scope
from neusym.symbolic.convert import props_to_record
from neusym.symbolic.governance_store import GovernanceQueries

__all__ = ["REVIEW_KINDS", "ReviewItem", "ReviewKind", "classify", "list_review"]

ReviewKind = Literal["quarantine", "conflict", "dedup", "contradiction", "suspicious"]
REVIEW_KINDS: tuple[str, ...] = ("quarantine", "conflict", "dedup", "contradiction", "suspicious")
_REVIEW_FLAGS = (Flag.CONFLICT_PENDING.value, Flag.DEDUP_REVIEW.value, Flag.CONTRADICTION.value,
                 Flag.SUSPICIOUS.value)
_KIND_FLAG = {"conflict": Flag.CONFLICT_PENDING.value, "dedup": Flag.DEDUP_REVIEW.value,
              "contradiction": Flag.CONTRADICTION.value, "suspicious": Flag.SUSPICIOUS.value}


class ReviewItem(BaseModel):
    memory_id: str
    kind: str
    record: MemoryRecord
    related: list[str] = Field(default_factory=list)  # conflicting memories / duplicate target
    reason: str = ""


def classify(rec: MemoryRecord) -> str | None:
    """The review kind of a memory (``None`` when it needs no review)."""
    if rec.status is MemoryStatus.QUARANTINED:
        return "quarantine"
    for flag, kind in ((Flag.CONFLICT_PENDING, "conflict"), (Flag.DEDUP_REVIEW, "dedup"),
                       (Flag.CONTRADICTION, "contradiction"), (Flag.SUSPICIOUS, "suspicious")):
        if flag.value in rec.flags:
            return kind
    return None


_REASONS = {
    "quarantine": "looks like prompt injection / memory poisoning",
    "conflict": "conflicts with another value of the same attribute",
    "dedup": "possible duplicate of another memory",
    "contradiction": "contradicts another memory",
    "suspicious": "borderline injection risk",
}


def list_review(queries: GovernanceQueries, scope: Scope, kind: str | None, limit: int) -> list[ReviewItem]:
    statuses, flags = ["quarantined"], list(_REVIEW_FLAGS)
    if kind is not None:  # filter in the query, so ``limit`` counts items of the requested kind
        statuses = ["quarantined"] if kind == "quarantine" else []
        flags = [] if kind == "quarantine" else [_KIND_FLAG[kind]]
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
