"""Review decisions and rollback, each applied as ONE graph statement (like an add).

A decision first reads what it needs (the item, its CONFLICTS_WITH / DUPLICATE_OF neighbours), inside the open
mutation so no other writer of this process interleaves, then builds a :class:`ChangeSet` (property changes, edges
removed and added, RELATES edges closed or reopened, audit entries) and writes it with
:meth:`~neusym.symbolic.store.SymbolicStore.apply_changes`. An item whose text must be read again (a released
quarantine) is an edit: :meth:`Engine.update <neusym.engine.Engine.update>`, whose statement carries the review's
audit entry too. A rejected attack is purged (the hard-forget pipeline).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from neusym.engine import Engine, Mutation
from neusym.errors import InvalidInputError, RecordNotFoundError
from neusym.governance import supersession
from neusym.governance.decisions import Action, AuditAction, Decision, Flag
from neusym.governance.review import classify
from neusym.governance.supersession import Supersession, without
from neusym.record import MemoryRecord, MemoryStatus, Scope

__all__ = ["ChangeSet", "ReviewDecisions"]

_SAME_VALUE = 0.5  # cosine from which a memory of the same write restates the rolled-back value
_REVERSIBLE = ("edit", "supersede", "archive", "forget", "conflict")
Purge = Callable[[Mutation, Sequence[str], Scope], list[str]]


@dataclass
class ChangeSet:
    """Everything one decision changes inside one tenant; :meth:`apply` writes it as one statement."""

    user_id: str
    now: float = field(default_factory=time.time)
    sets: dict[str, dict[str, Any]] = field(default_factory=dict)
    links: list[tuple[str, str, str, Mapping[str, Any]]] = field(default_factory=list)
    unlinks: list[tuple[str, str, str]] = field(default_factory=list)
    close: list[tuple[str, float | None]] = field(default_factory=list)
    audits: list[dict[str, Any]] = field(default_factory=list)

    def set(self, memory_id: str, **props: Any) -> None:
        self.sets.setdefault(memory_id, {"updated_at": self.now}).update(props)

    def unlink_both(self, rel: str, a: str, b: str) -> None:
        self.unlinks += [(a, rel, b), (b, rel, a)]

    def supersede(self, s: Supersession) -> None:
        self.set(s.old, **s.props(self.now))
        self.links.append((s.by, "SUPERSEDES", s.old, s.edge(self.now)))
        self.close.append((s.old, s.valid_to))
        self.audits.append(s.audit(self.now))

    def audit(self, memory_id: str, action: str, actor: str, reason: str, **details: Any) -> None:
        self.audits.append({"memory_id": memory_id, "action": action, "reason": reason, "actor": actor,
                            "at": self.now, "user_id": self.user_id, "details": details})

    def apply(self, m: Mutation) -> list[str]:
        return m.store.apply_changes(self.user_id, sets=list(self.sets.items()), links=self.links,
                                     unlinks=self.unlinks, close=self.close,
                                     audits=[*m.take_audits(), *self.audits])


class ReviewDecisions:
    """Approve, reject and roll back, on the engine. ``purge`` is the hard-forget pipeline (a rejected attack)."""

    def __init__(self, engine: Engine, purge: Purge) -> None:
        self.engine = engine
        self.purge = purge

    # ------------------------------------------------------------------ helpers
    def _links(self, memory_id: str, rel: str) -> list[tuple[str, dict[str, Any]]]:
        store = self.engine.store
        return store.linked(memory_id, rel, direction="out") + store.linked(memory_id, rel, direction="in")

    def _reload(self, memory_id: str, scope: Scope) -> MemoryRecord:
        found = self.engine.store.get([memory_id], scope)
        if not found:
            raise RecordNotFoundError(f"no memory {memory_id!r} in scope {scope.as_params()}")
        return found[0]

    @staticmethod
    def _tenant(rec: MemoryRecord) -> str:
        if rec.scope.user_id is None:  # written before the tenant rule: review it with all_tenants tools
            raise InvalidInputError(f"memory {rec.id} has no tenant (user_id); it cannot be reviewed")
        return rec.scope.user_id

    def _review_audit(self, cs: ChangeSet, rec: MemoryRecord, actor: str, reason: str, **details: Any) -> None:
        cs.audit(rec.id, AuditAction.REVIEW.value, actor, reason, **details)

    # ------------------------------------------------------------------ approve
    def approve(self, m: Mutation, rec: MemoryRecord, scope: Scope, actor: str, reason: str) -> MemoryRecord:
        kind = classify(rec)
        if kind is None:
            raise InvalidInputError(f"memory {rec.id} is not waiting for review")
        note = {"memory_id": rec.id, "action": AuditAction.REVIEW.value, "actor": actor, "user_id": rec.scope.user_id,
                "reason": f"approved ({kind}): {reason}", "details": {"kind": kind, "decision": "approve"}}
        if kind == "quarantine":
            m.audit([note])
            meta = {k: v for k, v in rec.metadata.items() if k != "screening"}
            # content is passed so entities and triples (stripped at quarantine) are extracted again
            return self.engine.reviewed_update(
                rec.id, rec.content, scope=scope, actor=actor, reason=f"review: {reason}",
                status=MemoryStatus.ACTIVE.value, metadata=meta,
                flags=without(rec.flags, Flag.INJECTION.value, Flag.SUSPICIOUS.value))
        if kind == "suspicious":
            m.audit([note])
            return self.engine.reviewed_update(rec.id, scope=scope, actor=actor, reason=f"review: {reason}",
                                               flags=without(rec.flags, Flag.SUSPICIOUS.value))
        cs = ChangeSet(self._tenant(rec))
        self._approve_into(cs, rec, scope, actor)
        self._review_audit(cs, rec, actor, f"approved ({kind}): {reason}", kind=kind, decision="approve")
        cs.apply(m)
        return self._reload(rec.id, scope)

    def _approve_into(self, cs: ChangeSet, rec: MemoryRecord, scope: Scope, actor: str) -> None:
        kind = classify(rec)
        if kind == "conflict":  # this value wins: every other current value of the attribute becomes its history
            for other_id, props in self._links(rec.id, "CONFLICTS_WITH"):
                if props.get("kind") == "contradiction":
                    continue
                found = self.engine.store.get([other_id], scope)
                if found and found[0].status.value in supersession.CURRENT:
                    cs.supersede(supersession.superseded_by_review(rec, found[0], actor, cs.now))
                cs.unlink_both("CONFLICTS_WITH", rec.id, other_id)
            cs.set(rec.id, status=MemoryStatus.ACTIVE.value, flags=without(rec.flags, Flag.CONFLICT_PENDING.value))
        elif kind == "dedup":  # a duplicate after all: the original is reinforced, this copy archived
            targets = self.engine.store.linked(rec.id, "DUPLICATE_OF")
            if targets:
                merge = Decision(action=Action.MERGE, reason="merged in review", record=rec, target_id=targets[0][0],
                                 details={"dedup": "review", "similarity": targets[0][1].get("similarity")})
                for target_id, props in self.engine.governor.reinforcement([merge], scope, cs.now):
                    cs.set(target_id, **props)
            cs.set(rec.id, status=MemoryStatus.ARCHIVED.value, archived_at=cs.now,
                   flags=[*without(rec.flags, Flag.DEDUP_REVIEW.value), "merged"])
        elif kind == "contradiction":  # acknowledged: both may be true
            self._clear_contradictions(cs, rec, scope)
        else:  # quarantine / suspicious are edits (see approve)
            raise InvalidInputError(f"memory {rec.id} ({kind}) cannot be approved inside another decision")

    def _clear_contradictions(self, cs: ChangeSet, rec: MemoryRecord, scope: Scope) -> None:
        for other_id, props in self._links(rec.id, "CONFLICTS_WITH"):
            if props.get("kind") != "contradiction":
                continue
            cs.unlink_both("CONFLICTS_WITH", rec.id, other_id)
            found = self.engine.store.get([other_id], scope)
            rest = [o for o, p in self._links(other_id, "CONFLICTS_WITH") if p.get("kind") == "contradiction"
                    and o != rec.id]
            if found and not rest:
                cs.set(other_id, flags=without(found[0].flags, Flag.CONTRADICTION.value))
        cs.set(rec.id, flags=without(rec.flags, Flag.CONTRADICTION.value))

    # ------------------------------------------------------------------ reject
    def reject(self, m: Mutation, rec: MemoryRecord, scope: Scope, actor: str, reason: str) -> MemoryRecord | None:
        """Reject a review item; returns the record as it is now (``None`` when it was purged)."""
        kind = classify(rec)
        if kind is None:
            raise InvalidInputError(f"memory {rec.id} is not waiting for review")
        if kind in ("quarantine", "suspicious"):  # confirmed attack: nothing of it is kept
            self.purge(m, [rec.id], scope)
            m.audit([{"memory_id": rec.id, "action": AuditAction.REVIEW.value, "actor": actor,
                      "user_id": rec.scope.user_id, "reason": f"rejected ({kind}): {reason}",
                      "details": {"kind": kind, "decision": "reject", "hard": True}}])
            return None
        cs = ChangeSet(self._tenant(rec))
        extra: dict[str, Any] = {}
        if kind == "conflict":
            winners = [o for o, p in self._links(rec.id, "CONFLICTS_WITH") if p.get("kind") != "contradiction"]
            pending = [r for r in self.engine.store.get(winners, scope) if Flag.CONFLICT_PENDING.value in r.flags]
            if len(pending) == 1:  # the other side wins: approving it makes this one its history
                self._approve_into(cs, pending[0], scope, actor)
                self._review_audit(cs, pending[0], actor, f"approved (conflict): other side of a rejected "
                                   f"conflict: {reason}", kind="conflict", decision="approve")
                extra["winner"] = pending[0].id
            else:
                for o in winners:
                    cs.unlink_both("CONFLICTS_WITH", rec.id, o)
                cs.set(rec.id, status=MemoryStatus.ARCHIVED.value, archived_at=cs.now,
                       flags=without(rec.flags, Flag.CONFLICT_PENDING.value))
        elif kind == "dedup":  # not a duplicate after all: a memory of its own
            for t, _ in self.engine.store.linked(rec.id, "DUPLICATE_OF"):
                cs.unlinks.append((rec.id, "DUPLICATE_OF", t))
            cs.set(rec.id, status=MemoryStatus.ACTIVE.value, flags=without(rec.flags, Flag.DEDUP_REVIEW.value))
        else:  # contradiction: this one is wrong
            self._clear_contradictions(cs, rec, scope)
            cs.set(rec.id, status=MemoryStatus.ARCHIVED.value, archived_at=cs.now)
        self._review_audit(cs, rec, actor, f"rejected ({kind}): {reason}", kind=kind, decision="reject",
                           hard=False, **extra)
        cs.apply(m)
        return self._reload(rec.id, scope)

    # ------------------------------------------------------------------ rollback
    def _same_write(self, newer: MemoryRecord, old: MemoryRecord, scope: Scope,
                    skip: set[str]) -> list[MemoryRecord]:
        """Current memories written with ``newer`` (same add call: same session, within two seconds) that state the
        value whose supersession is undone: an assistant's summary of the user's message (close to ``newer``), or
        another sentence of the same message about the same attribute ("Moved out of Austin." / "Denver is home
        now.": :meth:`~neusym.governance.updates.UpdateDetector.states_same_value`). Undoing the update must end them too, or two values stay current."""
        t = newer.created_at.timestamp()
        tenant = Scope(user_id=newer.scope.user_id) if newer.scope.user_id else scope
        near = [r for r in self.engine.store.scope_memories(tenant, before=t + 2.0, newest_first=True, limit=20)
                if r.id not in skip | {newer.id, old.id} and abs(r.created_at.timestamp() - t) <= 2.0
                and r.source.session_id == newer.source.session_id and r.status.value in supersession.CURRENT]
        if not near:
            return []
        faiss = self.engine.derived.faiss
        try:
            vecs = faiss.reconstruct([newer.nid, old.nid, *[r.nid for r in near]])
        except RecordNotFoundError:
            return []
        unit = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        sims = unit[2:] @ unit[0]
        updates = self.engine.governor.updates.states_same_value(old, unit[1], unit[0], near, unit[2:])
        return [r for r, s, u in zip(near, sims.tolist(), updates, strict=True) if s >= _SAME_VALUE or u]

    def _undo_supersession(self, cs: ChangeSet, rec: MemoryRecord, entry: Mapping[str, Any],
                           todo: Sequence[Mapping[str, Any]], what: dict[str, Any], scope: Scope,
                           actor: str) -> None:
        """Restore ``rec`` and make every memory that stated the newer value history, so exactly one value stays
        current: the memory that superseded it, any other memory that superseded it too and was not rolled back (a
        user turn and the assistant turn restating it), the engine-made successors those supersessions wrote
        (:mod:`neusym.governance.successors`), and what the same write said of that value (:meth:`_same_write`)."""
        details = cast(dict[str, Any], entry["details"])
        memory_id = rec.id
        newer = self.engine.store.get([str(details.get("by"))], scope) if details.get("by") else []
        if newer and newer[0].status is MemoryStatus.SUPERSEDED:
            raise InvalidInputError(
                f"memory {newer[0].id}, which superseded {memory_id}, was itself superseded since: roll back "
                "the later change first (otherwise two values would be current)")
        plan = supersession.undo(details, rec, newer[0] if newer else None, actor, cs.now)
        cs.set(memory_id, **plan.restore)
        cs.unlinks.append((plan.unlink[0], "SUPERSEDES", plan.unlink[1]))
        cs.close.append((memory_id, plan.reopen_relations))
        if plan.newer is None:
            return
        cs.supersede(plan.newer)
        what["superseded"] = plan.newer.old
        # the other supersessions of this memory (not rolled back yet) and the successors any of them wrote
        also = [h for h in todo if h["action"] == "supersede" and h["id"] != entry["id"]]
        by_ids = [str(h["details"].get("by")) for h in also if h["details"].get("by")]
        cs.unlinks += [(b, "SUPERSEDES", memory_id) for b in by_ids]
        made = [str(h["details"]["successor"]) for h in [entry, *also] if h["details"].get("successor")]
        ended = {plan.newer.old}
        extra: list[tuple[MemoryRecord, str]] = []
        for r in self.engine.store.get(list(dict.fromkeys(by_ids + made)), scope):
            if r.id in ended or r.status.value not in supersession.CURRENT:
                continue
            extra.append((r, "engine-made successor of the rolled-back value" if r.id in made
                          else "also superseded the restored value"))
            ended.add(r.id)
        extra += [(r, "stated, in the same write, the value whose supersession was rolled back")
                  for r in self._same_write(newer[0], rec, scope, ended)]
        for r, why in extra:
            cs.supersede(Supersession(
                old=r.id, by=memory_id, user_id=r.scope.user_id, valid_to=cs.now,
                previous={"status": r.status.value, "flags": list(r.flags),
                          "valid_to": None if r.valid_to is None else r.valid_to.timestamp()},
                actor=actor, kind="rollback", strategy="rollback", predicate=details.get("predicate"),
                reason=f"{why}: history now", extra={"rolled_back": memory_id, "with": plan.newer.old}))
        if extra:
            what["superseded_same_write"] = [r.id for r, _ in extra]
        if also:
            what["also"] = [h["id"] for h in also]

    def rollback(self, m: Mutation, memory_id: str, scope: Scope, audit_id: str | None, actor: str,
                 reason: str) -> MemoryRecord:
        """Undo the latest (or the given) reversible change to a memory: an edit, a supersession, an archive/soft
        forget or a conflict mark. Undoing a supersession leaves exactly one current value (see
        :func:`neusym.governance.supersession.undo`)."""
        history = self.engine.store.audit_for(memory_id, scope)
        undone = {str(x) for h in history if h["action"] == AuditAction.ROLLBACK.value
                  for x in [h["details"].get("of"), *(h["details"].get("also") or [])]}
        todo = [h for h in history if h["action"] in _REVERSIBLE and h["id"] not in undone
                and not h["details"].get("redacted")]
        if audit_id is not None:
            todo = [h for h in todo if h["id"] == audit_id]
        if not todo:
            raise RecordNotFoundError(f"nothing to roll back for memory {memory_id!r}")
        entry = todo[-1]
        details = cast(dict[str, Any], entry["details"])
        what: dict[str, Any] = {"of": entry["id"], "undone": entry["action"]}
        note = {"memory_id": memory_id, "action": AuditAction.ROLLBACK.value, "actor": actor, "reason": reason,
                "details": what}
        if entry["action"] == "edit":
            before = dict(details.get("before") or {})
            content = before.pop("content", None)
            before.pop("version", None)
            m.audit([note])
            return self.engine.reviewed_update(memory_id, content, scope=scope, actor=actor,
                                               reason=f"rollback: {reason}", **before)
        rec = self._reload(memory_id, scope)
        cs = ChangeSet(self._tenant(rec))
        if entry["action"] == "supersede":
            self._undo_supersession(cs, rec, entry, todo, what, scope, actor)
        else:
            prev = dict(details.get("previous") or {})
            cs.set(memory_id, status=prev.get("status") or MemoryStatus.ACTIVE.value,
                   flags=list(prev.get("flags") or []), valid_to=prev.get("valid_to"), archived_at=None)
            if entry["action"] == "conflict" and details.get("with"):
                cs.unlinks.append((str(details["with"]), "CONFLICTS_WITH", memory_id))
        cs.audits.append({**note, "at": cs.now, "user_id": cs.user_id})
        if memory_id not in cs.apply(m):
            raise RecordNotFoundError(f"no memory {memory_id!r} in scope {scope.as_params()}")
        return self._reload(memory_id, scope)
