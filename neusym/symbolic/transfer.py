"""Export and restore a memory graph exactly as stored: the graph side of ``mem.admin.export``/``restore`` (see
:mod:`neusym.backup` for the file, its validation and the scope rules) and the read side of ``neusym graph``.

Why a separate write path: the facade's ``add`` re-extracts, re-embeds and re-decides (governance) every memory and
stamps new ids and times, so it can never reproduce a graph. Restore writes records *as they were*: same ids,
timestamps, statuses, versions, flags, embeddings, entities, RELATES facts, memory-to-memory edges and audit trail.
Only the store-local numbers ``nid`` and ``seq`` are reassigned; they are bumped from the graph's own write
sequence in the statement that makes the restore visible, so the derived indexes catch up from the graph afterwards
like after any other write.

Why staged: neither backend offers one transaction for a restore of any size (FalkorDB has no multi-statement
transactions; a Neo4j transaction holding 100k memories is a memory problem). So a restore is written as nodes under
labels no read path matches (``RestoreMemory``/``RestoreEntity``/``RestoreAudit``, and ``RestoreLink`` nodes for its
relationships), and turned into ``Memory``/``Entity``/``Audit`` nodes and real relationships by ONE statement, which
both backends run atomically. Until then no search, query, export or other process sees any of it; a failure deletes
it; a killed process leaves it invisible until the next restore sweeps it.

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
from neusym.symbolic import staging
from neusym.symbolic.convert import decode_embedding
from neusym.symbolic.staging import (
    RESTORE_RUN,
    STAGED_AUDIT,
    STAGED_ENTITY,
    STAGED_LABELS,
    STAGED_LINK,
    STAGED_MEMORY,
)
from neusym.symbolic.store import RELATIONS, SymbolicStore

__all__ = [
    "FORMAT",
    "KINDS",
    "LOCAL_PROPS",
    "VERSION",
    "GraphDump",
    "LINK_TYPES",
    "RESERVED_PREFIX",
    "RESTORE_RUN",
    "STAGED_LABELS",
    "STAGED_MEMORY",
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
# A restore is written *staged*: as nodes under labels no read path matches, with no relationship to any live node
# (relationships are staged as ``RestoreLink`` nodes naming their endpoints). ONE statement (:func:`_commit_statement`)
# then creates the live nodes and relationships from them and marks the run committed; on both backends a single
# statement is atomic, so readers see the whole restore or none of it. (Copying, not relabelling: FalkorDB's
# ``SET n:Label`` is superlinear in the number of nodes per statement, 25 s for 5,000 memories against 0.9 s for the
# copy.) The staged copies are deleted by the statements after it (:func:`abort_staged`), never by the commit: no
# statement both deletes and creates (see :mod:`neusym.symbolic.write_rules`). A failure before the commit deletes
# what was staged (:meth:`StagedRestore.abort`); what a killed process left staged is invisible to every read and
# removed on the next open, by the janitor and by the next restore (:func:`sweep_stale`: at once for a committed run,
# after ``stale_after`` without a heartbeat for one still staging); a forget of the tenant removes it at once
# (:func:`forget_staged`).
RESERVED_PREFIX = "restore_"
"""Property names a restored item may not carry: the staging bookkeeping uses them."""
LINK_TYPES = ("MENTIONS", "RELATES", *sorted(RELATIONS))

STAGE_BEGIN = f"CREATE (r:{RESTORE_RUN} {{id: $rid, started_at: $now, heartbeat: $now}}) RETURN r.id AS id"
STAGE_HEARTBEAT = f"MATCH (r:{RESTORE_RUN} {{id: $rid}}) SET r.heartbeat = $now RETURN count(r) AS n"
STAGE_MEMORIES = (
    f"UNWIND $rows AS r CREATE (m:{STAGED_MEMORY}) SET m = r.props "
    "SET m.embedding = r.embedding, m.embedding_vec = r.vec, m.restore_id = $rid, m.restore_order = r.order "
    "RETURN count(m) AS n"
)
EXISTING_ENTITIES = "UNWIND $uids AS u MATCH (e:Entity {uid: u}) RETURN e.uid AS uid"
STAGE_ENTITIES = (
    f"UNWIND $rows AS r CREATE (s:{STAGED_ENTITY}) SET s = r.props SET s.uid = r.uid, s.restore_id = $rid "
    "RETURN count(s) AS n"
)
STAGE_LINKS = (
    f"UNWIND $rows AS r CREATE (l:{STAGED_LINK}) SET l = r.props "
    "SET l.restore_id = $rid, l.restore_rel = r.rel, l.restore_src = r.src, l.restore_dst = r.dst RETURN count(l) AS n"
)
STAGE_AUDIT = f"UNWIND $rows AS r CREATE (a:{STAGED_AUDIT}) SET a = r SET a.restore_id = $rid RETURN count(a) AS n"
EXISTING_AUDIT = (
    "UNWIND $rows AS r MATCH (a:Audit {memory_id: r.memory_id}) WHERE a.id = r.id RETURN a.id AS id"
)
EXISTING_AUDIT_WITHOUT_MEMORY = "MATCH (a:Audit) WHERE a.memory_id IS NULL AND a.id IN $ids RETURN a.id AS id"

# the endpoints of each staged link kind: (label of src, key, label of dst, key, create or merge)
_LINK_ENDS = {"MENTIONS": ("Memory", "id", "Entity", "uid", "MERGE"),
              "RELATES": ("Entity", "uid", "Entity", "uid", "CREATE"),
              **{rel: ("Memory", "id", "Memory", "id", "MERGE") for rel in RELATIONS}}
_BOOKKEEPING = "restore_id = null, {v}.restore_rel = null, {v}.restore_src = null, {v}.restore_dst = null"


def _commit_statement(kinds: Sequence[str]) -> str:
    """The one statement that makes a staged restore visible (and marks its run committed), or changes nothing.

    ``kinds``: what was staged (``entities``, ``memories``, ``audit`` and link types); a part per kind, only for
    kinds that have items, so every part's MATCH finds rows. The guard up front refuses (the statement returns no
    row and writes nothing) when the staged counts are not what was staged, when the graph gained a memory id or
    entity uid of the restore since it was validated (another writer: committing would duplicate an id; FalkorDB
    has no uniqueness constraints), or when a live endpoint the links name (an entity the graph already had, a
    memory kept with ``skip_existing``) is gone. ``nid``/``seq`` come from the graph's write counter in the same
    statement, in file order, so the derived indexes catch up from the graph afterwards like after any write.
    """
    guard = (
        # the restored vectors are the store's embedder's (cypher.EMBEDDER_GUARD), then the staged counts:
        # (collect + IN rather than an OPTIONAL MATCH keyed on a possibly-null node: FalkorDB cannot read a property
        # of a null optional binding)
        q.EMBEDDER_GUARD
        + f"OPTIONAL MATCH (m:{STAGED_MEMORY} {{restore_id: $rid}}) WITH collect(m.id) AS sids "
        "OPTIONAL MATCH (x:Memory) WHERE x.id IN sids WITH size(sids) AS staged, count(x) AS clash "
        f"OPTIONAL MATCH (se:{STAGED_ENTITY} {{restore_id: $rid}}) WITH staged, clash, collect(se.uid) AS suids "
        "OPTIONAL MATCH (xe:Entity) WHERE xe.uid IN suids "
        "WITH staged, clash, size(suids) AS entities, count(xe) AS eclash "
        f"OPTIONAL MATCH (sa:{STAGED_AUDIT} {{restore_id: $rid}}) "
        "WITH staged, clash, entities, eclash, count(sa) AS audits "
        f"OPTIONAL MATCH (sl:{STAGED_LINK} {{restore_id: $rid}}) "
        "WITH staged, clash, entities, eclash, audits, count(sl) AS links "
        "OPTIONAL MATCH (le:Entity) WHERE le.uid IN $live_uids "
        "WITH staged, clash, entities, eclash, audits, links, count(DISTINCT le.uid) AS live_uids "
        "OPTIONAL MATCH (lm:Memory) WHERE lm.id IN $live_ids "
        "WITH staged, clash, entities, eclash, audits, links, live_uids, count(DISTINCT lm.id) AS live_ids "
        f"OPTIONAL MATCH (run:{RESTORE_RUN} {{id: $rid}}) WHERE run.committed_at IS NULL "
        "WITH staged, clash, entities, eclash, audits, links, live_uids, live_ids, count(run) AS runs "
        "WHERE staged = $n AND clash = 0 AND entities = $n_entities AND eclash = 0 AND audits = $n_audit "
        "AND links = $n_links AND live_uids = size($live_uids) AND live_ids = size($live_ids) AND runs = 1 "
        + q._BUMP
    )
    parts = [guard]
    carried = ["base"]

    def step(body: str, name: str) -> None:
        parts.append(f"{body} WITH {', '.join(carried)}, count(*) AS {name} ")
        carried.append(name)

    if "entities" in kinds:
        step(f"MATCH (s:{STAGED_ENTITY} {{restore_id: $rid}}) CREATE (e:Entity) SET e = properties(s) "
             "SET e.restore_id = null", "entities")
    if "memories" in kinds:
        step(f"MATCH (s:{STAGED_MEMORY} {{restore_id: $rid}}) CREATE (m:Memory) SET m = properties(s) "
             "SET m.seq = base + s.restore_order, m.nid = base + s.restore_order, m.restore_id = null, "
             "m.restore_order = null", "memories")
    if "audit" in kinds:
        step(f"MATCH (s:{STAGED_AUDIT} {{restore_id: $rid}}) CREATE (a:Audit) SET a = properties(s) "
             "SET a.restore_id = null", "audit")
    for i, rel in enumerate(LINK_TYPES):
        if rel not in kinds:
            continue
        src_label, src_key, dst_label, dst_key, verb = _LINK_ENDS[rel]
        copy = "SET y = properties(l)" if verb == "CREATE" else "SET y += properties(l)"
        step(f"MATCH (l:{STAGED_LINK} {{restore_id: $rid, restore_rel: '{rel}'}}) "
             f"MATCH (a:{src_label} {{{src_key}: l.restore_src}}) MATCH (b:{dst_label} {{{dst_key}: l.restore_dst}}) "
             f"{verb} (a)-[y:{rel}]->(b) {copy} SET y.{_BOOKKEEPING.format(v='y')}", f"l{i}")
    counts = [c for c in carried if c != "base"]
    edges = [f"l{i}" for i, rel in enumerate(LINK_TYPES) if rel in RELATIONS and f"l{i}" in counts]
    out = [f"{c} AS {c}" for c in counts if not c.startswith("l")]
    for i, rel in enumerate(LINK_TYPES):
        if rel in ("MENTIONS", "RELATES") and f"l{i}" in counts:
            out.append(f"l{i} AS {rel.lower()}")
    if edges:
        out.append(f"{' + '.join(edges)} AS edges")
    # the run is marked, not deleted: the staged copies and the run go in the statements after this one
    parts.append(f"MATCH (run:{RESTORE_RUN} {{id: $rid}}) SET run.committed_at = $now RETURN true AS ok"
                 + "".join(f", {o}" for o in out))
    return "".join(parts)


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
    """Writes a validated export into the graph as staged nodes and makes them live in one statement.

    Usage::

        with StagedRestore(store) as staged:   # an exception inside aborts: the staged nodes are deleted
            staged.memories(rows); staged.entities(rows); staged.links("MENTIONS", rows); ...
            counts = staged.commit(live_ids=...)

    The caller validates everything first (:mod:`neusym.backup`): every link endpoint is a memory or entity of
    the same restore, or a live one it names to :meth:`commit`. The methods here check that each batch landed
    whole.
    """

    def __init__(self, store: SymbolicStore, *, restore_id: str | None = None,
                 stale_after: float = 3600.0) -> None:
        self.store = store
        self.run = store.executor.run
        self.id = restore_id or uuid.uuid4().hex
        self.stale_after = float(stale_after)
        self.staged: dict[str, int] = dict.fromkeys(("memories", "entities", "audit", *LINK_TYPES), 0)
        self.live_uids: set[str] = set()  # entities of the file the graph already had (used as they are)
        self._order = 0
        self._state = "new"

    # ------------------------------------------------------------------ lifecycle
    def begin(self) -> StagedRestore:
        sweep_stale(self.store, older_than=self.stale_after)
        self.run(STAGE_BEGIN, {"rid": self.id, "now": time.time()})
        self._state = "staging"
        return self

    def __enter__(self) -> StagedRestore:
        return self.begin() if self._state == "new" else self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if self._state == "staging":
            self.abort()

    def _landed(self, what: str, rows: int, written: int) -> None:
        if written != rows:
            raise BackendError(f"restore {self.id}: {rows - written} of {rows} staged {what} were not written; "
                               "nothing was restored")
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
        self._landed("memories", len(payload), n)
        self.staged["memories"] += n
        return n

    def entities(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """``{"uid", "props"}`` rows; entities the graph already has are kept as they are (and checked to still
        be there at the commit). Returns how many were staged as new."""
        self._need_staging()
        if not rows:
            return 0
        uids = [str(r["uid"]) for r in rows]
        there = {str(r["uid"]) for r in self.run(EXISTING_ENTITIES, {"uids": uids}, write=False)}
        self.live_uids.update(there)
        new = [{"uid": r["uid"], "props": dict(r["props"])} for r in rows if str(r["uid"]) not in there]
        if not new:
            return 0
        n = _count(self.run(STAGE_ENTITIES, {"rows": new, "rid": self.id}))
        self._landed("entities", len(new), n)
        self.staged["entities"] += n
        return n

    def links(self, rel: str, rows: Sequence[Mapping[str, Any]]) -> int:
        """Relationships of one type (``MENTIONS``, ``RELATES`` or one of :data:`RELATIONS`: never a type named by
        a file) as ``{"src", "dst", "props"}`` rows; MENTIONS go from a memory id to an entity uid."""
        self._need_staging()
        if rel not in _LINK_ENDS:
            raise InvalidInputError(f"unknown relation {rel!r}; use one of {list(LINK_TYPES)}")
        if not rows:
            return 0
        payload = [{"rel": rel, "src": r["src"], "dst": r["dst"], "props": dict(r.get("props") or {})}
                   for r in rows]
        n = _count(self.run(STAGE_LINKS, {"rows": payload, "rid": self.id}))
        self._landed(f"{rel} links", len(payload), n)
        self.staged[rel] += n
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
        self._landed("audit entries", len(rows), n)
        self.staged["audit"] += n
        return n

    # ------------------------------------------------------------------ the end
    def commit(self, *, live_ids: Sequence[str] = ()) -> dict[str, int]:
        """Make everything staged live in one statement; returns what became live.

        ``live_ids``: memories the graph already had that links name (kept with ``skip_existing``).
        """
        self._need_staging()
        links = {rel: self.staged[rel] for rel in LINK_TYPES}
        kinds = [k for k in ("entities", "memories", "audit") if self.staged[k]] + [r for r, n in links.items() if n]
        rows = self.run(_commit_statement(kinds), {
            "rid": self.id, "n": self.staged["memories"], "n_entities": self.staged["entities"],
            "n_audit": self.staged["audit"], "n_links": sum(links.values()), "live_uids": sorted(self.live_uids),
            "live_ids": sorted(set(live_ids)), "now": time.time(), "embedder": self.store.embedder_identity})
        if not rows or not rows[0].get("ok"):
            self.abort()
            self.store.refused_write()  # a re-embed elsewhere since this process opened the store: say so
            raise BackendError(f"restore {self.id}: the graph changed while restoring (an id of the restore was "
                               "written, or an entity or memory it links to was deleted); nothing was restored "
                               "(retry)")
        self._state = "committed"
        # the staged copies are garbage now (invisible; a crash here leaves them to sweep_stale, which removes a
        # committed run's at once)
        abort_staged(self.store, self.id)
        return {k: int(rows[0].get(k) or 0) for k in ("memories", "entities", "audit", "mentions", "relates",
                                                      "edges")}

    def abort(self) -> None:
        """Delete everything this restore staged (batch by batch); the store is as it was before."""
        if self._state == "committed":
            return
        self._state = "aborted"
        abort_staged(self.store, self.id)


def abort_staged(store: SymbolicStore, restore_id: str, *, batch: int = 10_000) -> int:
    """Delete the staged nodes of one restore (never anything live); returns how many were deleted. The graph's
    invariants are checked after (a deletion: see :meth:`SymbolicStore.check_integrity`)."""
    deleted = staging.abort_staged(store.executor, restore_id, batch=batch)
    if deleted:
        store.check_integrity()
    return deleted


def sweep_stale(store: SymbolicStore, *, older_than: float = 3600.0) -> int:
    """Remove what restores that died mid-way (process killed) left staged; see :func:`staging.sweep_stale`."""
    swept = staging.sweep_stale(store.executor, older_than=older_than)
    if swept:
        store.check_integrity()
    return swept
