"""NeuSymMemory: the one object users hold. It folds a call's scope ids into a scope and delegates to the engine
(:mod:`neusym.engine`) or a service (``mem.governance``, ``mem.reflection``, :mod:`neusym.backup`,
:mod:`neusym.importing`). Every tenant-scoped call needs a ``user_id`` (or the ``default_user_id`` the memory was
opened with); the engine checks it, in one place, on every path.

Sync methods are the core (the graph clients are synchronous); each ``a*`` twin runs its sync method in a worker
thread, so async applications never block their event loop on the database or the embedder.
"""

from __future__ import annotations

import asyncio
import atexit
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neusym.config import NeuSymConfig
from neusym.embeddings import Embedder, as_embedder, default_embedder
from neusym.engine import AddResult, Engine, Mutation
from neusym.errors import ScopeError
from neusym.extraction import Extractor, RuleExtractor
from neusym.governance.forgetting import ALL_STATUSES, ForgetPreview, ForgetReport
from neusym.governance.lifecycle import JanitorReport
from neusym.governance.policy import GovernancePolicy
from neusym.governance.review import ReviewItem
from neusym.record import MemoryRecord, MemoryStatus, MemoryType, PlanState, Scope, SearchResult
from neusym.reembed import ReembedReport
from neusym.reflection.api import Reflection
from neusym.reflection.context import BuiltContext, ContextBuilder
from neusym.reflection.rewrite import RewriteResult
from neusym.reflection.tokens import ReflectionBudget
from neusym.reflection.triggers import ReflectionJob, ReflectionPolicy, ReflectionScheduler
from neusym.retrieval.config import RetrievalConfig
from neusym.retrieval.derived import DerivedIndexes
from neusym.retrieval.pipeline import Reranker, StageTimings
from neusym.retrieval.recipes import HYBRID_GRAPH, get_recipe
from neusym.retrieval.rerank import as_reranker
from neusym.services import Governance, ReflectionService
from neusym.services.reflection import UNSET
from neusym.symbolic.executors.base import Executor
from neusym.symbolic.store import SymbolicStore

if TYPE_CHECKING:
    from neusym.backup import ExportReport, RestoreReport
    from neusym.governance import Governor
    from neusym.importing import ImportReport
    from neusym.retrieval.graph_vectors import GraphVectorSearch

__all__ = ["AddResult", "NeuSymMemory"]

ScopeArg = Scope | dict[str, Any] | None


def _item_id(item: str | ReviewItem) -> str:
    """A review call's memory id: the id itself, or a :class:`ReviewItem` from ``review_queue``."""
    return item.memory_id if isinstance(item, ReviewItem) else item


def _sc(scope: ScopeArg, user_id: str | None = None, agent_id: str | None = None,
        session_id: str | None = None) -> Scope:
    """A call's scope ids folded into one scope (explicit ids win); the engine resolves and checks it."""
    return Scope.coerce(scope, user_id=user_id, agent_id=agent_id, session_id=session_id)


