"""What governance decides about each candidate memory, and the audit vocabulary.

``Flag`` (the marks governance puts on a memory) lives beside ``MemoryStatus`` in :mod:`neusym.record`, so every
layer names them the same way; it is re-exported here. A :class:`Decision` is both the answer returned to the caller (``AddResult.decisions``) and the plan the write path
executes after the graph create: merges, supersessions, conflict links. Keeping the plan on the decision means the
admission step never writes, so a failed create leaves nothing half-applied.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from neusym.record import Flag, MemoryRecord, MemoryStatus

__all__ = ["Action", "AuditAction", "Decision", "Flag"]


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
    """One candidate's fate, with the reason shown to users and written to the audit log.

    ``reason`` never quotes the memory's text: audit entries outlive a hard forget, content must not.
    """

    action: Action
    reason: str
    record: MemoryRecord
    target_id: str | None = None  # merge target / conflicting memory
    memory_id: str | None = None  # id of the stored memory (the candidate's own id, or the merge target)
    details: dict[str, object] = Field(default_factory=dict)
    supersedes: list[str] = Field(default_factory=list)  # memories this one replaces (applied after create)
    superseded_by: str | None = None  # an existing memory is newer: this one is stored as history
    conflicts_with: list[str] = Field(default_factory=list)  # "ask": both pending, linked CONFLICTS_WITH
    contradicts: list[str] = Field(default_factory=list)  # cross-attribute contradictions (flagged)

    @property
    def stored(self) -> bool:
        return self.action in (Action.STORE, Action.STORE_LOW_CONFIDENCE, Action.QUARANTINE, Action.REVIEW)

    def note(self, text: str) -> None:
        """Append a clause to the reason (admission, dedup and conflicts each add theirs)."""
        self.reason = f"{self.reason}; {text}" if self.reason else text

    def add_detail(self, key: str, entry: dict[str, object]) -> None:
        """Append ``entry`` to the list ``details[key]`` (e.g. "supersede", "conflicts"): one decision can carry
        several of each, and the audit entry and the rollback record are built from these lists."""
        bucket = self.details.get(key)
        if not isinstance(bucket, list):
            bucket = []
            self.details[key] = bucket
        bucket.append(entry)

    def hold_for_conflict(self, other_id: str, entry: dict[str, object], why: str) -> None:
        """Keep this candidate pending review against ``other_id`` (linked ``CONFLICTS_WITH`` after the write):
        status pending, flag ``conflict_pending``, ``why`` added to the reason. A weak claim keeps its own action."""
        if other_id in self.conflicts_with:
            return
        self.conflicts_with.append(other_id)
        self.add_detail("conflicts", entry)
        flags = list(dict.fromkeys([*self.record.flags, Flag.CONFLICT_PENDING.value]))
        self.record = self.record.model_copy(update={"status": MemoryStatus.PENDING, "flags": flags})
        if self.action is not Action.STORE_LOW_CONFIDENCE:
            self.action = Action.REVIEW
        self.note(why)
