"""The governor: every candidate memory passes through it before it is stored, and every decision is audited."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from neusym.governance.decisions import Action, AuditAction, Decision
from neusym.record import MemoryRecord, Scope
from neusym.retrieval.derived import DerivedIndexes
from neusym.symbolic.store import SymbolicStore

__all__ = ["Governor"]


class Governor:
    """Admission (with exact dedup) and the audit trail of the write path."""

    def __init__(self, store: SymbolicStore, derived: DerivedIndexes) -> None:
        self.store = store
        self.derived = derived

    def admit(self, candidates: Sequence[MemoryRecord], vectors: np.ndarray, scope: Scope) -> list[Decision]:
        existing = self.store.find_by_hash(scope, [c.content_hash for c in candidates], ["active", "pending"])
        decisions: list[Decision] = []
        seen: dict[str, str] = {}
        for cand in candidates:
            target = existing.get(cand.content_hash) or seen.get(cand.content_hash)
            if target is not None:
                decisions.append(Decision(action=Action.MERGE, reason="exact duplicate of an existing memory",
                                          record=cand, target_id=target, memory_id=target))
                continue
            seen[cand.content_hash] = cand.id
            decisions.append(Decision(action=Action.STORE, reason="admitted", record=cand, memory_id=cand.id))
        return decisions

    def after_write(self, decisions: Sequence[Decision], scope: Scope, actor: str = "system") -> None:
        now = time.time()
        merges = [d for d in decisions if d.action is Action.MERGE and d.target_id]
        if merges:
            self.store.executor.run(
                "UNWIND $ids AS mid MATCH (m:Memory {id: mid}) "
                "SET m.strength = coalesce(m.strength, 1.0) + 0.5, m.last_accessed_at = $now",
                {"ids": [d.target_id for d in merges], "now": now},
            )
        self.store.audit(
            [
                {
                    "memory_id": d.memory_id,
                    "action": (AuditAction.MERGE if d.action is Action.MERGE else AuditAction.ADMIT).value,
                    "reason": d.reason,
                    "actor": actor,
                    "at": now,
                    "user_id": scope.user_id,
                    "details": {"decision": d.action.value, **d.details},
                }
                for d in decisions
            ]
        )