class NeuSymMemory:
    """A persistent hybrid memory: FAISS + BM25 for recall, a Cypher graph for truth, governance on every write.

    Args:
        data_dir: where the embedded graph and the derived indexes live (default ``~/.neusym``, or
            ``NEUSYM_DATA_DIR``). Ignored for the graph when ``executor``/Neo4j is used, still used for FAISS.
        config: full :class:`NeuSymConfig` (built from the environment when omitted).
        executor: an already-open graph executor (overrides the backend in ``config``).
        embedder: a NeuSym ``Embedder``, a LangChain ``Embeddings``, a LlamaIndex ``BaseEmbedding`` or a callable;
            default: local all-MiniLM-L6-v2 (offline).
        extractor: an ``Extractor``; default: the LLM-free :class:`RuleExtractor`.
        llm: a LangChain chat model / LlamaIndex LLM used by the LLM-backed steps (extraction when no extractor
            is given, reflection, judges). Every such step has an LLM-free fallback.
        default_user_id: the tenant of calls that name none: a single-user application's explicit opt-in
            (also ``NeuSymConfig.default_user_id`` / ``NEUSYM_DEFAULT_USER_ID``). Without it every tenant-scoped
            call needs ``user_id`` (a scope with only an agent or a session is a :class:`ScopeError`).
        retrieval: a :class:`RetrievalConfig` or recipe name (default ``hybrid_graph``).
        governance: a :class:`GovernancePolicy` (admission, screening, dedup, conflict and lifecycle thresholds).
        reflection: ``True`` or a :class:`ReflectionPolicy` starts background reflection (off by default);
            ``close()`` drains or persists its pending jobs.
        reembed: re-embed every stored memory with ``embedder`` when the store was embedded by another model
            (otherwise refused with :class:`EmbedderMismatchError`) or a re-embed was interrupted; ``True`` or a
            ``progress(done, total)`` callback. See :mod:`neusym.reembed`; the report is ``last_reembed``.

    Attributes:
        engine: the :class:`~neusym.engine.Engine` (stores, write path, scope rule).
        governance: forgetting, janitor, review, rollback, history (:class:`~neusym.services.Governance`).
        reflection: reflection and context building (:class:`~neusym.services.ReflectionService`).
    """

    def __init__(
        self,
        data_dir: str | Path | None = None,
        *,
        config: NeuSymConfig | None = None,
        executor: Executor | None = None,
        embedder: Any = None,
        extractor: Extractor | None = None,
        llm: Any = None,
        default_user_id: str | None = None,
        retrieval: RetrievalConfig | str = HYBRID_GRAPH,
        reranker: Reranker | Any = None,
        reflection: ReflectionPolicy | bool | None = None,
        governance: GovernancePolicy | None = None,
        reembed: bool | Callable[[int, int], None] = False,
    ) -> None:
        cfg = config or NeuSymConfig.from_env(**({"data_dir": Path(data_dir)} if data_dir is not None else {}))
        if config is not None and data_dir is not None:
            cfg = cfg.model_copy(update={"data_dir": Path(data_dir)})
        emb: Embedder = as_embedder(embedder) if embedder is not None else default_embedder()
        if extractor is None and llm is not None:
            from neusym.extraction import LLMExtractor

            extractor = LLMExtractor(llm)
        self.engine = Engine(
            cfg, embedder=emb, extractor=extractor or RuleExtractor(), executor=executor, llm=llm,
            retrieval=get_recipe(retrieval) if isinstance(retrieval, str) else retrieval,
            reranker=as_reranker(reranker), governance=governance, reembed=reembed,
            default_user_id=default_user_id if default_user_id is not None else cfg.default_user_id)
        self.governance = Governance(self.engine)
        self.reflection = ReflectionService(self.engine)
        self._finalizer = weakref.finalize(self, self.engine.close)
        atexit.register(self._finalizer)
        if reflection:  # background reflection (off by default): see neusym.reflection.triggers
            self.reflection.enable_auto(reflection if isinstance(reflection, ReflectionPolicy) else None)

    # ------------------------------------------------------------------ what the engine holds
    @property
    def config(self) -> NeuSymConfig:
        return self.engine.config

    @property
    def default_user_id(self) -> str | None:
        """The tenant of calls that name none (``None``: every call must name its ``user_id``)."""
        return self.engine.default_user_id

    @property
    def default_scope(self) -> Scope:
        """``Scope(user_id=default_user_id)``, or an empty scope (which no tenant-scoped call accepts)."""
        return Scope(user_id=self.engine.default_user_id)

    @property
    def store(self) -> SymbolicStore:
        return self.engine.store

    @property
    def derived(self) -> DerivedIndexes:
        return self.engine.derived

    @property
    def executor(self) -> Executor:
        return self.engine.executor

    @property
    def governor(self) -> Governor:
        return self.engine.governor

    @property
    def dense_search(self) -> GraphVectorSearch | None:
        return self.engine.dense_search

    @property
    def embedder(self) -> Embedder:
        return self.engine.embedder

    @embedder.setter
    def embedder(self, value: Embedder) -> None:
        self.engine.embedder = value

    @property
    def extractor(self) -> Extractor:
        return self.engine.extractor

    @extractor.setter
    def extractor(self, value: Extractor) -> None:
        self.engine.extractor = value

    @property
    def llm(self) -> Any:
        return self.engine.llm

    @property
    def retrieval(self) -> RetrievalConfig:
        return self.engine.retrieval

    @retrieval.setter
    def retrieval(self, value: RetrievalConfig | str) -> None:
        self.engine.retrieval = get_recipe(value) if isinstance(value, str) else value

    @property
    def reranker(self) -> Reranker | None:
        return self.engine.reranker

    @property
    def last_timings(self) -> StageTimings:
        return self.engine.last_timings

    @property
    def embedder_identity(self) -> Any:
        return self.engine.embedder_identity

    @property
    def last_reembed(self) -> ReembedReport | None:
        return self.engine.last_reembed

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Persist the derived indexes and release the graph (stopping an embedded server nobody else uses)."""
        if self.engine.closed:
            return
        self.reflection.shutdown()  # drain or persist pending reflections while the stores are still open
        self.governance.stop_janitor()
        self._finalizer()

    def __enter__(self) -> NeuSymMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> NeuSymMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.close)

    def on_event(self, hook: Callable[[str, dict[str, Any]], None]) -> None:
        """Register a callback for write/search events (reflection triggers, metrics)."""
        self.engine.events.on(hook)

    # ------------------------------------------------------------------ scope
    def scope_for(self, scope: ScopeArg = None, **ids: str | None) -> Scope:
        """Resolve a call's scope as every method does: explicit ids win over ``scope``; a missing ``user_id`` is
        the ``default_user_id``; without one, :class:`ScopeError`."""
        return self.engine.scope(Scope.coerce(scope, **ids))

    @contextmanager
    def atomic(self, scope: ScopeArg = None, **ids: str | None) -> Iterator[Mutation]:
        """Run several calls as ONE mutation: other writers of this process wait, the derived indexes catch up
        once at the end. For read-then-write sequences that must not interleave (e.g. a key-value put)."""
        with self.engine.mutation(self.engine.scope(Scope.coerce(scope, **ids))) as m:
            yield m

    # ------------------------------------------------------------------ write path
    def add(
        self,
        content: str | Sequence[Any],
        *,
        scope: ScopeArg = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        type: MemoryType | str | None = None,  # noqa: A002 - the domain word
        importance: float | None = None,
        confidence: float | None = None,
        origin: str = "user",
        speaker: str | None = None,
        ttl: float | timedelta | None = None,
        valid_from: datetime | float | None = None,
        tags: Sequence[str] | None = None,
        infer: bool = True,
        ref: str | None = None,
    ) -> AddResult:
        """Remember a statement or a list of chat messages.

        With ``infer=True`` (default) the extractor finds entities, S-P-O facts, type, dates and TTL phrases;
        with ``infer=False`` the text is stored verbatim (entities still extracted for graph links). Every
        candidate passes governance; the returned list holds what was stored, ``.decisions`` says why (a system
        message is refused with a reason: it instructs the model, it is not a memory).
        """
        return self.engine.add(content, scope=_sc(scope, user_id, agent_id, session_id), metadata=metadata,
                               type=type, importance=importance, confidence=confidence, origin=origin,
                               speaker=speaker, ttl=ttl, valid_from=valid_from, tags=tags, infer=infer, ref=ref)

    def add_batch(self, items: Sequence[dict[str, Any] | str], *, vectors: Any = None, **common: Any) -> AddResult:
        """Add many statements at once: one embedding batch and one graph statement per ``max_batch`` memories.

        Each item is a string or a dict of :meth:`add` keyword arguments with ``content``; ``common`` applies to
        all. Items with the same scope share one write. Items with a ``speaker`` are conversation turns: linked
        ``NEXT`` in item order, continuing their session's chain (as consecutive :meth:`add` turns are).

        ``vectors`` (shape ``(len(items), dimension)``): embeddings the caller already has (a migration, a
        pipeline that embeds elsewhere); the embedder is not called. Each item is then kept verbatim as one memory
        (``infer=False``; ``infer=True`` is refused because splitting would leave memories without a vector).
        Governance runs as usual; the vectors are validated (dimension, finite, non-zero) before anything is
        written.
        """
        return self.engine.add_batch(items, vectors=vectors, **common)

    def update(self, memory_id: str, content: str | None = None, *, scope: ScopeArg = None,
               user_id: str | None = None, agent_id: str | None = None, session_id: str | None = None,
               actor: str = "user", reason: str = "manual edit", origin: str | None = None,
               **fields: Any) -> MemoryRecord:
        """Edit a memory in place (version +1, audited with the previous values for rollback).

        New text passes the same governance as ``add`` (screened as written by ``origin``, default the memory's
        own: a text ``add`` would quarantine is stored quarantined, withheld from reads until a reviewer approves;
        a TTL it states applies; it may supersede an older value); the decision is in the audit.
        ``fields`` may set: type, importance, confidence, strength, tags, metadata, plan_state, valid_from,
        valid_to, expires_at, status.
        """
        return self.engine.update(memory_id, content, scope=_sc(scope, user_id, agent_id, session_id), actor=actor,
                                  reason=reason, origin=origin, **fields)

    def delete(self, memory_ids: str | Sequence[str], *, scope: ScopeArg = None, user_id: str | None = None,
               agent_id: str | None = None, session_id: str | None = None, actor: str = "user",
               reason: str = "deleted on request") -> int:
        """Hard-delete memories everywhere: graph (node, MENTIONS/RELATES, orphaned entities, fulltext), FAISS,
        BM25, the embedding cache and the content of earlier audit entries. The audit keeps ids and the event.

        Unknown ids and ids outside the scope are ignored (idempotent). Returns how many were deleted. This is
        ``forget(ids, hard=True)``: one purge path, so a delete can never leave traces that a forget would not.
        """
        from neusym.engine.candidates import check_ids

        ids = check_ids(memory_ids)
        sc = self.engine.scope(_sc(scope, user_id, agent_id, session_id), what="delete")
        with self.engine.mutation(sc) as m:
            report = self.governance.forget(ids, scope=sc, hard=True, reason=reason, actor=actor)
            m.emit("delete", {"scope": sc, "ids": list(report.ids)})
        return report.count

    # ------------------------------------------------------------------ read path
    def search(
        self,
        query: str,
        *,
        scope: ScopeArg = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        k: int = 10,
        types: Sequence[MemoryType | str] | None = None,
        tags: Sequence[str] | None = None,
        entities: Sequence[str] | None = None,
        plan_states: Sequence[PlanState | str] | None = None,
        statuses: Sequence[MemoryStatus | str] | None = None,
        valid_at: datetime | float | None = None,
        time_from: datetime | float | None = None,
        time_to: datetime | float | None = None,
        min_score: float | None = None,
        recipe: RetrievalConfig | str | None = None,
        reranker: Reranker | Any = None,
        all_tenants: bool = False,
        touch: bool = True,
        rewrite_query: bool = False,
        now: datetime | float | None = None,
        include_unreviewed: bool = False,
    ) -> list[SearchResult]:
        """Two-stage retrieval. Each result carries ``explanation`` with every score component and graph path.

        Quarantined, archived, superseded and deleted memories are excluded unless ``statuses`` asks for them;
        a point-in-time search (``valid_at``) includes superseded memories, which hold the history. ``now``
        replaces the clock for recency and expiry (simulated time in tests and replays). Memories screening flagged
        ``suspicious`` (a borderline injection risk, listed for review) are withheld until a reviewer approves them,
        unless ``include_unreviewed=True``; ``query()`` and ``review_queue()`` still list them.
        """
        return self.engine.search(
            query, scope=_sc(scope, user_id, agent_id, session_id), k=k, types=types, tags=tags, entities=entities,
            plan_states=plan_states, statuses=statuses, valid_at=valid_at, time_from=time_from, time_to=time_to,
            min_score=min_score, recipe=recipe, reranker=reranker, all_tenants=all_tenants, touch=touch, now=now,
            include_unreviewed=include_unreviewed, rewrite=(lambda q, sc: self.reflection.rewrite_query(q, scope=sc).query) if rewrite_query else None)

    def query(
        self,
        *,
        scope: ScopeArg = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        entity: str | Sequence[str] | None = None,
        predicate: str | None = None,
        object: str | Sequence[str] | None = None,  # noqa: A002 - S-P-O vocabulary
        types: Sequence[MemoryType | str] | None = None,
        tags: Sequence[str] | None = None,
        plan_states: Sequence[PlanState | str] | None = None,
        statuses: Sequence[MemoryStatus | str] | None = None,
        valid_at: datetime | float | None = None,
        time_from: datetime | float | None = None,
        time_to: datetime | float | None = None,
        due_within: timedelta | float | None = None,
        order: str = "recent",
        limit: int = 50,
        offset: int = 0,
        all_tenants: bool = False,
        include_expired: bool = False,
    ) -> list[MemoryRecord]:
        """Symbolic retrieval without any vector step, e.g. open plans involving "Li Si" due in two weeks::

            mem.query(entity="Li Si", types=["plan"], plan_states=["open"], due_within=timedelta(days=14))

        ``limit`` is at most 1000 and ``offset`` at most 100,000 (page deeper sets with an export instead).
        ``include_expired`` also lists memories whose TTL ran out (the janitor has not archived them yet).
        """
        return self.engine.query(
            scope=_sc(scope, user_id, agent_id, session_id), entity=entity, predicate=predicate, object=object,
            types=types, tags=tags, plan_states=plan_states, statuses=statuses, valid_at=valid_at,
            time_from=time_from, time_to=time_to, due_within=due_within, order=order, limit=limit, offset=offset,
            all_tenants=all_tenants, include_expired=include_expired)

    def refresh_expiry(self, expires_at: Mapping[str, datetime | float], *, scope: ScopeArg = None,
                       user_id: str | None = None, agent_id: str | None = None,
                       session_id: str | None = None) -> int:
        """Move the expiry of memories that have a TTL ({id: new expiry}) in one unaudited statement, e.g. a
        read-refreshed TTL; returns how many moved (others of the scope, gone, or without a TTL are skipped)."""
        return self.engine.refresh_expiry(expires_at, scope=_sc(scope, user_id, agent_id, session_id))

    def get(self, memory_id: str, *, scope: ScopeArg = None, user_id: str | None = None,
            agent_id: str | None = None, session_id: str | None = None, all_tenants: bool = False) -> MemoryRecord:
        """One memory by id, only if visible in the scope (raises :class:`RecordNotFoundError` otherwise)."""
        return self.engine.get(memory_id, scope=_sc(scope, user_id, agent_id, session_id), all_tenants=all_tenants)

    def get_many(self, memory_ids: Sequence[str], *, scope: ScopeArg = None, all_tenants: bool = False,
                 **ids: str | None) -> list[MemoryRecord]:
        """The memories among ``memory_ids`` visible in the scope, in the given order (others are left out)."""
        return self.engine.get_many(memory_ids, scope=_sc(scope, **ids), all_tenants=all_tenants)

    def history(self, memory_id: str, *, scope: ScopeArg = None, **ids: str | None) -> list[dict[str, Any]]:
        """The audit trail of one memory, oldest first (on the full scope: another agent's or session's memory
        shows nothing)."""
        return self.governance.history(memory_id, scope=_sc(scope, **ids))

    def cypher(self, statement: str, params: dict[str, Any] | None = None, *, all_tenants: bool = False,
               limit: int = 1000) -> list[dict[str, Any]]:
        """Guarded read-only raw Cypher for operators.

        Raw Cypher can read any tenant's data, so it requires ``all_tenants=True`` as an explicit acknowledgement.
        Write clauses and procedures are refused (:class:`UnsafeQueryError`) and the statement runs read-only.
        """
        return self.engine.cypher(statement, params, all_tenants=all_tenants, limit=limit)

    def stats(self, *, scope: ScopeArg = None, all_tenants: bool = False, **ids: str | None) -> dict[str, Any]:
        """Counts by status and type, entities, and the indexes' state, for a tenant's scope (or every tenant)."""
        return self.engine.stats(scope=_sc(scope, **ids), all_tenants=all_tenants)

    def rebuild_index(self) -> int:
        """Drop the derived indexes and rebuild them from the graph (the source of truth)."""
        return self.engine.rebuild_index()

    def reembed(self, *, batch_size: int = 256, progress: Callable[[int, int], None] | None = None) -> ReembedReport:
        """Re-embed every memory from its stored content with this memory's embedder (see :mod:`neusym.reembed`):
        e.g. to make a store uniform after moving between runtimes of one model. Resumable; nothing is lost.
        Writes from this object wait until it is done; searches go on (on the old vectors until the catch-up)."""
        return self.engine.reembed(batch_size=batch_size, progress=progress)

    # ------------------------------------------------------------------ backup and import (neusym.backup,
    # neusym.importing)
    def _transfer_scope(self, scope: ScopeArg, all_tenants: bool, **ids: str | None) -> Scope | None:
        if all_tenants:
            if not _sc(scope, **ids).is_empty:
                raise ScopeError("pass either a scope or all_tenants=True, not both")
            return None
        return self.engine.scope(_sc(scope, **ids), what="a backup", admin=True)

    def export(self, target: Any, *, scope: ScopeArg = None, user_id: str | None = None,
               agent_id: str | None = None, session_id: str | None = None, all_tenants: bool = False,
               embeddings: bool = True, progress: Callable[[int, int], None] | None = None) -> ExportReport:
        """Back up a scope (or, with ``all_tenants``, everything) to ``target``: a path (written atomically, mode
        0600, ``.gz`` compresses) or a text stream. See :mod:`neusym.backup` for the format and guarantees."""
        from neusym import backup

        self.engine.check_open()
        sc = self._transfer_scope(scope, all_tenants, user_id=user_id, agent_id=agent_id, session_id=session_id)
        return backup.export(self.engine, target, scope=sc, embeddings=embeddings, progress=progress)

    def restore(self, source: Any, *, scope: ScopeArg = None, user_id: str | None = None,
                agent_id: str | None = None, session_id: str | None = None, all_tenants: bool = False,
                skip_existing: bool = False, reembed: bool = False, dry_run: bool = False,
                progress: Callable[[int, int], None] | None = None) -> RestoreReport:
        """Write an export back exactly, into this scope only, all or nothing: every line is validated (and checked
        against the scope) before the first write, and a failure leaves the store as it was. See
        :mod:`neusym.backup`."""
        from neusym import backup

        self.engine.check_open()
        sc = self._transfer_scope(scope, all_tenants, user_id=user_id, agent_id=agent_id, session_id=session_id)
        return backup.restore(self.engine, source, scope=sc, skip_existing=skip_existing, reembed=reembed,
                              dry_run=dry_run, progress=progress)

    def import_file(self, source: Any, *, format: str = "auto",  # noqa: A002 - the CLI's word
                    scope: ScopeArg = None, user_id: str | None = None,
                    agent_id: str | None = None, session_id: str | None = None, all_tenants: bool = False,
                    infer: bool = True, batch: int = 256, assistant: str | None = None,
                    trust_file_origin: bool = False, dry_run: bool = False, max_items: int | None = None,
                    progress: Callable[[int, int], None] | None = None) -> ImportReport:
        """Import JSON Lines, a plain chat log or LoCoMo JSON through the normal write path. The ids given here
        win over the file's; a line's ``origin``/``confidence`` are ignored unless ``trust_file_origin``. See
        :mod:`neusym.importing`."""
        from neusym import importing

        self.engine.check_open()
        given = _sc(scope, user_id, agent_id, session_id)
        if all_tenants and given.user_id is not None:
            raise ScopeError("pass either user_id or all_tenants=True, not both")
        return importing.import_file(self.engine, source, scope=given, all_tenants=all_tenants, fmt=format,
                                     infer=infer, batch=batch, assistant=assistant,
                                     trust_file_origin=trust_file_origin, dry_run=dry_run, max_items=max_items,
                                     progress=progress)

    # ------------------------------------------------------------------ governance (mem.governance)
    @property
    def governance_policy(self) -> GovernancePolicy:
        return self.governance.policy

    def configure_governance(self, policy: GovernancePolicy | None = None, *, llm: Any = None,
                             **changes: Any) -> GovernancePolicy:
        """Replace the policy and/or change fields of it (``mem.configure_governance(conflict_strategy="ask")``);
        ``llm`` sets the model used by the judge and arbiter when the policy enables them."""
        return self.governance.configure(policy, llm=llm, **changes)

    def forget_preview(self, query: str, *, scope: ScopeArg = None, user_id: str | None = None,
                       agent_id: str | None = None, session_id: str | None = None, limit: int | None = None,
                       statuses: Sequence[str] = ALL_STATUSES) -> ForgetPreview:
        """What ``forget(query=...)`` would remove: topic (predicate), entity and semantic matches, every status."""
        return self.governance.forget_preview(query, scope=_sc(scope, user_id, agent_id, session_id), limit=limit,
                                              statuses=statuses)

    def forget(self, ids: str | Sequence[str] | None = None, *, query: str | None = None,
               preview: ForgetPreview | None = None, scope: ScopeArg = None, user_id: str | None = None,
               agent_id: str | None = None, session_id: str | None = None, everything: bool = False,
               hard: bool = False, confirm: bool | None = None, reason: str = "forgotten on request",
               actor: str = "user", now: datetime | float | None = None) -> ForgetReport:
        """Forget memories by id, by meaning (``query``, or a ``preview`` from :meth:`forget_preview`) or a whole
        scope (``everything=True``).

        Soft (default) archives: invisible to default reads, kept for audit, purged by the janitor after the
        retention period. ``hard=True`` purges now from the graph (node, MENTIONS/RELATES, orphaned entities,
        fulltext), FAISS, the BM25 index, the embedding cache and the content of audit entries.
        A ``query`` returns only a preview unless ``confirm=True``: forgetting by meaning should be looked at first.
        """
        return self.governance.forget(ids, query=query, preview=preview,
                                      scope=_sc(scope, user_id, agent_id, session_id), everything=everything,
                                      hard=hard, confirm=confirm, reason=reason, actor=actor, now=now)

    def forget_tenant(self, user_id: str, *, reason: str = "right to be forgotten", actor: str = "user",
                      now: datetime | float | None = None) -> ForgetReport:
        """Right to be forgotten: hard-delete every memory, entity and cached vector of a tenant and strip the
        content from its audit trail (the events and ids stay, as the audit must)."""
        return self.governance.forget_tenant(user_id, reason=reason, actor=actor, now=now)

    def run_janitor(self, *, now: datetime | float | None = None, scope: ScopeArg = None,
                    user_id: str | None = None, agent_id: str | None = None, session_id: str | None = None,
                    all_tenants: bool = False, dry_run: bool = False) -> JanitorReport:
        """One janitor pass (TTL expiry, decay, archive, purge) over a tenant's scope, or over every tenant with
        ``all_tenants=True`` (an operator sweep)."""
        return self.governance.run_janitor(now=now, scope=_sc(scope, user_id, agent_id, session_id),
                                           all_tenants=all_tenants, dry_run=dry_run)

    curate = run_janitor

    def start_janitor(self, interval: float = 3600.0, *, scope: ScopeArg = None, user_id: str | None = None,
                      all_tenants: bool = False) -> None:
        """Run the janitor every ``interval`` seconds in a daemon thread (stopped by ``stop_janitor``/``close``),
        over a tenant or, with ``all_tenants=True``, every tenant."""
        self.governance.start_janitor(interval, scope=_sc(scope, user_id), all_tenants=all_tenants)

    def stop_janitor(self, timeout: float = 5.0) -> None:
        self.governance.stop_janitor(timeout)

    @property
    def janitor_running(self) -> bool:
        return self.governance.janitor_running

    def review_queue(self, kind: str | None = None, *, scope: ScopeArg = None, user_id: str | None = None,
                     agent_id: str | None = None, session_id: str | None = None, limit: int = 100,
                     all_tenants: bool = False) -> list[ReviewItem]:
        """Items waiting for a decision: ``quarantine``, ``conflict``, ``dedup``, ``contradiction``, ``suspicious``."""
        return self.governance.review_queue(kind, scope=_sc(scope, user_id, agent_id, session_id), limit=limit,
                                            all_tenants=all_tenants)

    def review_approve(self, memory_id: str | ReviewItem, *, scope: ScopeArg = None, user_id: str | None = None,
                       agent_id: str | None = None, session_id: str | None = None, actor: str = "reviewer",
                       reason: str = "approved") -> MemoryRecord:
        """Accept an item: release from quarantine, make a conflicting value current, confirm a merge, or
        acknowledge that a flagged contradiction is fine."""
        return self.governance.review_approve(_item_id(memory_id), scope=_sc(scope, user_id, agent_id, session_id),
                                              actor=actor, reason=reason)

    def review_reject(self, memory_id: str | ReviewItem, *, scope: ScopeArg = None, user_id: str | None = None,
                      agent_id: str | None = None, session_id: str | None = None, actor: str = "reviewer",
                      reason: str = "rejected") -> MemoryRecord | None:
        """Refuse an item: purge a quarantined one, let the other value of a conflict win, keep a suspected
        duplicate as its own memory, or archive the wrong side of a contradiction."""
        return self.governance.review_reject(_item_id(memory_id), scope=_sc(scope, user_id, agent_id, session_id),
                                             actor=actor, reason=reason)

    def review_edit(self, memory_id: str | ReviewItem, content: str | None = None, *, approve_after: bool = True,
                    scope: ScopeArg = None, user_id: str | None = None, agent_id: str | None = None,
                    session_id: str | None = None, actor: str = "reviewer", reason: str = "edited in review",
                    **fields: Any) -> MemoryRecord:
        """Correct an item (text and/or fields, versioned and audited), then approve it unless told not to."""
        return self.governance.review_edit(_item_id(memory_id), content, approve_after=approve_after,
                                           scope=_sc(scope, user_id, agent_id, session_id), actor=actor,
                                           reason=reason, **fields)

    def rollback(self, memory_id: str, *, audit_id: str | None = None, scope: ScopeArg = None,
                 user_id: str | None = None, agent_id: str | None = None, session_id: str | None = None,
                 actor: str = "user", reason: str = "rollback") -> MemoryRecord:
        """Undo the latest (or the given) reversible change: an edit, a supersession, an archive/soft forget, or
        a conflict mark. The rollback itself is audited and can be rolled back like an edit. Undoing a
        supersession leaves exactly one current value: the newer memory becomes the history."""
        return self.governance.rollback(memory_id, audit_id=audit_id,
                                        scope=_sc(scope, user_id, agent_id, session_id), actor=actor, reason=reason)

    def fact_history(self, predicate: str, *, subject: str | None = None, scope: ScopeArg = None,
                     user_id: str | None = None, agent_id: str | None = None, session_id: str | None = None,
                     limit: int = 100) -> list[MemoryRecord]:
        """Every value an attribute had, oldest first (current and superseded), e.g. ``fact_history("lives_in")``
        or in words, ``fact_history("where do I live")``. Predicates: ``lives_in``, ``works_at``, ``job_title``,
        ``reports_to``, ``married_to``, ``partner_of``, ``studies_at``, ``phone``, ``email``, ``name``, ``age``,
        ``birthday``, ``diet``, ``favourite_<thing>``, ``has_pet``, ``likes``, ``plays``, ``speaks`` ... (the full
        list: :data:`neusym.extraction.vocabulary.PREDICATES`; the mapping: :mod:`neusym.governance.attributes`)."""
        return self.governance.fact_history(predicate, subject=subject,
                                            scope=_sc(scope, user_id, agent_id, session_id), limit=limit)

    def facts_at(self, at: datetime | float, *, predicate: str | None = None, subject: str | None = None,
                 scope: ScopeArg = None, user_id: str | None = None, agent_id: str | None = None,
                 session_id: str | None = None, limit: int = 50) -> list[MemoryRecord]:
        """What was true at ``at`` ("where did the user live in March?" -> ``facts_at(march, predicate="lives_in")``;
        the attribute may be given in words too: ``predicate="where do I live"``, see :meth:`fact_history`)."""
        return self.governance.facts_at(at, predicate=predicate, subject=subject,
                                        scope=_sc(scope, user_id, agent_id, session_id), limit=limit)

    def audit_log(self, *, scope: ScopeArg = None, user_id: str | None = None, agent_id: str | None = None,
                  session_id: str | None = None, actions: Sequence[str] | None = None,
                  since: datetime | float | None = None, limit: int = 100,
                  all_tenants: bool = False) -> list[dict[str, Any]]:
        """Recent audit entries of a scope (newest first); ``history(memory_id)`` gives one memory's trail."""
        return self.governance.audit_log(scope=_sc(scope, user_id, agent_id, session_id), actions=actions,
                                         since=since, limit=limit, all_tenants=all_tenants)

    # ------------------------------------------------------------------ reflection (mem.reflection)
    @property
    def reflection_budget(self) -> ReflectionBudget:
        return self.reflection.budget

    @reflection_budget.setter
    def reflection_budget(self, value: ReflectionBudget) -> None:
        self.reflection.budget = value

    def reflect(self, *, scope: ScopeArg = None, user_id: str | None = None, agent_id: str | None = None,
                session_id: str | None = None, ids: Sequence[str] | None = None, entity: str | None = None,
                goal: str | None = None, llm: Any = UNSET, extractive: bool = False, fallback: bool = False,
                budget: ReflectionBudget | None = None, quality_question: str | None = None, cool: str = "demote",
                only_unreflected: bool = False, limit: int = 5000) -> Reflection:
        """Consolidate memories into one ``reflection`` memory linked ``DERIVED_FROM`` to every source.

        Sources: ``ids`` (a retrieval result), ``entity`` (its neighbourhood), else everything in the scope (a
        session with ``session_id``), or only memories no reflection covers yet (``only_unreflected``).
        The model is ``llm`` (default: the memory's ``llm``); with none, or ``extractive=True``, the LLM-free
        reflector runs. A model that never returns valid output raises :class:`ReflectionError` with nothing
        changed, unless ``fallback=True`` (then the extractive reflector takes over).
        ``cool``: what happens to observations the reflection fully covers: ``demote`` (strength halved, flagged
        ``reflected``), ``archive`` (status archived: out of default search) or ``none``. ``quality_question``
        runs the quality check: if the reflection lost a key fact for it, the raw memories are kept hot.
        ``limit`` caps how many memories one call reads (oldest first; a warning says when it was reached).
        """
        return self.reflection.reflect(scope=_sc(scope, user_id, agent_id, session_id), ids=ids, entity=entity,
                                       goal=goal, llm=llm, extractive=extractive, fallback=fallback, budget=budget,
                                       quality_question=quality_question, cool=cool,
                                       only_unreflected=only_unreflected, limit=limit)

    def session_end(self, *, session_id: str, user_id: str | None = None, agent_id: str | None = None,
                    scope: ScopeArg = None, goal: str | None = None, wait: bool = False) -> Reflection | None:
        """Mark a session finished. With auto reflection on, a background job is queued (returns None at once);
        otherwise, or with ``wait=True``, the session is reflected now (if the model fails, by the extractive
        reflector: ending a session must not fail on a provider outage). Returns None for an empty session."""
        return self.reflection.session_end(session_id=session_id, scope=_sc(scope, user_id, agent_id), goal=goal,
                                           wait=wait)

    def build_context(self, query: str, *, scope: ScopeArg = None, user_id: str | None = None,
                      agent_id: str | None = None, session_id: str | None = None, budget_tokens: int = 2000,
                      recent_messages: Sequence[Any] | None = None, rewrite: bool = False,
                      builder: ContextBuilder | None = None) -> BuiltContext:
        """Prompt context within ``budget_tokens``: reflections, the most relevant raw memories and the
        short-term window (``recent_messages``), with careful-use marks. ``rewrite`` resolves a vague query
        against ``recent_messages`` first."""
        return self.reflection.build_context(query, scope=_sc(scope, user_id, agent_id, session_id),
                                             budget_tokens=budget_tokens, recent_messages=recent_messages,
                                             rewrite=rewrite, builder=builder)

    def rewrite_query(self, query: str, *, scope: ScopeArg = None, user_id: str | None = None,
                      agent_id: str | None = None, session_id: str | None = None,
                      recent_messages: Sequence[Any] | None = None, llm: Any = UNSET,
                      force: bool = False) -> RewriteResult:
        """Make a vague follow-up self-contained. Without ``recent_messages`` the scope's latest memories stand
        in for the conversation. With a model it rewrites; without one it appends recent entities and topics."""
        return self.reflection.rewrite_query(query, scope=_sc(scope, user_id, agent_id, session_id),
                                             recent_messages=recent_messages, llm=llm, force=force)

    @property
    def reflection_scheduler(self) -> ReflectionScheduler | None:
        return self.reflection.scheduler

    def enable_auto_reflection(self, policy: ReflectionPolicy | None = None, *,
                               clock: Callable[[], float] | None = None, **overrides: Any) -> ReflectionScheduler:
        """Start background reflection (triggers: session end, conflicts in results, every N writes, decay scan).

        ``overrides`` are :class:`ReflectionPolicy` fields. Pending work is persisted next to the derived indexes
        on close and resumed by the next scheduler. ``clock`` (monotonic seconds) is for tests and simulations
        that need to move time without sleeping.
        """
        return self.reflection.enable_auto(policy, clock=clock, **overrides)

    def disable_auto_reflection(self, *, drain: bool | None = None) -> list[ReflectionJob]:
        """Stop the scheduler (draining per policy); returns the jobs persisted instead of run."""
        return self.reflection.disable_auto(drain=drain)

    # ------------------------------------------------------------------ async twins
    async def aadd(self, *args: Any, **kwargs: Any) -> AddResult:
        return await asyncio.to_thread(self.add, *args, **kwargs)

    async def aadd_batch(self, *args: Any, **kwargs: Any) -> AddResult:
        return await asyncio.to_thread(self.add_batch, *args, **kwargs)

    async def asearch(self, *args: Any, **kwargs: Any) -> list[SearchResult]:
        return await asyncio.to_thread(self.search, *args, **kwargs)

    async def aquery(self, **kwargs: Any) -> list[MemoryRecord]:
        return await asyncio.to_thread(lambda: self.query(**kwargs))

    async def aget(self, *args: Any, **kwargs: Any) -> MemoryRecord:
        return await asyncio.to_thread(self.get, *args, **kwargs)

    async def aupdate(self, *args: Any, **kwargs: Any) -> MemoryRecord:
        return await asyncio.to_thread(self.update, *args, **kwargs)

    async def adelete(self, *args: Any, **kwargs: Any) -> int:
        return await asyncio.to_thread(self.delete, *args, **kwargs)

    async def astats(self, **kwargs: Any) -> dict[str, Any]:
        return await asyncio.to_thread(lambda: self.stats(**kwargs))

    async def aforget(self, *args: Any, **kwargs: Any) -> ForgetReport:
        return await asyncio.to_thread(self.forget, *args, **kwargs)

    async def aforget_preview(self, *args: Any, **kwargs: Any) -> ForgetPreview:
        return await asyncio.to_thread(self.forget_preview, *args, **kwargs)

    async def arun_janitor(self, **kwargs: Any) -> JanitorReport:
        return await asyncio.to_thread(lambda: self.run_janitor(**kwargs))

    async def areflect(self, **kwargs: Any) -> Reflection:
        return await asyncio.to_thread(lambda: self.reflect(**kwargs))

    async def asession_end(self, **kwargs: Any) -> Reflection | None:
        return await asyncio.to_thread(lambda: self.session_end(**kwargs))

    async def abuild_context(self, query: str, **kwargs: Any) -> BuiltContext:
        return await asyncio.to_thread(lambda: self.build_context(query, **kwargs))

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)

