"""SymbolicStore: every graph read and write NeuSym makes, over one :class:`Executor`.

The graph is the source of truth. Every change that the derived indexes (FAISS, lexical) must see bumps the
``Counter{name:'seq'}`` inside the same statement and stamps the node's ``seq``; hard deletes leave a content-free
``Tombstone``. A process catches up by reading ``seq > watermark``.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from neusym.embeddings.identity import EmbedderIdentity
from neusym.errors import (
    BackendError,
    DimensionMismatchError,
    EmbedderMismatchError,
    GraphIntegrityError,
    InvalidInputError,
    UnsafeQueryError,
)
from neusym.record import MemoryRecord, Scope
from neusym.symbolic import cypher as q
from neusym.symbolic import staging
from neusym.symbolic.convert import (
    decode_embedding,
    encode_embedding,
    entity_namespace,
    entity_uid,
    props_to_record,
    record_to_props,
)
from neusym.symbolic.dialects import (
    Dialect,
    fulltext_index_statements,
    fulltext_query_call,
    fulltext_query_text,
    index_statements,
    is_duplicate_schema_error,
    vector_index_dimension_query,
    vector_index_ready_statement,
    vector_index_statement,
    vector_query_call,
    vector_similarity_expr,
)
from neusym.symbolic.executors.base import Executor, ReadOnlyRunner, Row
from neusym.symbolic.guard import cap_rows, check_read_only
from neusym.symbolic.meta import MetaStore

__all__ = ["GUARDED_TIMEOUT", "PURGE_CHUNK", "RELATIONS", "SymbolicStore", "chain_key"]

log = logging.getLogger(__name__)

RELATIONS = frozenset({"SUPERSEDES", "DERIVED_FROM", "CONFLICTS_WITH", "NEXT", "DUPLICATE_OF"})

PURGE_CHUNK = 100  # nodes per deleting statement (see SymbolicStore._purge_marked)

# The labels whose nodes NeuSym deletes, with the property every such node has: what check_integrity scans (a label
# entry a deletion left behind can only be under one of these)
_DELETED_LABELS: tuple[tuple[str, str], ...] = (
    ("Memory", "id"), ("Entity", "uid"), ("PendingUnlink", "token"),
    ("RestoreMemory", "restore_id"), ("RestoreEntity", "restore_id"), ("RestoreAudit", "restore_id"),
    ("RestoreLink", "restore_id"), ("RestoreRun", "id"),
)

GUARDED_TIMEOUT = 30.0
"""Default seconds a guarded raw Cypher statement (:meth:`SymbolicStore.read_only`) may run."""


def _floats(vector: np.ndarray) -> list[float]:
    """A float32 embedding as the plain list of floats a graph vector property holds."""
    return [float(x) for x in np.asarray(vector, dtype=np.float32).ravel()]


def chain_key(scope: Scope) -> str:
    """The key of one conversation (user, agent, session) on its tail turn's ``chain_tail`` property. JSON, so
    distinct scopes never share a key whatever their ids contain (the tail is also matched on ``user_id``)."""
    return _chain_key(scope.user_id, scope.agent_id, scope.session_id)


def _chain_key(user_id: str | None, agent_id: str | None, session_id: str | None) -> str:
    return json.dumps([user_id, agent_id, session_id], ensure_ascii=False)


def _key(name: str) -> str:
    from neusym.extraction import entity_key

    return entity_key(name)


class SymbolicStore:
    """Graph side of NeuSym. Thread-safe as far as its executor is."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self.dialect: Dialect = executor.dialect
        # True once the graph keeps a native vector index over Memory.embedding_vec (see enable_vectors): every
        # write of an embedding then also writes that property, in the same statement.
        self.vectors = False
        # The embedder identity (JSON) this process opened the store with (set by neusym.reembed.ensure_embedder):
        # every statement that writes a vector checks that the graph still records it (cypher.EMBEDDER_GUARD)
        self.embedder_identity: str | None = None

    # ------------------------------------------------------------------ schema
    def setup(self) -> None:
        """Create indexes, constraints and the fulltext index; safe to run on every open."""
        for stmt in index_statements(self.dialect) + fulltext_index_statements(self.dialect):
            try:
                self.executor.run(stmt)
            except BackendError as err:
                if not is_duplicate_schema_error(str(err)):
                    raise
        self.executor.run("MERGE (c:Counter {name: 'seq'}) ON CREATE SET c.value = 0")
        self.mark_chain_tails()
        self.recover()

    def mark_chain_tails(self) -> int:
        """Once per graph: mark the last turn of every session chained before the tail lived in the graph (stores
        written by an older NeuSym, which kept it in process memory), so those sessions go on chaining after the
        upgrade. A ``NeuSymMeta {key: 'chain_tails'}`` node records that it ran; sessions that already have a tail
        are left alone, so two processes opening at once mark the same memories. Returns the number marked."""
        if self.executor.run("MATCH (x:NeuSymMeta {key: 'chain_tails'}) RETURN x.key AS k", write=False):
            return 0
        rows = self.executor.run(
            "MATCH (m:Memory)<-[:NEXT]-(:Memory) WHERE NOT (m)-[:NEXT]->(:Memory) "
            "RETURN m.id AS id, m.nid AS nid, m.user_id AS user_id, m.agent_id AS agent_id, "
            "m.session_id AS session_id", write=False)
        newest: dict[str, tuple[int, str]] = {}
        for r in rows:
            key = _chain_key(r["user_id"], r["agent_id"], r["session_id"])
            if key not in newest or int(r["nid"]) > newest[key][0]:
                newest[key] = (int(r["nid"]), str(r["id"]))
        if newest:
            have = {str(r["k"]) for r in self.executor.run(
                "MATCH (m:Memory) WHERE m.chain_tail IS NOT NULL RETURN DISTINCT m.chain_tail AS k", write=False)}
            marks = [{"id": mid, "key": k} for k, (_, mid) in newest.items() if k not in have]
            if marks:
                self.executor.run("UNWIND $rows AS r MATCH (m:Memory {id: r.id}) SET m.chain_tail = r.key",
                                  {"rows": marks})
            newest = {k: v for k, v in newest.items() if k not in have}
        self.executor.run("MERGE (x:NeuSymMeta {key: 'chain_tails'}) ON CREATE SET x.at = $now",
                          {"now": time.time()})
        if newest:
            log.info("marked the last turn of %d conversation(s) chained by an older NeuSym", len(newest))
        return len(newest)

    # ------------------------------------------------------------------ graph-side vector index
    def vector_index_dimension(self) -> int | None:
        """Dimension of the existing native vector index, or None (no index, or a backend that cannot say)."""
        query = vector_index_dimension_query(self.dialect)
        if query is None:
            return None
        rows = self.executor.run(query, write=False)
        return int(rows[0]["dimension"]) if rows and rows[0].get("dimension") is not None else None

    def enable_vectors(self, dimension: int, *, create: bool) -> bool:
        """Keep ``Memory.embedding_vec`` (the native vector index's property) up to date from now on.

        ``create=True`` (the ``neo4j_vector`` neural backend): create the index if missing, wait until it is
        ONLINE and backfill memories written without the property (by FAISS-mode processes or imports); a
        different existing dimension is an error. ``create=False`` (every other process): only join in when the
        index already exists with this dimension, so FAISS-mode processes sharing the database keep it complete.
        Returns whether vectors are written.
        """
        if self.dialect is not Dialect.NEO4J:
            if create:
                raise InvalidInputError(
                    f"neural_backend='neo4j_vector' needs the Neo4j backend, not {self.dialect.value}"
                )
            return False
        existing = self.vector_index_dimension()
        if existing is not None and existing != dimension:
            if create:
                raise DimensionMismatchError(
                    f"the graph's vector index neusym_memory_embedding is {existing}-d but the embedder is "
                    f"{dimension}-d: use the original embedding model, or drop the index "
                    "(DROP INDEX neusym_memory_embedding) to rebuild it for the new one"
                )
            log.warning("graph vector index is %d-d, this process embeds %d-d: not writing graph vectors",
                        existing, dimension)
            return False
        if existing is None:
            if not create:
                return False
            self.executor.run(vector_index_statement(self.dialect, dimension))
        ready = vector_index_ready_statement(self.dialect)
        if ready is not None:
            self.executor.run(ready, write=False)
        self.vectors = True
        if create:
            filled = self.backfill_vectors(dimension)
            if filled:
                log.info("wrote graph vectors for %d memories that had none", filled)
        return True

    def backfill_vectors(self, dimension: int, *, batch: int = 1000) -> int:
        """Write ``embedding_vec`` from the stored embedding for memories that lack it (walks ``nid`` order).

        No sequence bump: the vector is the embedding the derived indexes already have, in another encoding.
        Embeddings of another dimension are skipped (the index would ignore them anyway).
        """
        after, written = -1, 0
        while True:
            rows = self.executor.run(
                "MATCH (m:Memory) WHERE m.nid > $after AND m.embedding_vec IS NULL AND m.embedding IS NOT NULL "
                "RETURN m.nid AS nid, m.embedding AS embedding ORDER BY m.nid LIMIT $batch",
                {"after": after, "batch": int(batch)}, write=False,
            )
            if not rows:
                return written
            after = int(rows[-1]["nid"])
            fill = []
            for r in rows:
                vec = decode_embedding(r["embedding"])
                if vec.shape[0] == dimension:
                    fill.append({"nid": int(r["nid"]), "vec": vec.tolist()})
            if fill:
                self.executor.run(
                    "UNWIND $rows AS r MATCH (m:Memory {nid: r.nid}) WHERE m.embedding_vec IS NULL "
                    "SET m.embedding_vec = r.vec",
                    {"rows": fill},
                )
                written += len(fill)

    def vector_search(self, vector: np.ndarray, scope: Scope, statuses: Sequence[str], n: int, *,
                      top: int | None = None) -> list[tuple[int, float]]:
        """(nid, cosine) of the ``n`` memories in ``scope`` with one of ``statuses`` closest to ``vector``.

        ``top=None`` scores every memory of the scope exactly (an indexed ``user_id`` lookup: right for a tenant
        of a few thousand memories, where a filtered ANN query would need a huge over-fetch). ``top=k`` asks the
        native vector index for its ``k`` approximate neighbours and filters them by scope and status in the same
        statement (may return fewer than ``n``; the caller over-fetches and retries).
        """
        params: dict[str, Any] = {"vector": _floats(vector), "statuses": list(statuses), "n": int(n),
                                  **scope.as_params()}
        if top is None:
            # a plain equality next to the wildcard form, so the planner can start from the user_id index
            tenant = "m.user_id = $user_id AND " if scope.user_id is not None else ""
            stmt = (f"MATCH (m:Memory) WHERE {tenant}{q.SCOPE_FILTER} AND m.status IN $statuses "
                    f"AND m.embedding_vec IS NOT NULL WITH m, {vector_similarity_expr(self.dialect, 'm')} AS score ")
        else:
            params["top"] = int(top)
            stmt = (f"{vector_query_call(self.dialect)} WITH node AS m, score "
                    f"WHERE {q.SCOPE_FILTER} AND m.status IN $statuses ")
        rows = self.executor.run(stmt + "RETURN m.nid AS nid, score ORDER BY score DESC, m.nid LIMIT $n",
                                 params, write=False)
        return [(int(r["nid"]), float(r["score"])) for r in rows]

    def embeddings_by_nid(self, nids: Sequence[int]) -> dict[int, str]:
        """The stored (base64) embeddings of memories by ``nid``; absent memories are left out."""
        rows = self.executor.run(
            "UNWIND $nids AS nid MATCH (m:Memory {nid: nid}) RETURN m.nid AS nid, m.embedding AS embedding",
            {"nids": [int(x) for x in nids]}, write=False,
        )
        return {int(r["nid"]): r["embedding"] for r in rows if r.get("embedding")}

    def vector_scores(self, vector: np.ndarray, nids: Sequence[int], k: int) -> list[tuple[int, float]]:
        """(nid, cosine) of the ``k`` memories among ``nids`` closest to ``vector``, scored exactly."""
        rows = self.executor.run(
            "UNWIND $nids AS nid MATCH (m:Memory {nid: nid}) WHERE m.embedding_vec IS NOT NULL "
            f"WITH m, {vector_similarity_expr(self.dialect, 'm')} AS score "
            "RETURN m.nid AS nid, score ORDER BY score DESC, m.nid LIMIT $k",
            {"vector": _floats(vector), "nids": [int(x) for x in nids], "k": int(k)}, write=False,
        )
        return [(int(r["nid"]), float(r["score"])) for r in rows]

    # ------------------------------------------------------------------ writes
    def create(
        self,
        records: Sequence[MemoryRecord],
        embeddings: np.ndarray,
        *,
        next_pairs: Sequence[tuple[str, str]] = (),
        chain: Sequence[str] = (),
        chain_scope: Scope | None = None,
        supersede: Sequence[Mapping[str, Any]] = (),
        derived_from: Sequence[Mapping[str, Any]] = (),
        vectors: bool | None = None,
        audits: Sequence[Mapping[str, Any]] = (),
    ) -> list[MemoryRecord]:
        """Create memory nodes with their entities, triples and NEXT links in ONE statement (atomic per batch).

        ``chain``: ids of conversation turns among ``records``, in order, continuing the conversation of
        ``chain_scope`` (its user, agent and session): the first is linked NEXT from that session's last stored turn,
        found in the graph by this same statement (so it does not matter which process, or which run, stored it),
        and the last becomes the session's new tail. ``next_pairs``: explicit extra NEXT links.
        ``supersede``: ``{"id", "user_id", "by", "props", "edge"}`` entries (see ``Governor.planned_supersessions``)
        applied in the same statement: the old memory's status change and the SUPERSEDES edge.
        ``derived_from``: ``{"src", "dst", "props"}`` DERIVED_FROM links (a reflection to its sources, same tenant).
        ``vectors`` (default :attr:`vectors`, on once :meth:`enable_vectors` ran) also writes each embedding as the
        ``embedding_vec`` list the native vector index reads, in the same statement.
        ``audits``: audit entries (see :meth:`audit`) written by the same statement.
        Returns the records with ``nid``/``seq`` filled in.
        """
        if not records:
            self.audit(audits)
            return []
        rows = [self._row(r, embeddings[i]) for i, r in enumerate(records)]
        with_vectors = self.vectors if vectors is None else vectors
        for i, row in enumerate(rows):
            row["vec"] = _floats(embeddings[i]) if with_vectors else None
        sets = [{**dict(e), "k": k} for k, e in enumerate(supersede)]
        if chain and chain_scope is None:
            raise InvalidInputError("a conversation chain needs the scope of its session")
        out = self.executor.run(
            q.CREATE_MEMORIES, {"embedder": self.embedder_identity,
                                "rows": rows, "n": len(rows) + len(sets), "pairs": [list(p) for p in next_pairs],
                                "chain": list(chain),
                                "chain_key": chain_key(chain_scope) if chain and chain_scope else None,
                                "chain_user": chain_scope.user_id if chain_scope else None,
                                "sets": sets, "derived": [dict(d) for d in derived_from],
                                "audits": self.audit_rows(audits)}
        )
        if not out:
            self.refused_write()
        created = {d["id"]: d for d in (out[0]["out"] if out else [])}
        result = []
        for r in records:
            info = created.get(r.id)
            if info is None:
                raise BackendError(f"memory {r.id} was not created")
            result.append(r.model_copy(update={"nid": int(info["nid"]), "seq": int(info["seq"])}))
        return result

    def _row(self, record: MemoryRecord, vector: np.ndarray) -> dict[str, Any]:
        ns = entity_namespace(record.scope)
        ents = []
        seen: set[str] = set()
        for name in record.entities:
            k = _key(name)
            if k and k not in seen:
                seen.add(k)
                ents.append({"uid": entity_uid(ns, k), "key": k, "name": name, "ns": ns})
        triples = []
        for t in record.triples:
            sk, ok = _key(t.subject), _key(t.object)
            if not sk or not ok:
                continue
            triples.append(
                {
                    "s_uid": entity_uid(ns, sk), "s_key": sk, "s_name": t.subject,
                    "o_uid": entity_uid(ns, ok), "o_key": ok, "o_name": t.object,
                    "predicate": t.predicate, "polarity": t.polarity, "confidence": t.confidence, "ns": ns,
                }
            )
        props = record_to_props(record)
        props.update(self._fact_keys(ents, triples))
        return {"props": props, "embedding": encode_embedding(vector), "entities": ents, "triples": triples}

    @staticmethod
    def _fact_keys(ents: list[dict[str, Any]], triples: list[dict[str, Any]]) -> dict[str, list[str]]:
        """Denormalised lookup keys of a memory's entities and facts (see rescoring._relation_clause)."""
        uids = list(dict.fromkeys([e["uid"] for e in ents] + [t["s_uid"] for t in triples]
                                  + [t["o_uid"] for t in triples]))
        return {
            "entity_uids": uids,
            "predicates": list(dict.fromkeys(t["predicate"] for t in triples)),
            "object_uids": list(dict.fromkeys(t["o_uid"] for t in triples)),
            "po_keys": list(dict.fromkeys(f"{t['predicate']}\x1f{t['o_uid']}" for t in triples)),
        }

    def update(
        self, memory_id: str, scope: Scope, props: Mapping[str, Any], *, embedding: np.ndarray | None = None,
        relations: MemoryRecord | None = None, audits: Sequence[Mapping[str, Any]] = (),
    ) -> MemoryRecord | None:
        """Set properties on one memory (bumping seq and version) and write ``audits``, in ONE statement. Returns
        None (and writes nothing) if the memory is not visible in ``scope``.

        With ``relations`` (the edited record) its MENTIONS/RELATES and fact keys are re-derived in the same
        statement, so a crash never leaves new text behind the old text's entities and facts.
        """
        p = {k: v for k, v in props.items() if k not in ("id", "nid", "seq")}
        if embedding is not None:
            p["embedding"] = encode_embedding(embedding)
            if self.vectors:
                p["embedding_vec"] = _floats(embedding)
        p["updated_at"] = time.time()
        guard = self.embedder_identity if embedding is not None else None
        params: dict[str, Any] = {"id": memory_id, "props": p, "n": 1, "audits": self.audit_rows(audits),
                                  "embedder": guard, **scope.as_params()}
        if relations is None:
            out = self.executor.run(q.UPDATE_PROPS, params)
            if not out and guard is not None:
                self.refused_write()
            return props_to_record(out[0]) if out else None
        row = self._row(relations, np.zeros(1, dtype=np.float32))
        p.update(self._fact_keys(row["entities"], row["triples"]))
        # two statements, never one that deletes and creates (see cypher.UPDATE_UNLINK): the old relations go with
        # the property change, the new ones (and the audit entries) follow; ``relink`` bridges a crash in between
        token = uuid.uuid4().hex
        audits_rows = params.pop("audits")
        out = self.executor.run(q.UPDATE_UNLINK, {**params, "token": token, "now": time.time(),
                                                  "audits_json": json.dumps(audits_rows, ensure_ascii=False)})
        if not out:
            if guard is not None:
                self.refused_write()
            return None
        self._relink(memory_id, token, row, audits_rows)
        return props_to_record(out[0])

    def _relink(self, memory_id: str, token: str, row: Mapping[str, Any], audits: Sequence[Mapping[str, Any]]) -> None:
        keyed = [dict(a) for a in audits if a.get("memory_id") is not None and a.get("id") is not None]
        loose = [dict(a) for a in audits if a.get("memory_id") is None or a.get("id") is None]
        self.executor.run(q.RELINK, {"id": memory_id, "token": token, "entities": row["entities"],
                                     "triples": row["triples"], "audits": keyed, "loose_audits": loose})

    def refused_write(self) -> None:
        """Explain a write that its statement's embedder guard refused (see cypher.EMBEDDER_GUARD): raise
        :class:`EmbedderMismatchError` when the graph records a re-embed under way or another embedder than the
        one this process opened the store with; return when it does not (the caller goes on: nothing matched)."""
        if self.embedder_identity is None:
            return
        state = MetaStore(self.executor).read()
        if state is None:
            return
        opened = EmbedderIdentity.from_json(self.embedder_identity)
        if state.reembed_to:
            raise EmbedderMismatchError(
                "a re-embed of this store is under way (recorded in the graph): writes with the embedder this "
                f"process opened it with ({opened.describe()}) are refused, so the store never mixes vector widths; "
                "reopen it with the new embedder once the re-embed is done", stored=state.reembed_to, current=opened)
        if state.identity and state.identity != self.embedder_identity:
            try:
                now = EmbedderIdentity.from_json(state.identity).describe()
            except (ValueError, KeyError, TypeError):
                now = state.identity[:200]
            raise EmbedderMismatchError(
                f"this store was re-embedded with {now} since this process opened it with {opened.describe()}: "
                "nothing was written; reopen it with that embedder", stored=state.identity, current=opened)

    def set_props(
        self, changes: Sequence[tuple[str, Mapping[str, Any]]], scope: Scope, *, bump_version: bool = False
    ) -> list[MemoryRecord]:
        if not changes:
            return []
        now = time.time()
        rows = []
        for mid, props in changes:
            p = {k: v for k, v in props.items() if k not in ("id", "nid", "seq")}
            p["updated_at"] = now
            rows.append({"id": mid, "props": p})
        stmt = q.SET_PROPS
        if bump_version:
            stmt = stmt.replace("SET m += r.props,", "SET m += r.props, m.version = coalesce(m.version, 1) + 1,")
        out = self.executor.run(stmt, {"rows": rows, "n": len(rows), **scope.as_params()})
        return [props_to_record(r) for r in out]

    def set_expiry(self, rows: Mapping[str, float], scope: Scope) -> int:
        """Move the expiry of the listed memories of ``scope`` that have one (id -> epoch seconds), in one
        statement; returns how many moved. See :data:`~neusym.symbolic.cypher.SET_EXPIRY`."""
        if not rows:
            return 0
        out = self.executor.run(q.SET_EXPIRY, {"rows": [{"id": str(i), "expires_at": float(t)} for i, t in rows.items()],
                                               **scope.as_params()})
        return int(out[0]["n"]) if out else 0

    def touch(self, nids: Iterable[int], now: float | None = None) -> None:
        """Access bookkeeping for a whole result list in one statement."""
        ids = [int(n) for n in nids]
        if ids:
            self.executor.run(q.TOUCH, {"nids": ids, "now": now if now is not None else time.time()})

    def delete_hard(self, ids: Sequence[str], scope: Scope, *, check: bool = True) -> list[str]:
        """Remove memories, their MENTIONS/RELATES and now-orphaned entities; leave content-free tombstones.

        Two statements (see cypher.PURGE_MARK): the tombstones and the ``deleted`` mark first, the deletion second;
        then the orphaned entities, and (``check``) :meth:`check_integrity`, which raises
        :class:`GraphIntegrityError` rather than let more writes go into a damaged graph. Returns the ids deleted
        (also those a crashed earlier purge of the same ids had marked)."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []
        params = {"ids": wanted, **scope.as_params()}
        marked = self.executor.run(q.PURGE_MARK, {**params, "n": len(wanted), "now": time.time()})
        # what this call marked is gone even when another process's recover() deleted it first
        gone = list(dict.fromkeys([*(str(i) for i in (marked[0]["ids"] if marked else [])),
                                   *self._purge_marked(wanted, scope)]))
        self.delete_orphan_entities(scope)  # also when nothing was left: completes a delete a crash interrupted
        if check:
            base = marked[0].get("base") if marked else None
            self.check_integrity(purged=gone, tombstones=None if base is None else (int(base), int(base) + len(wanted)))
        return gone

    def _purge_marked(self, ids: Sequence[str], scope: Scope) -> list[str]:
        """PURGE_DELETE in chunks: FalkorDB pays per removed label for every write the label matrix has not merged
        yet (~4 ms per node in the first statement after 1,000 creates on a 15k-node graph, 0.1 ms after), so one
        statement of 1,000 took seconds where ten of 100 take a fraction of one."""
        gone: list[str] = []
        for start in range(0, len(ids), PURGE_CHUNK):
            out = self.executor.run(q.PURGE_DELETE, {"ids": list(ids[start:start + PURGE_CHUNK]),
                                                     **scope.as_params()})
            gone.extend(str(i) for i in (out[0]["ids"] if out else []))
        return gone

    def delete_orphan_entities(self, scope: Scope) -> None:
        """Drop the scope's tenant entities no memory mentions any more (idempotent: a retried forget re-runs it)."""
        self.delete_orphans([entity_namespace(scope)])

    def delete_orphans(self, namespaces: Sequence[str]) -> int:
        """Delete the entities of ``namespaces`` no memory mentions, in chunks (see :meth:`_purge_marked`)."""
        total = 0
        while True:
            rows = self.executor.run(q.DELETE_ORPHAN_ENTITIES, {"namespaces": list(namespaces),
                                                                "limit": PURGE_CHUNK})
            n = int(rows[0]["n"]) if rows else 0
            total += n
            if n < PURGE_CHUNK:
                return total

    # ------------------------------------------------------------------ integrity and recovery
    def check_integrity(self, *, purged: Sequence[str] = (), tombstones: tuple[int, int] | None = None) -> None:
        """Raise :class:`GraphIntegrityError` when the graph breaks an invariant a deletion could have broken.

        Run after every purge. The labels whose nodes NeuSym deletes are scanned for a node that is also of another
        kind (an ``Audit:Memory``: a node created on the recycled id of a deleted one whose label entry stayed) or
        lacks its key (a label entry of a deleted node; FalkorDB raises "Attempted to access undefined attribute"
        on it); ``purged`` ids must be gone and the tombstones with seq in ``tombstones`` (lo, hi] must be plain
        tombstones of memories that are gone. One pass over the memory and entity labels: linear in their size,
        a fraction of the purge's own cost.
        """
        problems: list[str] = []
        try:
            for label, key in _DELETED_LABELS:
                rows = self.executor.run(
                    f"MATCH (n:{label}) WHERE n.{key} IS NULL OR size(labels(n)) <> 1 "
                    "RETURN count(n) AS bad, collect(labels(n))[0..5] AS sample", write=False)
                bad = int(rows[0]["bad"]) if rows else 0
                if bad:
                    sample = ", ".join(":".join(str(x) for x in (lbls or [])) for lbls in rows[0].get("sample") or [])
                    problems.append(f"{bad} {label} node(s) without {key} or under another label too ({sample})")
            if purged:
                rows = self.executor.run("MATCH (m:Memory) WHERE m.id IN $ids RETURN count(m) AS n",
                                         {"ids": list(purged)}, write=False)
                if rows and int(rows[0]["n"]):
                    problems.append(f"{rows[0]['n']} purged memory id(s) still present")
            if tombstones is not None:
                rows = self.executor.run(
                    "MATCH (t:Tombstone) WHERE t.seq > $lo AND t.seq <= $hi "
                    "OPTIONAL MATCH (m:Memory {nid: t.nid}) "
                    "RETURN sum(CASE WHEN size(labels(t)) <> 1 THEN 1 ELSE 0 END) AS mixed, "
                    "sum(CASE WHEN m IS NULL THEN 0 ELSE 1 END) AS live",
                    {"lo": int(tombstones[0]), "hi": int(tombstones[1])}, write=False)
                if rows and int(rows[0]["mixed"] or 0):
                    problems.append(f"{rows[0]['mixed']} tombstone(s) under another label too")
                if rows and int(rows[0]["live"] or 0):
                    problems.append(f"{rows[0]['live']} tombstone(s) beside a memory that still exists")
        except GraphIntegrityError:
            raise
        except BackendError as err:
            if "undefined attribute" not in str(err).lower():
                raise
            problems.append(f"a label still lists a deleted node ({err})")
        if problems:
            raise GraphIntegrityError(
                "the graph is damaged: " + "; ".join(problems) + ". NeuSym stopped before writing more into it. "
                "Keep the data directory as it is (copy it first), then export what still reads "
                "(`neusym export FILE --all-tenants`) and restore it into a new data directory or graph "
                "(`neusym restore FILE`); or restore your latest export.", problems=problems)

    def recover(self, *, relink_after: float = 0.0, staged_after: float = 3600.0,
                batch: int = 1000) -> dict[str, int]:
        """Finish the writes a process died in the middle of (each is two statements; see cypher.py):

        * hard deletes that marked their memories (``purge_at``) but did not delete them: deleted now, with their
          orphaned entities (idempotent: a purge still running deletes the same nodes);
        * review decisions whose edge removals did not run (``PendingUnlink``): removed now (idempotent);
        * edits whose new relations were not written (``relink`` older than ``relink_after`` seconds): rebuilt from
          the memory's own fields, exactly once even when the edit's writer is still about to do it (see
          cypher.RELINK);
        * restores that left staged copies (committed, or silent for ``staged_after`` seconds): removed
          (:func:`neusym.symbolic.staging.sweep_stale`).

        Runs on every open (:meth:`setup`) and in the janitor; checks the graph's invariants after deleting
        anything. Returns what was finished, by kind.
        """
        done = {"purges": 0, "unlinks": 0, "relinks": 0, "restores": 0}
        while True:
            rows = self.executor.run(q.UNFINISHED_PURGES, {"limit": int(batch)}, write=False)
            if not rows:
                break
            done["purges"] += len(self._purge_marked([str(r["id"]) for r in rows], Scope()))
            self.delete_orphans(sorted({entity_namespace(Scope(user_id=r.get("user_id"))) for r in rows}))
            if len(rows) < batch:
                break
        now = time.time()
        for r in self.executor.run(q.PENDING_UNLINKS, {"before": now + 1.0, "limit": int(batch)}, write=False):
            unlinks = [{"src": a, "rel": b, "dst": c} for a, b, c in zip(r.get("src") or [], r.get("rel") or [],
                                                                       r.get("dst") or [], strict=False)]
            self.executor.run(q.UNLINK_PENDING, {"token": r["token"], "user_id": r["user_id"], "unlinks": unlinks})
            done["unlinks"] += 1
        for r in self.executor.run(q.UNFINISHED_RELINKS, {"before": now - float(relink_after),
                                                          "limit": int(batch)}, write=False):
            rec = props_to_record(r)
            row = self._row(rec, np.zeros(1, dtype=np.float32))
            try:
                audits = json.loads(r.get("audits_json") or "[]")
            except ValueError:
                audits = []
            self._relink(rec.id, str(r["token"]), row, [a for a in audits if isinstance(a, dict)])
            done["relinks"] += 1
        done["restores"] = staging.sweep_stale(self.executor, older_than=staged_after)
        if any(done.values()):
            log.warning("finished writes an interrupted process left half done: %s", done)
            if done["purges"] or done["restores"]:
                self.check_integrity()
        return done

    def link(self, rel: str, pairs: Sequence[tuple[str, str]], props: Mapping[str, Any] | None = None) -> int:
        """Create typed edges between memories of the same tenant (never across tenants)."""
        if rel not in RELATIONS:
            raise InvalidInputError(f"unknown relation {rel!r}; use one of {sorted(RELATIONS)}")
        if not pairs:
            return 0
        rows = [{"src": a, "dst": b, "props": dict(props or {})} for a, b in pairs]
        out = self.executor.run(q.LINK + f"MERGE (a)-[x:{rel}]->(b) SET x += r.props RETURN count(x) AS n",
                                {"rows": rows})
        return int(out[0]["n"]) if out else 0

    def linked(self, memory_id: str, rel: str, *, direction: str = "out") -> list[tuple[str, dict[str, Any]]]:
        if rel not in RELATIONS:
            raise InvalidInputError(f"unknown relation {rel!r}")
        pattern = f"(m:Memory {{id: $id}})-[x:{rel}]->(o:Memory)" if direction == "out" else \
            f"(m:Memory {{id: $id}})<-[x:{rel}]-(o:Memory)"
        rows = self.executor.run(f"MATCH {pattern} RETURN o.id AS id, properties(x) AS props",
                                 {"id": memory_id}, write=False)
        return [(r["id"], dict(r.get("props") or {})) for r in rows]

    def unlink(self, rel: str, pairs: Sequence[tuple[str, str]]) -> None:
        if rel not in RELATIONS:
            raise InvalidInputError(f"unknown relation {rel!r}")
        self.executor.run(
            f"UNWIND $rows AS r MATCH (a:Memory {{id: r[0]}})-[x:{rel}]->(b:Memory {{id: r[1]}}) DELETE x",
            {"rows": [list(p) for p in pairs]},
        )

    def apply_changes(
        self,
        user_id: str,
        *,
        sets: Sequence[tuple[str, Mapping[str, Any]]] = (),
        links: Sequence[tuple[str, str, str, Mapping[str, Any]]] = (),
        unlinks: Sequence[tuple[str, str, str]] = (),
        close: Sequence[tuple[str, float | None]] = (),
        audits: Sequence[Mapping[str, Any]] = (),
    ) -> list[str]:
        """Apply a review decision or a rollback inside one tenant as ONE statement (atomic, like a create).

        ``sets``: (memory id, properties) — each bumps the write sequence; ``links``/``unlinks``: (src, REL, dst[,
        props]) between memories of the tenant; ``close``: (memory id, valid_to) stamped on (or, with ``None``,
        cleared from) the RELATES edges the memory produced; ``audits``: entries as for :meth:`audit`.
        Returns the ids of the memories whose properties were set.
        """
        for rel in [r for _, r, _, _ in links] + [r for _, r, _ in unlinks]:
            if rel not in RELATIONS:
                raise InvalidInputError(f"unknown relation {rel!r}; use one of {sorted(RELATIONS)}")
        rows = [{"id": i, "props": dict(p), "k": k} for k, (i, p) in enumerate(sets)]
        token = uuid.uuid4().hex
        removals = [{"src": a, "rel": r, "dst": b} for a, r, b in unlinks]
        out = self.executor.run(q.APPLY_CHANGES, {
            "n": len(rows), "sets": rows, "user_id": user_id,
            "links": [{"src": a, "rel": r, "dst": b, "props": dict(p)} for a, r, b, p in links],
            "unlinks": removals,
            "close": [{"id": i, "valid_to": v} for i, v in close],
            "audits": self.audit_rows(audits), "token": token, "now": time.time(),
        })
        if removals:  # the second statement (see cypher.APPLY_CHANGES); recover() finishes it after a crash
            self.executor.run(q.UNLINK_PENDING, {"token": token, "user_id": user_id, "unlinks": removals})
        return [str(i) for i in (out[0]["changed"] if out else [])]

    # ------------------------------------------------------------------ reads
    def get(self, ids: Sequence[str], scope: Scope) -> list[MemoryRecord]:
        if not ids:
            return []
        rows = self.executor.run(q.GET_BY_IDS, {"ids": list(ids), **scope.as_params()}, write=False)
        by_id = {r["id"]: props_to_record(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def embeddings(self, ids: Sequence[str]) -> dict[str, str]:
        rows = self.executor.run(
            "MATCH (m:Memory) WHERE m.id IN $ids RETURN m.id AS id, m.embedding AS embedding",
            {"ids": list(ids)}, write=False,
        )
        return {r["id"]: r["embedding"] for r in rows if r.get("embedding")}

    def counter(self) -> int:
        """The graph's write sequence: 0 for a graph that does not exist yet (FalkorDB refuses a read of a missing
        graph key: "Invalid graph operation on empty key")."""
        try:
            rows = self.executor.run(q.COUNTER_VALUE, write=False)
        except BackendError as err:
            if "empty key" not in str(err):
                raise
            return 0
        return int(rows[0]["value"]) if rows and rows[0]["value"] is not None else 0

    def changes_since(self, since: int, upto: int, limit: int = 5000) -> list[Row]:
        return self.executor.run(q.CHANGES_SINCE, {"since": since, "upto": upto, "limit": limit}, write=False)

    def tombstones_since(self, since: int, upto: int) -> list[Row]:
        return self.executor.run(q.TOMBSTONES_SINCE, {"since": since, "upto": upto}, write=False)

    def fulltext(self, text: str, scope: Scope, limit: int = 50) -> list[tuple[str, float]]:
        """The graph's own fulltext index (RediSearch / Lucene) — used for symbolic text filters."""
        ft = fulltext_query_text(self.dialect, text)
        if not ft:
            return []
        rows = self.executor.run(
            f"{fulltext_query_call(self.dialect)} WITH node AS m, score WHERE {q.SCOPE_FILTER} "
            "RETURN m.id AS id, score ORDER BY score DESC LIMIT $limit",
            {"ft_query": ft, "limit": int(limit), **scope.as_params()},
            write=False,
        )
        return [(r["id"], float(r["score"])) for r in rows]

    def find_by_hash(self, scope: Scope, hashes: Sequence[str], statuses: Sequence[str]) -> dict[str, str]:
        rows = self.executor.run(
            f"MATCH (m:Memory) WHERE m.content_hash IN $hashes AND m.status IN $statuses AND {q.SCOPE_FILTER} "
            "RETURN m.content_hash AS h, m.id AS id",
            {"hashes": list(hashes), "statuses": list(statuses), **scope.as_params()}, write=False,
        )
        return {r["h"]: r["id"] for r in rows}

    def read_only(self, cypher: str, params: Mapping[str, Any] | None = None, *, limit: int = 1000,
                  timeout: float = GUARDED_TIMEOUT) -> list[Row]:
        """Guarded raw Cypher: at most ``limit`` rows of one read-only statement, within ``timeout`` seconds.

        Enforced in layers (see :mod:`neusym.symbolic.guard`): a lexical check (no write/admin clauses, no LOAD
        CSV, only allowlisted procedures), then the database's own plan is checked and the statement runs in the
        backend's read-only mode (FalkorDB ``GRAPH.RO_QUERY``, Neo4j READ transaction) with a server-side timeout.
        """
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise InvalidInputError(f"limit must be a non-negative int, got {limit!r}")
        if not isinstance(timeout, int | float) or not timeout > 0:
            raise InvalidInputError(f"timeout must be a positive number of seconds, got {timeout!r}")
        checked = check_read_only(cypher)
        try:
            if isinstance(self.executor, ReadOnlyRunner):
                rows = self.executor.run_read_only(checked, dict(params or {}), timeout=float(timeout),
                                                   max_rows=limit)
            else:  # a custom executor: its read-only path is all we can ask for (with the cap in the statement)
                rows = self.executor.run(cap_rows(checked, limit, dict(params or {})).text, dict(params or {}),
                                         write=False)
        except BackendError as err:
            msg = str(err).lower()
            # FalkorDB: "... executed only on read-only queries"; Neo4j: "[Neo.ClientError.Statement.AccessMode]
            # Writing in read access mode not allowed"
            if "read-only" in msg or "accessmode" in msg or "read access mode" in msg:
                raise UnsafeQueryError(str(err)) from err
            raise
        return rows[:limit]

    # ------------------------------------------------------------------ reflection (slow path)
    def scope_memories(self, scope: Scope, *, unreflected: bool = False, entity_uids: Sequence[str] | None = None,
                       before: float | None = None, statuses: Sequence[str] = ("active", "pending"),
                       exclude_types: Sequence[str] = ("reflection",), newest_first: bool = False,
                       limit: int = 1000, offset: int = 0) -> list[MemoryRecord]:
        """Memories in ``scope`` in event-time order (oldest first unless ``newest_first``): reflection sources.

        ``unreflected`` keeps only memories no reflection was derived from yet (an engine-made corrected successor is
        also linked ``DERIVED_FROM`` its sources, which does not consolidate them); ``entity_uids`` keeps those that
        mention one of the entities (an entity's neighbourhood); ``before`` bounds ``created_at``.
        """
        where = [q.SCOPE_FILTER, "m.status IN $statuses", "NOT m.type IN $exclude_types",
                 "($before IS NULL OR m.created_at <= $before)"]
        if unreflected:
            where.append("NOT (m)<-[:DERIVED_FROM]-(:Memory {type: 'reflection'})")
        pattern = "(m:Memory)"
        if entity_uids is not None:
            pattern = "(m:Memory)-[:MENTIONS]->(fe:Entity)"
            where.append("fe.uid IN $entity_uids")
        direction = "DESC" if newest_first else "ASC"
        rows = self.executor.run(
            f"MATCH {pattern} WHERE {' AND '.join(where)} WITH DISTINCT m RETURN {q.RETURN_MEMORY} "
            f"ORDER BY coalesce(m.valid_from, m.created_at) {direction}, m.seq {direction} "
            "SKIP $offset LIMIT $limit",
            {**scope.as_params(), "statuses": list(statuses), "exclude_types": list(exclude_types),
             "before": before, "entity_uids": list(entity_uids or []), "limit": int(limit), "offset": int(offset)},
            write=False,
        )
        return [props_to_record(r) for r in rows]

    def unreflected_scopes(self, *, before: float, min_count: int, limit: int = 100,
                           statuses: Sequence[str] = ("active", "pending")) -> list[tuple[Scope, int]]:
        """(user, agent) scopes holding at least ``min_count`` unreflected memories older than ``before``: the
        periodic decay scan's work list. Returns scope keys and counts only, never content."""
        rows = self.executor.run(
            "MATCH (m:Memory) WHERE m.status IN $statuses AND m.type <> 'reflection' AND m.created_at <= $before "
            "AND NOT (m)<-[:DERIVED_FROM]-(:Memory {type: 'reflection'}) "
            "WITH m.user_id AS user_id, m.agent_id AS agent_id, count(m) AS n WHERE n >= $min_count "
            "RETURN user_id, agent_id, n ORDER BY n DESC LIMIT $limit",
            {"statuses": list(statuses), "before": float(before), "min_count": int(min_count), "limit": int(limit)},
            write=False,
        )
        out = []
        for r in rows:
            sc = Scope(user_id=r.get("user_id"), agent_id=r.get("agent_id"))
            if not sc.is_empty:
                out.append((sc, int(r["n"])))
        return out

    def reweight(self, changes: Sequence[Mapping[str, Any]], scope: Scope) -> int:
        """Adjust strength (``m.strength * factor + add``) and add/remove one flag per memory, inside ``scope``.

        Strength and flags feed stage-2 scoring only (not FAISS/BM25), so no sequence bump is needed.
        Each change: ``{"id", "factor"=1.0, "add"=0.0, "flag"=None, "unflag"=None}``.
        """
        rows = [{"id": c["id"], "factor": float(c.get("factor", 1.0)), "add": float(c.get("add", 0.0)),
                 "flag": c.get("flag") or "", "unflag": c.get("unflag") or ""} for c in changes]
        if not rows:
            return 0
        out = self.executor.run(
            f"UNWIND $rows AS r MATCH (m:Memory {{id: r.id}}) WHERE {q.SCOPE_FILTER} "
            "WITH m, r, [f IN coalesce(m.flags, []) WHERE f <> r.unflag] AS fl "
            "SET m.strength = coalesce(m.strength, 1.0) * r.factor + r.add, "
            "m.flags = CASE WHEN r.flag = '' OR r.flag IN fl THEN fl ELSE fl + [r.flag] END "
            "RETURN count(m) AS n",
            {"rows": rows, **scope.as_params()},
        )
        return int(out[0]["n"]) if out else 0

    def relations_among(self, ids: Sequence[str], rels: Iterable[str], scope: Scope) -> list[tuple[str, str, str]]:
        """(src, REL, dst) edges of the given types touching ``ids``, both ends inside ``scope``'s tenant."""
        types = sorted(set(rels))
        bad = [r for r in types if r not in RELATIONS]
        if bad:
            raise InvalidInputError(f"unknown relation(s) {bad}; use {sorted(RELATIONS)}")
        if not ids or not types:
            return []
        params = {"ids": list(ids), "rels": types, **scope.as_params()}
        tenant = "($user_id IS NULL OR (a.user_id = $user_id AND b.user_id = $user_id))"
        rows = self.executor.run(
            f"UNWIND $ids AS mid MATCH (a:Memory {{id: mid}})-[x]->(b:Memory) WHERE type(x) IN $rels AND {tenant} "
            "RETURN a.id AS src, type(x) AS rel, b.id AS dst "
            f"UNION UNWIND $ids AS mid MATCH (a:Memory)-[x]->(b:Memory {{id: mid}}) WHERE type(x) IN $rels "
            f"AND {tenant} RETURN a.id AS src, type(x) AS rel, b.id AS dst",
            params, write=False,
        )
        return [(r["src"], r["rel"], r["dst"]) for r in rows]

    # ------------------------------------------------------------------ audit
    def audit(self, entries: Sequence[Mapping[str, Any]]) -> None:
        rows = self.audit_rows(entries)
        if rows:
            self.executor.run(q.AUDIT_APPEND, {"rows": rows})

    @staticmethod
    def audit_rows(entries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Audit entries as stored (``details`` serialised, an id per entry)."""
        rows = []
        for i, e in enumerate(entries):
            row = {
                "id": uuid.uuid4().hex,
                "memory_id": e.get("memory_id"),
                "action": e["action"],
                "reason": e.get("reason", ""),
                "actor": e.get("actor", "system"),
                "at": float(e.get("at") or time.time()),
                "ord": i,  # entries of one write often share a timestamp: a trail sorts them in the given order
                "user_id": e.get("user_id"),
                "agent_id": e.get("agent_id"),
                "session_id": e.get("session_id"),
                "details_json": json.dumps(e.get("details") or {}, ensure_ascii=False, default=str),
            }
            rows.append({k: v for k, v in row.items() if v is not None})
        return rows

    def audit_for(self, memory_id: str, scope: Scope) -> list[dict[str, Any]]:
        """One memory's audit trail, oldest first, on the full ``scope`` (which must name the tenant): the memory
        must be inside the scope, or, once it is gone, each entry's own scope ids must match."""
        rows = self.executor.run(q.AUDIT_FOR_MEMORY, {"memory_id": memory_id, **scope.as_params()}, write=False)
        out = []
        for r in rows:
            d = dict(r)
            d["details"] = json.loads(d.pop("details_json") or "{}")
            out.append(d)
        return out

    # ------------------------------------------------------------------ stats
    def stats(self, scope: Scope) -> dict[str, Any]:
        rows = self.executor.run(
            f"MATCH (m:Memory) WHERE {q.SCOPE_FILTER} RETURN m.status AS status, m.type AS type, count(m) AS n",
            scope.as_params(), write=False,
        )
        by_status: dict[str, int] = {}
        by_type: dict[str, int] = {}
        for r in rows:
            by_status[r["status"]] = by_status.get(r["status"], 0) + int(r["n"])
            by_type[r["type"]] = by_type.get(r["type"], 0) + int(r["n"])
        ns = entity_namespace(scope)
        ent = self.executor.run(
            "MATCH (e:Entity) WHERE ($ns = '' OR e.user_id = $ns) RETURN count(e) AS n", {"ns": ns}, write=False
        )
        return {
            "memories": sum(by_status.values()),
            "by_status": by_status,
            "by_type": by_type,
            "entities": int(ent[0]["n"]) if ent else 0,
        }
