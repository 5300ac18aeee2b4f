"""Supersession, in one place: what changes when a newer value of a one-value attribute replaces an older one, the
audit entry that records it, and how a rollback undoes it.

The older memory is kept as history (status ``superseded``, ``valid_to`` = when the newer value took over, its
RELATES edges closed at the same time) and linked ``(newer)-[:SUPERSEDES]->(older)``. Three paths supersede: the
write path (governance planned it; applied inside the create statement, so a crash never leaves two current values),
review (a reviewer picks the winner of a conflict) and rollback (undoing a supersession makes the newer value the
history, so exactly one value stays current). All three build a :class:`Supersession` and apply it as one
statement (:meth:`neusym.symbolic.store.SymbolicStore.apply_changes` or the create statement).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from neusym.governance.decisions import AuditAction, Decision, Flag
from neusym.record import MemoryRecord, MemoryStatus, as_epoch

__all__ = ["Supersession", "planned", "superseded_by_review", "undo", "without"]

CURRENT = (MemoryStatus.ACTIVE.value, MemoryStatus.PENDING.value)
"""Statuses that make a memory a current value of its attribute."""


def without(flags: Sequence[str], *drop: str) -> list[str]:
    """``flags`` minus ``drop``, order kept (a decision clears the flag that put a memory in review)."""
    return [f for f in flags if f not in drop]


@dataclass
class Supersession:
    """``by`` replaces ``old`` at ``valid_to``. ``previous`` is the older memory's state before (the rollback record)."""

    old: str
    by: str
    user_id: str | None
    valid_to: float
    previous: dict[str, Any]
    reason: str
    actor: str = "governance"
    predicate: str | None = None
    kind: str = "update"
    strategy: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # more audit details (e.g. what a rollback undid)

    def props(self, now: float) -> dict[str, Any]:
        """The older memory's new properties: history, closed at ``valid_to``, no longer waiting for review."""
        return {"status": MemoryStatus.SUPERSEDED.value, "valid_to": self.valid_to, "updated_at": now,
                "flags": without(self.previous.get("flags") or [], Flag.CONFLICT_PENDING.value)}

    def edge(self, now: float) -> dict[str, Any]:
        return {k: v for k, v in {"predicate": self.predicate, "kind": self.kind, "strategy": self.strategy,
                                  "at": now}.items() if v is not None}

    def audit(self, now: float) -> dict[str, Any]:
        """The audit entry on the older memory; its ``previous`` is what :func:`undo` restores."""
        details: dict[str, Any] = {"by": self.by, "previous": dict(self.previous), "kind": self.kind}
        details.update({k: v for k, v in (("predicate", self.predicate), ("strategy", self.strategy)) if v})
        details.update(self.extra)
        return {"memory_id": self.old, "action": AuditAction.SUPERSEDE.value, "actor": self.actor,
                "reason": self.reason, "at": now, "user_id": self.user_id, "details": details}

    def create_set(self, now: float) -> dict[str, Any]:
        """The entry the create statement applies (``$sets``): props, RELATES closing, the SUPERSEDES edge."""
        return {"id": self.old, "user_id": self.user_id, "by": self.by, "props": self.props(now),
                "valid_to": self.valid_to, "edge": self.edge(now)}


_EVIDENCE = ("why", "similarity", "probability", "slot_score", "single_valued",
             "retracts_old_value", "change_cue", "features", "successor")
"""What an update found by similarity (:mod:`neusym.governance.updates`) keeps in the audit besides its reason."""


def _entries(value: object) -> list[Mapping[str, Any]]:
    return [e for e in value if isinstance(e, Mapping)] if isinstance(value, list) else []


def planned(decisions: Sequence[Decision], now: float) -> list[Supersession]:
    """Every supersession governance planned for a write: older memories the new ones replace, and new memories
    that arrived as history of a value already current (``superseded_by``)."""
    out: list[Supersession] = []
    for d in decisions:
        if not d.stored:
            continue
        user = d.record.scope.user_id
        for e in _entries(d.details.get("supersede")):
            out.append(Supersession(
                old=str(e["id"]), by=d.record.id, user_id=user, valid_to=float(e["valid_to"]),
                previous=dict(e.get("previous") or {}), predicate=e.get("predicate"), kind=str(e.get("kind")),
                strategy=e.get("strategy"),
                reason=f"superseded by a newer {e.get('predicate')} value ({e.get('strategy')}"
                       + (f": {e['why']})" if e.get("why") else ")"),
                extra={k: e[k] for k in _EVIDENCE if k in e}))
        if d.superseded_by is not None:
            raw = d.details.get("superseded_by")
            h: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
            out.append(Supersession(
                old=d.record.id, by=d.superseded_by, user_id=user, valid_to=float(h.get("valid_to") or now),
                previous={"status": MemoryStatus.ACTIVE.value, "valid_to": None, "flags": list(d.record.flags)},
                predicate=h.get("predicate"), kind="history",
                reason="older than the current value: stored as history"))
    return out


def superseded_by_review(winner: MemoryRecord, loser: MemoryRecord, actor: str, now: float) -> Supersession:
    """A reviewer made ``winner`` the current value: ``loser`` becomes its history. The change time is the winner's
    event time, unless the loser's own validity starts later (then: now)."""
    t = as_epoch(winner.valid_from or winner.created_at) or now
    if loser.valid_from is not None and (as_epoch(loser.valid_from) or 0.0) >= t:
        t = now
    return Supersession(old=loser.id, by=winner.id, user_id=loser.scope.user_id, valid_to=t,
                        previous=_state(loser), reason="conflict resolved in review", actor=actor,
                        kind="review", strategy="review")


def _state(rec: MemoryRecord) -> dict[str, Any]:
    return {"status": rec.status.value, "flags": list(rec.flags), "valid_to": as_epoch(rec.valid_to)}


@dataclass
class Undo:
    """What rolling back one supersession changes: the older memory's restored properties and, when the newer
    memory is still current, its own supersession (so exactly one value of the attribute stays current)."""

    restore: dict[str, Any]
    unlink: tuple[str, str]
    reopen_relations: float | None
    newer: Supersession | None


def undo(details: Mapping[str, Any], old: MemoryRecord, newer: MemoryRecord | None, actor: str,
         now: float) -> Undo:
    """Undo the supersession recorded by an audit entry's ``details`` on ``old``.

    ``newer`` is the memory that superseded it (``None`` when it is gone). If it is still current it becomes the
    history now, by the same rules and with its own audit entry (which a later rollback can undo in turn).
    """
    prev = dict(details.get("previous") or {})
    restore = {"status": prev.get("status") or MemoryStatus.ACTIVE.value, "flags": list(prev.get("flags") or []),
               "valid_to": prev.get("valid_to"), "archived_at": None, "updated_at": now}
    by = str(details.get("by") or "")
    flip: Supersession | None = None
    if newer is not None and newer.status.value in CURRENT and restore["status"] in CURRENT:
        flip = Supersession(old=newer.id, by=old.id, user_id=newer.scope.user_id, valid_to=now,
                            previous=_state(newer), actor=actor, kind="rollback", strategy="rollback",
                            predicate=details.get("predicate"),
                            reason="the supersession of an older value was rolled back: this value is history now",
                            extra={"rolled_back": old.id})
    return Undo(restore=restore, unlink=(by, old.id), reopen_relations=prev.get("valid_to"), newer=flip)
