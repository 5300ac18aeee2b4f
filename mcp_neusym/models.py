"""The tools' typed results (each tool's ``outputSchema``) and their conversion from engine objects.

Every result travels twice: as ``structuredContent`` validated against these models (for programs), and as a short
text rendering (for the model, see :mod:`mcp_neusym.render`). Scope fields are not repeated in results: the tenant
is the connection's, and echoing it would only invite the model to "choose" one.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from neusym.record import MemoryRecord, SearchResult

if TYPE_CHECKING:
    from neusym.governance.decisions import Decision

__all__ = [
    "AuditEntryOut",
    "CurateOut",
    "DecisionOut",
    "ForgetItemOut",
    "ForgetOut",
    "HistoryOut",
    "ImportOut",
    "MemoryOut",
    "MemoryListOut",
    "RecallHit",
    "RecallOut",
    "ReflectOut",
    "RememberOut",
    "ReviewDecisionOut",
    "ReviewItemOut",
    "ReviewListOut",
    "UpdateOut",
    "memory_out",
]


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


class MemoryOut(BaseModel):
    """One memory as a client sees it. ``marks`` say how carefully to use it (superseded, conflicting, ...)."""

    id: str
    content: str
    type: str
    status: str
    created_at: str
    valid_from: str | None = None
    valid_to: str | None = None
    expires_at: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    entities: list[str] = Field(default_factory=list)
    facts: list[str] = Field(default_factory=list, description="S-P-O facts, 'subject predicate object'.")
    tags: list[str] = Field(default_factory=list)
    importance: float
    confidence: float
    version: int
    marks: list[str] = Field(default_factory=list)


def memory_out(rec: MemoryRecord, marks: list[str] | None = None) -> MemoryOut:
    facts = [f"{t.subject} {'' if t.polarity else 'NOT '}{t.predicate} {t.object}" for t in rec.triples]
    return MemoryOut(
        id=rec.id, content=rec.content, type=rec.type.value, status=rec.status.value,
        created_at=rec.created_at.isoformat(), valid_from=_iso(rec.valid_from), valid_to=_iso(rec.valid_to),
        expires_at=_iso(rec.expires_at), agent_id=rec.scope.agent_id, session_id=rec.scope.session_id,
        entities=list(rec.entities), facts=facts, tags=list(rec.tags), importance=rec.importance,
        confidence=rec.confidence, version=rec.version, marks=list(marks or []),
    )


class DecisionOut(BaseModel):
    """What governance did with one candidate memory, and why."""

    action: str = Field(description="store, store_low_confidence, quarantine, review, merge, reject, ...")
    reason: str
    stored: bool
    memory_id: str | None = None
    target_id: str | None = None
    content: str

    @classmethod
    def of(cls, d: Decision) -> DecisionOut:
        return cls(action=d.action.value, reason=d.reason, stored=d.stored, memory_id=d.memory_id or
                   (d.record.id if d.stored else None), target_id=d.target_id, content=d.record.content)


class RememberOut(BaseModel):
    stored: list[MemoryOut]
    decisions: list[DecisionOut]


class RecallHit(MemoryOut):
    score: float
    explanation: str = Field(description="Score components: similarity, recency, importance, graph, fact match.")


def recall_hit(result: SearchResult, marks: list[str]) -> RecallHit:
    base = memory_out(result.memory, marks).model_dump()
    return RecallHit(**base, score=round(float(result.score), 4), explanation=result.explanation.summary())


class RecallOut(BaseModel):
    query: str
    results: list[RecallHit]


class MemoryListOut(BaseModel):
    memories: list[MemoryOut]
    count: int


class ForgetItemOut(BaseModel):
    id: str
    content: str
    type: str
    status: str
    why: list[str] = Field(default_factory=list, description="Why the memory matches the topic.")


class ForgetOut(BaseModel):
    """A preview (``applied`` false, a ``confirm_token`` to apply it) or what was forgotten."""

    applied: bool
    hard: bool
    items: list[ForgetItemOut] = Field(default_factory=list)
    missing_ids: list[str] = Field(default_factory=list)
    confirm_token: str | None = None
    expires_in_s: int | None = None
    forgotten_ids: list[str] = Field(default_factory=list)


class UpdateOut(BaseModel):
    memory: MemoryOut | None = Field(description="The edited memory; omitted when its new text was quarantined.")
    memory_id: str
    status: str = Field(description="active, pending, quarantined (withheld until a reviewer approves it) ...")


class AuditEntryOut(BaseModel):
    at: str | None
    action: str
    actor: str | None = None
    reason: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)


class HistoryOut(BaseModel):
    """The values an attribute had (oldest first; ``current`` marks the value in force) or one memory's audit
    trail."""

    attribute: str | None = None
    subject: str | None = None
    at: str | None = None
    values: list[MemoryOut] = Field(default_factory=list)
    current: list[str] = Field(default_factory=list, description="Ids of the values in force now (or at `at`).")
    memory_id: str | None = None
    audit: list[AuditEntryOut] = Field(default_factory=list)


class ReviewItemOut(BaseModel):
    memory_id: str
    kind: str = Field(description="quarantine, conflict, dedup, contradiction or suspicious")
    reason: str
    related: list[str] = Field(default_factory=list)
    memory: MemoryOut


class ReviewListOut(BaseModel):
    items: list[ReviewItemOut]
    count: int


class ReviewDecisionOut(BaseModel):
    memory_id: str
    decision: str
    purged: bool
    memory: MemoryOut | None = None


class ReflectOut(BaseModel):
    stored: bool
    id: str | None = None
    summary: str
    source_ids: list[str]
    reinforced: list[str] = Field(default_factory=list)
    cooled: list[str] = Field(default_factory=list)
    marks: list[str] = Field(default_factory=list, description="How carefully to use the reflection (inherited "
                                                                "from its sources: low confidence, conflicting).")


class CurateOut(BaseModel):
    dry_run: bool
    expired: list[str]
    decayed: int
    archived: list[str]
    purged: list[str]
    compacted: int


class ImportOut(BaseModel):
    format: str
    items: int
    turns: int
    statements: int
    stored: int
    decisions: dict[str, int]
    ignored_fields: list[str] = Field(default_factory=list)
    replaced_scope_fields: int = Field(0, description="Lines whose scope ids were replaced by the connection's.")
    seconds: float
