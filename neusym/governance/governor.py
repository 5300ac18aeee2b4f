"""The governor: every candidate memory passes through it before it is stored, and every decision is audited.

``admit`` only *plans* (screening, admission, dedup, conflicts) and never writes; the engine creates what the plan
says to store, its supersessions and the decisions' audit entries in one graph statement, then ``after_write``
applies the rest of the plan (merges, conflict links) and audits it. A failure between the two therefore never leaves a half-superseded
fact behind a memory that was not created.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from neusym.governance import supersession
from neusym.governance.admission import Admission
from neusym.governance.conflicts import ConflictDetector
from neusym.governance.contradictions import ContradictionFinder
from neusym.governance.decisions import Action, AuditAction, Decision, Flag
from neusym.governance.dedup import Deduplicator
from neusym.governance.policy import GovernancePolicy
from neusym.governance.restatement import lift_restatements
from neusym.governance.screening import Screener
from neusym.governance.successors import Facts, Successors, derivations
from neusym.governance.supersession import Supersession
from neusym.governance.update_model import FITTED_EMBEDDER
from neusym.governance.updates import UpdateDetector
from neusym.llm import ChatModel, as_chat_model
from neusym.record import MemoryRecord, MemoryStatus, Scope
from neusym.retrieval.derived import DerivedIndexes
from neusym.symbolic.governance_store import GovernanceQueries
from neusym.symbolic.store import SymbolicStore

__all__ = ["Governor", "tenant_scope"]

_AUDIT_ACTION = {
    Action.STORE: AuditAction.ADMIT, Action.STORE_LOW_CONFIDENCE: AuditAction.ADMIT, Action.REVIEW: AuditAction.ADMIT,
    Action.QUARANTINE: AuditAction.QUARANTINE, Action.REJECT: AuditAction.REJECT, Action.MERGE: AuditAction.MERGE,
}


def tenant_scope(scope: Scope) -> Scope:
    """Facts belong to the tenant, not the session: an address said in one session is updated by another."""
    return Scope(user_id=scope.user_id) if scope.user_id else scope


class Governor:
    """Admission, screening, dedup and conflicts on the write path, plus the audit trail of what they decided.

    Args:
        store, derived: the memory's graph store and derived indexes.
        policy: thresholds and defaults (:class:`GovernancePolicy`).
        llm: the memory's model; used as injection judge / contradiction arbiter only when the policy enables it.
        embed: the memory's document embedder (``texts -> vectors``), for the attribute-slot and constraint
            descriptions that update and contradiction detection compare new memories with; without it those two
            steps are off and only the extracted triples decide.
        facts: the memory's extractor (``text -> (entities, triples)``), for the graph facts of a corrected successor
            the engine writes (:mod:`neusym.governance.successors`).
        embed_model: the model family of ``embed`` (``EmbedderIdentity.model``): the update pair model runs by
            default only on the vectors it was fitted on (``GovernancePolicy.update_model``).
        embed_table: ``embed`` for fixed description tables, cached on disk by content hash
            (:func:`neusym.embeddings.tables.table_embedder`); ``embed`` when omitted.
    """

    def __init__(self, store: SymbolicStore, derived: DerivedIndexes, *, policy: GovernancePolicy | None = None,
                 llm: Any = None, embed: Callable[[list[str]], np.ndarray] | None = None,
                 facts: Facts | None = None, embed_model: str | None = None,
                 embed_table: Callable[[list[str]], np.ndarray] | None = None) -> None:
        self.store = store
        self.derived = derived
        self.embed = embed
        self.embed_table = embed_table
        self.embed_model = embed_model
        self.facts = facts
        self.queries = GovernanceQueries(store)
        self.llm: ChatModel | None = as_chat_model(llm) if llm is not None else None
        self._known_tenants: set[str] = set()
        self.policy = policy or GovernancePolicy()

    # ------------------------------------------------------------------ configuration
    @property
    def policy(self) -> GovernancePolicy:
        return self._policy

    @policy.setter
    def policy(self, policy: GovernancePolicy) -> None:
        """Swapping the policy rebuilds the steps, so a change applies to the very next write."""
        self._policy = policy
        self.screener = Screener(threshold=policy.injection_threshold, borderline=policy.borderline_threshold,
                                 untrusted_boost=policy.untrusted_origin_boost,
                                 judge=self.llm if policy.llm_judge else None, other_tenant=self._other_tenant)
        self.admission = Admission(policy, self.screener)
        self.dedup = Deduplicator(self.store, self.derived, self.queries, policy)
        self.conflicts = ConflictDetector(self.store, self.queries, policy,
                                          arbiter=self.llm if policy.llm_arbiter else None)
        fitted = FITTED_EMBEDDER in (self.embed_model or "")
        pair_model = policy.update_model == "on" or (policy.update_model == "auto" and fitted)
        self.updates = UpdateDetector(self.derived, self.queries, self.embed if pair_model else None,
                                      min_trust=policy.may_update, embed_table=self.embed_table)
        self.contradictions = ContradictionFinder(self.store, self.embed, enabled=policy.flag_contradictions)
        self.successors = Successors(self.facts, self.llm if policy.llm_corrections else None)

    def set_llm(self, llm: Any) -> None:
        self.llm = as_chat_model(llm) if llm is not None else None
        self.policy = self._policy

    def _other_tenant(self, user_id: str) -> bool:
        if user_id in self._known_tenants:
            return True
        if self.queries.tenant_exists(user_id):
            self._known_tenants.add(user_id)
            return True
        return False

    # ------------------------------------------------------------------ write path
    def admit(self, candidates: Sequence[MemoryRecord], vectors: np.ndarray, scope: Scope, *,
              edit: bool = False) -> list[Decision]:
        """Plan the fate of each candidate. Pure with respect to the graph: nothing is written here.

        THE governance of every write path: ``add`` and everything built on it plan new memories here, and
        ``update`` (MCP ``update``, the LangChain ``update_memory`` tool, a LangGraph store ``put`` on an existing
        key) plans its edited memory here with ``edit=True``: the same screening (a text quarantined on add is
        quarantined on update), the same conflict, update and contradiction checks against the other memories of
        the tenant (the memory never counts as its own neighbour). What an edit skips is what only makes sense for
        a new memory: duplicate merging (an edit never folds one memory into another), restatement trust (a call's
        agent turns) and engine-made successors.
        """
        decisions = [self.admission.evaluate(c, scope, edit=edit) for c in candidates]
        checked, vecs = decisions, vectors
        if edit:  # an edit of a memory that is history (superseded, archived, quarantined) replaces nothing
            keep = [i for i, d in enumerate(decisions) if d.record.status.value in supersession.CURRENT]
            checked, vecs = [decisions[i] for i in keep], vectors[keep]
        else:
            lift_restatements(decisions, candidates, vectors, self.policy, self.admission, scope)
            self.dedup.apply(decisions, vectors, scope)
        self.conflicts.apply(checked, scope)
        self.updates.apply(checked, vecs, scope)
        self.contradictions.apply(checked, vecs, scope)
        if not edit:
            self.successors.apply(decisions, lambda ids: self.store.get(ids, tenant_scope(scope)), time.time())
        return decisions

    def screen(self, record: MemoryRecord, scope: Scope) -> Decision:
        """The admission verdict on a stored memory's text, as an edit of it gets (``admit``'s first step, on its
        own): what a restore asks of each current memory a backup brings back, since a file's statuses and flags
        are not evidence that anyone reviewed it."""
        return self.admission.evaluate(record, scope, edit=True)

    @staticmethod
    def planned_derivations(decisions: Sequence[Decision]) -> list[dict[str, Any]]:
        """``DERIVED_FROM`` links of the engine-made successors in the plan (created with them, in one statement)."""
        return derivations(decisions)

    @staticmethod
    def planned_supersessions(decisions: Sequence[Decision], now: float | None = None) -> list[Supersession]:
        """The plan's supersessions, which the write path applies inside the create statement (with their audit
        entries), so a crash right after the create never leaves two current values of one fact."""
        return supersession.planned(decisions, time.time() if now is None else now)

    def supersede(self, sets: Sequence[Supersession], user_id: str, now: float) -> None:
        """Apply an edit's planned supersessions (a create applies its own inside the create statement): the older
        memories become history, linked SUPERSEDES and audited, in one statement."""
        if sets:
            self.store.apply_changes(user_id, sets=[(s.old, s.props(now)) for s in sets],
                                     links=[(s.by, "SUPERSEDES", s.old, s.edge(now)) for s in sets],
                                     close=[(s.old, s.valid_to) for s in sets], audits=[s.audit(now) for s in sets])

    @staticmethod
    def decision_audits(decisions: Sequence[Decision], scope: Scope, actor: str = "system",
                        now: float | None = None) -> list[dict[str, Any]]:
        """One audit entry per decision (the write path writes them with the create statement)."""
        now = time.time() if now is None else now
        return [{"memory_id": d.memory_id or d.record.id, "action": _AUDIT_ACTION[d.action].value,
                 "reason": d.reason, "actor": actor, "at": now, **scope.as_params(),
                 "details": {"decision": d.action.value, **_audit_safe(d.details)}} for d in decisions]

    def after_write(self, decisions: Sequence[Decision], scope: Scope, now: float | None = None) -> bool:
        """Apply the rest of the plan (the candidates and their supersessions are already created): merges,
        conflict and contradiction marks, duplicate links, and their audit entries. Returns whether it wrote."""
        now = time.time() if now is None else now
        tenant = tenant_scope(scope)
        changes: list[tuple[str, dict[str, Any]]] = []
        merges = [d for d in decisions if d.action is Action.MERGE and d.target_id]
        if merges:
            self.reinforce(merges, scope, now)
        audits: list[dict[str, Any]] = []
        links = 0
        for d in decisions:
            if d.stored:
                links += self._effects(d, now, changes, audits)
        if changes:
            self.store.set_props(changes, tenant)
        if audits:
            self.store.audit(audits)
        return bool(merges or changes or audits or links)

    def _effects(self, d: Decision, now: float, changes: list[tuple[str, dict[str, Any]]],
                 audits: list[dict[str, Any]]) -> int:
        mid = d.record.id
        user = d.record.scope.user_id
        links = 0
        for e in _entries(d.details.get("conflicts")):
            other, prev = str(e["id"]), dict(e.get("previous") or {})
            links += self.store.link("CONFLICTS_WITH", [(mid, other)], {"kind": e["kind"],
                                                                        "predicate": e["predicate"], "at": now})
            if e.get("mark_other"):
                changes.append((other, {"status": MemoryStatus.PENDING.value, "flags": list(dict.fromkeys(
                    [*(prev.get("flags") or []), Flag.CONFLICT_PENDING.value]))}))
                audits.append({"memory_id": other, "action": AuditAction.CONFLICT.value, "actor": "governance",
                               "reason": f"conflicting {e['predicate']} value: pending review", "at": now,
                               "user_id": user, "details": {"with": mid, "previous": prev, "kind": e["kind"]}})
        for e in _entries(d.details.get("contradictions")):
            other, prev = str(e["id"]), dict(e.get("previous") or {})
            links += self.store.link("CONFLICTS_WITH", [(mid, other)], {"kind": "contradiction", "rule": e["rule"],
                                                                        "at": now})
            changes.append((other, {"flags": list(dict.fromkeys([*(prev.get("flags") or []),
                                                                 Flag.CONTRADICTION.value]))}))
            audits.append({"memory_id": other, "action": AuditAction.CONFLICT.value, "actor": "governance",
                           "reason": f"contradicted by another memory ({e['rule']})", "at": now, "user_id": user,
                           "details": {"with": mid, "previous": prev, "rule": e["rule"]}})
        if d.action is Action.REVIEW and d.details.get("dedup") == "review" and d.target_id:
            links += self.store.link("DUPLICATE_OF", [(mid, d.target_id)], {"similarity": d.details.get("similarity"),
                                                                            "at": now})
        return links

    def reinforce(self, merges: Sequence[Decision], scope: Scope, now: float) -> None:
        """A repeated memory gets stronger and keeps the provenance of every source that repeated it."""
        self.store.set_props(self.reinforcement(merges, scope, now), scope)

    def reinforcement(self, merges: Sequence[Decision], scope: Scope,
                      now: float) -> list[tuple[str, dict[str, Any]]]:
        """The property changes :meth:`reinforce` makes (a duplicate merged at write time, or one a reviewer
        confirmed): strength up to the policy's cap, the best confidence, the union of tags, one provenance entry
        per repetition."""
        targets = {r.id: r for r in self.store.get(list({str(d.target_id) for d in merges}), scope)}
        p = self.policy
        acc: dict[str, dict[str, Any]] = {}
        for d in merges:
            t = targets.get(str(d.target_id))
            if t is None:
                continue
            cur = acc.setdefault(t.id, {"strength": t.strength, "confidence": t.confidence, "tags": list(t.tags),
                                        "metadata": dict(t.metadata), "access_count": t.access_count})
            c = d.record
            cur["strength"] = min(p.max_strength, cur["strength"] + p.merge_reinforcement)
            cur["confidence"] = max(cur["confidence"], c.confidence)  # already trust-weighted by admission
            cur["tags"] = list(dict.fromkeys([*cur["tags"], *c.tags]))
            cur["access_count"] += 1
            cur["metadata"].setdefault("provenance", []).append({
                "id": c.id, "origin": c.source.origin, "session_id": c.source.session_id, "turn": c.source.turn,
                "speaker": c.source.speaker, "ref": c.source.ref, "at": now, "kind": d.details.get("dedup"),
                "similarity": d.details.get("similarity")})
        return [(mid, {"strength": v["strength"], "confidence": v["confidence"], "tags": v["tags"],
                       "access_count": v["access_count"], "last_accessed_at": now,
                       "metadata_json": json.dumps(v["metadata"], ensure_ascii=False, default=str)})
                for mid, v in acc.items()]


def _entries(value: object) -> list[Mapping[str, Any]]:
    return [e for e in value if isinstance(e, Mapping)] if isinstance(value, list) else []


def _audit_safe(details: Mapping[str, object]) -> dict[str, object]:
    """Decision details as audited: ids, numbers and rule names only (``previous`` states are kept for rollback)."""
    return {k: v for k, v in details.items() if k not in ("evidence",)}
