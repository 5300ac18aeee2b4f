"""Governance methods of :class:`neusym.NeuSymMemory` (forget, janitor, review, rollback, history, policy).

Kept as a mixin so the facade stays a thin delegate and governance lives in one package. Every method that moves
time-dependent state takes ``now`` (epoch seconds or datetime) so tests and replays can run on a simulated clock.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from neusym.errors import InvalidInputError, RecordNotFoundError, ScopeError
from neusym.governance.decisions import AuditAction, Flag
from neusym.governance.forgetting import (
    ALL_STATUSES,
    ForgetPreview,
    ForgetReport,
    Purger,
    compact_lexical,
    find_by_meaning,
    forget_cached_texts,
)
from neusym.governance.lifecycle import JanitorReport, run_janitor
from neusym.governance.policy import GovernancePolicy
from neusym.governance.review import ReviewItem, approve, list_review, reject, rollback
from neusym.record import MemoryRecord, Scope, as_epoch

if TYPE_CHECKING:
    from neusym.facade import NeuSymMemory

__all__ = ["GovernanceAPI"]

log = logging.getLogger(__name__)

_PAGE = 1000


def _epoch(now: datetime | float | None) -> float:
    value = as_epoch(now)
    return time.time() if value is None else value


class GovernanceAPI:
    """Mixed into NeuSymMemory; relies on its ``store``, ``derived``, ``embedder``, ``governor`` attributes."""

    @property
    def _g(self) -> NeuSymMemory:
        return cast("NeuSymMemory", self)

    def _gscope(self, scope: Scope | dict[str, Any] | None, ids: dict[str, str | None],
                all_tenants: bool = False) -> Scope:
        mem = self._g
        return mem._read_scope(mem.scope_for(scope, **ids), all_tenants)

    def _governance_purger(self) -> Purger:
        mem = self._g
        return Purger(mem.store, mem.derived, mem.governor.queries, mem.embedder, mem.governor.policy)

    # ------------------------------------------------------------------ policy
    @property
    def governance_policy(self) -> GovernancePolicy:
        return self._g.governor.policy

    def configure_governance(self, policy: GovernancePolicy | None = None, *, llm: Any = None,
                             **changes: Any) -> GovernancePolicy:
        """Replace the policy and/or change fields of it (``mem.configure_governance(conflict_strategy="ask")``);
        ``llm`` sets the model used by the judge and arbiter when the policy enables them."""
        gov = self._g.governor
        if llm is not None:
            gov.set_llm(llm)
        base = policy or gov.policy
        try:
            gov.policy = GovernancePolicy.model_validate({**base.model_dump(), **changes}) if changes else base
        except ValueError as err:
            raise InvalidInputError(str(err)) from err
        return gov.policy

    # ------------------------------------------------------------------ forgetting
    def forget_preview(self, query: str, *, scope: Scope | dict[str, Any] | None = None, user_id: str | None = None,
                       agent_id: str | None = None, session_id: str | None = None, limit: int | None = None,
                       statuses: Sequence[str] = ALL_STATUSES) -> ForgetPreview:
        """What ``forget(query=...)`` would remove: topic (predicate), entity and semantic matches, every status."""
        mem = self._g
        mem._check_open()
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("query must be a non-empty string")
        sc = self._gscope(scope, {"user_id": user_id, "agent_id": agent_id, "session_id": session_id})
        mem.derived.catch_up(mem.store)
        from neusym.governance.forgetting import forget_topic

        qvec = mem.embedder.embed_query(forget_topic(query))
        return find_by_meaning(query, sc, store=mem.store, derived=mem.derived, queries=mem.governor.queries,
                               qvec=qvec, policy=mem.governor.policy, statuses=statuses, limit=limit)

    def forget(
        self,
        ids: str | Sequence[str] | None = None,
        *,
        query: str | None = None,
        preview: ForgetPreview | None = None,
        scope: Scope | dict[str, Any] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        everything: bool = False,
        hard: bool = False,
        confirm: bool | None = None,
        reason: str = "forgotten on request",
        actor: str = "user",
        now: datetime | float | None = None,
    ) -> ForgetReport:
        """Forget memories by id, by meaning (``query``, or a ``preview`` from :meth:`forget_preview`) or a whole
        scope (``everything=True``).

        Soft (default) archives: invisible to default reads, kept for audit, purged by the janitor after the
        retention period. ``hard=True`` purges now from the graph (node, MENTIONS/RELATES, orphaned entities,
        fulltext), FAISS, the BM25 index, the embedding cache and the content of audit entries.
        A ``query`` returns only a preview unless ``confirm=True``: forgetting by meaning should be looked at first.
        """
        mem = self._g
        mem._check_open()
        sc = self._gscope(scope, {"user_id": user_id, "agent_id": agent_id, "session_id": session_id})
        given = [x is not None for x in (ids, query, preview)] + [everything]
        if sum(given) != 1:
            raise InvalidInputError("pass exactly one of ids, query, preview or everything=True")
        shown: ForgetPreview | None = preview
        if query is not None:
            shown = self.forget_preview(query, scope=sc)
            if not confirm:
                return ForgetReport(applied=False, hard=hard, ids=shown.ids, reason=reason, preview=shown)
        if everything:
            targets = self._scope_ids(sc)
        elif shown is not None:
            targets = shown.ids
        else:
            given_ids: list[Any] = list(ids) if isinstance(ids, list | tuple | set | frozenset) else [ids]
            if not all(isinstance(i, str) and i for i in given_ids):
                raise InvalidInputError("memory ids must be non-empty strings")
            targets = given_ids
        at = _epoch(now)
        with mem._write_lock:
            if hard:
                gone = self._governance_purger().purge(targets, sc, extra_texts=[shown.topic] if shown else ())
                details: dict[str, dict[str, Any]] = {i: {"hard": True} for i in gone}
            else:
                previous = self._archive(targets, sc, at, Flag.FORGOTTEN.value)
                gone = list(previous)
                details = {i: {"hard": False, "previous": prev} for i, prev in previous.items()}
            mem.store.audit([{"memory_id": i, "action": AuditAction.FORGET.value, "reason": reason, "actor": actor,
                              "at": at, "user_id": sc.user_id, "details": details[i]} for i in gone])
            mem.derived.catch_up(mem.store)
        mem._emit("forget", {"scope": sc, "ids": gone, "hard": hard})
        return ForgetReport(applied=True, hard=hard, ids=gone, reason=reason, preview=shown)

    def _scope_ids(self, sc: Scope) -> list[str]:
        out: list[str] = []
        after = 0
        while True:
            rows = self._g.governor.queries.scope_page(sc, after, _PAGE)
            out.extend(str(r["id"]) for r in rows)
            if len(rows) < _PAGE:
                return out
            after = int(rows[-1]["nid"])

    def _archive(self, ids: Sequence[str], sc: Scope, at: float, flag: str) -> dict[str, dict[str, Any]]:
        mem = self._g
        found = [r for r in mem.store.get(list(dict.fromkeys(ids)), sc) if r.status.value != "archived"]
        mem.store.set_props([(r.id, {"status": "archived", "archived_at": at,
                                     "flags": list(dict.fromkeys([*r.flags, flag]))}) for r in found], sc)
        return {r.id: {"status": r.status.value, "flags": list(r.flags),
                       "valid_to": as_epoch(r.valid_to)} for r in found}

    def forget_tenant(self, user_id: str, *, reason: str = "right to be forgotten", actor: str = "user",
                      now: datetime | float | None = None) -> ForgetReport:
        """Right to be forgotten: hard-delete every memory, entity and cached vector of a tenant and strip the
        content from its audit trail (the events and ids stay, as the audit must)."""
        mem = self._g
        mem._check_open()
        if not isinstance(user_id, str) or not user_id:
            raise ScopeError("forget_tenant needs a user_id")
        sc = Scope(user_id=user_id)
        purger = self._governance_purger()
        gone: list[str] = []
        texts: set[str] = set()
        with mem._write_lock:
            while True:
                rows = mem.governor.queries.scope_page(sc, 0, _PAGE)
                if not rows:
                    break
                texts.update(str(r["content"]) for r in rows)
                texts.update(purger._earlier_versions([str(r["id"]) for r in rows]))
                gone.extend(mem.store.delete_hard([str(r["id"]) for r in rows], sc))
            mem.governor.queries.delete_tenant_entities(user_id)
            mem.derived.catch_up(mem.store)
            purger.finish(texts, tenant=user_id)
            mem.governor.queries.rewrite_log()
            mem.store.audit([{"memory_id": None, "action": AuditAction.FORGET.value, "reason": reason,
                              "actor": actor, "at": _epoch(now), "user_id": user_id,
                              "details": {"hard": True, "count": len(gone), "tenant": True}}])
        mem._last_turn = {k: v for k, v in mem._last_turn.items() if k[0] != user_id}
        mem._emit("forget", {"scope": sc, "ids": gone, "hard": True})
        return ForgetReport(applied=True, hard=True, ids=gone, reason=reason)

    # ------------------------------------------------------------------ lifecycle
    def run_janitor(self, *, now: datetime | float | None = None, scope: Scope | dict[str, Any] | None = None,
                    user_id: str | None = None, agent_id: str | None = None, session_id: str | None = None,
                    dry_run: bool = False) -> JanitorReport:
        """One janitor pass (TTL expiry, decay, archive, purge). Without a scope it covers every tenant."""
        mem = self._g
        mem._check_open()
        ids = {"user_id": user_id, "agent_id": agent_id, "session_id": session_id}
        sc = Scope() if scope is None and not any(ids.values()) else Scope.coerce(scope, **ids)
        purger = self._governance_purger()
        with mem._write_lock:
            report = run_janitor(mem.store, mem.governor.queries, mem.governor.policy, scope=sc, now=_epoch(now),
                                 purge=lambda i, s: purger.purge(i, s), dry_run=dry_run)
            if not dry_run:
                mem.derived.catch_up(mem.store)
                # plain deletes and edits leave dead BM25 postings and FAISS tombstones behind: sweep them here
                with mem.derived.lock:
                    report.compacted = compact_lexical(mem.derived)
                    if mem.derived.faiss.needs_compaction:
                        mem.derived.faiss.compact()
                        report.compacted += 1
                if report.changed or report.compacted:
                    mem.derived.save()
        return report

    curate = run_janitor

    def start_janitor(self, interval: float = 3600.0, *, scope: Scope | dict[str, Any] | None = None) -> None:
        """Run the janitor every ``interval`` seconds in a daemon thread (stopped by ``stop_janitor``/``close``)."""
        if not isinstance(interval, int | float) or interval <= 0:
            raise InvalidInputError("interval must be a positive number of seconds")
        self.stop_janitor()
        stop = threading.Event()
        mem = self._g

        def loop() -> None:
            while not stop.wait(interval):
                if getattr(mem, "_closed", False):
                    return
                try:
                    mem.run_janitor(scope=scope)
                except Exception:  # noqa: BLE001 - a failed pass must not kill the schedule
                    log.exception("scheduled janitor pass failed")

        thread = threading.Thread(target=loop, name="neusym-janitor", daemon=True)
        self.__dict__["_janitor_thread"] = (thread, stop)
        thread.start()

    def stop_janitor(self, timeout: float = 5.0) -> None:
        running = self.__dict__.pop("_janitor_thread", None)
        if running is not None:
            thread, stop = running
            stop.set()
            if thread is not threading.current_thread():
                thread.join(timeout)

    @property
    def janitor_running(self) -> bool:
        running = self.__dict__.get("_janitor_thread")
        return running is not None and running[0].is_alive()

    # ------------------------------------------------------------------ review
    def review_queue(self, kind: str | None = None, *, scope: Scope | dict[str, Any] | None = None,
                     user_id: str | None = None, agent_id: str | None = None, session_id: str | None = None,
                     limit: int = 100, all_tenants: bool = False) -> list[ReviewItem]:
        """Items waiting for a decision: ``quarantine``, ``conflict``, ``dedup``, ``contradiction``, ``suspicious``."""
        if kind is not None and kind not in ("quarantine", "conflict", "dedup", "contradiction", "suspicious"):
            raise InvalidInputError(f"unknown review kind {kind!r}")
        mem = self._g
        mem._check_open()
        sc = self._gscope(scope, {"user_id": user_id, "agent_id": agent_id, "session_id": session_id}, all_tenants)
        return list_review(mem, sc, kind, limit)

    def _review_target(self, memory_id: str, scope: Scope | dict[str, Any] | None,
                       ids: dict[str, str | None]) -> tuple[MemoryRecord, Scope]:
        sc = self._gscope(scope, ids)
        found = self._g.store.get([memory_id], sc)
        if not found:
            raise RecordNotFoundError(f"no memory {memory_id!r} in scope {sc.as_params()}")
        return found[0], Scope(user_id=found[0].scope.user_id) if found[0].scope.user_id else sc

    def review_approve(self, memory_id: str, *, scope: Scope | dict[str, Any] | None = None,
                       user_id: str | None = None, agent_id: str | None = None, session_id: str | None = None,
                       actor: str = "reviewer", reason: str = "approved") -> MemoryRecord:
        """Accept an item: release from quarantine, make a conflicting value current, confirm a merge, or
        acknowledge that a flagged contradiction is fine."""
        rec, sc = self._review_target(memory_id, scope, {"user_id": user_id, "agent_id": agent_id,
                                                         "session_id": session_id})
        with self._g._write_lock:
            return approve(self._g, rec, sc, actor, reason)

    def review_reject(self, memory_id: str, *, scope: Scope | dict[str, Any] | None = None,
                      user_id: str | None = None, agent_id: str | None = None, session_id: str | None = None,
                      actor: str = "reviewer", reason: str = "rejected") -> MemoryRecord | None:
        """Refuse an item: purge a quarantined one, let the other value of a conflict win, keep a suspected
        duplicate as its own memory, or archive the wrong side of a contradiction."""
        rec, sc = self._review_target(memory_id, scope, {"user_id": user_id, "agent_id": agent_id,
                                                         "session_id": session_id})
        with self._g._write_lock:
            return reject(self._g, rec, sc, actor, reason)

    def review_edit(self, memory_id: str, content: str | None = None, *, approve_after: bool = True,
                    scope: Scope | dict[str, Any] | None = None, user_id: str | None = None,
                    agent_id: str | None = None, session_id: str | None = None, actor: str = "reviewer",
                    reason: str = "edited in review", **fields: Any) -> MemoryRecord:
        """Correct an item (text and/or fields, versioned and audited), then approve it unless told not to."""
        rec, sc = self._review_target(memory_id, scope, {"user_id": user_id, "agent_id": agent_id,
                                                         "session_id": session_id})
        mem = self._g
        with mem._write_lock:
            edited = mem.update(memory_id, content, scope=sc, actor=actor, reason=reason, **fields)
            if approve_after:
                return approve(mem, edited, sc, actor, reason)
            return edited

    def rollback(self, memory_id: str, *, audit_id: str | None = None, scope: Scope | dict[str, Any] | None = None,
                 user_id: str | None = None, agent_id: str | None = None, session_id: str | None = None,
                 actor: str = "user", reason: str = "rollback") -> MemoryRecord:
        """Undo the latest (or the given) reversible change: an edit, a supersession, an archive/soft forget, or
        a conflict mark. The rollback itself is audited and can be rolled back like an edit."""
        rec, sc = self._review_target(memory_id, scope, {"user_id": user_id, "agent_id": agent_id,
                                                         "session_id": session_id})
        with self._g._write_lock:
            return rollback(self._g, rec.id, sc, audit_id, actor, reason)

    # ------------------------------------------------------------------ history
    def fact_history(self, predicate: str, *, subject: str | None = None, scope: Scope | dict[str, Any] | None = None,
                     user_id: str | None = None, agent_id: str | None = None, session_id: str | None = None,
                     limit: int = 100) -> list[MemoryRecord]:
        """Every value an attribute had, oldest first (current and superseded), e.g. ``fact_history("lives_in")``."""
        return self._g.query(scope=scope, user_id=user_id, agent_id=agent_id, session_id=session_id,
                             predicate=predicate, entity=subject, statuses=["active", "pending", "superseded"],
                             order="oldest", limit=limit)

    def facts_at(self, at: datetime | float, *, predicate: str | None = None, subject: str | None = None,
                 scope: Scope | dict[str, Any] | None = None, user_id: str | None = None,
                 agent_id: str | None = None, session_id: str | None = None, limit: int = 50) -> list[MemoryRecord]:
        """What was true at ``at`` ("where did the user live in March?" -> ``facts_at(march, predicate="lives_in")``)."""
        return self._g.query(scope=scope, user_id=user_id, agent_id=agent_id, session_id=session_id,
                             predicate=predicate, entity=subject, valid_at=at, limit=limit)

    def audit_log(self, *, scope: Scope | dict[str, Any] | None = None, user_id: str | None = None,
                  actions: Sequence[str] | None = None, since: datetime | float | None = None, limit: int = 100,
                  all_tenants: bool = False) -> list[dict[str, Any]]:
        """Recent audit entries of a tenant (newest first); ``history(memory_id)`` gives one memory's trail."""
        import json

        sc = self._gscope(scope, {"user_id": user_id}, all_tenants)
        rows = self._g.governor.queries.audit_log(sc.user_id, actions, as_epoch(since), limit)
        for r in rows:
            r["details"] = json.loads(r.pop("details_json") or "{}")
        return rows

    # ------------------------------------------------------------------ async twins
    async def aforget(self, *args: Any, **kwargs: Any) -> ForgetReport:
        return await asyncio.to_thread(self.forget, *args, **kwargs)

    async def aforget_preview(self, *args: Any, **kwargs: Any) -> ForgetPreview:
        return await asyncio.to_thread(self.forget_preview, *args, **kwargs)

    async def arun_janitor(self, **kwargs: Any) -> JanitorReport:
        return await asyncio.to_thread(lambda: self.run_janitor(**kwargs))


_ = forget_cached_texts  # re-exported helper for operators scrubbing a cache by hand
