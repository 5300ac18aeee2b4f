"""The governance service: forgetting, the janitor, review, rollback, history and the policy, on the Engine.

``mem.governance`` is this object; ``NeuSymMemory``'s governance methods delegate to it. Every method resolves its
scope through :meth:`Engine.scope <neusym.engine.Engine.scope>` (a tenant, the configured default user, or
``all_tenants=True`` where an operator path allows it) and writes through one :meth:`Engine.mutation
<neusym.engine.Engine.mutation>`. Every method that moves time-dependent state takes ``now`` (epoch seconds or a
datetime) so tests and replays can run on a simulated clock.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from neusym.engine import Engine, Mutation
from neusym.engine.candidates import check_ids, check_k
from neusym.errors import InvalidInputError, RecordNotFoundError, ScopeError
from neusym.governance.attributes import AttributeResolver
from neusym.governance.decisions import AuditAction, Flag
from neusym.governance.forgetting import (
    ALL_STATUSES,
    ForgetPreview,
    ForgetReport,
    Purger,
    compact_lexical,
    find_by_meaning,
    forget_staged,
    forget_topic,
    topic_vectors,
)
from neusym.governance.lifecycle import JanitorReport, run_janitor
from neusym.governance.policy import GovernancePolicy
from neusym.governance.review import REVIEW_KINDS, ReviewItem, list_review
from neusym.record import MemoryRecord, MemoryStatus, Scope, as_epoch
from neusym.services.review import ReviewDecisions

__all__ = ["Governance"]

log = logging.getLogger(__name__)

_PAGE = 1000
_HISTORY = [MemoryStatus.ACTIVE, MemoryStatus.PENDING, MemoryStatus.SUPERSEDED]  # every value an attribute had
ScopeArg = Scope | Mapping[str, Any] | None


HARD_MIN_SCORE = 0.5
"""A hard ``forget(query=...)`` purges previewed items scoring at least this (or the best one); see ``forget``."""


def _epoch(now: datetime | float | None) -> float:
    value = as_epoch(now)
    return time.time() if value is None else value


class Governance:
    """See the module docstring."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.decisions = ReviewDecisions(engine, self._purge)
        self._janitor: tuple[threading.Thread, threading.Event] | None = None
        self._attributes: AttributeResolver | None = None

    # ------------------------------------------------------------------ policy
    @property
    def policy(self) -> GovernancePolicy:
        return self.engine.governor.policy

    def configure(self, policy: GovernancePolicy | None = None, *, llm: Any = None,
                  **changes: Any) -> GovernancePolicy:
        """Replace the policy and/or change fields of it (``configure(conflict_strategy="ask")``); ``llm`` sets
        the model used by the judge and arbiter when the policy enables them."""
        gov = self.engine.governor
        if llm is not None:
            gov.set_llm(llm)
        base = policy or gov.policy
        try:
            gov.policy = GovernancePolicy.model_validate({**base.model_dump(), **changes}) if changes else base
        except ValueError as err:
            raise InvalidInputError(str(err)) from err
        return gov.policy

    # ------------------------------------------------------------------ forgetting
    def _purger(self, m: Mutation) -> Purger:
        e = self.engine
        return Purger(e.store, e.derived, e.governor.queries, e.embedder, e.governor.policy, sync=m.sync)

    def _purge(self, m: Mutation, ids: Sequence[str], scope: Scope, extra_texts: Sequence[str] = (),
               rewrite: bool = True) -> list[str]:
        m.persist()
        return self._purger(m).purge(ids, scope, extra_texts=extra_texts, rewrite=rewrite)

    def forget_preview(self, query: str, *, scope: ScopeArg = None, limit: int | None = None,
                       statuses: Sequence[str] = ALL_STATUSES) -> ForgetPreview:
        """What ``forget(query=...)`` would remove: topic (predicate), entity and semantic matches, every status."""
        e = self.engine
        e.check_open()
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("query must be a non-empty string")
        sc = e.scope(scope, what="forget_preview")
        e.sync()
        qvec, descriptions, dvecs, wvecs = topic_vectors(e.embedder, forget_topic(query))
        return find_by_meaning(query, sc, store=e.store, derived=e.derived, queries=e.governor.queries,
                               qvec=qvec, policy=e.governor.policy, statuses=statuses, limit=limit,
                               descriptions=descriptions, desc_vecs=dvecs, word_vecs=wvecs)

    def forget(self, ids: str | Sequence[str] | None = None, *, query: str | None = None,
               preview: ForgetPreview | None = None, scope: ScopeArg = None, everything: bool = False,
               hard: bool = False, confirm: bool | None = None, reason: str = "forgotten on request",
               actor: str = "user", now: datetime | float | None = None) -> ForgetReport:
        """See :meth:`neusym.NeuSymMemory.forget`."""
        e = self.engine
        e.check_open()
        sc = e.scope(scope, what="forget")
        given = [x is not None for x in (ids, query, preview)] + [everything]
        if sum(given) != 1:
            raise InvalidInputError("pass exactly one of ids, query, preview or everything=True")
        shown: ForgetPreview | None = preview
        if preview is not None and preview.scope.get("user_id") not in (None, sc.user_id):
            raise ScopeError("this preview was made for another tenant")
        if query is not None:
            shown = self.forget_preview(query, scope=sc)
            if not confirm:
                return ForgetReport(applied=False, hard=hard, ids=shown.ids, reason=reason, preview=shown)
        if shown is not None and not shown.items:
            # nothing matched: say so, instead of "applied" with no ids
            return ForgetReport(applied=False, hard=hard, ids=[], preview=shown,
                                reason=f"nothing matched {shown.query!r}: nothing was forgotten")
        at = _epoch(now)
        held_back: list[str] = []
        if query is not None and hard and shown is not None:
            # a hard forget cannot be undone: by meaning it takes only the confident matches (the best one, and any
            # scoring >= HARD_MIN_SCORE); the rest stay, named in the reason, for a preview-and-confirm or a forget by id
            best = max((i.score for i in shown.items), default=0.0)
            held_back = [i.id for i in shown.items if i.score < HARD_MIN_SCORE and i.score < best]
        with e.mutation(sc) as m:
            if everything:
                targets = self._scope_ids(sc)
            elif shown is not None:
                targets = [i for i in shown.ids if i not in held_back]
            else:
                targets = check_ids(ids)
            if hard:
                gone = self._purge(m, targets, sc, [shown.topic] if shown else [])
                details: dict[str, dict[str, Any]] = {i: {"hard": True} for i in gone}
            else:
                previous = self._archive(targets, sc, at, Flag.FORGOTTEN.value)
                gone = list(previous)
                details = {i: {"hard": False, "previous": prev} for i, prev in previous.items()}
            m.audit([{"memory_id": i, "action": AuditAction.FORGET.value, "reason": reason, "actor": actor,
                      "at": at, **sc.as_params(), "details": details[i]} for i in gone])
            m.emit("forget", {"scope": sc, "ids": gone, "hard": hard})
        if held_back:
            reason = (f"{reason}; {len(held_back)} weaker match(es) not purged (hard forget by meaning takes only "
                      f"confident matches: pass preview= or ids= to purge them)")
        return ForgetReport(applied=True, hard=hard, ids=gone, reason=reason, preview=shown)

    def _scope_ids(self, sc: Scope) -> list[str]:
        out: list[str] = []
        after = 0
        while True:
            rows = self.engine.governor.queries.scope_page(sc, after, _PAGE)
            out.extend(str(r["id"]) for r in rows)
            if len(rows) < _PAGE:
                return out
            after = int(rows[-1]["nid"])

    def _archive(self, ids: Sequence[str], sc: Scope, at: float, flag: str) -> dict[str, dict[str, Any]]:
        store = self.engine.store
        found = [r for r in store.get(list(dict.fromkeys(ids)), sc) if r.status is not MemoryStatus.ARCHIVED]
        store.set_props([(r.id, {"status": MemoryStatus.ARCHIVED.value, "archived_at": at,
                                 "flags": list(dict.fromkeys([*r.flags, flag]))}) for r in found], sc)
        return {r.id: {"status": r.status.value, "flags": list(r.flags),
                       "valid_to": as_epoch(r.valid_to)} for r in found}

    def forget_tenant(self, user_id: str, *, reason: str = "right to be forgotten", actor: str = "user",
                      now: datetime | float | None = None) -> ForgetReport:
        """Right to be forgotten: hard-delete every memory, entity and cached vector of a tenant and strip the
        content from its audit trail (the events and ids stay, as the audit must)."""
        e = self.engine
        e.check_open()
        if not isinstance(user_id, str) or not user_id:
            raise ScopeError("forget_tenant needs a user_id")
        sc = e.scope(Scope.coerce(None, user_id=user_id))
        gone: list[str] = []
        texts: set[str] = set()
        with e.mutation(sc, persist=True) as m:
            purger = self._purger(m)
            while True:
                rows = e.governor.queries.scope_page(sc, 0, _PAGE)
                if not rows:
                    break
                texts.update(str(r["content"]) for r in rows)
                texts.update(purger.earlier_versions([str(r["id"]) for r in rows]))
                # (the graph's invariants are checked once, after the tenant's entities: delete_tenant_entities)
                gone.extend(e.store.delete_hard([str(r["id"]) for r in rows], sc, check=False))
            forget_staged(e.executor, user_id=user_id)  # copies a restore staged (or a killed one left) go too
            e.governor.queries.delete_tenant_entities(user_id)
            m.sync()  # the vectors and postings go before the compaction in finish()
            purger.finish(texts, tenant=user_id)  # ... and rewrites the graph's log
            m.audit([{"memory_id": None, "action": AuditAction.FORGET.value, "reason": reason, "actor": actor,
                      "at": _epoch(now), "user_id": user_id,
                      "details": {"hard": True, "count": len(gone), "tenant": True}}])
            m.emit("forget", {"scope": sc, "ids": gone, "hard": True})
        return ForgetReport(applied=True, hard=True, ids=gone, reason=reason)

    # ------------------------------------------------------------------ lifecycle
    def run_janitor(self, *, now: datetime | float | None = None, scope: ScopeArg = None, all_tenants: bool = False,
                    dry_run: bool = False) -> JanitorReport:
        """One janitor pass (TTL expiry, decay, archive, purge) over a tenant's scope, or every tenant with
        ``all_tenants=True``."""
        e = self.engine
        e.check_open()
        if all_tenants and scope is not None and not Scope.coerce(
                dict(scope) if isinstance(scope, Mapping) else scope).is_empty:
            raise ScopeError("pass either a scope or all_tenants=True, not both")
        sc = e.scope(scope, all_tenants=all_tenants, what="run_janitor", admin=True)
        with e.mutation(sc) as m:
            if not dry_run:  # writes an interrupted process left half done (a purge, an edit, a restore's staging)
                e.store.recover()
            # one log rewrite for the whole pass, not one per tenant and page of purges
            report = run_janitor(e.store, e.governor.queries, e.governor.policy, scope=sc, now=_epoch(now),
                                 purge=lambda i, s: self._purge(m, i, s, rewrite=False), dry_run=dry_run)
            if report.purged and not dry_run:
                e.governor.queries.rewrite_log()
            if not dry_run:
                m.sync()
                # plain deletes and edits leave dead BM25 postings and FAISS tombstones behind: sweep them here
                with e.derived.lock:
                    report.compacted = compact_lexical(e.derived)
                    if e.derived.faiss.needs_compaction:
                        e.derived.faiss.compact()
                        report.compacted += 1
                if report.changed or report.compacted:
                    m.persist()
        return report

    def start_janitor(self, interval: float = 3600.0, *, scope: ScopeArg = None, all_tenants: bool = False) -> None:
        """Run the janitor every ``interval`` seconds in a daemon thread (stopped by ``stop_janitor``/``close``)."""
        if isinstance(interval, bool) or not isinstance(interval, int | float) or interval <= 0:
            raise InvalidInputError("interval must be a positive number of seconds")
        sc = self.engine.scope(scope, all_tenants=all_tenants, what="start_janitor", admin=True)
        self.stop_janitor()
        stop = threading.Event()

        def loop() -> None:
            while not stop.wait(interval):
                if self.engine.closed:
                    return
                try:
                    self.run_janitor(scope=None if all_tenants else sc, all_tenants=all_tenants)
                except Exception:  # noqa: BLE001 - a failed pass must not kill the schedule
                    log.exception("scheduled janitor pass failed")

        thread = threading.Thread(target=loop, name="neusym-janitor", daemon=True)
        self._janitor = (thread, stop)
        thread.start()

    def stop_janitor(self, timeout: float = 5.0) -> None:
        running, self._janitor = self._janitor, None
        if running is not None:
            thread, stop = running
            stop.set()
            if thread is not threading.current_thread():
                thread.join(timeout)

    @property
    def janitor_running(self) -> bool:
        return self._janitor is not None and self._janitor[0].is_alive()

    # ------------------------------------------------------------------ review
    def review_queue(self, kind: str | None = None, *, scope: ScopeArg = None, limit: int = 100,
                     all_tenants: bool = False) -> list[ReviewItem]:
        """Items waiting for a decision: ``quarantine``, ``conflict``, ``dedup``, ``contradiction``, ``suspicious``."""
        if kind is not None and kind not in REVIEW_KINDS:
            raise InvalidInputError(f"unknown review kind {kind!r}; use one of {', '.join(REVIEW_KINDS)}")
        e = self.engine
        e.check_open()
        sc = e.scope(scope, all_tenants=all_tenants, what="review_queue", admin=True)
        return list_review(e.governor.queries, sc, kind, check_k(limit, "limit"))

    def _target(self, memory_id: str, scope: ScopeArg, what: str) -> tuple[MemoryRecord, Scope]:
        e = self.engine
        e.check_open()
        sc = e.scope(scope, what=what)
        found = e.store.get(check_ids(memory_id)[:1], sc)
        if not found:
            raise RecordNotFoundError(f"no memory {memory_id!r} in scope {sc.as_params()}")
        # decisions work tenant-wide: a conflict's other side may live in another session of the same user
        return found[0], Scope(user_id=found[0].scope.user_id or sc.user_id)

    def review_approve(self, memory_id: str, *, scope: ScopeArg = None, actor: str = "reviewer",
                       reason: str = "approved") -> MemoryRecord:
        """Accept an item: release from quarantine, make a conflicting value current, confirm a merge, or
        acknowledge that a flagged contradiction is fine."""
        rec, sc = self._target(memory_id, scope, "review_approve")
        with self.engine.mutation(sc) as m:
            return self.decisions.approve(m, self._current(rec, sc), sc, actor, reason)

    def review_reject(self, memory_id: str, *, scope: ScopeArg = None, actor: str = "reviewer",
                      reason: str = "rejected") -> MemoryRecord | None:
        """Refuse an item: purge a quarantined one, let the other value of a conflict win, keep a suspected
        duplicate as its own memory, or archive the wrong side of a contradiction."""
        rec, sc = self._target(memory_id, scope, "review_reject")
        with self.engine.mutation(sc) as m:
            return self.decisions.reject(m, self._current(rec, sc), sc, actor, reason)

    def review_edit(self, memory_id: str, content: str | None = None, *, approve_after: bool = True,
                    scope: ScopeArg = None, actor: str = "reviewer", reason: str = "edited in review",
                    **fields: Any) -> MemoryRecord:
        """Correct an item (text and/or fields, versioned and audited), then approve it unless told not to."""
        rec, sc = self._target(memory_id, scope, "review_edit")
        with self.engine.mutation(sc) as m:
            edited = self.engine.reviewed_update(rec.id, content, scope=sc, actor=actor, reason=reason, **fields)
            if approve_after:
                return self.decisions.approve(m, edited, sc, actor, reason)
            return edited

    def rollback(self, memory_id: str, *, audit_id: str | None = None, scope: ScopeArg = None,
                 actor: str = "user", reason: str = "rollback") -> MemoryRecord:
        """Undo the latest (or the given) reversible change: an edit, a supersession, an archive/soft forget, or
        a conflict mark. The rollback itself is audited and can be rolled back like an edit."""
        rec, sc = self._target(memory_id, scope, "rollback")
        with self.engine.mutation(sc) as m:
            return self.decisions.rollback(m, rec.id, sc, audit_id, actor, reason)

    def _current(self, rec: MemoryRecord, sc: Scope) -> MemoryRecord:
        """The item as it is now that the lock is held (another writer may have decided it meanwhile)."""
        found = self.engine.store.get([rec.id], sc)
        if not found:
            raise RecordNotFoundError(f"no memory {rec.id!r} in scope {sc.as_params()}")
        return found[0]

    # ------------------------------------------------------------------ history
    def history(self, memory_id: str, *, scope: ScopeArg = None) -> list[dict[str, Any]]:
        """One memory's audit trail, oldest first, on the caller's full scope."""
        e = self.engine
        e.check_open()
        sc = e.scope(scope, what="history")
        return e.store.audit_for(check_ids(memory_id)[0], sc)

    def predicate_for(self, attribute: str) -> str:
        """The predicate an attribute in words stands for ("where do I live" -> ``lives_in``, "wer ist mein Chef"
        -> ``reports_to``); a predicate name is returned as it is (see :mod:`neusym.governance.attributes` for the
        names and how the mapping works)."""
        if self._attributes is None:
            emb = self.engine.embedder
            self._attributes = AttributeResolver(emb.embed_documents, emb.embed_query)
        return self._attributes.resolve(attribute)[0]

    def fact_history(self, predicate: str, *, subject: str | None = None, scope: ScopeArg = None,
                     limit: int = 100) -> list[MemoryRecord]:
        """Every value an attribute had, oldest first (current and superseded): ``fact_history("lives_in")`` or in
        words, ``fact_history("where do I live")`` (see :meth:`predicate_for`)."""
        return self.engine.query(scope=self.engine.scope(scope, what="fact_history"),
                                 predicate=self.predicate_for(predicate), entity=subject, statuses=_HISTORY,
                                 order="oldest", limit=limit)

    def facts_at(self, at: datetime | float, *, predicate: str | None = None, subject: str | None = None,
                 scope: ScopeArg = None, limit: int = 50) -> list[MemoryRecord]:
        """What was true at ``at`` ("where did the user live in March?" -> ``facts_at(march, predicate="lives_in")``
        or ``predicate="where do I live"``)."""
        return self.engine.query(scope=self.engine.scope(scope, what="facts_at"),
                                 predicate=None if predicate is None else self.predicate_for(predicate),
                                 entity=subject, valid_at=at, limit=limit)

    def audit_log(self, *, scope: ScopeArg = None, actions: Sequence[str] | None = None,
                  since: datetime | float | None = None, limit: int = 100,
                  all_tenants: bool = False) -> list[dict[str, Any]]:
        """Recent audit entries of a scope (newest first), or of every tenant with ``all_tenants=True``."""
        e = self.engine
        e.check_open()
        sc = e.scope(scope, all_tenants=all_tenants, what="audit_log", admin=True)
        rows = e.governor.queries.audit_log(sc, actions, as_epoch(since), check_k(limit, "limit"))
        for r in rows:
            r["details"] = json.loads(r.pop("details_json") or "{}")
        return rows
