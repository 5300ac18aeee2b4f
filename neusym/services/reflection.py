"""The reflection service (slow path) and context building, on the Engine: ``mem.reflection``.

Reflections are written through the engine's write path (embedding, governance admission, graph node, derived
indexes, ``add`` event), typed ``reflection`` with origin ``reflection``, linked to every source with
``DERIVED_FROM`` in the same statement; the sources' re-weighting and the audit entry follow in the same mutation.
A reflection is scoped to its sources' common scope and never spans tenants: mixed sources raise
:class:`~neusym.errors.ScopeError` before anything is written.
"""

from __future__ import annotations

import atexit
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from neusym.engine import Engine
from neusym.errors import InvalidInputError, RecordNotFoundError, ScopeError
from neusym.record import MemoryRecord, MemoryStatus, MemoryType, Scope, Source, utcnow, validate_text
from neusym.reflection.api import Reflection, common_scope
from neusym.reflection.context import BuiltContext, ContextBuilder
from neusym.reflection.extractive import ExtractiveReflector
from neusym.reflection.quality import QualityReport, check_quality
from neusym.reflection.reflector import LLMReflector, ReflectionDraft, ReflectionError, reflect_records
from neusym.reflection.rewrite import QueryRewriter, RewriteResult
from neusym.reflection.sources import inherited, usable_sources
from neusym.reflection.tokens import ReflectionBudget, get_token_counter
from neusym.reflection.triggers import ReflectionJob, ReflectionPolicy, ReflectionScheduler

__all__ = ["ReflectionService", "UNSET"]

log = logging.getLogger(__name__)

UNSET: Any = object()
"""``llm=UNSET``: use the memory's own model."""
_COOL_FLAG = "reflected"
_PAGE = 1000
_RECENT = 6
ScopeArg = Scope | Mapping[str, Any] | None


