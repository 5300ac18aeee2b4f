"""Export and restore a memory graph exactly as stored: the graph side of ``mem.export``/``mem.restore`` (see
:mod:`neusym.backup` for the file, its validation and the scope rules) and the read side of ``neusym graph``.

Why a separate write path: the facade's ``add`` re-extracts, re-embeds and re-decides (governance) every memory and
stamps new ids and times, so it can never reproduce a graph. Restore writes records *as they were*: same ids,
timestamps, statuses, versions, flags, embeddings, entities, RELATES facts, memory-to-memory edges and audit trail.
Only the store-local numbers ``nid`` and ``seq`` are reassigned; they are bumped from the graph's own write
sequence in the statement that makes the restore visible, so the derived indexes catch up from the graph afterwards
like after any other write.

Why staged: neither backend offers one transaction for a restore of any size (FalkorDB has no multi-statement
transactions; a Neo4j transaction holding 100k memories is a memory problem). So a restore is written under labels
no read path matches (``RestoreMemory``/``RestoreEntity``/``RestoreAudit``, ``RESTORE_EDGE``) and turned into
``Memory``/``Entity``/``Audit`` nodes and real edges by ONE statement (:data:`COMMIT`), which both backends run
atomically. Until then no search, query, export or other process sees any of it; a failure deletes it; a killed
process leaves it invisible until the next restore sweeps it.

The format is JSON Lines, one object per line with a ``kind``::

    {"kind": "header", "format": "neusym-export", "version": 1, "embedder": ..., "dimension": ..., ...}
    {"kind": "memory", "id": ..., "props": {every graph property but nid/seq/embedding}, "embedding": base64}
    {"kind": "entity", "uid": ..., "props": {...}}
    {"kind": "mentions", "memory_id": ..., "uid": ..., "props": {...}}
    {"kind": "relates", "src": uid, "dst": uid, "props": {"predicate": ..., "memory_id": ..., ...}}
    {"kind": "edge", "rel": "SUPERSEDES" | "DERIVED_FROM" | ..., "src": id, "dst": id, "props": {...}}
    {"kind": "audit", "props": {...}}
    {"kind": "end", "counts": {...}}

Lines are sorted deterministically and keys are sorted, so exporting a restored graph gives the same lines again.
The ``end`` line carries the counts; a file without it is treated as truncated.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from neusym.errors import BackendError, InvalidInputError
from neusym.record import Scope
from neusym.symbolic import cypher as q
from neusym.symbolic.convert import decode_embedding
from neusym.symbolic.dialects import Dialect, is_duplicate_schema_error
from neusym.symbolic.store import RELATIONS, SymbolicStore

__all__ = [
    "FORMAT",
    "KINDS",
    "LOCAL_PROPS",
    "VERSION",
    "GraphDump",
    "StagedRestore",
    "abort_staged",
    "collect",
    "existing_memories",
    "export_lines",
    "sweep_stale",
]

log = logging.getLogger(__name__)

FORMAT = "neusym-export"
VERSION = 1
KINDS = ("header", "memory", "entity", "mentions", "relates", "edge", "audit", "end")

LOCAL_PROPS = ("nid", "seq", "embedding", "embedding_vec")
"""Store-local memory properties: ``nid``/``seq`` are reassigned on restore, the embedding travels on its own line
field and ``embedding_vec`` (the native vector index's copy of it) is rebuilt from it."""

# ---------------------------------------------------------------------------------------------------- statements
_MEMORY_FILTER = f"{q.SCOPE_FILTER} AND ($statuses IS NULL OR m.status IN $statuses)"

EXPORT_MEMORIES_ASC = (
    f"MATCH (m:Memory) WHERE m.nid > $cursor AND {_MEMORY_FILTER} "
    "RETURN m.nid AS nid, properties(m) AS props ORDER BY m.nid LIMIT $limit"
)
EXPORT_MEMORIES_DESC = (
    f"MATCH (m:Memory) WHERE m.nid < $cursor AND {_MEMORY_FILTER} "
    "RETURN m.nid AS nid, properties(m) AS props ORDER BY m.nid DESC LIMIT $limit"
)
EXPORT_MENTIONS = (
    "UNWIND $ids AS mid MATCH (m:Memory {id: mid})-[x:MENTIONS]->(e:Entity) "
    "RETURN mid AS memory_id, e.uid AS uid, properties(x) AS props"
)
# A memory's facts hang between entities it mentions and carry its id (see CREATE_MEMORIES / UPDATE_WITH_RELATIONS);
# MENTIONS is MERGEd, so each fact comes back exactly once.
EXPORT_RELATES = (
    "UNWIND $ids AS mid MATCH (m:Memory {id: mid})-[:MENTIONS]->(a:Entity)-[x:RELATES]->(b:Entity) "
    "WHERE x.memory_id = mid "
    "RETURN a.uid AS src, b.uid AS dst, properties(x) AS props"
)
EXPORT_EDGES = (
    "UNWIND $ids AS mid MATCH (a:Memory {id: mid})-[x]->(b:Memory) WHERE type(x) IN $rels "
    "RETURN a.id AS src, type(x) AS rel, b.id AS dst, properties(x) AS props"
)
EXPORT_ENTITIES = "UNWIND $uids AS u MATCH (e:Entity {uid: u}) RETURN properties(e) AS props"
EXPORT_AUDIT_FOR_IDS = "UNWIND $ids AS mid MATCH (a:Audit {memory_id: mid}) RETURN properties(a) AS props"
EXPORT_AUDIT_FOR_TENANT = (
    "MATCH (a:Audit) WHERE ($user_id IS NULL OR a.user_id = $user_id) RETURN properties(a) AS props"
)
EXISTING_IDS = "UNWIND $ids AS mid MATCH (m:Memory {id: mid}) RETURN m.id AS id, m.user_id AS user_id"


# ---------------------------------------------------------------------------------------------------- reading
@dataclass
class GraphDump:
    """A scope's graph in memory (what ``neusym graph`` draws). Memories keep their graph properties."""

    memories: list[dict[str, Any]] = field(default_factory=list)
    entities: list[dict[str, Any]] = field(default_factory=list)
    mentions: list[dict[str, Any]] = field(default_factory=list)
    relates: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    audit: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False


def _clean(props: Mapping[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (props or {}).items() if v is not None}


def _memory_pages(store: SymbolicStore, scope: Scope, *, statuses: Sequence[str] | None, newest_first: bool,
                  limit: int | None, page: int, over: list[bool]) -> Iterator[list[dict[str, Any]]]:
    """Pages of memory properties in ``nid`` order; sets ``over[0]`` when ``limit`` cut more memories off."""
    stmt = EXPORT_MEMORIES_DESC if newest_first else EXPORT_MEMORIES_ASC
    cursor = 2**62 if newest_first else -1
    left = limit
    while left is None or left > 0:
        size = page if left is None else min(page, left + 1)  # one extra row tells whether the limit cut
        rows = store.executor.run(stmt, {**scope.as_params(), "statuses": list(statuses) if statuses else None,
                                         "cursor": cursor, "limit": size}, write=False)
        if left is not None and len(rows) > left:
            over[0] = True
            rows = rows[:left]
        if not rows:
            return
        yield [dict(r["props"] or {}) for r in rows]
        cursor = int(rows[-1]["nid"])
        if left is not None:
            left -= len(rows)
        if len(rows) < size:
            return


def _walk(store: SymbolicStore, scope: Scope, *, all_tenants: bool, statuses: Sequence[str] | None = None,
          newest_first: bool = False, limit: int | None = None, audit: bool = True,
          page: int = 500) -> Iterator[list[dict[str, Any]] | GraphDump]:
    """Yield the scope's memories page by page, then one :class:`GraphDump` with everything hanging off them
    (its ``memories`` list left empty: the pages were the memories).

    Edges to memories outside the exported set are dropped: a session export does not drag the tenant along.
    """
    if scope.is_empty and not all_tenants:
        raise InvalidInputError("exporting with an empty scope would cross tenants; give a scope or all_tenants")
    dump = GraphDump()
    ids: set[str] = set()
    uids: set[str] = set()
    edges: list[dict[str, Any]] = []
    run = store.executor.run
    rels = sorted(RELATIONS)
    whole_tenant = scope.agent_id is None and scope.session_id is None
    over = [False]
    for rows in _memory_pages(store, scope, statuses=statuses, newest_first=newest_first, limit=limit, page=page,
                              over=over):
        page_ids = [str(p["id"]) for p in rows]
        ids.update(page_ids)
        yield rows
        for r in run(EXPORT_MENTIONS, {"ids": page_ids}, write=False):
            uids.add(str(r["uid"]))
            dump.mentions.append({"memory_id": r["memory_id"], "uid": r["uid"], "props": _clean(r["props"])})
        for r in run(EXPORT_RELATES, {"ids": page_ids}, write=False):
            dump.relates.append({"src": r["src"], "dst": r["dst"], "props": _clean(r["props"])})
        for r in run(EXPORT_EDGES, {"ids": page_ids, "rels": rels}, write=False):
            edges.append({"rel": r["rel"], "src": r["src"], "dst": r["dst"], "props": _clean(r["props"])})
        if audit and not whole_tenant:
            dump.audit.extend(dict(r["props"] or {})
                              for r in run(EXPORT_AUDIT_FOR_IDS, {"ids": page_ids}, write=False))
    dump.truncated = over[0]
    dump.edges = [e for e in edges if e["dst"] in ids]
    uid_list = sorted(uids)
    for start in range(0, len(uid_list), page):
        for r in run(EXPORT_ENTITIES, {"uids": uid_list[start:start + page]}, write=False):
            dump.entities.append(dict(r["props"] or {}))
    if audit and whole_tenant:
        # a whole tenant (or every tenant): its full trail, including events of memories purged since
        dump.audit = [dict(r["props"] or {})
                      for r in run(EXPORT_AUDIT_FOR_TENANT, {"user_id": scope.user_id}, write=False)]
    dump.entities.sort(key=lambda e: str(e.get("uid")))
    dump.mentions.sort(key=lambda m: (str(m["memory_id"]), str(m["uid"])))
    dump.relates.sort(key=lambda r: (str(r["props"].get("memory_id")), str(r["src"]), str(r["dst"]),
                                     _sort_json(r["props"])))
    dump.edges.sort(key=lambda e: (str(e["rel"]), str(e["src"]), str(e["dst"])))
    dump.audit.sort(key=lambda a: (float(a.get("at") or 0.0), str(a.get("id"))))
    yield dump


def _sort_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def collect(store: SymbolicStore, scope: Scope, *, all_tenants: bool = False, statuses: Sequence[str] | None = None,
            limit: int | None = None, audit: bool = False, embeddings: bool = False) -> GraphDump:
    """The scope's graph in memory, the newest ``limit`` memories (``truncated`` says whether more exist)."""
    memories: list[dict[str, Any]] = []
    dump = GraphDump()
    for item in _walk(store, scope, all_tenants=all_tenants, statuses=statuses, newest_first=limit is not None,
                      limit=limit, audit=audit):
        if isinstance(item, GraphDump):
            dump = item
            continue
        for p in item:
            if not embeddings:
                p.pop("embedding", None)
            memories.append(p)
    dump.memories = sorted(memories, key=lambda p: int(p.get("nid") or 0))
    return dump


def export_lines(store: SymbolicStore, scope: Scope, *, all_tenants: bool = False, embeddings: bool = True,
                 header: Mapping[str, Any] | None = None, page: int = 500) -> Iterator[dict[str, Any]]:
    """Every line of an export of ``scope``; memories stream page by page, so a big export never sits in memory."""
    yield {"kind": "header", "format": FORMAT, "version": VERSION, "scope": scope.as_params(),
           "all_tenants": bool(all_tenants), "embeddings": bool(embeddings), **dict(header or {})}
    counts = dict.fromkeys(("memory", "entity", "mentions", "relates", "edge", "audit"), 0)
    dump = GraphDump()
    for item in _walk(store, scope, all_tenants=all_tenants, page=page):
        if isinstance(item, GraphDump):
            dump = item
            continue
        for p in item:
            line: dict[str, Any] = {"kind": "memory", "id": p["id"],
                                    "props": {k: v for k, v in p.items() if k not in LOCAL_PROPS and v is not None}}
            if embeddings and isinstance(p.get("embedding"), str):
                line["embedding"] = p["embedding"]
            counts["memory"] += 1
            yield line
    for e in dump.entities:
        counts["entity"] += 1
        yield {"kind": "entity", "uid": e["uid"], "props": e}
    for m in dump.mentions:
        counts["mentions"] += 1
        yield {"kind": "mentions", **m}
    for r in dump.relates:
        counts["relates"] += 1
        yield {"kind": "relates", **r}
    for e in dump.edges:
        counts["edge"] += 1
        yield {"kind": "edge", **e}
    for a in dump.audit:
        counts["audit"] += 1
        yield {"kind": "audit", "props": a}
    yield {"kind": "end", "counts": counts}


# ---------------------------------------------------------------------------------------------------- restoring
# A restore is written *staged*, under labels and a relationship type no read path matches, and made visible by ONE
# statement (:data:`COMMIT`): on both backends a single statement is atomic, so readers see the whole restore or
# none of it. A failure before the commit deletes what was staged (:meth:`StagedRestore.abort`); a process killed
# mid-restore leaves staged items that no query sees, removed by the next restore (:func:`sweep_stale`).
STAGED_MEMORY = "RestoreMemory"
STAGED_ENTITY = "RestoreEntity"
STAGED_AUDIT = "RestoreAudit"
STAGED_EDGE = "RESTORE_EDGE"
RESTORE_RUN = "RestoreRun"
_STAGING_INDEXES = ((STAGED_MEMORY, "id"), (STAGED_ENTITY, "uid"), (RESTORE_RUN, "id"))

STAGE_BEGIN = f"CREATE (r:{RESTORE_RUN} {{id: $rid, started_at: $now, heartbeat: $now}}) RETURN r.id AS id"
STAGE_HEARTBEAT = f"MATCH (r:{RESTORE_RUN} {{id: $rid}}) SET r.heartbeat = $now RETURN count(r) AS n"
STAGE_MEMORIES = (
    f"UNWIND $rows AS r CREATE (m:{STAGED_MEMORY}) SET m = r.props, m.embedding = r.embedding, "
    "m.embedding_vec = r.vec, m.restore_id = $rid, m.restore_order = r.order RETURN count(m) AS n"
)
# an entity the graph already has is used as it is (its properties are the live ones); only new ones are staged
STAGE_ENTITIES = (
    "UNWIND $rows AS r OPTIONAL MATCH (e:Entity {uid: r.uid}) WITH r, e WHERE e IS NULL "
    f"CREATE (s:{STAGED_ENTITY}) SET s = r.props, s.uid = r.uid, s.restore_id = $rid RETURN count(s) AS n"
)


def _endpoint(var: str, key: str, field_: str, staged: str, live: str) -> str:
    """Bind ``var`` to the staged node of this restore with that key, else the live node (an entity the graph
    already had, or a memory kept with ``skip_existing``)."""
    return (f"OPTIONAL MATCH (s_{var}:{staged} {{{key}: r.{field_}}}) WHERE s_{var}.restore_id = $rid "
            f"OPTIONAL MATCH (l_{var}:{live} {{{key}: r.{field_}}}) ")


STAGE_MENTIONS = (
    f"UNWIND $rows AS r MATCH (m:{STAGED_MEMORY} {{id: r.memory_id}}) WHERE m.restore_id = $rid "
    + _endpoint("e", "uid", "uid", STAGED_ENTITY, "Entity")
    + "WITH r, m, coalesce(s_e, l_e) AS e WHERE e IS NOT NULL "
    "MERGE (m)-[x:MENTIONS]->(e) SET x += r.props RETURN count(x) AS n"
)
STAGE_RELATES = (
    "UNWIND $rows AS r "
    + _endpoint("a", "uid", "src", STAGED_ENTITY, "Entity")
    + "WITH r, coalesce(s_a, l_a) AS a "
    + _endpoint("b", "uid", "dst", STAGED_ENTITY, "Entity")
    + "WITH r, a, coalesce(s_b, l_b) AS b WHERE a IS NOT NULL AND b IS NOT NULL "
    f"CREATE (a)-[x:{STAGED_EDGE}]->(b) SET x = r.props SET x.restore_id = $rid, x.restore_rel = 'RELATES' "
    "RETURN count(x) AS n"
)
STAGE_EDGES = (
    "UNWIND $rows AS r "
    + _endpoint("a", "id", "src", STAGED_MEMORY, "Memory")
    + "WITH r, coalesce(s_a, l_a) AS a "
    + _endpoint("b", "id", "dst", STAGED_MEMORY, "Memory")
    + "WITH r, a, coalesce(s_b, l_b) AS b WHERE a IS NOT NULL AND b IS NOT NULL "
    f"CREATE (a)-[x:{STAGED_EDGE}]->(b) SET x = r.props SET x.restore_id = $rid, x.restore_rel = $rel "
    "RETURN count(x) AS n"
)
STAGE_AUDIT = f"UNWIND $rows AS r CREATE (a:{STAGED_AUDIT}) SET a = r SET a.restore_id = $rid RETURN count(a) AS n"
EXISTING_AUDIT = (
    "UNWIND $rows AS r MATCH (a:Audit {memory_id: r.memory_id}) WHERE a.id = r.id RETURN a.id AS id"
)
EXISTING_AUDIT_WITHOUT_MEMORY = "MATCH (a:Audit) WHERE a.memory_id IS NULL AND a.id IN $ids RETURN a.id AS id"

_ABORT = (
    f"MATCH (n:{STAGED_MEMORY} {{restore_id: $rid}}) WITH n LIMIT $limit DETACH DELETE n RETURN count(*) AS n",
    f"MATCH (n:{STAGED_ENTITY} {{restore_id: $rid}}) WITH n LIMIT $limit DETACH DELETE n RETURN count(*) AS n",
    f"MATCH (n:{STAGED_AUDIT} {{restore_id: $rid}}) WITH n LIMIT $limit DETACH DELETE n RETURN count(*) AS n",
    f"MATCH ()-[x:{STAGED_EDGE} {{restore_id: $rid}}]->() WITH x LIMIT $limit DELETE x RETURN count(*) AS n",
    f"MATCH (n:{RESTORE_RUN} {{id: $rid}}) WITH n LIMIT $limit DELETE n RETURN count(*) AS n",
)
STALE_RUNS = f"MATCH (r:{RESTORE_RUN}) WHERE r.heartbeat < $before RETURN r.id AS id"
STAGED_RUN_IDS = (
    f"MATCH (n:{STAGED_MEMORY}) RETURN DISTINCT n.restore_id AS id",
    f"MATCH (n:{STAGED_ENTITY}) RETURN DISTINCT n.restore_id AS id",
    f"MATCH (n:{STAGED_AUDIT}) RETURN DISTINCT n.restore_id AS id",
    f"MATCH ()-[x:{STAGED_EDGE}]->() RETURN DISTINCT x.restore_id AS id",
)
LIVE_RUNS = f"MATCH (r:{RESTORE_RUN}) RETURN r.id AS id"


def _commit_statement() -> str:
    """The one statement that makes a staged restore visible, or changes nothing at all.

    Its guard (``ok``) is false when the graph gained a memory id or entity uid of the restore since it was
    validated (another writer), or when the staged count is not what was staged: committing then would duplicate
    an id (FalkorDB has no uniqueness constraints; Neo4j would raise on its constraint anyway). Every later part is
    filtered on ``ok`` rather than cut off by a ``WHERE``, because each aggregation between the parts yields a row
    again. ``nid``/``seq`` come from the graph's write counter in the same statement, in file order, so the derived
    indexes catch up from the graph afterwards like after any write.
    """
    parts = [
        # (collect + IN rather than an OPTIONAL MATCH keyed on a possibly-null node: FalkorDB cannot read a property
        # of a null optional binding)
        f"OPTIONAL MATCH (m:{STAGED_MEMORY} {{restore_id: $rid}}) WITH collect(m.id) AS sids "
        "OPTIONAL MATCH (x:Memory) WHERE x.id IN sids WITH size(sids) AS staged, count(x) AS clash "
        f"OPTIONAL MATCH (se:{STAGED_ENTITY} {{restore_id: $rid}}) WITH staged, clash, collect(se.uid) AS suids "
        "OPTIONAL MATCH (xe:Entity) WHERE xe.uid IN suids WITH staged, clash, count(xe) AS eclash "
        f"OPTIONAL MATCH (run:{RESTORE_RUN} {{id: $rid}}) WITH staged, clash, eclash, count(run) AS runs "
        "WITH (staged = $n AND clash = 0 AND eclash = 0 AND runs = 1) AS ok "
        "MERGE (c:Counter {name: 'seq'}) ON CREATE SET c.value = 0 "
        "SET c.value = c.value + CASE WHEN ok THEN $n ELSE 0 END "
        "WITH ok, c.value - $n AS base ",
        f"OPTIONAL MATCH (m:{STAGED_MEMORY} {{restore_id: $rid}}) WHERE ok "
        "SET m:Memory, m.seq = base + m.restore_order, m.nid = base + m.restore_order "
        f"REMOVE m:{STAGED_MEMORY}, m.restore_id, m.restore_order "
        "WITH ok, count(m) AS memories ",
        f"OPTIONAL MATCH (e:{STAGED_ENTITY} {{restore_id: $rid}}) WHERE ok "
        f"SET e:Entity REMOVE e:{STAGED_ENTITY}, e.restore_id "
        "WITH ok, memories, count(e) AS entities ",
        f"OPTIONAL MATCH (a:{STAGED_AUDIT} {{restore_id: $rid}}) WHERE ok "
        f"SET a:Audit REMOVE a:{STAGED_AUDIT}, a.restore_id "
        "WITH ok, memories, entities, count(a) AS audit ",
        f"OPTIONAL MATCH (p)-[s:{STAGED_EDGE} {{restore_id: $rid, restore_rel: 'RELATES'}}]->(t) WHERE ok "
        "FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END | "
        "  CREATE (p)-[y:RELATES]->(t) SET y = properties(s) SET y.restore_id = null, y.restore_rel = null "
        "  DELETE s) "
        "WITH ok, memories, entities, audit, count(s) AS relates ",
    ]
    counted = ["ok", "memories", "entities", "audit", "relates"]
    for i, rel in enumerate(sorted(RELATIONS)):
        parts.append(
            f"OPTIONAL MATCH (p)-[s:{STAGED_EDGE} {{restore_id: $rid, restore_rel: '{rel}'}}]->(t) WHERE ok "
            "FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END | "
            f"  MERGE (p)-[y:{rel}]->(t) SET y += properties(s) SET y.restore_id = null, y.restore_rel = null "
            "  DELETE s) "
            f"WITH {', '.join(counted)}, count(s) AS e{i} "
        )
        counted.append(f"e{i}")
    parts.append(f"OPTIONAL MATCH (run:{RESTORE_RUN} {{id: $rid}}) WHERE ok DELETE run "
                 f"RETURN {', '.join(counted[:5])}, {' + '.join(counted[5:])} AS edges")
    return "".join(parts)


COMMIT = _commit_statement()


def _staging_index_statements(dialect: Dialect) -> list[str]:
    if dialect is Dialect.NEO4J:
        return [f"CREATE INDEX neusym_{label.lower()}_{prop} IF NOT EXISTS FOR (n:{label}) ON (n.{prop})"
                for label, prop in _STAGING_INDEXES]
    return [f"CREATE INDEX FOR (n:{label}) ON (n.{prop})" for label, prop in _STAGING_INDEXES]


def existing_memories(store: SymbolicStore, ids: Sequence[str], *, chunk: int = 1000) -> dict[str, str | None]:
    """Which of ``ids`` already name a memory in the graph, with the tenant (``user_id``) each belongs to."""
    out: dict[str, str | None] = {}
    for start in range(0, len(ids), chunk):
        for r in store.executor.run(EXISTING_IDS, {"ids": list(ids[start:start + chunk])}, write=False):
            out[str(r["id"])] = r.get("user_id")
    return out


def _count(rows: list[dict[str, Any]]) -> int:
    return int(rows[0]["n"]) if rows else 0


class StagedRestore:
    """Writes a validated export into the graph as staged items and makes them visible in one statement.

    Usage::

        with StagedRestore(store) as staged:   # an exception inside aborts: the staged items are deleted
            staged.memories(rows); staged.entities(rows); ...
            counts = staged.commit()

    The caller validates everything first (:mod:`neusym.backup`); the methods here only check that each batch
    landed whole (a staged row that found no endpoint means the graph changed underneath: the restore aborts).
    """

    def __init__(self, store: SymbolicStore, *, restore_id: str | None = None,
                 stale_after: float = 3600.0) -> None:
        self.store = store
        self.run = store.executor.run
        self.id = restore_id or uuid.uuid4().hex
        self.stale_after = float(stale_after)
        self.staged = dict.fromkeys(("memories", "entities", "mentions", "relates", "edges", "audit"), 0)
        self._order = 0
        self._state = "new"

    # ------------------------------------------------------------------ lifecycle
    def begin(self) -> StagedRestore:
        for stmt in _staging_index_statements(self.store.dialect):
            try:
                self.run(stmt)
            except BackendError as err:
                if not is_duplicate_schema_error(str(err)):
                    raise
        sweep_stale(self.store, older_than=self.stale_after)
        self.run(STAGE_BEGIN, {"rid": self.id, "now": time.time()})
        self._state = "staging"
        return self

    def __enter__(self) -> StagedRestore:
        return self.begin() if self._state == "new" else self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if self._state == "staging":
            self.abort()

    def _check(self, what: str, rows: int, written: int) -> None:
        if written != rows:
            raise BackendError(f"restore {self.id}: {rows - written} of {rows} staged {what} found no endpoint "
                               "(the graph changed during the restore); nothing was restored")
        self.run(STAGE_HEARTBEAT, {"rid": self.id, "now": time.time()})

    def _need_staging(self) -> None:
        if self._state != "staging":
            raise InvalidInputError(f"restore {self.id} is {self._state}, not staging")

    # ------------------------------------------------------------------ staging
    def memories(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """``{"props": {...}, "embedding": base64 | None}`` rows, in file order (their ``nid`` order)."""
        self._need_staging()
        if not rows:
            return 0
        payload = []
        for r in rows:
            self._order += 1
            emb = r.get("embedding")
            vec = decode_embedding(emb).tolist() if self.store.vectors and emb else None
            payload.append({"props": dict(r["props"]), "embedding": emb, "vec": vec, "order": self._order})
        n = _count(self.run(STAGE_MEMORIES, {"rows": payload, "rid": self.id}))
        self._check("memories", len(payload), n)
        self.staged["memories"] += n
        return n

    def entities(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """``{"uid", "props"}`` rows; returns how many were new (entities the graph has are kept as they are)."""
        self._need_staging()
        if not rows:
            return 0
        n = _count(self.run(STAGE_ENTITIES, {"rows": [{"uid": r["uid"], "props": dict(r["props"])} for r in rows],
                                             "rid": self.id}))
        self.staged["entities"] += n
        self.run(STAGE_HEARTBEAT, {"rid": self.id, "now": time.time()})
        return n

    def mentions(self, rows: Sequence[Mapping[str, Any]]) -> int:
        self._need_staging()
        if not rows:
            return 0
        n = _count(self.run(STAGE_MENTIONS, {"rows": [dict(r) for r in rows], "rid": self.id}))
        self._check("mentions", len(rows), n)
        self.staged["mentions"] += n
        return n

    def relates(self, rows: Sequence[Mapping[str, Any]]) -> int:
        self._need_staging()
        if not rows:
            return 0
        n = _count(self.run(STAGE_RELATES, {"rows": [dict(r) for r in rows], "rid": self.id}))
        self._check("facts", len(rows), n)
        self.staged["relates"] += n
        return n

    def edges(self, rel: str, rows: Sequence[Mapping[str, Any]]) -> int:
        """Memory-to-memory edges of one type (from the fixed :data:`RELATIONS`, never a type named by a file)."""
        self._need_staging()
        if rel not in RELATIONS:
            raise InvalidInputError(f"unknown relation {rel!r}; use one of {sorted(RELATIONS)}")
        if not rows:
            return 0
        n = _count(self.run(STAGE_EDGES, {"rows": [dict(r) for r in rows], "rid": self.id, "rel": rel}))
        self._check(f"{rel} edges", len(rows), n)
        self.staged["edges"] += n
        return n

    def existing_audit(self, entries: Sequence[Mapping[str, Any]]) -> set[str]:
        """Ids of these audit entries the graph already has (a restore with ``skip_existing`` keeps them)."""
        with_mid = [{"id": e["id"], "memory_id": e["memory_id"]} for e in entries if e.get("memory_id")]
        without = [str(e["id"]) for e in entries if not e.get("memory_id")]
        out = {str(r["id"]) for r in self.run(EXISTING_AUDIT, {"rows": with_mid}, write=False)} if with_mid else set()
        if without:
            out.update(str(r["id"]) for r in self.run(EXISTING_AUDIT_WITHOUT_MEMORY, {"ids": without}, write=False))
        return out

    def audit(self, entries: Sequence[Mapping[str, Any]]) -> int:
        """Audit entries (their stored properties); ids the graph already has are skipped. Returns how many
        were staged."""
        self._need_staging()
        if not entries:
            return 0
        there = self.existing_audit(entries)
        rows = [dict(e) for e in entries if str(e["id"]) not in there]
        if not rows:
            return 0
        n = _count(self.run(STAGE_AUDIT, {"rows": rows, "rid": self.id}))
        self._check("audit entries", len(rows), n)
        self.staged["audit"] += n
        return n

    # ------------------------------------------------------------------ the end
    def commit(self) -> dict[str, int]:
        """Make everything staged visible in one statement; returns what became visible."""
        self._need_staging()
        rows = self.run(COMMIT, {"rid": self.id, "n": self.staged["memories"]})
        if not rows or not rows[0].get("ok"):
            self.abort()
            raise BackendError(f"restore {self.id}: memories or entities with the restored ids were written by "
                               "someone else while restoring; nothing was restored (retry)")
        self._state = "committed"
        out = {k: int(rows[0].get(k) or 0) for k in ("memories", "entities", "audit", "relates", "edges")}
        out["mentions"] = self.staged["mentions"]
        return out

    def abort(self) -> None:
        """Delete everything this restore staged (batch by batch); the store is as it was before."""
        if self._state == "committed":
            return
        self._state = "aborted"
        abort_staged(self.store, self.id)


def abort_staged(store: SymbolicStore, restore_id: str, *, batch: int = 10_000) -> int:
    """Delete the staged items of one restore (never anything visible); returns how many were deleted."""
    deleted = 0
    for stmt in _ABORT:
        while True:
            n = _count(store.executor.run(stmt, {"rid": restore_id, "limit": batch}))
            deleted += n
            if n < batch:
                break
    return deleted


def sweep_stale(store: SymbolicStore, *, older_than: float = 3600.0) -> int:
    """Remove what restores that died mid-way (process killed) left staged: invisible, but taking space.

    A restore refreshes its heartbeat after every batch, so one silent for ``older_than`` seconds is dead.
    Returns how many restores were swept.
    """
    before = time.time() - float(older_than)
    run = store.executor.run
    ids = {str(r["id"]) for r in run(STALE_RUNS, {"before": before}, write=False)}
    # staged items whose run marker is gone (an abort interrupted after deleting it): nobody will commit them
    live = {str(r["id"]) for r in run(LIVE_RUNS, write=False)}
    for stmt in STAGED_RUN_IDS:
        ids.update(str(r["id"]) for r in run(stmt, write=False) if r.get("id") and str(r["id"]) not in live)
    for rid in sorted(ids):
        log.warning("removing the staged items of an interrupted restore %s", rid)
        abort_staged(store, rid)
    return len(ids)
