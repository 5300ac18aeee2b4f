"""NeuSymMemory: the one object users hold, and AsyncNeuSymMemory, its asyncio face.

The memory verbs (add, add_batch, update, delete, get, get_many, search, query, history, forget, atomic, close)
are methods; everything else goes through three doors, the way graphiti groups its own API: ``mem.governance``
(forgetting, review, rollback, fact history, audit, the janitor), ``mem.reflection`` (reflection, context, query
rewriting) and ``mem.admin`` (stats, raw Cypher, reindex/reembed, export/restore/import, the graph picture, what the
memory runs with). The storage parts (graph store, executor, derived indexes, governor) are private.

Every tenant-scoped call takes one ``scope`` (a :class:`Scope` or a dict) and, as keywords, its ids
(``user_id="ana"``); explicit ids win. A call needs a ``user_id`` (or the ``default_user_id`` the memory was opened
with); the engine checks it, in one place, on every path.

Sync methods are the core (the graph clients are synchronous); ``mem.aio`` (an :class:`AsyncNeuSymMemory`) runs
the same methods in a worker thread, so async applications never block their event loop.

Names of the wider API before this one (``mem.stats()``, ``mem.review_queue()``, ``mem.aadd()``, ``mem.store`` ...)
still resolve for one release, with a :class:`DeprecationWarning`, through the one table :data:`DEPRECATED`.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import warnings
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from neusym.config import NeuSymConfig
from neusym.embeddings import Embedder, as_embedder, default_embedder
from neusym.engine import AddResult, Engine, Mutation
from neusym.extraction import Extractor, RuleExtractor
from neusym.filters import QUERY_FIELDS, QueryKeywords, SearchFilters, SearchKeywords, split_keywords
from neusym.governance.forgetting import ForgetPreview, ForgetReport
from neusym.governance.policy import GovernancePolicy
from neusym.record import SCOPE_KEYS, MemoryRecord, MemoryType, Scope, ScopeIds, SearchResult
from neusym.reflection.triggers import ReflectionPolicy
from neusym.retrieval.config import RetrievalConfig
from neusym.retrieval.pipeline import Reranker
from neusym.retrieval.recipes import HYBRID_GRAPH, get_recipe
from neusym.retrieval.rerank import as_reranker
from neusym.services import Admin, Governance, ReflectionService
from neusym.services.aio import AsyncDoor, AsyncView, threaded
from neusym.symbolic.executors.base import Executor

__all__ = ["DEPRECATED", "AddResult", "AsyncNeuSymMemory", "NeuSymMemory", "SearchFilters"]

ScopeArg = Scope | dict[str, Any] | None

DEPRECATED: dict[str, str] = {
    # the old name on NeuSymMemory -> where it lives now (a leading "_" marks an internal part: no public door)
    "audit_log": "governance.audit_log", "configure_governance": "governance.configure",
    "curate": "governance.run_janitor", "fact_history": "governance.fact_history",
    "facts_at": "governance.facts_at", "forget_preview": "governance.forget_preview",
    "forget_tenant": "governance.forget_tenant", "governance_policy": "governance.policy",
    "janitor_running": "governance.janitor_running", "refresh_expiry": "governance.refresh_expiry",
    "review_approve": "governance.review_approve",
    "review_edit": "governance.review_edit", "review_queue": "governance.review_queue",
    "review_reject": "governance.review_reject", "rollback": "governance.rollback",
    "run_janitor": "governance.run_janitor", "start_janitor": "governance.start_janitor",
    "stop_janitor": "governance.stop_janitor",
    "build_context": "reflection.build_context", "disable_auto_reflection": "reflection.disable_auto",
    "enable_auto_reflection": "reflection.enable_auto", "reflect": "reflection.reflect",
    "reflection_budget": "reflection.budget", "reflection_scheduler": "reflection.scheduler",
    "rewrite_query": "reflection.rewrite_query", "session_end": "reflection.session_end",
    "cypher": "admin.cypher", "default_scope": "admin.default_scope", "default_user_id": "admin.default_user_id",
    "embedder": "admin.embedder", "embedder_identity": "admin.embedder_identity", "export": "admin.export",
    "extractor": "admin.extractor", "import_file": "admin.import_file", "last_reembed": "admin.last_reembed",
    "last_timings": "admin.last_timings", "llm": "admin.llm", "on_event": "admin.on_event",
    "rebuild_index": "admin.reindex", "reembed": "admin.reembed", "reranker": "admin.reranker",
    "restore": "admin.restore", "retrieval": "admin.retrieval", "stats": "admin.stats",
    "aadd": "aio.add", "aadd_batch": "aio.add_batch", "aclose": "aio.close", "adelete": "aio.delete",
    "aforget": "aio.forget", "aget": "aio.get", "aquery": "aio.query", "asearch": "aio.search",
    "aupdate": "aio.update", "abuild_context": "aio.reflection.build_context",
    "areflect": "aio.reflection.reflect", "asession_end": "aio.reflection.session_end",
    "aforget_preview": "aio.governance.forget_preview", "arun_janitor": "aio.governance.run_janitor",
    "astats": "aio.admin.stats",
    "engine": "_engine", "store": "_engine.store", "executor": "_engine.executor", "derived": "_engine.derived",
    "governor": "_engine.governor", "dense_search": "_engine.dense_search",
}
"""Every name the wider API had, and its new path from the memory; served by ``NeuSymMemory.__getattr__`` with a
:class:`DeprecationWarning` for one release (not listed by ``dir()``). README: "Migrating to the smaller API"."""
_SETTABLE = frozenset({"embedder", "extractor", "retrieval", "reflection_budget"})


def _resolve(obj: object, path: str) -> tuple[object, str]:
    """The object holding the last part of a dotted ``path`` from ``obj``, and that part's name."""
    *parents, last = path.split(".")
    for part in parents:
        obj = getattr(obj, part)
    return obj, last


