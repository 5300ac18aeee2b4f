"""NeuSymMemory: the one object users hold. It validates, delegates and keeps the stores in step.

Sync methods are the core (the graph clients are synchronous); each ``a*`` twin runs its sync method in a worker
thread, so async applications never block their event loop on the database or the embedder.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import math
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import numpy as np

from neusym.config import NeuSymConfig
from neusym.embeddings import Embedder, as_embedder, default_embedder
from neusym.errors import (
    ClosedError,
    DimensionMismatchError,
    InvalidInputError,
    NeuSymError,
    RecordNotFoundError,
    ScopeError,
)
from neusym.extraction import Extraction, Extractor, RuleExtractor
from neusym.governance import Decision, Governor
from neusym.governance.api import GovernanceAPI
from neusym.governance.policy import GovernancePolicy
from neusym.ingest import Turn, normalize_messages
from neusym.record import (
    MemoryRecord,
    MemoryStatus,
    MemoryType,
    PlanState,
    Scope,
    SearchResult,
    Source,
    Triple,
    as_epoch,
    content_hash,
    utcnow,
    validate_text,
)
from neusym.reembed import ReembedReport, ensure_embedder, reembed_store
from neusym.reflection.api import ReflectionAPI
from neusym.reflection.triggers import ReflectionPolicy
from neusym.retrieval.config import RetrievalConfig
from neusym.retrieval.derived import DerivedIndexes
from neusym.retrieval.graph_vectors import GraphVectorSearch
from neusym.retrieval.pipeline import Reranker, StageTimings, run_search
from neusym.retrieval.recipes import HYBRID_GRAPH, get_recipe
from neusym.retrieval.rerank import as_reranker
from neusym.symbolic.convert import entity_namespace, entity_uid
from neusym.symbolic.executors.base import Executor
from neusym.symbolic.rescoring import SymbolicFilters, symbolic_query_statement
from neusym.symbolic.store import SymbolicStore

if TYPE_CHECKING:
    from neusym.backup import ExportReport, RestoreReport
    from neusym.importing import ImportReport

__all__ = ["AddResult", "NeuSymMemory"]

log = logging.getLogger(__name__)
P = ParamSpec("P")
T = TypeVar("T")

_DEFAULT_SCOPE = Scope(user_id="default")
_MAX_K = 1000


class AddResult(list[MemoryRecord]):
    """The memories an ``add`` stored (a list), plus every governance decision in ``decisions``."""

    decisions: list[Decision]

    def __init__(self, records: Sequence[MemoryRecord], decisions: Sequence[Decision]) -> None:
        super().__init__(records)
        self.decisions = list(decisions)


def _open_executor(cfg: NeuSymConfig) -> Executor:
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


@contextmanager
def _field_errors(what: str) -> Iterator[None]:
    """Field values the record model refuses (wrong type, out of range, NaN, a date beyond the calendar) are the
    caller's mistake: an :class:`InvalidInputError`, never a raw pydantic/``ValueError``/``OverflowError``."""
    try:
        yield
    except NeuSymError:
        raise
    except (ValueError, TypeError, OverflowError) as err:
        raise InvalidInputError(f"{what}: {err}") from err


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, int):
        raise InvalidInputError(f"k must be an int, got {type(k).__name__}")
    if k < 0 or k > _MAX_K:
        raise InvalidInputError(f"k must be between 0 and {_MAX_K}, got {k}")
    return k


