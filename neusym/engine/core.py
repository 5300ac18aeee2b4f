"""The Engine: the stores (graph, derived indexes), the embedder, extractor and governor, the write lock and the
events. It owns every write (through :meth:`Engine.mutation`) and the one place a call's scope is resolved
(:meth:`Engine.scope`). Services (governance, reflection, backup, import) are built on it; ``NeuSymMemory`` is
the facade over them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from neusym.config import NeuSymConfig
from neusym.embeddings import Embedder
from neusym.embeddings.tables import table_embedder
from neusym.engine import candidates as cand
from neusym.engine.mutation import Events, Mutation, MutationPath
from neusym.engine.scope import resolve_scope
from neusym.errors import ClosedError, EmbeddingError, InvalidInputError, RecordNotFoundError, ScopeError
from neusym.extraction import Extractor
from neusym.governance import Decision, Governor
from neusym.governance.decisions import Action
from neusym.governance.policy import GovernancePolicy
from neusym.ingest import Turn
from neusym.record import (
    Flag,
    MemoryRecord,
    MemoryStatus,
    MemoryType,
    PlanState,
    Scope,
    SearchResult,
    Source,
    as_epoch,
    utcnow,
    validate_id,
    validate_text,
)
from neusym.reembed import ReembedReport, ensure_embedder, reembed_store
from neusym.retrieval.config import RetrievalConfig
from neusym.retrieval.derived import DerivedIndexes, check_graph_not_behind
from neusym.retrieval.graph_vectors import GraphVectorSearch
from neusym.retrieval.pipeline import Reranker, StageTimings, run_search
from neusym.retrieval.recipes import get_recipe
from neusym.retrieval.rerank import as_reranker
from neusym.symbolic.convert import props_to_record, record_to_props
from neusym.symbolic.executors.base import Executor
from neusym.symbolic.rescoring import symbolic_query_statement
from neusym.symbolic.store import SymbolicStore

__all__ = ["AddResult", "Engine", "open_executor"]

log = logging.getLogger(__name__)

_UPDATABLE = frozenset({"type", "importance", "confidence", "strength", "tags", "metadata", "plan_state",
                        "valid_from", "valid_to", "expires_at", "status", "entities", "triples", "flags", "plan_due"})
_CLEARABLE = ("valid_to", "expires_at", "plan_state", "plan_due", "valid_from")
# what governance may change on an edit besides what the caller passed (kept in the audit for rollback)
_GOVERNED = ("status", "flags", "entities", "triples", "metadata", "expires_at", "valid_to")
_ORDERS = ("recent", "oldest", "due", "importance")
# screening's borderline injections wait for a reviewer: default search withholds them (issue 17 section 5)
_UNREVIEWED_FLAGS = (Flag.SUSPICIOUS.value,)


class AddResult(list[MemoryRecord]):
    """The memories an ``add`` stored (a list), plus every governance decision in ``decisions``."""

    decisions: list[Decision]

    def __init__(self, records: Sequence[MemoryRecord], decisions: Sequence[Decision]) -> None:
        super().__init__(records)
        self.decisions = list(decisions)


def open_executor(cfg: NeuSymConfig) -> Executor:
    if cfg.backend == "neo4j":
        from neusym.symbolic.executors.neo4j import Neo4jExecutor

        return Neo4jExecutor(url=cfg.neo4j_url, username=cfg.neo4j_username, password=cfg.neo4j_password,
                             database=cfg.neo4j_database, timeout=cfg.graph_timeout)
    from neusym.symbolic.executors.falkordb import FalkorDBExecutor

    if cfg.backend == "falkordb":
        return FalkorDBExecutor(cfg.graph_name, host=cfg.falkordb_host or "localhost", port=cfg.falkordb_port,
                                password=cfg.falkordb_password, timeout=cfg.graph_timeout)
    return FalkorDBExecutor(cfg.graph_name, data_dir=cfg.data_dir.expanduser(), appendfsync=cfg.appendfsync,
                            timeout=cfg.graph_timeout, stall_timeout=cfg.graph_stall_timeout,
                            idle_grace=cfg.embedded_idle_grace)


class Engine:
    """See the module docstring. Opened by ``NeuSymMemory``; :meth:`close` closes the executor too (a given one
    is left open only when opening fails)."""

    def __init__(
        self,
        cfg: NeuSymConfig,
        *,
        embedder: Embedder,
        extractor: Extractor,
        executor: Executor | None = None,
        llm: Any = None,
        retrieval: RetrievalConfig,
        reranker: Reranker | None = None,
        governance: GovernancePolicy | None = None,
        reembed: bool | Callable[[int, int], None] = False,
        default_user_id: str | None = None,
    ) -> None:
        self.config = cfg
        self.default_user_id = (Scope.coerce(None, user_id=default_user_id).user_id if default_user_id is not None
                                else None)
        self.embedder = embedder
        self.extractor = extractor
        self.llm = llm
        self.retrieval = retrieval
        self.reranker = reranker
        self.events = Events()
        self.last_timings = StageTimings()
        self._closed = False
        self._own_executor = executor is None
        self.executor = executor or open_executor(cfg)
        self.store = SymbolicStore(self.executor)
        # neural_backend="neo4j_vector": the dense channel asks the graph's native vector index instead of FAISS.
        # Every other process on that graph joins in writing Memory.embedding_vec once the index exists.
        in_graph = cfg.neural_backend == "neo4j_vector"
        try:
            # before anything writes to the graph: a graph behind its saved indexes lost acknowledged writes
            check_graph_not_behind(self.store, cfg.index_dir)
            self.store.setup()
            self.embedder_identity, self.last_reembed = ensure_embedder(
                self.store, embedder, reembed=reembed, holders=getattr(self.executor, "other_holders", None))
            self.store.enable_vectors(embedder.dimension, create=in_graph)
        except BaseException:
            if self._own_executor:  # do not leak the connection (or an embedded server) on a failed open
                self.executor.close()
            raise
        self.dense_search: GraphVectorSearch | None = GraphVectorSearch(self.store) if in_graph else None
        self.derived = DerivedIndexes(embedder.dimension, cfg.index_dir, model=embedder.name,
                                      faiss_kind=cfg.faiss_kind, graph_vectors=self.dense_search)
        self._path = MutationPath(self.store, self.derived, self.events, save_every=cfg.save_every)
        try:
            loaded = self.derived.load()
            applied = self.sync()
        except BaseException:
            if self._own_executor:
                self.executor.close()
            raise
        log.info("opened NeuSym (%s, index %s, caught up %d)", self.executor.dialect.value,
                 "loaded" if loaded else "rebuilt", applied)
        if applied:
            self.derived.save()
        self.governor = Governor(self.store, self.derived, policy=governance, llm=llm, embed=embedder.embed_documents,
                                 facts=self._facts, embed_model=self.embedder_identity.model,
                                 embed_table=table_embedder(embedder, what="the attribute-slot descriptions"))

    # ------------------------------------------------------------------ lifecycle
    @property
    def closed(self) -> bool:
        return self._closed

    def check_open(self) -> None:
        if self._closed:
            raise ClosedError("this NeuSymMemory is closed")

    def close(self) -> None:
        """Persist the derived indexes and release the graph (when the engine opened it)."""
        if self._closed:
            return
        self._closed = True
        try:
            # a background HNSW build is abandoned, not awaited (closing must not take minutes on a large store);
            # the flat index is saved as it is and the next open starts the build again
            self.derived.faiss.cancel_upgrade()
            self.derived.faiss.wait_upgrade(30.0)
            if self.derived.dirty:
                self.derived.save()
        finally:
            self.executor.close()

    # ------------------------------------------------------------------ the scope rule, the mutation path
    def scope(self, scope: Scope | Mapping[str, Any] | None = None, *, all_tenants: bool = False,
              what: str = "this call", admin: bool = False, **ids: str | None) -> Scope:
        """THE place a call's scope is resolved and checked (see :mod:`neusym.engine.scope`)."""
        return resolve_scope(scope, default_user_id=self.default_user_id, all_tenants=all_tenants, what=what,
                             admin=admin, **ids)

    def mutation(self, scope: Scope | None = None, *, in_process: bool = False,
                 persist: bool = False) -> AbstractContextManager[Mutation]:
        """The one write path (see :mod:`neusym.engine.mutation`)."""
        self.check_open()
        return self._path.mutation(scope, in_process=in_process, persist=persist)

    def sync(self) -> int:
        """Catch the derived indexes up with the graph (other processes' writes, or this one's)."""
        return self._path.sync()

    # ------------------------------------------------------------------ write path
    def add(self, content: Any, *, scope: Scope | Mapping[str, Any] | None = None,
            metadata: dict[str, Any] | None = None, type: MemoryType | str | None = None,  # noqa: A002
            importance: float | None = None, confidence: float | None = None, origin: str = "user",
            speaker: str | None = None, ttl: float | timedelta | None = None,
            valid_from: datetime | float | None = None, tags: Sequence[str] | None = None, infer: bool = True,
            ref: str | None = None) -> AddResult:
        self.check_open()
        sc = self.scope(scope, what="add")
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidInputError(f"metadata must be a dict, got {metadata.__class__.__name__}")
        message = not isinstance(content, str | bytes)
        turns = cand.turns_of(content, origin, speaker)
        ttl_s = cand.ttl_seconds(ttl)
        now = utcnow()
        candidates: list[MemoryRecord] = []
        refused: list[Decision] = []
        chain: list[int] = []  # candidate indexes that are conversation turns, in order
        with cand.field_errors("invalid memory"):
            mtype = MemoryType(type) if type is not None else None
            for turn in turns:
                turn_origin = cand.origin_of(turn, origin, message=message)
                if turn_origin is None:
                    refused.append(self._refused(turn, sc, now, cand.SYSTEM_REASON))
                    continue
                chat = cand.small_talk_of(turn) if message and self.governor.policy.small_talk == "skip" else None
                if chat is not None:  # "hi", "ok thanks": nothing to remember in a conversation's small talk
                    refused.append(self._refused(turn, sc, now, f"not memorable: small talk ({chat.kind})"))
                    continue
                who = turn.speaker or speaker or ("assistant" if turn.role == "assistant" else None)
                for ext in cand.extract(self.extractor, turn.content, who, now, infer):
                    candidates.append(cand.record_from(
                        ext, sc, now=now, mtype=mtype, metadata=metadata, importance=importance,
                        confidence=confidence, origin=turn_origin, ttl=ttl_s, valid_from=valid_from, tags=tags,
                        turn=turn, ref=ref))
                    if len(turns) > 1 or turn.speaker:
                        chain.append(len(candidates) - 1)
        return self.write(candidates, sc, chain=chain, refused=refused)

    @staticmethod
    def _refused(turn: Turn, sc: Scope, now: datetime, reason: str) -> Decision:
        rec = MemoryRecord(content=turn.content, scope=sc, created_at=now, valid_from=now,
                           source=Source(origin=turn.role, session_id=sc.session_id, turn=turn.index,
                                         speaker=turn.speaker))
        return Decision(action=Action.REJECT, reason=reason, record=rec, details={"role": turn.role})

    def add_batch(self, items: Sequence[dict[str, Any] | str], *, vectors: Any = None,
                  **common: Any) -> AddResult:
        self.check_open()
        if not isinstance(items, Sequence) or isinstance(items, str):
            raise InvalidInputError("add_batch takes a list of strings or dicts")
        given = None
        if vectors is not None:
            if common.get("infer"):
                raise InvalidInputError("precomputed vectors need infer=False: one vector per item, verbatim")
            given = cand.check_vectors(vectors, len(items), self.embedder.dimension)
        groups: dict[Scope, list[MemoryRecord]] = {}
        turns: set[str] = set()  # items with a speaker are conversation turns: chained per scope in item order
        row_of: dict[str, int] = {}  # record id -> item index (its row in ``vectors``)
        now = utcnow()
        for i, item in enumerate(items):
            kw = dict(common)
            if isinstance(item, dict):
                kw.update(item)
            elif isinstance(item, str):
                kw["content"] = item
            else:
                raise InvalidInputError(f"item {i} must be a str or a dict, got {type(item).__name__}")
            text = validate_text(kw.pop("content", None), field=f"item {i} content")
            ids = {k: kw.pop(k, None) for k in ("user_id", "agent_id", "session_id")}
            sc = self.scope(kw.pop("scope", None), what=f"add_batch item {i}", **ids)
            speaker = kw.pop("speaker", None)
            with cand.field_errors(f"item {i}"):
                infer = bool(kw.pop("infer", given is None))
                if given is not None and infer:
                    raise InvalidInputError("precomputed vectors need infer=False: one vector per item, verbatim")
                exts = cand.extract(self.extractor, text, speaker, now, infer)
                mtype = kw.pop("type", None)
                ttl_s = cand.ttl_seconds(kw.pop("ttl", None), f"item {i}: ttl")
                turn = Turn(role="user", content=text, speaker=speaker, index=int(kw.pop("turn", 0) or 0))
                for ext in exts:
                    rec = cand.record_from(
                        ext, sc, now=now, mtype=MemoryType(mtype) if mtype else None,
                        metadata=kw.pop("metadata", None) if "metadata" in kw else common.get("metadata"),
                        importance=kw.get("importance"), confidence=kw.get("confidence"),
                        origin=kw.get("origin", "user"), ttl=ttl_s, valid_from=kw.get("valid_from"),
                        tags=kw.get("tags"), turn=turn, ref=kw.get("ref"))
                    groups.setdefault(sc, []).append(rec)
                    row_of[rec.id] = i
                    if speaker is not None:
                        turns.add(rec.id)
        records: list[MemoryRecord] = []
        decisions: list[Decision] = []
        for sc, recs in groups.items():
            for start in range(0, len(recs), self.config.max_batch):
                chunk = recs[start : start + self.config.max_batch]
                res = self.write(chunk, sc, chain=[j for j, r in enumerate(chunk) if r.id in turns], vectors=None if given is None else
                                 given[[row_of[r.id] for r in chunk]])
                records.extend(res)
                decisions.extend(res.decisions)
        return AddResult(records, decisions)

    def write(self, candidates: list[MemoryRecord], sc: Scope, *, chain: Sequence[int] = (),
              derived_from: Sequence[dict[str, Any]] = (), vectors: np.ndarray | None = None,
              refused: Sequence[Decision] = ()) -> AddResult:
        """Governance, then ONE create statement (memories, entities, facts, chain, supersessions, audits), then
        the plan's side effects. ``refused``: decisions already taken without governance (audited alike)."""
        sc = self.scope(sc, what="a write")
        if candidates and vectors is None:
            vectors = self._embed([c.content for c in candidates])
        with self.mutation(sc, in_process=True) as m:
            decisions = self.governor.admit(candidates, vectors, sc) if vectors is not None else []
            to_create = [d.record for d in decisions if d.stored]
            vec_of = {candidates[i].id: vectors[i] for i in range(len(candidates))} if vectors is not None else {}
            made = [r for r in to_create if r.id not in vec_of]  # planned by governance (corrected successors)
            if made:
                vec_of.update(zip([r.id for r in made], self._embed([r.content for r in made]), strict=True))
                derived_from = [*derived_from, *self.governor.planned_derivations(decisions)]
            stored = {r.id for r in to_create}
            turns = [candidates[i].id for i in chain if candidates[i].id in stored]  # chained in the graph
            now = time.time()
            sets = self.governor.planned_supersessions(decisions, now=now)
            created = self.store.create(
                to_create, np.vstack([vec_of[r.id] for r in to_create]) if to_create
                else np.zeros((0, self.embedder.dimension), np.float32),
                chain=turns, chain_scope=sc, supersede=[s.create_set(now) for s in sets], derived_from=derived_from,
                audits=self.governor.decision_audits([*decisions, *refused], sc, now=now)
                + [s.audit(now) for s in sets])
            by_id = {r.id: r for r in created}
            for d in decisions:
                if d.record.id in by_id:
                    d.record = by_id[d.record.id]
            m.applied([{"nid": r.nid, "id": r.id, "seq": r.seq, "content": r.content, "status": r.status.value,
                        **r.scope.as_params(), "embedding": vec_of[r.id], "speaker": r.source.speaker}
                       for r in created],
                      [r.seq for r in created])
            if self.governor.after_write(decisions, sc, now=now) or sets:
                m.changed()
            m.emit("add", {"scope": sc, "records": created, "decisions": [*decisions, *refused]})
        return AddResult(created, [*decisions, *refused])

    def _facts(self, text: str) -> tuple[list[str], list[Any]]:
        """The extractor's entities and triples of one text kept verbatim (a memory governance writes itself)."""
        ext = cand.extract(self.extractor, text, None, utcnow(), False)[0]
        return list(ext.entities), list(ext.triples)

    def _embed(self, texts: list[str]) -> np.ndarray:
        """The embedder's vectors, checked: a model that returns NaN, zeros or overflowing values is a typed error
        here, not a confusing one from the index later."""
        vecs = np.asarray(self.embedder.embed_documents(texts), dtype=np.float32)
        if vecs.shape != (len(texts), self.embedder.dimension) or not np.isfinite(vecs).all():
            raise EmbeddingError(f"the embedder {self.embedder.name!r} returned {vecs.shape} vectors with NaN or "
                                 f"infinite values (expected finite ({len(texts)}, {self.embedder.dimension}))")
        try:
            return cand.check_norms(vecs, f"the vectors of embedder {self.embedder.name!r}")
        except InvalidInputError as err:
            raise EmbeddingError(str(err)) from err

    def update(self, memory_id: str, content: str | None = None, *, scope: Scope | Mapping[str, Any] | None = None,
               actor: str = "user", reason: str = "manual edit", origin: str | None = None,
               **fields: Any) -> MemoryRecord:
        """Edit a memory in place (version +1, audited with the previous values for rollback).

        New text passes the governance every write passes (:meth:`Governor.admit` with ``edit=True``): it is
        screened as written by ``origin`` (default: the memory's own origin; the adapters pass ``agent``), so a
        text that an ``add`` would quarantine is stored quarantined (kept for review, withheld from every read,
        its graph facts stripped; the previous text stays in the edit's audit entry for ``rollback``); a
        borderline one is flagged ``suspicious``; a TTL it states sets ``expires_at``; and it is checked against
        the tenant's other memories (it may supersede an older value, or wait for review as a conflict). The
        decision is audited with the edit. An edit never releases a memory from quarantine or review.
        """
        return self._edit(memory_id, content, scope=scope, actor=actor, reason=reason, origin=origin,
                          governed=True, fields=fields)

    def reviewed_update(self, memory_id: str, content: str | None = None, *,
                        scope: Scope | Mapping[str, Any] | None = None, actor: str = "reviewer",
                        reason: str = "review", **fields: Any) -> MemoryRecord:
        """An edit a reviewer decided (approving a quarantined memory) or a rollback restoring a previous version:
        applied as given, without the write-path governance that :meth:`update` runs (which would quarantine the
        text the reviewer just released). Only the review and rollback services call it; no adapter does."""
        return self._edit(memory_id, content, scope=scope, actor=actor, reason=reason, origin=None,
                          governed=False, fields=fields)

    def _edit(self, memory_id: str, content: str | None, *, scope: Scope | Mapping[str, Any] | None, actor: str,
              reason: str, origin: str | None, governed: bool, fields: dict[str, Any]) -> MemoryRecord:
        self.check_open()
        sc = self.scope(scope, what="update")
        unknown = set(fields) - _UPDATABLE
        if unknown:
            raise InvalidInputError(f"cannot update {sorted(unknown)}; updatable: {sorted(_UPDATABLE)}")
        if content is not None:
            content = validate_text(content, field="content")
        if origin is not None and (not isinstance(origin, str) or not origin.strip()):
            raise InvalidInputError("origin must be a non-empty string")
        with self.mutation(sc) as m:
            before = self.get(memory_id, scope=sc)  # read inside the lock: the audit records the exact prior state
            after = cand.edited(before, content, fields, self.extractor, utcnow())
            vec = self._embed([after.content])[0] if content is not None else None
            decision: Decision | None = None
            # new text is governed; the same text again (a store put of an unchanged value) was governed already
            if governed and vec is not None and content != before.content:
                # screened and checked as written by the editor; the stored provenance stays the memory's own
                proposed = after.model_copy(update={"source": after.source.model_copy(
                    update={"origin": origin or before.source.origin})})
                decision = self.governor.admit([proposed], vec[None, :], before.scope, edit=True)[0]
                after = decision.record.model_copy(update={"source": after.source})
            props = record_to_props(after)
            for k in ("id", "created_at", "version"):
                props.pop(k, None)
            for k in _CLEARABLE:
                if getattr(after, k) is None and getattr(before, k) is not None:
                    props[k] = None
            relinks = content is not None or "entities" in fields or "triples" in fields
            keys = list(dict.fromkeys([*(["content"] if content is not None else []), *fields,
                                       *(k for k in _GOVERNED if getattr(after, k) != getattr(before, k))]))
            changed = {k: _jsonable(getattr(before, k)) for k in keys}
            details: dict[str, Any] = {"before": changed, "version": before.version + 1}
            audits: list[dict[str, Any]] = [{"memory_id": memory_id, "action": "edit", "reason": reason,
                                             "actor": actor, **before.scope.as_params(), "details": details}]
            now = time.time()
            if decision is not None:
                details.update(decision=decision.action.value, governance=decision.reason)
                if decision.action is not Action.STORE or after.status is not before.status \
                        or set(after.flags) != set(before.flags):  # a quarantine, a flag, a hold: its own entry
                    audits += self.governor.decision_audits([decision], before.scope, now=now)
            # the edit, its audit entries and whatever the caller audited in this mutation (a review): one statement
            updated = self.store.update(memory_id, sc, props, embedding=vec, relations=after if relinks else None,
                                        audits=[*audits, *m.take_audits()])
            if updated is None:
                raise RecordNotFoundError(f"no memory {memory_id!r} in scope {sc.as_params()}")
            if decision is not None:  # the rest of the plan: older values it replaces, conflict marks and links
                sets = self.governor.planned_supersessions([decision], now=now)
                if sets and before.scope.user_id:
                    self.governor.supersede(sets, before.scope.user_id, now)
                    updated = self.get(memory_id, scope=sc)
                self.governor.after_write([decision], before.scope, now=now)
            m.emit("update", {"scope": sc, "record": updated, "decision": decision})
        return updated

    # ------------------------------------------------------------------ read path
    def get(self, memory_id: str, *, scope: Scope | Mapping[str, Any] | None = None,
            all_tenants: bool = False) -> MemoryRecord:
        self.check_open()
        if not isinstance(memory_id, str) or not memory_id:
            raise InvalidInputError("memory_id must be a non-empty string")
        validate_id(memory_id)
        sc = self.scope(scope, all_tenants=all_tenants, what="get", admin=True)
        found = self.store.get([memory_id], sc)
        if not found:
            raise RecordNotFoundError(f"no memory {memory_id!r} in scope {sc.as_params()}")
        return found[0]

    def get_many(self, memory_ids: Sequence[str], *, scope: Scope | Mapping[str, Any] | None = None,
                 all_tenants: bool = False) -> list[MemoryRecord]:
        self.check_open()
        sc = self.scope(scope, all_tenants=all_tenants, what="get_many", admin=True)
        wanted = cand.check_ids(memory_ids)
        return self.store.get(wanted, sc)

    def search(self, query: str, *, scope: Scope | Mapping[str, Any] | None = None, k: int = 10,
               types: Sequence[MemoryType | str] | None = None, tags: Sequence[str] | None = None,
               entities: Sequence[str] | None = None, plan_states: Sequence[PlanState | str] | None = None,
               statuses: Sequence[MemoryStatus | str] | None = None, valid_at: datetime | float | None = None,
               time_from: datetime | float | None = None, time_to: datetime | float | None = None,
               min_score: float | None = None, recipe: RetrievalConfig | str | None = None,
               reranker: Reranker | Any = None, all_tenants: bool = False, touch: bool = True,
               rewrite: Callable[[str, Scope], str] | None = None,
               now: datetime | float | None = None, include_unreviewed: bool = False) -> list[SearchResult]:
        self.check_open()
        query = validate_text(query, field="query")
        k = cand.check_k(k)
        sc = self.scope(scope, all_tenants=all_tenants, what="search", admin=True)
        cfg = get_recipe(recipe) if isinstance(recipe, str) else (recipe or self.retrieval)
        if min_score is not None:
            cfg = cfg.with_(min_score=cand.finite(min_score, "min_score"))
        if k == 0:
            return []
        filters = cand.search_filters(sc, types=types, tags=tags, entities=entities, plan_states=plan_states,
                                      statuses=statuses, valid_at=valid_at, time_from=time_from, time_to=time_to,
                                      exclude_flags=None if include_unreviewed else _UNREVIEWED_FLAGS)
        timings = StageTimings()
        if rewrite is not None:  # resolve a vague follow-up from the scope's recent memories (reflection/rewrite.py)
            query = rewrite(query, sc)
            timings.extra["rewritten_query"] = query
        t0 = time.perf_counter()
        if cfg.catch_up_on_search:
            self.sync()
        qvec = self.embedder.embed_query(query) if cfg.dense else None
        timings.embed_ms = (time.perf_counter() - t0) * 1000
        results = run_search(self.store, self.derived, query=query, qvec=qvec, scope=sc, k=k, filters=filters,
                             cfg=cfg, reranker=as_reranker(reranker) or self.reranker, timings=timings,
                             now=as_epoch(now), dense=self.dense_search)
        self.last_timings = timings
        if touch and results:
            self.store.touch([r.memory.nid for r in results])
        self.events.emit("search", {"scope": sc, "query": query, "results": results})
        return results

    def query(self, *, scope: Scope | Mapping[str, Any] | None = None, entity: str | Sequence[str] | None = None,
              predicate: str | None = None, object: str | Sequence[str] | None = None,  # noqa: A002
              types: Sequence[MemoryType | str] | None = None, tags: Sequence[str] | None = None,
              plan_states: Sequence[PlanState | str] | None = None,
              statuses: Sequence[MemoryStatus | str] | None = None, valid_at: datetime | float | None = None,
              time_from: datetime | float | None = None, time_to: datetime | float | None = None,
              due_within: timedelta | float | None = None, order: str = "recent", limit: int = 50,
              offset: int = 0, all_tenants: bool = False, include_expired: bool = False) -> list[MemoryRecord]:
        self.check_open()
        sc = self.scope(scope, all_tenants=all_tenants, what="query", admin=True)
        limit, offset = cand.check_k(limit, "limit"), cand.check_offset(offset)
        if order not in _ORDERS:
            raise InvalidInputError(f"order must be one of {', '.join(_ORDERS)}")
        now = time.time()
        due_to = None
        if due_within is not None:
            due_to = now + cand.finite(due_within.total_seconds() if isinstance(due_within, timedelta)
                                       else due_within, "due_within")
        filters = cand.search_filters(
            sc, types=types, tags=tags, entities=[entity] if isinstance(entity, str) else entity,
            plan_states=plan_states, statuses=statuses, valid_at=valid_at, time_from=time_from, time_to=time_to,
            predicate=predicate, objects=[object] if isinstance(object, str) else object,
            due_from=now if due_within is not None else None, due_to=due_to, include_expired=include_expired,
        )
        rows = self.executor.run(symbolic_query_statement(order),
                                 {**sc.as_params(), **filters.params(), "now": now, "limit": limit,
                                  "offset": offset}, write=False)
        return [props_to_record(r) for r in rows]

    def refresh_expiry(self, expires_at: Mapping[str, datetime | float], *,
                       scope: Scope | Mapping[str, Any] | None = None) -> int:
        """Push the expiry of memories that have one to the given times, in one unaudited statement: what a
        read-refreshed TTL costs (the LangGraph store's ``refresh_on_read``). Memories outside the scope, gone, or
        without an expiry are left alone. Returns how many moved."""
        self.check_open()
        sc = self.scope(scope, what="refresh_expiry")
        rows: dict[str, float] = {}
        for mid, when in expires_at.items():
            at = as_epoch(when)
            if at is None:
                raise InvalidInputError("refresh_expiry takes {memory id: datetime or epoch seconds}")
            rows[validate_id(mid)] = cand.finite(at, "expires_at")
        return self.store.set_expiry(rows, sc)

    # ------------------------------------------------------------------ admin
    def stats(self, *, scope: Scope | Mapping[str, Any] | None = None, all_tenants: bool = False) -> dict[str, Any]:
        self.check_open()
        if all_tenants and scope is not None and not Scope.coerce(dict(scope) if isinstance(scope, Mapping)
                                                                  else scope).is_empty:
            raise ScopeError("pass either a scope or all_tenants=True, not both")
        sc = Scope() if all_tenants else self.scope(scope, what="stats", admin=True)
        out = self.store.stats(sc)
        out.update({"backend": self.executor.dialect.value, "indexed_vectors": len(self.derived.faiss),
                    "watermark": self.derived.watermark, "embedder": self.embedder.name,
                    "neural_backend": self.config.neural_backend})
        return out

    def cypher(self, statement: str, params: dict[str, Any] | None = None, *, all_tenants: bool = False,
               limit: int = 1000) -> list[dict[str, Any]]:
        self.check_open()
        if all_tenants is not True:
            raise ScopeError("raw Cypher is not tenant-scoped; pass all_tenants=True to acknowledge")
        return self.store.read_only(statement, params, limit=limit)

    def rebuild_index(self) -> int:
        """Drop the derived indexes and rebuild them from the graph (the source of truth)."""
        with self.mutation(None, in_process=True, persist=True):
            return self.derived.rebuild(self.store)

    def reembed(self, *, batch_size: int = 256, progress: Callable[[int, int], None] | None = None) -> ReembedReport:
        with self.mutation(None, persist=True):
            report = reembed_store(self.store, self.embedder, batch_size=batch_size, progress=progress,
                                   holders=getattr(self.executor, "other_holders", None))
            self.embedder_identity, self.last_reembed = report.target, report
        return report


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if hasattr(value, "value"):
        return value.value
    return value