class ReflectionService:
    """See the module docstring."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.budget = ReflectionBudget()
        self._scheduler: ReflectionScheduler | None = None

    # ------------------------------------------------------------------ sources
    def _sources(self, sc: Scope, *, ids: Sequence[str] | None, entity: str | None, only_unreflected: bool,
                 limit: int) -> list[MemoryRecord]:
        store = self.engine.store
        if ids is not None:
            wanted = list(dict.fromkeys(ids))
            found = store.get(wanted, sc)
            if len(found) != len(wanted):
                raise RecordNotFoundError(f"{len(wanted) - len(found)} of the ids are not visible in scope "
                                          f"{sc.as_params()}")
            return usable_sources(found)  # what prompts withhold never reaches a reflection
        uids = None
        if entity is not None:
            from neusym.extraction import entity_key
            from neusym.symbolic.convert import entity_namespace, entity_uid

            uids = [entity_uid(entity_namespace(sc), entity_key(entity))]
        out: list[MemoryRecord] = []
        offset = 0
        while offset < limit:
            page = store.scope_memories(sc, unreflected=only_unreflected, entity_uids=uids,
                                        statuses=(MemoryStatus.ACTIVE.value,),
                                        limit=min(_PAGE, limit - offset), offset=offset)
            offset += len(page)
            out.extend(usable_sources(page))  # what prompts withhold never reaches a reflection
            if len(page) < _PAGE or offset >= limit:
                break
        if offset >= limit:
            log.warning("reflecting the oldest %d memories of %s only (limit); the rest stay unreflected and are "
                        "picked up by only_unreflected=True / the background triggers", limit, sc.as_params())
        return out

    # ------------------------------------------------------------------ reflect
    def reflect(self, *, scope: ScopeArg = None, ids: Sequence[str] | None = None, entity: str | None = None,
                goal: str | None = None, llm: Any = UNSET, extractive: bool = False, fallback: bool = False,
                budget: ReflectionBudget | None = None, quality_question: str | None = None, cool: str = "demote",
                only_unreflected: bool = False, limit: int = 5000) -> Reflection:
        """See :meth:`neusym.NeuSymMemory.reflect`."""
        self.engine.check_open()
        if cool not in ("demote", "archive", "none"):
            raise InvalidInputError("cool must be one of demote, archive, none")
        sc = self.engine.scope(scope, what="reflect")
        sources = self._sources(sc, ids=ids, entity=entity, only_unreflected=only_unreflected, limit=limit)
        if not sources:
            raise InvalidInputError(f"nothing to reflect in scope {sc.as_params()}")
        return self._reflect_sources(sc, sources, goal=goal, llm=llm, extractive=extractive, fallback=fallback,
                                     budget=budget, quality_question=quality_question, cool=cool)

    def _reflect_sources(self, sc: Scope, sources: list[MemoryRecord], *, goal: str | None, llm: Any,
                         extractive: bool, fallback: bool, budget: ReflectionBudget | None,
                         quality_question: str | None, cool: str) -> Reflection:
        target = common_scope(sc, sources)
        sources = sorted(sources, key=lambda r: ((r.valid_from or r.created_at).timestamp(), r.seq))
        model = self.engine.llm if llm is UNSET else llm
        budget = budget or self.budget
        counter = get_token_counter()
        reflector: Any = ExtractiveReflector() if extractive or model is None else LLMReflector(model)
        try:
            draft = reflect_records(sources, reflector, goal=goal, budget=budget, counter=counter)
        except ReflectionError:
            if not fallback:
                raise
            log.warning("LLM reflection failed for %s; using the extractive reflector", target.as_params())
            draft = reflect_records(sources, ExtractiveReflector(), goal=goal, budget=budget, counter=counter)
            draft.method = "extractive-fallback"
        quality = None
        if quality_question:
            quality = check_quality(draft.summary, sources, quality_question, llm=model, counter=counter,
                                    input_tokens=budget.input_tokens)
        return self._store(draft, sources, target, cool=cool, quality=quality)

    def _store(self, draft: ReflectionDraft, sources: Sequence[MemoryRecord], target: Scope, *,
               cool: str, quality: QualityReport | None) -> Reflection:
        e = self.engine
        if any(s.scope.user_id != target.user_id for s in sources):  # belt and braces: never mix tenants
            raise ScopeError("a reflection never mixes tenants")
        target = e.scope(target, what="a reflection")
        low = draft.summary.casefold()
        entities = list(dict.fromkeys(x for s in sources for x in s.entities if x.casefold() in low))
        restricted = inherited(sources)  # never easier to trust, never longer-lived than its sources
        meta = {"reflection": draft.metadata()}
        if quality is not None:
            meta["reflection"]["quality"] = {"question": quality.question, "lost_key_fact": quality.lost_key_fact,
                                             "missing": quality.missing[:10], "method": quality.method}
        record = MemoryRecord(
            content=draft.summary, type=MemoryType.REFLECTION, entities=entities,
            tags=list(dict.fromkeys(["reflection", *draft.tags])), scope=target,
            source=Source(origin="reflection", session_id=target.session_id), created_at=utcnow(),
            importance=draft.importance, confidence=restricted.confidence, flags=restricted.flags,
            expires_at=restricted.expires_at, metadata=meta,
        )
        cited, covered = set(draft.cited_ids), set(draft.covered_ids)
        links = [{"src": record.id, "dst": s.id, "props": {"cited": s.id in cited or s.id in covered,
                                                           "covered": s.id in covered, "at": time.time(),
                                                           "method": draft.method}} for s in sources]
        with e.mutation(target) as m:
            res = e.write([record], target, derived_from=links)  # node + links: one atomic write
            decision = res.decisions[0] if res.decisions else None
            stored: MemoryRecord | None = res[0] if len(res) else None
            if stored is None and decision is not None and decision.target_id:
                found = e.store.get([decision.target_id], target)  # identical reflection exists: reuse it
                stored = found[0] if found else None
            if stored is None:
                log.warning("reflection for %s was not stored: %s", target.as_params(),
                            decision.reason if decision is not None else "no decision")
                return Reflection(None, draft, target, decision, quality)
            reinforced, cooled = self._reweight(stored, draft, sources, target, cool=cool, quality=quality)
            m.audit([{"memory_id": stored.id, "action": "reflect", "actor": "reflection",
                      "reason": f"{draft.method} reflection of {len(sources)} memories", **target.as_params(),
                      "details": {"sources": len(sources), "reinforced": len(reinforced), "cooled": cooled[:200],
                                  "cool": cool, "prompt_version": draft.prompt_version}}])
            m.emit("reflect", {"scope": target, "record": stored, "source_ids": list(draft.source_ids)})
        return Reflection(stored, draft, target, decision, quality, reinforced, cooled)

    def _reweight(self, stored: MemoryRecord, draft: ReflectionDraft, sources: Sequence[MemoryRecord],
                  target: Scope, *, cool: str, quality: QualityReport | None) -> tuple[list[str], list[str]]:
        store = self.engine.store
        cited, covered = set(draft.cited_ids), set(draft.covered_ids)
        hot = set(quality.hot_ids) if quality is not None and quality.lost_key_fact else set()
        now = time.time()
        for group, props in (([s.id for s in sources if s.id in covered], {"cited": True, "covered": True}),
                             ([s.id for s in sources if s.id in cited and s.id not in covered],
                              {"cited": True, "covered": False}),
                             ([s.id for s in sources if s.id not in cited and s.id not in covered],
                              {"cited": False, "covered": False})):
            linked = store.link("DERIVED_FROM", [(stored.id, i) for i in group],
                                {**props, "at": now, "method": draft.method})
            if linked != len(group):
                raise ScopeError(f"linked {linked} of {len(group)} sources (a source outside the tenant?)")
        cool_ids = [] if cool == "none" else [
            s.id for s in sources
            if s.id in covered and s.type is MemoryType.OBSERVATION and s.id not in hot and s.id != stored.id]
        reinforce = [s.id for s in sources if (s.id in cited or s.id in hot) and s.id not in cool_ids]
        changes: list[dict[str, Any]] = [{"id": i, "add": 0.25, "unflag": _COOL_FLAG} for i in reinforce]
        if cool == "demote":
            changes += [{"id": i, "factor": 0.5, "flag": _COOL_FLAG} for i in cool_ids]
        store.reweight(changes, target)
        if cool == "archive" and cool_ids:
            store.set_props([(i, {"status": MemoryStatus.ARCHIVED.value}) for i in cool_ids], target)
        return reinforce, cool_ids

    # ------------------------------------------------------------------ session end
    def session_end(self, *, session_id: str, scope: ScopeArg = None, goal: str | None = None,
                    wait: bool = False) -> Reflection | None:
        """See :meth:`neusym.NeuSymMemory.session_end`."""
        self.engine.check_open()
        if not isinstance(session_id, str) or not session_id:
            raise InvalidInputError("session_end needs a session_id")
        sc = self.engine.scope(scope, session_id=session_id, what="session_end")
        sched = self._scheduler
        if sched is not None and sched.running and sched.policy.on_session_end and not wait:
            sched.submit("session_end", sc, goal=goal)
            return None
        sources = self._sources(sc, ids=None, entity=None, only_unreflected=False, limit=5000)
        if not sources:
            return None
        return self._reflect_sources(sc, sources, goal=goal, llm=UNSET, extractive=False, fallback=True,
                                     budget=None, quality_question=None, cool="demote")

    # ------------------------------------------------------------------ context
    def build_context(self, query: str, *, scope: ScopeArg = None, budget_tokens: int = 2000,
                      recent_messages: Sequence[Any] | None = None, rewrite: bool = False,
                      builder: ContextBuilder | None = None) -> BuiltContext:
        """See :meth:`neusym.NeuSymMemory.build_context`."""
        self.engine.check_open()
        query = validate_text(query, field="query")
        sc = self.engine.scope(scope, what="build_context")
        if rewrite:
            query = self.rewrite_query(query, scope=sc, recent_messages=recent_messages).query
        return (builder or ContextBuilder()).build(self.engine, query, sc, budget_tokens, recent_messages)

    # ------------------------------------------------------------------ query rewriting
    def rewrite_query(self, query: str, *, scope: ScopeArg = None, recent_messages: Sequence[Any] | None = None,
                      llm: Any = UNSET, force: bool = False) -> RewriteResult:
        """See :meth:`neusym.NeuSymMemory.rewrite_query`."""
        recent: Sequence[Any] | None = recent_messages
        speakers: set[str] = set()
        if recent is None:
            sc = self.engine.scope(scope, what="rewrite_query")
            latest = list(reversed(self.engine.store.scope_memories(sc, newest_first=True, limit=_RECENT)))
            recent = [r.content for r in latest]
            speakers = {r.source.speaker for r in latest if r.source.speaker}
        rewriter = QueryRewriter(self.engine.llm if llm is UNSET else llm, extractor=self.engine.extractor,
                                 only_vague=not force, ignore=sorted(speakers))
        return rewriter.rewrite(query, recent)

    # ------------------------------------------------------------------ background reflection
    @property
    def scheduler(self) -> ReflectionScheduler | None:
        return self._scheduler

    def enable_auto(self, policy: ReflectionPolicy | None = None, *, clock: Callable[[], float] | None = None,
                    **overrides: Any) -> ReflectionScheduler:
        """See :meth:`neusym.NeuSymMemory.enable_auto_reflection`."""
        self.engine.check_open()
        if self._scheduler is not None and self._scheduler.running:
            return self._scheduler  # already on: call disable_auto() first to change it
        try:
            pol = ReflectionPolicy.model_validate({**(policy or ReflectionPolicy()).model_dump(), **overrides})
        except ValueError as err:
            raise InvalidInputError(f"invalid reflection policy: {err}") from err
        if pol.pending_path is None:
            pol = pol.model_copy(update={"pending_path": self.engine.config.index_dir / "reflection-pending.json"})
        sched = ReflectionScheduler(self._run_job, pol, scanner=self._decay_scan,
                                    **({"clock": clock} if clock is not None else {})).start()
        self._scheduler = sched
        self.engine.events.on(sched.on_event)
        atexit.register(sched.close, drain=False, timeout=5.0)  # an unclosed memory still persists its jobs
        return sched

    def disable_auto(self, *, drain: bool | None = None) -> list[ReflectionJob]:
        """Stop the scheduler (draining per policy); returns the jobs persisted instead of run."""
        sched = self._scheduler
        if sched is None:
            return []
        self._scheduler = None
        atexit.unregister(sched.close)
        self.engine.events.off(sched.on_event)
        return sched.close(drain=drain)

    def shutdown(self) -> None:
        """Called by ``close()`` before the stores close: drains or persists pending reflection work."""
        try:
            self.disable_auto()
        except Exception:  # noqa: BLE001 - closing must go on; the jobs were persisted or logged
            log.exception("stopping background reflection failed")

    def _run_job(self, job: ReflectionJob) -> Reflection | None:
        sc = job.scope
        if sc.user_id is None:  # a scope from before the tenant rule: nobody may reflect across tenants
            log.warning("skipping a %s reflection job without a tenant", job.kind)
            return None
        if job.kind == "conflict" and job.ids:
            sources = usable_sources(self.engine.store.get(job.ids, sc))
        else:
            sources = self._sources(sc, ids=None, entity=None, only_unreflected=job.kind in ("every_n", "decay"),
                                    limit=5000)
        if not sources:
            return None
        return self._reflect_sources(sc, sources, goal=job.goal, llm=UNSET, extractive=job.fallback,
                                     fallback=False, budget=None, quality_question=None, cool="demote")

    def _decay_scan(self) -> list[ReflectionJob]:
        sched = self._scheduler
        if sched is None:
            return []
        pol = sched.policy
        rows = self.engine.store.unreflected_scopes(before=time.time() - pol.decay_min_age_s,
                                                    min_count=pol.decay_min_count)
        return [ReflectionJob(kind="decay", scope=sc) for sc, _n in rows if sc.user_id is not None]
