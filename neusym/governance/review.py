"""The review queue (quarantined, pending conflicts, dedup middle band, contradictions, suspicious) and rollback.

Everything governance was unsure about ends up here instead of being silently decided: a human (or an agent with
the right permission) approves, rejects or edits, and every outcome is audited like any other decision.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import BaseModel, Field

from neusym.errors import InvalidInputError, RecordNotFoundError
from neusym.governance.decisions import AuditAction, Flag
from neusym.record import MemoryRecord, MemoryStatus, Scope, as_epoch
from neusym.symbolic.convert import props_to_record

if TYPE_CHECKING:
    from neusym.facade import NeuSymMemory

__all__ = ["ReviewItem", "ReviewKind", "approve", "classify", "list_review", "reject", "rollback"]

ReviewKind = Literal["quarantine", "conflict", "dedup", "contradiction", "suspicious"]
_REVIEW_FLAGS = (Flag.CONFLICT_PENDING.value, Flag.DEDUP_REVIEW.value, Flag.CONTRADICTION.value,
                 Flag.SUSPICIOUS.value)
_KIND_FLAG = {"conflict": Flag.CONFLICT_PENDING.value, "dedup": Flag.DEDUP_REVIEW.value,
              "contradiction": Flag.CONTRADICTION.value, "suspicious": Flag.SUSPICIOUS.value}
_REVERSIBLE = ("edit", "supersede", "archive", "forget", "conflict")


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


def list_review(mem: NeuSymMemory, scope: Scope, kind: str | None, limit: int) -> list[ReviewItem]:
    statuses, flags = ["quarantined"], list(_REVIEW_FLAGS)
    if kind is not None:  # filter in the query, so ``limit`` counts items of the requested kind
        statuses = ["quarantined"] if kind == "quarantine" else []
        flags = [] if kind == "quarantine" else [_KIND_FLAG[kind]]
    rows = mem.governor.queries.review_items(scope, statuses, flags, limit)
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


def _without(flags: list[str], *drop: str) -> list[str]:
    return [f for f in flags if f not in drop]


def _links(mem: NeuSymMemory, memory_id: str, rel: str) -> list[tuple[str, dict[str, Any]]]:
    return mem.store.linked(memory_id, rel, direction="out") + mem.store.linked(memory_id, rel, direction="in")


def _audit(mem: NeuSymMemory, memory_id: str, scope: Scope, actor: str, reason: str, **details: Any) -> None:
    mem.store.audit([{"memory_id": memory_id, "action": AuditAction.REVIEW.value, "reason": reason, "actor": actor,
                      "user_id": scope.user_id, "details": details}])


def _supersede(mem: NeuSymMemory, winner: MemoryRecord, loser: MemoryRecord, scope: Scope, actor: str) -> None:
    now = time.time()
    t = as_epoch(winner.valid_from or winner.created_at) or now
    if loser.valid_from is not None and (as_epoch(loser.valid_from) or 0.0) >= t:
        t = now
    mem.store.set_props([(loser.id, {"status": "superseded", "valid_to": t,
                                     "flags": _without(loser.flags, Flag.CONFLICT_PENDING.value)})], scope)
    mem.store.link("SUPERSEDES", [(winner.id, loser.id)], {"kind": "review", "at": now})
    mem.governor.queries.close_relations([loser.id], t)
    mem.store.audit([{"memory_id": loser.id, "action": AuditAction.SUPERSEDE.value, "actor": actor,
                      "reason": "conflict resolved in review", "user_id": scope.user_id,
                      "details": {"by": winner.id, "previous": {"status": loser.status.value,
                                                                "flags": list(loser.flags), "valid_to": None},
                                  "strategy": "review"}}])


def approve(mem: NeuSymMemory, rec: MemoryRecord, scope: Scope, actor: str, reason: str) -> MemoryRecord:
    kind = classify(rec)
    if kind is None:
        raise InvalidInputError(f"memory {rec.id} is not waiting for review")
    if kind == "quarantine":
        meta = {k: v for k, v in rec.metadata.items() if k != "screening"}
        # content is passed so entities and triples (stripped at quarantine) are extracted again
        out = mem.update(rec.id, rec.content, scope=scope, actor=actor, reason=f"review: {reason}",
                         status="active", metadata=meta,
                         flags=_without(rec.flags, Flag.INJECTION.value, Flag.SUSPICIOUS.value))
    elif kind == "suspicious":
        out = mem.update(rec.id, scope=scope, actor=actor, reason=f"review: {reason}",
                         flags=_without(rec.flags, Flag.SUSPICIOUS.value))
    elif kind == "conflict":
        for other_id, props in _links(mem, rec.id, "CONFLICTS_WITH"):
            if props.get("kind") == "contradiction":
                continue
            found = mem.store.get([other_id], scope)
            if found and found[0].status.value in ("active", "pending"):
                _supersede(mem, rec, found[0], scope, actor)
            mem.store.unlink("CONFLICTS_WITH", [(rec.id, other_id), (other_id, rec.id)])
        mem.store.set_props([(rec.id, {"status": "active",
                                       "flags": _without(rec.flags, Flag.CONFLICT_PENDING.value)})], scope)
        out = mem.store.get([rec.id], scope)[0]
    elif kind == "dedup":
        targets = mem.store.linked(rec.id, "DUPLICATE_OF")
        if targets:
            from neusym.governance.decisions import Action, Decision

            merge = Decision(action=Action.MERGE, reason="merged in review", record=rec, target_id=targets[0][0],
                             details={"dedup": "review", "similarity": targets[0][1].get("similarity")})
            mem.governor._reinforce([merge], scope, time.time())
        mem.store.set_props([(rec.id, {"status": "archived", "archived_at": time.time(),
                                       "flags": [*_without(rec.flags, Flag.DEDUP_REVIEW.value), "merged"]})], scope)
        out = mem.store.get([rec.id], scope)[0]
    else:  # contradiction acknowledged: both may be true
        _clear_contradictions(mem, rec, scope)
        out = mem.store.get([rec.id], scope)[0]
    _audit(mem, rec.id, scope, actor, f"approved ({kind}): {reason}", kind=kind, decision="approve")
    mem.derived.catch_up(mem.store)
    return out


def _clear_contradictions(mem: NeuSymMemory, rec: MemoryRecord, scope: Scope) -> None:
    for other_id, props in _links(mem, rec.id, "CONFLICTS_WITH"):
        if props.get("kind") != "contradiction":
            continue
        mem.store.unlink("CONFLICTS_WITH", [(rec.id, other_id), (other_id, rec.id)])
        found = mem.store.get([other_id], scope)
        if found and not any(p.get("kind") == "contradiction" for _, p in _links(mem, other_id, "CONFLICTS_WITH")):
            mem.store.set_props([(other_id, {"flags": _without(found[0].flags, Flag.CONTRADICTION.value)})], scope)
    mem.store.set_props([(rec.id, {"flags": _without(rec.flags, Flag.CONTRADICTION.value)})], scope)


def reject(mem: NeuSymMemory, rec: MemoryRecord, scope: Scope, actor: str, reason: str) -> MemoryRecord | None:
    """Reject a review item; returns the record as it is now (``None`` when it was purged)."""
    kind = classify(rec)
    if kind is None:
        raise InvalidInputError(f"memory {rec.id} is not waiting for review")
    out: MemoryRecord | None = None
    if kind in ("quarantine", "suspicious"):  # confirmed attack: nothing of it is kept
        mem._governance_purger().purge([rec.id], scope)
    elif kind == "conflict":
        winners = [o for o, p in _links(mem, rec.id, "CONFLICTS_WITH") if p.get("kind") != "contradiction"]
        pending = [r for r in mem.store.get(winners, scope) if Flag.CONFLICT_PENDING.value in r.flags]
        if len(pending) == 1:
            approve(mem, pending[0], scope, actor, f"other side of a rejected conflict: {reason}")
            _audit(mem, rec.id, scope, actor, f"rejected ({kind}): {reason}", kind=kind, decision="reject",
                   winner=pending[0].id)
            return mem.store.get([rec.id], scope)[0]
        mem.store.unlink("CONFLICTS_WITH", [p for o in winners for p in ((rec.id, o), (o, rec.id))])
        mem.store.set_props([(rec.id, {"status": "archived", "archived_at": time.time(),
                                       "flags": _without(rec.flags, Flag.CONFLICT_PENDING.value)})], scope)
        out = mem.store.get([rec.id], scope)[0]
    elif kind == "dedup":  # not a duplicate after all: a memory of its own
        mem.store.unlink("DUPLICATE_OF", [(rec.id, t) for t, _ in mem.store.linked(rec.id, "DUPLICATE_OF")])
        mem.store.set_props([(rec.id, {"status": "active",
                                       "flags": _without(rec.flags, Flag.DEDUP_REVIEW.value)})], scope)
        out = mem.store.get([rec.id], scope)[0]
    else:  # contradiction: this one is wrong
        _clear_contradictions(mem, rec, scope)
        rec2 = mem.store.get([rec.id], scope)[0]
        mem.store.set_props([(rec.id, {"status": "archived", "archived_at": time.time(), "flags": rec2.flags})],
                            scope)
        out = mem.store.get([rec.id], scope)[0]
    _audit(mem, rec.id, scope, actor, f"rejected ({kind}): {reason}", kind=kind, decision="reject",
           hard=out is None)
    mem.derived.catch_up(mem.store)
    return out


def rollback(mem: NeuSymMemory, memory_id: str, scope: Scope, audit_id: str | None, actor: str,
             reason: str) -> MemoryRecord:
    """Undo the latest reversible change to a memory (edit, supersession, archive, soft forget, conflict mark)."""
    history = mem.store.audit_for(memory_id, scope.user_id)
    undone = {str(h["details"].get("of")) for h in history if h["action"] == AuditAction.ROLLBACK.value}
    todo = [h for h in history if h["action"] in _REVERSIBLE and h["id"] not in undone
            and not h["details"].get("redacted")]
    if audit_id is not None:
        todo = [h for h in todo if h["id"] == audit_id]
    if not todo:
        raise RecordNotFoundError(f"nothing to roll back for memory {memory_id!r}")
    entry = todo[-1]
    details = cast(dict[str, Any], entry["details"])
    if entry["action"] == "edit":
        before = dict(details.get("before") or {})
        content = before.pop("content", None)
        before.pop("version", None)
        out = mem.update(memory_id, content, scope=scope, actor=actor, reason=f"rollback: {reason}", **before)
    else:
        prev = dict(details.get("previous") or {})
        changes: dict[str, Any] = {"status": prev.get("status") or "active", "flags": list(prev.get("flags") or []),
                                   "valid_to": prev.get("valid_to"), "archived_at": None}
        if entry["action"] == "supersede" and details.get("by"):
            mem.store.unlink("SUPERSEDES", [(str(details["by"]), memory_id)])
            mem.governor.queries.close_relations([memory_id], prev.get("valid_to"))
        if entry["action"] == "conflict" and details.get("with"):
            mem.store.unlink("CONFLICTS_WITH", [(str(details["with"]), memory_id)])
        updated = mem.store.set_props([(memory_id, changes)], scope)
        if not updated:
            raise RecordNotFoundError(f"no memory {memory_id!r} in scope {scope.as_params()}")
        out = updated[0]
    mem.store.audit([{"memory_id": memory_id, "action": AuditAction.ROLLBACK.value, "actor": actor,
                      "reason": reason, "user_id": scope.user_id,
                      "details": {"of": entry["id"], "undone": entry["action"]}}])
    mem.derived.catch_up(mem.store)
    return out