def _warn(old: str) -> None:
    new = DEPRECATED[old]
    hint = (f"mem.{new} is internal: use mem.governance, mem.reflection or mem.admin" if new.startswith("_")
            else f"use mem.{new}")
    warnings.warn(f"NeuSymMemory.{old} is deprecated and goes in the next release; {hint}", DeprecationWarning,
                  stacklevel=3)


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
            ``progress(done, total)`` callback. See :mod:`neusym.reembed`; the report is ``admin.last_reembed``.

    Attributes:
        governance: forgetting, janitor, review, rollback, fact history, audit
            (:class:`~neusym.services.Governance`).
        reflection: reflection, context building, query rewriting (:class:`~neusym.services.ReflectionService`).
        admin: stats, raw Cypher, indexes, backups, imports, the graph picture (:class:`~neusym.services.Admin`).
    """

    governance: Governance
    reflection: ReflectionService
    admin: Admin

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
        self._engine = Engine(
            cfg, embedder=emb, extractor=extractor or RuleExtractor(), executor=executor, llm=llm,
            retrieval=get_recipe(retrieval) if isinstance(retrieval, str) else retrieval,
            reranker=as_reranker(reranker), governance=governance, reembed=reembed,
            default_user_id=default_user_id if default_user_id is not None else cfg.default_user_id)
        self.governance = Governance(self._engine)
        self.reflection = ReflectionService(self._engine)
        self.admin = Admin(self._engine)
        self._finalizer = weakref.finalize(self, self._engine.close)
        atexit.register(self._finalizer)
        if reflection:  # background reflection (off by default): see neusym.reflection.triggers
            self.reflection.enable_auto(reflection if isinstance(reflection, ReflectionPolicy) else None)

    if not TYPE_CHECKING:  # the old names, for one release; hidden from type checkers, so they flag old uses

        def __getattr__(self, name: str) -> Any:
            if name not in DEPRECATED:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            _warn(name)
            holder, last = _resolve(self, DEPRECATED[name])
            return getattr(holder, last)

        def __setattr__(self, name: str, value: Any) -> None:
            if name in _SETTABLE:
                _warn(name)
                holder, last = _resolve(self, DEPRECATED[name])
                setattr(holder, last, value)
            else:
                object.__setattr__(self, name, value)

    # ------------------------------------------------------------------ lifecycle and scope
    @property
    def config(self) -> NeuSymConfig:
        """The configuration the memory was opened with."""
        return self._engine.config

    @functools.cached_property
    def aio(self) -> AsyncNeuSymMemory:
        """This memory for asyncio: ``await mem.aio.add(...)``, ``await mem.aio.governance.review_queue(...)``."""
        return AsyncNeuSymMemory(self)

    def close(self) -> None:
        """Persist the derived indexes and release the graph (stopping an embedded server nobody else uses)."""
        if self._engine.closed:
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

    def scope_for(self, scope: ScopeArg = None, **scope_ids: Unpack[ScopeIds]) -> Scope:
        """Resolve a call's scope as every method does: explicit ids win over ``scope``; a missing ``user_id`` is
        the ``default_user_id``; without one, :class:`ScopeError`."""
        return self._engine.scope(Scope.coerce(scope, **scope_ids))

    @contextmanager
    def atomic(self, scope: ScopeArg = None, **scope_ids: Unpack[ScopeIds]) -> Iterator[Mutation]:
        """Run several calls as ONE mutation: other writers of this process wait, the derived indexes catch up
        once at the end. For read-then-write sequences that must not interleave (e.g. a key-value put)."""
        with self._engine.mutation(self.scope_for(scope, **scope_ids)) as m:
            yield m

    # ------------------------------------------------------------------ write path
    def add(
        self,
        content: str | Sequence[Any],
        *,
        scope: ScopeArg = None,
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
        **scope_ids: Unpack[ScopeIds],
    ) -> AddResult:
        """Remember a statement or a list of chat messages.

        With ``infer=True`` (default) the extractor finds entities, S-P-O facts, type, dates and TTL phrases;
        with ``infer=False`` the text is stored verbatim (entities still extracted for graph links). Every
        candidate passes governance; the returned list holds what was stored, ``.decisions`` says why (a system
        message is refused with a reason: it instructs the model, it is not a memory).
        """
        return self._engine.add(content, scope=Scope.coerce(scope, **scope_ids), metadata=metadata, type=type,
                                importance=importance, confidence=confidence, origin=origin, speaker=speaker,
                                ttl=ttl, valid_from=valid_from, tags=tags, infer=infer, ref=ref)

    def add_batch(self, /, items: Sequence[dict[str, Any] | str], *, vectors: Any = None,
                  **common: Any) -> AddResult:
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
        return self._engine.add_batch(items, vectors=vectors, **common)

    def update(self, /, memory_id: str, content: str | None = None, *, scope: ScopeArg = None, actor: str = "user",
               reason: str = "manual edit", origin: str | None = None, **fields: Any) -> MemoryRecord:
        """Edit a memory in place (version +1, audited with the previous values for rollback).

        New text passes the same governance as ``add`` (screened as written by ``origin``, default the memory's
        own: a text ``add`` would quarantine is stored quarantined, withheld from reads until a reviewer approves;
        a TTL it states applies; it may supersede an older value); the decision is in the audit.
        ``fields`` may set: type, importance, confidence, strength, tags, metadata, plan_state, valid_from,
        valid_to, expires_at, status; and carry the scope ids (``user_id=...``).
        """
        ids = {k: fields.pop(k) for k in SCOPE_KEYS if k in fields}
        return self._engine.update(memory_id, content, scope=Scope.coerce(scope, **ids), actor=actor,
                                   reason=reason, origin=origin, **fields)

    def delete(self, memory_ids: str | Sequence[str], *, scope: ScopeArg = None, actor: str = "user",
               reason: str = "deleted on request", **scope_ids: Unpack[ScopeIds]) -> int:
        """Hard-delete memories everywhere: graph (node, MENTIONS/RELATES, orphaned entities, fulltext), FAISS,
        BM25, the embedding cache and the content of earlier audit entries. The audit keeps ids and the event.

        Unknown ids and ids outside the scope are ignored (idempotent). Returns how many were deleted. This is
        ``forget(ids, hard=True)``: one purge path, so a delete can never leave traces that a forget would not.
        """
        from neusym.engine.candidates import check_ids

        ids = check_ids(memory_ids)
        sc = self._engine.scope(Scope.coerce(scope, **scope_ids), what="delete")
        with self._engine.mutation(sc) as m:
            report = self.governance.forget(ids, scope=sc, hard=True, reason=reason, actor=actor)
            m.emit("delete", {"scope": sc, "ids": list(report.ids)})
        return report.count

    def forget(self, ids: str | Sequence[str] | None = None, *, query: str | None = None,
               preview: ForgetPreview | None = None, scope: ScopeArg = None, everything: bool = False,
               hard: bool = False, confirm: bool | None = None, reason: str = "forgotten on request",
               actor: str = "user", now: datetime | float | None = None,
               **scope_ids: Unpack[ScopeIds]) -> ForgetReport:
        """Forget memories by id, by meaning (``query``, or a preview from ``mem.governance.forget_preview``) or a
        whole scope (``everything=True``): soft (archived, purged after the retention period) or ``hard`` (purged
        now). A ``query`` returns only a preview unless ``confirm=True``. See
        :meth:`Governance.forget <neusym.services.Governance.forget>`."""
        return self.governance.forget(ids, query=query, preview=preview, scope=scope, everything=everything,
                                      hard=hard, confirm=confirm, reason=reason, actor=actor, now=now, **scope_ids)

    # ------------------------------------------------------------------ read path
    def search(
        self,
        query: str,
        *,
        k: int = 10,
        scope: ScopeArg = None,
        filters: SearchFilters | None = None,
        recipe: RetrievalConfig | str | None = None,
        reranker: Reranker | Any = None,
        all_tenants: bool = False,
        touch: bool = True,
        rewrite_query: bool = False,
        now: datetime | float | None = None,
        **keywords: Unpack[SearchKeywords],
    ) -> list[SearchResult]:
        """Two-stage retrieval. Each result carries ``explanation`` with every score component and graph path.

        ``filters`` (:class:`SearchFilters`: types, tags, entities, plan states, statuses, point in time, window,
        min score, unreviewed) may also be given field by field as keywords (``types=["plan"]``), like the scope
        ids. Quarantined, archived, superseded and deleted memories are excluded unless ``statuses`` asks for them;
        a point-in-time search (``valid_at``) includes superseded memories, which hold the history. Memories
        screening flagged ``suspicious`` are withheld until a reviewer approves them, unless
        ``include_unreviewed``. ``now`` replaces the clock for recency and expiry (simulated time);
        ``rewrite_query`` first resolves a vague follow-up from the scope's recent memories.
        """
        ids, chosen = split_keywords("search", keywords, filters)
        rewrite = (lambda q, sc: self.reflection.rewrite_query(q, scope=sc).query) if rewrite_query else None
        return self._engine.search(query, scope=Scope.coerce(scope, **ids), k=k, **chosen.as_kwargs(),
                                   recipe=recipe, reranker=reranker, all_tenants=all_tenants, touch=touch,
                                   now=now, rewrite=rewrite)

    def query(
        self,
        *,
        scope: ScopeArg = None,
        entity: str | Sequence[str] | None = None,
        predicate: str | None = None,
        object: str | Sequence[str] | None = None,  # noqa: A002 - S-P-O vocabulary
        filters: SearchFilters | None = None,
        due_within: timedelta | float | None = None,
        order: str = "recent",
        limit: int = 50,
        offset: int = 0,
        all_tenants: bool = False,
        include_expired: bool = False,
        **keywords: Unpack[QueryKeywords],
    ) -> list[MemoryRecord]:
        """Symbolic retrieval without any vector step, e.g. open plans involving "Li Si" due in two weeks::

            mem.query(entity="Li Si", types=["plan"], plan_states=["open"], due_within=timedelta(days=14))

        The filter fields (``filters`` or keywords) are :class:`SearchFilters`' but the score ones. ``limit`` is at
        most 1000 and ``offset`` at most 100,000 (page deeper sets with an export instead). ``include_expired``
        also lists memories whose TTL ran out (the janitor has not archived them yet).
        """
        ids, chosen = split_keywords("query", keywords, filters, QUERY_FIELDS)
        given = chosen.as_kwargs()
        names = given.pop("entities")
        for unused in ("min_score", "include_unreviewed"):
            given.pop(unused)
        return self._engine.query(scope=Scope.coerce(scope, **ids), entity=entity if entity is not None else names,
                                  predicate=predicate, object=object, due_within=due_within, order=order,
                                  limit=limit, offset=offset, all_tenants=all_tenants,
                                  include_expired=include_expired, **given)

    def get(self, memory_id: str, *, scope: ScopeArg = None, all_tenants: bool = False,
            **scope_ids: Unpack[ScopeIds]) -> MemoryRecord:
        """One memory by id, only if visible in the scope (raises :class:`RecordNotFoundError` otherwise)."""
        return self._engine.get(memory_id, scope=Scope.coerce(scope, **scope_ids), all_tenants=all_tenants)

    def get_many(self, memory_ids: Sequence[str], *, scope: ScopeArg = None, all_tenants: bool = False,
                 **scope_ids: Unpack[ScopeIds]) -> list[MemoryRecord]:
        """The memories among ``memory_ids`` visible in the scope, in the given order (others are left out)."""
        return self._engine.get_many(memory_ids, scope=Scope.coerce(scope, **scope_ids), all_tenants=all_tenants)

    def history(self, memory_id: str, *, scope: ScopeArg = None,
                **scope_ids: Unpack[ScopeIds]) -> list[dict[str, Any]]:
        """The audit trail of one memory, oldest first (on the full scope: another agent's or session's memory
        shows nothing)."""
        return self.governance.history(memory_id, scope=scope, **scope_ids)


class AsyncNeuSymMemory(AsyncView[NeuSymMemory]):
    """A :class:`NeuSymMemory` for asyncio: the same verbs and doors (``governance``, ``reflection``, ``admin``),
    each call run in a worker thread with the sync method's signature. ``mem.aio`` is this for an open memory;
    ``await AsyncNeuSymMemory.open(...)`` opens one (the constructor's arguments are NeuSymMemory's)::

        async with await AsyncNeuSymMemory.open(default_user_id="ana") as amem:
            await amem.add("I moved to Lisbon")
            hits = await amem.search("where do I live?")
    """

    governance: AsyncDoor[Governance]
    reflection: AsyncDoor[ReflectionService]
    admin: AsyncDoor[Admin]

    add = threaded(NeuSymMemory.add)
    add_batch = threaded(NeuSymMemory.add_batch)
    update = threaded(NeuSymMemory.update)
    delete = threaded(NeuSymMemory.delete)
    forget = threaded(NeuSymMemory.forget)
    search = threaded(NeuSymMemory.search)
    query = threaded(NeuSymMemory.query)
    get = threaded(NeuSymMemory.get)
    get_many = threaded(NeuSymMemory.get_many)
    history = threaded(NeuSymMemory.history)
    close = threaded(NeuSymMemory.close)

    def __init__(self, memory: NeuSymMemory) -> None:
        super().__init__(memory)
        self.governance = AsyncDoor(memory.governance)
        self.reflection = AsyncDoor(memory.reflection)
        self.admin = AsyncDoor(memory.admin)

    @classmethod
    async def open(cls, *args: Any, **kwargs: Any) -> AsyncNeuSymMemory:
        """Open a :class:`NeuSymMemory` (in a thread: opening loads the model and the indexes) and wrap it."""
        return cls(await asyncio.to_thread(NeuSymMemory, *args, **kwargs))

    @property
    def sync(self) -> NeuSymMemory:
        """The memory these calls run on (for the sync-only parts: ``atomic``, ``scope_for``, ``config``)."""
        return self._target

    async def __aenter__(self) -> AsyncNeuSymMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
