"""Export and restore a memory graph exactly as stored: the backup format behind ``neusym export``/``restore`` and
the read side of ``neusym graph``.

Why a separate write path: the facade's ``add`` re-extracts, re-embeds and re-decides (governance) every memory and
stamps new ids and times, so it can never reproduce a graph. Restore writes records *as they were*: same ids,
timestamps, statuses, versions, flags, embeddings, entities, RELATES facts, memory-to-memory edges and audit trail.
Only the store-local numbers ``nid`` and ``seq`` are reassigned; they are bumped from the graph's own write
sequence in the same statement as the write (see :mod:`neusym.symbolic.cypher`), so the derived indexes catch up
from the graph afterwards like after any other write.

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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neusym.errors import InvalidInputError
from neusym.record import Scope
from neusym.symbolic import cypher as q
from neusym.symbolic.convert import decode_embedding, encode_embedding
from neusym.symbolic.store import RELATIONS, SymbolicStore

__all__ = [
    "FORMAT",
    "KINDS",
    "VERSION",
    "GraphDump",
    "RestoreReport",
    "Restorer",
    "collect",
    "export_lines",
    "validate_line",
]

FORMAT = "neusym-export"
VERSION = 1
KINDS = ("header", "memory", "entity", "mentions", "relates", "edge", "audit", "end")

_LOCAL = ("nid", "seq", "embedding")  # store-local numbers are reassigned; the embedding travels on its own

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
EXISTING_IDS = "UNWIND $ids AS mid MATCH (m:Memory {id: mid}) RETURN m.id AS id"

RESTORE_MEMORIES = (
    q._BUMP  # the same sequence bump as every other indexed write: nid/seq come from the graph's counter
    + "UNWIND range(0, size($rows) - 1) AS i "
    "WITH base + i + 1 AS s, $rows[i] AS r "
    "CREATE (m:Memory) SET m = r.props, m.seq = s, m.nid = s, m.embedding = r.embedding "
    "RETURN count(m) AS n"
)
RESTORE_ENTITIES = (
    "UNWIND $rows AS r MERGE (e:Entity {uid: r.uid}) ON CREATE SET e += r.props RETURN count(e) AS n"
)
RESTORE_MENTIONS = (
    "UNWIND $rows AS r MATCH (m:Memory {id: r.memory_id}) MATCH (e:Entity {uid: r.uid}) "
    "MERGE (m)-[x:MENTIONS]->(e) SET x += r.props RETURN count(x) AS n"
)
RESTORE_RELATES = (
    "UNWIND $rows AS r MATCH (a:Entity {uid: r.src}) MATCH (b:Entity {uid: r.dst}) "
    "CREATE (a)-[x:RELATES]->(b) SET x += r.props RETURN count(x) AS n"
)
RESTORE_AUDIT = "UNWIND $rows AS r MERGE (a:Audit {id: r.id}) ON CREATE SET a += r.props RETURN count(a) AS n"


def _restore_edges(rel: str) -> str:
    """Memory-to-memory edges of one type; the type comes from the fixed RELATIONS set, never from the file."""
    if rel not in RELATIONS:
        raise InvalidInputError(f"unknown relation {rel!r}; use one of {sorted(RELATIONS)}")
    return q.LINK + f"MERGE (a)-[x:{rel}]->(b) SET x += r.props RETURN count(x) AS n"


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
                                    "props": {k: v for k, v in p.items() if k not in _LOCAL and v is not None}}
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


# ---------------------------------------------------------------------------------------------------- validation
def _need(cond: bool, where: str, what: str) -> None:
    if not cond:
        raise InvalidInputError(f"{where}: {what}")


def validate_line(line: Any, where: str) -> dict[str, Any]:
    """Check one parsed export line's shape (before anything is written); returns it."""
    _need(isinstance(line, dict), where, "not a JSON object")
    kind = line.get("kind")
    _need(kind in KINDS, where, f"unknown kind {kind!r}")
    if kind == "header":
        _need(line.get("format") == FORMAT, where, f"not a NeuSym export (format {line.get('format')!r})")
        _need(isinstance(line.get("version"), int) and line["version"] <= VERSION, where,
              f"export version {line.get('version')!r} is newer than this NeuSym understands ({VERSION})")
    elif kind == "memory":
        props = line.get("props")
        _need(isinstance(props, dict), where, "memory without props")
        mp: dict[str, Any] = props
        _need(isinstance(mp.get("id"), str) and bool(mp.get("id")), where, "memory without props.id")
        _need(isinstance(mp.get("content"), str), where, "memory without content")
        _need(line.get("id") in (None, mp.get("id")), where, "memory id and props.id differ")
        emb = line.get("embedding")
        _need(emb is None or isinstance(emb, str), where, "embedding must be a base64 string")
    elif kind == "entity":
        _need(isinstance(line.get("uid"), str) and isinstance(line.get("props"), dict), where, "entity without uid")
    elif kind == "mentions":
        _need(isinstance(line.get("memory_id"), str) and isinstance(line.get("uid"), str), where,
              "mentions without memory_id/uid")
    elif kind == "relates":
        _need(isinstance(line.get("src"), str) and isinstance(line.get("dst"), str)
              and isinstance(line.get("props"), dict), where, "relates without src/dst/props")
    elif kind == "edge":
        _need(line.get("rel") in RELATIONS, where, f"unknown relation {line.get('rel')!r}")
        _need(isinstance(line.get("src"), str) and isinstance(line.get("dst"), str), where, "edge without src/dst")
    elif kind == "audit":
        props = line.get("props")
        _need(isinstance(props, dict) and isinstance(props.get("id"), str), where, "audit entry without props.id")
    return line  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------------- restoring
