"""What governance decides about each candidate memory, and the audit vocabulary."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from neusym.record import MemoryRecord

__all__ = ["Action", "AuditAction", "Decision"]


class Action(StrEnum):
    STORE = "store"
    STORE_LOW_CONFIDENCE = "store_low_confidence"
    REJECT = "reject"
    QUARANTINE = "quarantine"
    MERGE = "merge"  # duplicate of an existing memory: reinforce that one instead
    REVIEW = "review"  # stored as pending (dedup middle band, conflict to arbitrate)


class AuditAction(StrEnum):
    ADMIT = "admit"
    REJECT = "reject"
    QUARANTINE = "quarantine"
    SUPERSEDE = "supersede"
    CONFLICT = "conflict"
    MERGE = "merge"
    DECAY = "decay"
    ARCHIVE = "archive"
    PURGE = "purge"
    FORGET = "forget"
    REFLECT = "reflect"
    EDIT = "edit"
    ROLLBACK = "rollback"
    REVIEW = "review"
    DELETE = "delete"


class Decision(BaseModel):
    """One candidate's fate, with the reason shown to users and written to the audit log."""

    action: Action
    reason: str
    record: MemoryRecord
    target_id: str | None = None  # merge target / conflicting memory
    memory_id: str | None = None  # id of the stored memory (the candidate's own id, or the merge target)
    details: dict[str, object] = Field(default_factory=dict)

    @property
    def stored(self) -> bool:
        return self.action in (Action.STORE, Action.STORE_LOW_CONFIDENCE, Action.QUARANTINE, Action.REVIEW)