class NeuSymMemory(GovernanceAPI, ReflectionAPI):
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
        scope: the default scope for calls that pass none (default ``user_id="default"``).
        retrieval: a :class:`RetrievalConfig` or recipe name (default ``hybrid_graph``).
        governance: a :class:`GovernancePolicy` (admission, screening, dedup, conflict and lifecycle thresholds).
        reflection: ``True`` or a :class:`ReflectionPolicy` starts background reflection (off by default);
            ``close()`` drains or persists its pending jobs.
        reembed: re-embed every stored memory with ``embedder`` when the store was embedded by another model
            (otherwise refused with :class:`EmbedderMismatchError`) or a re-embed was interrupted; ``True`` or a
            ``progress(done, total)`` callback. See :mod:`neusym.reembed`; the report is ``last_reembed``.
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
        scope: Scope | dict[str, Any] | None = None,
        retrieval: RetrievalConfig | str = HYBRID_GRAPH,
        reranker: Reranker | Any = None,
        reflection: ReflectionPolicy | bool | None = None,
        governance: GovernancePolicy | None = None,
        reembed: bool | Callable[[int, int], None] = False,
    ) -> None:
        cfg = config or NeuSymConfig.from_env(**({"data_dir": Path(data_dir)} if data_dir is not None else {}))
        if config is not None and data_dir is not None:
            cfg = cfg.model_copy(update={"data_dir": Path(data_dir)})
        self.config = cfg
        self.default_scope = Scope.coerce(scope) if scope is not None else _DEFAULT_SCOPE
        self.retrieval = get_recipe(retrieval) if isinstance(retrieval, str) else retrieval
        self.reranker = as_reranker(reranker)
        self.llm = llm
        self.embedder: Embedder = as_embedder(embedder) if embedder is not None else default_embedder()
        if extractor is None and llm is not None:
            from neusym.extraction import LLMExtractor

            extractor = LLMExtractor(llm)
        self.extractor: Extractor = extractor or RuleExtractor()
        self._closed = False
        self._write_lock = threading.RLock()
        self._last_turn: dict[tuple[str | None, str | None, str | None], str] = {}
        self._hooks: list[Callable[[str, dict[str, Any]], None]] = []
        self.last_timings = StageTimings()

        self.executor = executor or _open_executor(cfg)
        self.store = SymbolicStore(self.executor)
        # neural_backend="neo4j_vector": the dense channel asks the graph's native vector index instead of FAISS.
        # Every other process on that graph joins in writing Memory.embedding_vec once the index exists.
        in_graph = cfg.neural_backend == "neo4j_vector"
        try:
            self.store.setup()
            self.embedder_identity, self.last_reembed = ensure_embedder(self.store, self.embedder, reembed=reembed)
            self.store.enable_vectors(self.embedder.dimension, create=in_graph)
        except BaseException:
            if executor is None:  # ours: do not leak the connection (or an embedded server) on a failed open
                self.executor.close()
            raise
        self.dense_search: GraphVectorSearch | None = GraphVectorSearch(self.store) if in_graph else None
        self.derived = DerivedIndexes(self.embedder.dimension, cfg.index_dir, model=self.embedder.name,
                                      faiss_kind=cfg.faiss_kind, graph_vectors=self.dense_search)
        loaded = self.derived.load()
        applied = self.derived.catch_up(self.store)
        log.info("opened NeuSym (%s, index %s, caught up %d)", self.executor.dialect.value,
                 "loaded" if loaded else "rebuilt", applied)
        if applied:
            self.derived.save()
        self.governor = Governor(self.store, self.derived, policy=governance, llm=llm)
        self._finalizer = weakref.finalize(self, NeuSymMemory._finalize, self.derived, self.executor)
        atexit.register(self._finalizer)
        if reflection:  # background reflection (off by default): see neusym.reflection.triggers
            self.enable_auto_reflection(reflection if isinstance(reflection, ReflectionPolicy) else None)

    # ------------------------------------------------------------------ lifecycle
    @staticmethod
    def _finalize(derived: DerivedIndexes, executor: Executor) -> None:
        try:
            # a background HNSW build is abandoned, not awaited (closing must not take minutes on a large store);
            # the flat index is saved as it is and the next open starts the build again
            derived.faiss.cancel_upgrade()
            derived.faiss.wait_upgrade(30.0)
            if derived.dirty:
                derived.save()
        finally:
            executor.close()

    def close(self) -> None:
        """Persist the derived indexes and release the graph (stopping an embedded server nobody else uses)."""
        if self._closed:
            return
        self._shutdown_reflection()  # drain or persist pending reflections while the stores are still open
        self.stop_janitor()
        self._closed = True
        self._finalizer()

    def __enter__(self) -> NeuSymMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> NeuSymMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.close)

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("this NeuSymMemory is closed")

    def on_event(self, hook: Callable[[str, dict[str, Any]], None]) -> None:
        """Register a callback for write/search events (reflection triggers, metrics)."""
        self._hooks.append(hook)

    def _emit(self, event: str, payload: dict[str, Any]) -> None:
        for hook in list(self._hooks):
            try:
                hook(event, payload)
            except Exception:  # noqa: BLE001 - a hook must never break the fast path
                log.exception("event hook failed for %s", event)

    # ------------------------------------------------------------------ scope helpers
    def scope_for(self, scope: Scope | dict[str, Any] | None = None, **ids: str | None) -> Scope:
        """Resolve a call's scope: explicit ids win over ``scope``, which wins over the default scope."""
        if scope is None and not any(v is not None for v in ids.values()):
            return self.default_scope
        return Scope.coerce(scope, **ids)

    @staticmethod
    def _read_scope(scope: Scope, all_tenants: bool) -> Scope:
        if scope.is_empty and not all_tenants:
            raise ScopeError("reading with an empty scope would cross tenants; pass user_id/agent_id/session_id "
                             "or all_tenants=True")
        return scope

    # ------------------------------------------------------------------ write path
    def add(
        self,
        content: str | Sequence[Any],
        *,
        scope: Scope | dict[str, Any] | None = None,
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
        candidate passes governance; the returned list holds what was stored, ``.decisions`` says why.
        """
        self._check_open()
        sc = self.scope_for(scope, user_id=user_id, agent_id=agent_id, session_id=session_id)
        if sc.is_empty:
            raise ScopeError("a memory needs at least one of user_id, agent_id, session_id")
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidInputError(f"metadata must be a dict, got {metadata.__class__.__name__}")
        if isinstance(content, str | bytes):
            turns = [Turn(role="user" if origin == "user" else origin, content=validate_text(content),
                          speaker=speaker)]
        elif isinstance(content, Sequence) or hasattr(content, "__iter__"):
            turns = normalize_messages(content)
        else:
            raise InvalidInputError(f"content must be a str or a list of messages, got {content.__class__.__name__}")
        ttl_s = ttl.total_seconds() if isinstance(ttl, timedelta) else ttl
        if ttl_s is not None and (isinstance(ttl_s, bool) or not isinstance(ttl_s, int | float) or ttl_s <= 0
                                  or not math.isfinite(ttl_s)):
            raise InvalidInputError("ttl must be a positive number of seconds or a timedelta")
        now = utcnow()
        candidates: list[MemoryRecord] = []
        chain: list[int] = []  # candidate indexes that are conversation turns, in order
        with _field_errors("invalid memory"):
            mtype = MemoryType(type) if type is not None else None
            for turn in turns:
                if turn.role == "system":
                    continue
                who = turn.speaker or speaker or ("assistant" if turn.role == "assistant" else None)
                turn_origin = "agent" if turn.role == "assistant" else ("tool" if turn.role == "tool" else origin)
                exts = self._extract(turn.content, who, now, infer)
                for ext in exts:
                    rec = self._record_from(ext, sc, now=now, mtype=mtype, metadata=metadata,
                                            importance=importance, confidence=confidence, origin=turn_origin,
                                            ttl=ttl_s, valid_from=valid_from, tags=tags, turn=turn, ref=ref)
                    candidates.append(rec)
                    if len(turns) > 1 or turn.speaker:
                        chain.append(len(candidates) - 1)
        if not candidates:
            return AddResult([], [])
        return self._write(candidates, sc, chain=chain)

    def _extract(self, text: str, speaker: str | None, now: datetime, infer: bool) -> list[Extraction]:
        """Extraction results for one text. ``infer=False`` keeps the text verbatim as ONE memory but still takes
        the extractor's entities, facts and dates so the graph links it; text with nothing extractable is kept as
        a low-importance observation and left to admission control."""
        if speaker is not None:  # it becomes part of the text and an entity: same rules as the text itself
            speaker = validate_text(speaker, field="speaker", max_bytes=1024)
        exts = list(self.extractor.extract(text, speaker=speaker, now=now))
        if infer and exts:
            return exts
        first = exts[0] if exts else None
        return [Extraction(
            content=self._turn_text(text, speaker),
            type=first.type if first and not infer else MemoryType.OBSERVATION,
            entities=list(dict.fromkeys(e for x in exts for e in x.entities)),
            triples=[t for x in exts for t in x.triples],
            tags=list(dict.fromkeys(t for x in exts for t in x.tags)),
            confidence=first.confidence if first else 0.8,
            importance=first.importance if first else 0.3,
            valid_from=first.valid_from if first else None,
            expires_in=first.expires_in if first else None,
            plan_due=first.plan_due if first else None,
            speaker=speaker,
            intent_signals=list(dict.fromkeys(s for x in exts for s in x.intent_signals)) or ["no_extraction"],
        )]

    @staticmethod
    def _turn_text(text: str, speaker: str | None) -> str:
        return f"{speaker}: {text}" if speaker and speaker not in ("user", "assistant") else text

    def _record_from(self, ext: Extraction, sc: Scope, *, now: datetime, mtype: MemoryType | None,
                     metadata: dict[str, Any] | None, importance: float | None, confidence: float | None,
                     origin: str, ttl: float | None, valid_from: datetime | float | None,
                     tags: Sequence[str] | None, turn: Turn, ref: str | None) -> MemoryRecord:
        vf = valid_from if valid_from is not None else ext.valid_from
        try:
            vf_dt = datetime.fromtimestamp(vf, tz=now.tzinfo) if isinstance(vf, int | float) else vf
        except (OverflowError, OSError, ValueError) as err:  # beyond the platform's calendar (EOVERFLOW), NaN
            raise InvalidInputError(f"valid_from is not a usable time: {err}") from err
        expires_in = ttl if ttl is not None else ext.expires_in
        entities = list(dict.fromkeys([*ext.entities, *([ext.speaker] if ext.speaker and ext.speaker not in
                                                         ("user", "assistant") else [])]))
        rtype = mtype or ext.type
        return MemoryRecord(
            content=ext.content,
            type=rtype,
            entities=entities,
            triples=list(ext.triples),
            tags=list(dict.fromkeys([*(tags or []), *ext.tags])),
            scope=sc,
            source=Source(origin=origin, session_id=sc.session_id, turn=turn.index, speaker=ext.speaker, ref=ref),
            created_at=vf_dt if (vf_dt is not None and valid_from is not None) else now,
            valid_from=vf_dt,
            importance=importance if importance is not None else ext.importance,
            confidence=confidence if confidence is not None else ext.confidence,
            expires_at=now + timedelta(seconds=expires_in) if expires_in else None,
            plan_state=PlanState.OPEN if rtype == MemoryType.PLAN else None,
            plan_due=ext.plan_due,
            metadata=dict(metadata or {}),
            intent=list(ext.intent_signals),
        )

    def add_batch(self, items: Sequence[dict[str, Any] | str], *, vectors: Any = None, **common: Any) -> AddResult:
        """Add many statements at once: one embedding batch and one graph statement per ``max_batch`` memories.

        Each item is a string or a dict of :meth:`add` keyword arguments with ``content``; ``common`` applies to
        all. Items with the same scope share one write.

        ``vectors`` (shape ``(len(items), dimension)``): embeddings the caller already has (a migration, a
        pipeline that embeds elsewhere); the embedder is not called. Each item is then kept verbatim as one memory
        (``infer=False``; ``infer=True`` is refused because splitting would leave memories without a vector).
        Governance runs as usual; the vectors are validated (dimension, finite, non-zero) before anything is
        written.
        """
        self._check_open()
        if not isinstance(items, Sequence) or isinstance(items, str):
            raise InvalidInputError("add_batch takes a list of strings or dicts")
        given = self._given_vectors(vectors, len(items), common) if vectors is not None else None
        records: list[MemoryRecord] = []
        decisions: list[Decision] = []
        groups: dict[Scope, list[MemoryRecord]] = {}
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
            sc = self.scope_for(kw.pop("scope", None), user_id=kw.pop("user_id", None),
                                agent_id=kw.pop("agent_id", None), session_id=kw.pop("session_id", None))
            if sc.is_empty:
                raise ScopeError(f"item {i}: a memory needs at least one of user_id, agent_id, session_id")
            speaker = kw.pop("speaker", None)
            with _field_errors(f"item {i}"):
                infer = bool(kw.pop("infer", given is None))
                if given is not None and infer:
                    raise InvalidInputError("precomputed vectors need infer=False: one vector per item, verbatim")
                exts = self._extract(text, speaker, now, infer)
                mtype = kw.pop("type", None)
                ttl = kw.pop("ttl", None)
                ttl_s = ttl.total_seconds() if isinstance(ttl, timedelta) else ttl
                if ttl_s is not None and (isinstance(ttl_s, bool) or not isinstance(ttl_s, int | float)
                                          or ttl_s <= 0 or not math.isfinite(ttl_s)):
                    raise InvalidInputError(f"item {i}: ttl must be a positive number of seconds or a timedelta")
                turn = Turn(role="user", content=text, speaker=speaker, index=int(kw.pop("turn", 0) or 0))
                for ext in exts:
                    rec = self._record_from(
                        ext, sc, now=now, mtype=MemoryType(mtype) if mtype else None,
                        metadata=kw.pop("metadata", None) if "metadata" in kw else common.get("metadata"),
                        importance=kw.get("importance"), confidence=kw.get("confidence"),
                        origin=kw.get("origin", "user"), ttl=ttl_s, valid_from=kw.get("valid_from"),
                        tags=kw.get("tags"), turn=turn, ref=kw.get("ref"))
                    groups.setdefault(sc, []).append(rec)
                    row_of[rec.id] = i
        for sc, recs in groups.items():
            for start in range(0, len(recs), self.config.max_batch):
                chunk = recs[start : start + self.config.max_batch]
                res = self._write(chunk, sc, chain=[], vectors=None if given is None else
                                  given[[row_of[r.id] for r in chunk]])
                records.extend(res)
                decisions.extend(res.decisions)
        return AddResult(records, decisions)

    def _given_vectors(self, vectors: Any, count: int, common: dict[str, Any]) -> np.ndarray:
        """Caller-supplied embeddings, checked before anything is written (a bad row must not half-apply a batch)."""
        if common.get("infer"):
            raise InvalidInputError("precomputed vectors need infer=False: one vector per item, verbatim")
        try:
            arr = np.asarray(vectors, dtype=np.float32)
        except (TypeError, ValueError) as err:
            raise InvalidInputError(f"vectors must be a numeric array: {err}") from err
        dim = self.embedder.dimension
        if arr.ndim != 2 or arr.shape[0] != count:
            raise InvalidInputError(f"vectors must have shape ({count}, {dim}), got {arr.shape}")
        if arr.shape[1] != dim:
            raise DimensionMismatchError(f"vectors have dimension {arr.shape[1]}; this store embeds with {dim}")
        if not np.isfinite(arr).all():
            raise InvalidInputError("vectors contain NaN or infinite values")
        if (np.linalg.norm(arr, axis=1) <= 1e-12).any():
            raise InvalidInputError("vectors contain an all-zero row (cosine similarity is undefined)")
        return arr

    def _write(self, candidates: list[MemoryRecord], sc: Scope, *, chain: Sequence[int],
               derived_from: Sequence[dict[str, Any]] = (), vectors: np.ndarray | None = None) -> AddResult:
        if vectors is None:
            vectors = self.embedder.embed_documents([c.content for c in candidates])
        with self._write_lock:
            decisions = self.governor.admit(candidates, vectors, sc)
            keep = [i for i, d in enumerate(decisions) if d.stored]
            to_create = [decisions[i].record for i in keep]
            vec_of = {candidates[i].id: vectors[i] for i in range(len(candidates))}
            pairs = self._next_pairs(sc, [candidates[i] for i in chain], {r.id for r in to_create})
            now = time.time()
            created = self.store.create(to_create, np.vstack([vec_of[r.id] for r in to_create])
                                        if to_create else np.zeros((0, self.embedder.dimension), np.float32),
                                        next_pairs=pairs, supersede=self.governor.planned_supersessions(decisions),
                                        derived_from=derived_from,
                                        audits=self.governor.decision_audits(decisions, sc, now=now))
            by_id = {r.id: r for r in created}
            for d in decisions:
                if d.record.id in by_id:
                    d.record = by_id[d.record.id]
            self.derived.apply([{"nid": r.nid, "id": r.id, "seq": r.seq, "content": r.content,
                                 "status": r.status.value, **r.scope.as_params(), "embedding": vec_of[r.id]}
                                for r in created])
            self.derived.advance([r.seq for r in created])
            self.governor.after_write(decisions, sc, now=now)
            if self.derived.dirty >= self.config.save_every:
                self.derived.save()
        self._emit("add", {"scope": sc, "records": created, "decisions": decisions})
        return AddResult(created, decisions)

    def _next_pairs(self, sc: Scope, turns: Sequence[MemoryRecord], created: set[str]) -> list[tuple[str, str]]:
        """NEXT edges between consecutive stored turns of one session (conversation adjacency for stage 2)."""
        key = (sc.user_id, sc.agent_id, sc.session_id)
        pairs: list[tuple[str, str]] = []
        prev = self._last_turn.get(key)
        for rec in turns:
            if rec.id not in created:
                continue
            if prev is not None:
                pairs.append((prev, rec.id))
            prev = rec.id
        if prev is not None:
            self._last_turn[key] = prev
        return pairs

    # ------------------------------------------------------------------ read path
    def search(
        self,
        query: str,
        *,
        scope: Scope | dict[str, Any] | None = None,
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
    ) -> list[SearchResult]:
        """Two-stage retrieval. Each result carries ``explanation`` with every score component and graph path.

        Quarantined, archived, superseded and deleted memories are excluded unless ``statuses`` asks for them;
        a point-in-time search (``valid_at``) includes superseded memories, which hold the history. ``now``
        replaces the clock for recency and expiry (simulated time in tests and replays).
        """
        self._check_open()
        query = validate_text(query, field="query")
        k = _check_k(k)
        sc = self._read_scope(self.scope_for(scope, user_id=user_id, agent_id=agent_id, session_id=session_id),
                              all_tenants)
        cfg = get_recipe(recipe) if isinstance(recipe, str) else (recipe or self.retrieval)
        if min_score is not None:
            with _field_errors("min_score"):
                cfg = cfg.with_(min_score=float(min_score))
        if k == 0:
            return []
        filters = self._filters(sc, types=types, tags=tags, entities=entities, plan_states=plan_states,
                                statuses=statuses, valid_at=valid_at, time_from=time_from, time_to=time_to)
        timings = StageTimings()
        if rewrite_query:  # resolve a vague follow-up from the scope's recent memories (reflection/rewrite.py)
            query = self.rewrite_query(query, scope=sc).query
            timings.extra["rewritten_query"] = query
        t0 = time.perf_counter()
        if cfg.catch_up_on_search:
            self.derived.catch_up(self.store)
        qvec = self.embedder.embed_query(query) if cfg.dense else None
        timings.embed_ms = (time.perf_counter() - t0) * 1000
        results = run_search(self.store, self.derived, query=query, qvec=qvec, scope=sc, k=k, filters=filters,
                             cfg=cfg, reranker=as_reranker(reranker) or self.reranker, timings=timings,
                             now=as_epoch(now), dense=self.dense_search)
        self.last_timings = timings
        if touch and results:
            self.store.touch([r.memory.nid for r in results])
        self._emit("search", {"scope": sc, "query": query, "results": results})
        return results

    def _filters(self, sc: Scope, *, types: Sequence[Any] | None = None, tags: Sequence[str] | None = None,
                 entities: Sequence[str] | None = None, plan_states: Sequence[Any] | None = None,
                 statuses: Sequence[Any] | None = None, valid_at: Any = None, time_from: Any = None,
                 time_to: Any = None, predicate: str | None = None, objects: Sequence[str] | None = None,
                 due_from: Any = None, due_to: Any = None, include_expired: bool = False,
                 min_confidence: float | None = None) -> SymbolicFilters:
        from neusym.extraction import entity_key

        ns = entity_namespace(sc)

        def uids(names: Sequence[str] | None) -> list[str] | None:
            if names is None:
                return None
            if isinstance(names, str):
                names = [names]
            if not all(isinstance(n, str) for n in names):
                raise InvalidInputError("entity names must be strings")
            return [entity_uid(ns, entity_key(n)) for n in names]

        with _field_errors("invalid filter"):  # e.g. types=True, statuses=5: a typed error, not a TypeError
            st = [MemoryStatus(s).value for s in statuses] if statuses is not None else (
                ["active", "pending"] if valid_at is None else ["active", "pending", "superseded"])
            ty = [MemoryType(t).value for t in types] if types is not None else None
            ps = [PlanState(p).value for p in plan_states] if plan_states is not None else None
            return SymbolicFilters(
                statuses=st, types=ty, plan_states=ps,
                tags=([tags] if isinstance(tags, str) else list(tags)) if tags is not None else None,
                entity_uids=uids(entities), predicate=predicate, object_uids=uids(objects),
                valid_at=as_epoch(valid_at), time_from=as_epoch(time_from), time_to=as_epoch(time_to),
                due_from=as_epoch(due_from), due_to=as_epoch(due_to), include_expired=include_expired,
                min_confidence=min_confidence,
            )

    def query(
        self,
        *,
        scope: Scope | dict[str, Any] | None = None,
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
    ) -> list[MemoryRecord]:
        """Symbolic retrieval without any vector step, e.g. open plans involving "Li Si" due in two weeks::

            mem.query(entity="Li Si", types=["plan"], plan_states=["open"], due_within=timedelta(days=14))
        """
        self._check_open()
        sc = self._read_scope(self.scope_for(scope, user_id=user_id, agent_id=agent_id, session_id=session_id),
                              all_tenants)
        limit, offset = _check_k(limit), _check_k(offset) if offset <= _MAX_K else offset
        if order not in ("recent", "oldest", "due", "importance"):
            raise InvalidInputError("order must be one of recent, oldest, due, importance")
        now = time.time()
        due_to = None
        if due_within is not None:
            due_to = now + (due_within.total_seconds() if isinstance(due_within, timedelta) else float(due_within))
        filters = self._filters(
            sc, types=types, tags=tags, entities=[entity] if isinstance(entity, str) else entity,
            plan_states=plan_states, statuses=statuses, valid_at=valid_at, time_from=time_from, time_to=time_to,
            predicate=predicate, objects=[object] if isinstance(object, str) else object,
            due_from=now if due_within is not None else None, due_to=due_to,
        )
        from neusym.symbolic.convert import props_to_record

        rows = self.executor.run(symbolic_query_statement(order),
                                 {**sc.as_params(), **filters.params(), "now": now, "limit": limit,
                                  "offset": offset}, write=False)
        return [props_to_record(r) for r in rows]

    def get(self, memory_id: str, *, scope: Scope | dict[str, Any] | None = None, user_id: str | None = None,
            agent_id: str | None = None, session_id: str | None = None, all_tenants: bool = False) -> MemoryRecord:
        """One memory by id, only if visible in the scope (raises :class:`RecordNotFoundError` otherwise)."""
        self._check_open()
        if not isinstance(memory_id, str) or not memory_id:
            raise InvalidInputError("memory_id must be a non-empty string")
        sc = self._read_scope(self.scope_for(scope, user_id=user_id, agent_id=agent_id, session_id=session_id),
                              all_tenants)
        found = self.store.get([memory_id], sc)
        if not found:
            raise RecordNotFoundError(f"no memory {memory_id!r} in scope {sc.as_params()}")
        return found[0]

    def get_many(self, memory_ids: Sequence[str], *, scope: Scope | dict[str, Any] | None = None,
                 **ids: str | None) -> list[MemoryRecord]:
        self._check_open()
        sc = self._read_scope(self.scope_for(scope, **ids), False)
        wanted: list[Any] = list(memory_ids) if isinstance(memory_ids, list | tuple | set | frozenset) \
            else [memory_ids]
        if not all(isinstance(i, str) and i for i in wanted):
            raise InvalidInputError("memory ids must be non-empty strings")
        return self.store.get(wanted, sc)

    def update(
        self,
        memory_id: str,
        content: str | None = None,
        *,
        scope: Scope | dict[str, Any] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        actor: str = "user",
        reason: str = "manual edit",
        **fields: Any,
    ) -> MemoryRecord:
        """Edit a memory in place (version +1, audited with the previous values for rollback).

        ``fields`` may set: type, importance, confidence, strength, tags, metadata, plan_state, valid_from,
        valid_to, expires_at, status.
        """
        self._check_open()
        sc = self._read_scope(self.scope_for(scope, user_id=user_id, agent_id=agent_id, session_id=session_id),
                              False)
        before = self.get(memory_id, scope=sc)
        allowed = {"type", "importance", "confidence", "strength", "tags", "metadata", "plan_state", "valid_from",
                   "valid_to", "expires_at", "status", "entities", "triples", "flags", "plan_due"}
        unknown = set(fields) - allowed
        if unknown:
            raise InvalidInputError(f"cannot update {sorted(unknown)}; updatable: {sorted(allowed)}")
        data = before.model_dump()
        data.update(fields)
        if content is not None:
            data["content"] = validate_text(content, field="content")
            data["content_hash"] = content_hash(data["content"])
            if "entities" not in fields and "triples" not in fields:
                exts = self.extractor.extract(data["content"], speaker=before.source.speaker)
                data["entities"] = sorted({e for x in exts for e in x.entities})
                data["triples"] = [t for x in exts for t in x.triples]
        try:
            after = MemoryRecord.model_validate(data)
        except ValueError as err:
            raise InvalidInputError(str(err)) from err
        from neusym.symbolic.convert import record_to_props

        props = record_to_props(after)
        for k_ in ("id", "created_at", "version"):
            props.pop(k_, None)
        for k_ in ("valid_to", "expires_at", "plan_state", "plan_due", "valid_from"):
            if k_ in fields and fields[k_] is None:
                props[k_] = None
        vec = self.embedder.embed_documents([after.content])[0] if content is not None else None
        with self._write_lock:
            relinks = content is not None or "entities" in fields or "triples" in fields
            updated = self.store.update(memory_id, sc, props, embedding=vec, relations=after if relinks else None)
            if updated is None:
                raise RecordNotFoundError(f"no memory {memory_id!r} in scope {sc.as_params()}")
            changed = {k_: _jsonable(getattr(before, k_)) for k_ in (["content"] if content is not None else [])
                       + list(fields)}
            self.store.audit([{"memory_id": memory_id, "action": "edit", "reason": reason, "actor": actor,
                               "user_id": sc.user_id, "details": {"before": changed, "version": updated.version}}])
            self.derived.catch_up(self.store)
        self._emit("update", {"scope": sc, "record": updated})
        return updated

    def delete(self, memory_ids: str | Sequence[str], *, scope: Scope | dict[str, Any] | None = None,
               user_id: str | None = None, agent_id: str | None = None, session_id: str | None = None,
               actor: str = "user", reason: str = "deleted on request") -> int:
        """Hard-delete memories everywhere: graph (node, MENTIONS/RELATES, orphaned entities, fulltext), FAISS,
        BM25, the embedding cache and the content of earlier audit entries. The audit keeps ids and the event.

        Unknown ids and ids outside the scope are ignored (idempotent). Returns how many were deleted. This is
        ``forget(ids, hard=True)``: one purge path, so a delete can never leave traces that a forget would not.
        """
        self._check_open()
        ids: list[Any] = list(memory_ids) if isinstance(memory_ids, list | tuple | set | frozenset) else [memory_ids]
        if not all(isinstance(i, str) and i for i in ids):
            raise InvalidInputError("memory ids must be non-empty strings")
        sc = self._read_scope(self.scope_for(scope, user_id=user_id, agent_id=agent_id, session_id=session_id),
                              False)
        report = self.forget(ids, scope=sc, hard=True, reason=reason, actor=actor)
        self._emit("delete", {"scope": sc, "ids": list(report.ids)})
        return report.count

    def history(self, memory_id: str, *, scope: Scope | dict[str, Any] | None = None,
                **ids: str | None) -> list[dict[str, Any]]:
        """The audit trail of one memory, oldest first."""
        self._check_open()
        sc = self._read_scope(self.scope_for(scope, **ids), False)
        return self.store.audit_for(memory_id, sc.user_id)

    def cypher(self, statement: str, params: dict[str, Any] | None = None, *, all_tenants: bool = False,
               limit: int = 1000) -> list[dict[str, Any]]:
        """Guarded read-only raw Cypher for operators.

        Raw Cypher can read any tenant's data, so it requires ``all_tenants=True`` as an explicit acknowledgement.
        Write clauses and procedures are refused (:class:`UnsafeQueryError`) and the statement runs read-only.
        """
        self._check_open()
        if not all_tenants:
            raise ScopeError("raw Cypher is not tenant-scoped; pass all_tenants=True to acknowledge")
        return self.store.read_only(statement, params, limit=limit)

    def stats(self, *, scope: Scope | dict[str, Any] | None = None, all_tenants: bool = False,
              **ids: str | None) -> dict[str, Any]:
        self._check_open()
        sc = self.scope_for(scope, **ids) if not all_tenants else Scope()
        out = self.store.stats(sc)
        out.update({"backend": self.executor.dialect.value, "indexed_vectors": len(self.derived.faiss),
                    "watermark": self.derived.watermark, "embedder": self.embedder.name,
                    "neural_backend": self.config.neural_backend})
        return out

    def rebuild_index(self) -> int:
        """Drop the derived indexes and rebuild them from the graph (the source of truth)."""
        self._check_open()
        with self._write_lock:
            n = self.derived.rebuild(self.store)
            self.derived.save()
        return n

    # ------------------------------------------------------------------ backup and import (logic: neusym.backup,
    # neusym.importing)
    def _transfer_scope(self, scope: Scope | dict[str, Any] | None, all_tenants: bool, **ids: str | None) -> Scope | None:
        if all_tenants:
            if scope is not None or any(v is not None for v in ids.values()):
                raise ScopeError("pass either a scope or all_tenants=True, not both")
            return None
        return self._read_scope(self.scope_for(scope, **ids), False)

    def export(self, target: Any, *, scope: Scope | dict[str, Any] | None = None, user_id: str | None = None,
               agent_id: str | None = None, session_id: str | None = None, all_tenants: bool = False,
               embeddings: bool = True, progress: Callable[[int, int], None] | None = None) -> ExportReport:
        """Back up a scope (or, with ``all_tenants``, everything) to ``target``: a path (written atomically, mode
        0600, ``.gz`` compresses) or a text stream. See :mod:`neusym.backup` for the format and guarantees."""
        from neusym import backup

        self._check_open()
        sc = self._transfer_scope(scope, all_tenants, user_id=user_id, agent_id=agent_id, session_id=session_id)
        return backup.export(self, target, scope=sc, embeddings=embeddings, progress=progress)

    def restore(self, source: Any, *, scope: Scope | dict[str, Any] | None = None, user_id: str | None = None,
                agent_id: str | None = None, session_id: str | None = None, all_tenants: bool = False,
                skip_existing: bool = False, reembed: bool = False, dry_run: bool = False,
                progress: Callable[[int, int], None] | None = None) -> RestoreReport:
        """Write an export back exactly, into this scope only, all or nothing: every line is validated (and checked
        against the scope) before the first write, and a failure leaves the store as it was. See
        :mod:`neusym.backup`."""
        from neusym import backup

        self._check_open()
        sc = self._transfer_scope(scope, all_tenants, user_id=user_id, agent_id=agent_id, session_id=session_id)
        return backup.restore(self, source, scope=sc, skip_existing=skip_existing, reembed=reembed,
                              dry_run=dry_run, progress=progress, lock=self._write_lock)

    def import_file(self, source: Any, *, format: str = "auto",  # noqa: A002 - the CLI's word
                    scope: Scope | dict[str, Any] | None = None, user_id: str | None = None,
                    agent_id: str | None = None, session_id: str | None = None, all_tenants: bool = False,
                    infer: bool = True, batch: int = 256, assistant: str | None = None,
                    trust_file_origin: bool = False, dry_run: bool = False, max_items: int | None = None,
                    progress: Callable[[int, int], None] | None = None) -> ImportReport:
        """Import JSON Lines, a plain chat log or LoCoMo JSON through the normal write path. The ids given here
        win over the file's; a line's ``origin``/``confidence`` are ignored unless ``trust_file_origin``. See
        :mod:`neusym.importing`."""
        from neusym import importing

        self._check_open()
        given = Scope.coerce(scope, user_id=user_id, agent_id=agent_id, session_id=session_id)
        if all_tenants and given.user_id is not None:
            raise ScopeError("pass either user_id or all_tenants=True, not both")
        return importing.import_file(self, source, scope=given, all_tenants=all_tenants, fmt=format, infer=infer,
                                     batch=batch, assistant=assistant, trust_file_origin=trust_file_origin,
                                     dry_run=dry_run, max_items=max_items, progress=progress)

    def reembed(self, *, batch_size: int = 256, progress: Callable[[int, int], None] | None = None) -> ReembedReport:
        """Re-embed every memory from its stored content with this memory's embedder (see :mod:`neusym.reembed`):
        e.g. to make a store uniform after moving between runtimes of one model. Resumable; nothing is lost.
        Writes from this object wait until it is done; searches go on (on the old vectors until the catch-up)."""
        self._check_open()
        with self._write_lock:
            report = reembed_store(self.store, self.embedder, batch_size=batch_size, progress=progress)
            self.embedder_identity, self.last_reembed = report.target, report
            if self.derived.catch_up(self.store):
                self.derived.save()
        return report

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

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)


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


_ = Triple  # re-exported type used in update(triples=...)