@dataclass
class RestoreReport:
    memories: int = 0
    skipped: int = 0
    entities: int = 0
    mentions: int = 0
    relates: int = 0
    edges: int = 0
    audit: int = 0
    reembedded: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


class Restorer:
    """Writes export lines back into a graph as they were (see the module docstring).

    Memories are written in batches as they are fed; entities, facts, edges and audit entries are kept until
    :meth:`finish` (they may only refer to memories that exist by then). Memories whose id already exists are
    skipped with ``skip_existing`` (their edges are merged, never duplicated); otherwise the caller should have
    refused the file after :meth:`existing`. ``embed`` re-embeds memories that carry no embedding (or all of them
    with ``reembed``), e.g. when the target uses another embedder.
    """

    def __init__(self, store: SymbolicStore, *, skip_existing: bool = False, batch: int = 200,
                 embed: Callable[[list[str]], np.ndarray] | None = None, reembed: bool = False,
                 dimension: int | None = None) -> None:
        self.store = store
        self.skip_existing = skip_existing
        self.batch = max(1, int(batch))
        self.embed = embed
        self.reembed = reembed
        self.dimension = dimension
        self.report = RestoreReport()
        self._rows: list[dict[str, Any]] = []
        self._restored: set[str] = set()
        self._later: dict[str, list[dict[str, Any]]] = {k: [] for k in ("entity", "mentions", "relates", "edge",
                                                                        "audit")}

    def existing(self, ids: Iterable[str]) -> set[str]:
        """Which of ``ids`` already name a memory in the graph."""
        out: set[str] = set()
        chunk: list[str] = []
        for i in ids:
            chunk.append(i)
            if len(chunk) >= 1000:
                out.update(self._existing(chunk))
                chunk = []
        if chunk:
            out.update(self._existing(chunk))
        return out

    def _existing(self, ids: list[str]) -> set[str]:
        return {str(r["id"]) for r in self.store.executor.run(EXISTING_IDS, {"ids": ids}, write=False)}

    def feed(self, line: Mapping[str, Any]) -> None:
        kind = line.get("kind")
        if kind in ("header", "end"):
            return
        if kind == "memory":
            self._rows.append(dict(line))
            if len(self._rows) >= self.batch:
                self._flush()
            return
        self._later[str(kind)].append(dict(line))

    def _flush(self) -> None:
        rows, self._rows = self._rows, []
        if not rows:
            return
        ids = [str(r["props"]["id"]) for r in rows]
        there = self._existing(ids)
        if there and not self.skip_existing:
            raise InvalidInputError(f"{len(there)} memories of the export already exist (e.g. {sorted(there)[0]}); "
                                    "restore into an empty graph or skip them")
        rows = [r for r in rows if str(r["props"]["id"]) not in there]
        self.report.skipped += len(there)
        need = [r for r in rows if self.reembed or not r.get("embedding")]
        if need and self.embed is not None:
            vecs = self.embed([str(r["props"]["content"]) for r in need])
            for r, v in zip(need, vecs, strict=True):
                r["embedding"] = encode_embedding(np.asarray(v, dtype=np.float32))
            self.report.reembedded += len(need)
        if self.dimension is not None:
            for r in rows:
                emb = r.get("embedding")
                if emb and decode_embedding(emb).shape[0] != self.dimension:
                    raise InvalidInputError(
                        f"memory {r['props']['id']} has a {decode_embedding(emb).shape[0]}-d embedding; the target "
                        f"index is {self.dimension}-d (re-embed, or use the embedder the export was made with)")
        if not rows:
            return
        payload = [{"props": {k: v for k, v in r["props"].items() if k not in _LOCAL and v is not None},
                    "embedding": r.get("embedding")} for r in rows]
        self.store.executor.run(RESTORE_MEMORIES, {"rows": payload, "n": len(payload)})
        self._restored.update(str(r["props"]["id"]) for r in rows)
        self.report.memories += len(rows)

    def finish(self) -> RestoreReport:
        """Write everything that refers to memories, in dependency order; returns the counts."""
        self._flush()
        run = self.store.executor.run
        later = self._later
        for start in range(0, len(later["entity"]), self.batch):
            rows = [{"uid": e["uid"], "props": _clean(e.get("props"))}
                    for e in later["entity"][start:start + self.batch]]
            run(RESTORE_ENTITIES, {"rows": rows})
            self.report.entities += len(rows)
        mentions = [m for m in later["mentions"] if m["memory_id"] in self._restored]
        for start in range(0, len(mentions), self.batch):
            rows = [{"memory_id": m["memory_id"], "uid": m["uid"], "props": _clean(m.get("props"))}
                    for m in mentions[start:start + self.batch]]
            run(RESTORE_MENTIONS, {"rows": rows})
            self.report.mentions += len(rows)
        relates = [r for r in later["relates"] if r["props"].get("memory_id") in self._restored]
        for start in range(0, len(relates), self.batch):
            rows = [{"src": r["src"], "dst": r["dst"], "props": _clean(r["props"])}
                    for r in relates[start:start + self.batch]]
            run(RESTORE_RELATES, {"rows": rows})
            self.report.relates += len(rows)
        by_rel: dict[str, list[dict[str, Any]]] = {}
        for e in later["edge"]:
            by_rel.setdefault(str(e["rel"]), []).append({"src": e["src"], "dst": e["dst"],
                                                          "props": _clean(e.get("props"))})
        for rel, rows in sorted(by_rel.items()):
            stmt = _restore_edges(rel)
            for start in range(0, len(rows), self.batch):
                out = run(stmt, {"rows": rows[start:start + self.batch]})
                self.report.edges += int(out[0]["n"]) if out else 0
        for start in range(0, len(later["audit"]), self.batch):
            rows = [{"id": a["props"]["id"], "props": _clean(a["props"])}
                    for a in later["audit"][start:start + self.batch]]
            run(RESTORE_AUDIT, {"rows": rows})
            self.report.audit += len(rows)
        for v in later.values():
            v.clear()
        return self.report
