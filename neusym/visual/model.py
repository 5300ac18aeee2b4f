"""The drawable graph: memories and entities as nodes, MENTIONS / RELATES / memory-to-memory relations as edges.

Built from a :class:`~neusym.symbolic.transfer.GraphDump` (raw graph properties: epoch-second times, JSON-encoded
nested fields), so every writer draws exactly what the graph holds. Node ids are stable and safe in every output
format: ``m:<memory id>`` and ``e:<hash of the entity uid>`` (entity uids contain a separator byte).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from neusym.symbolic.transfer import GraphDump

__all__ = ["MEMORY_STATUSES", "MEMORY_TYPES", "RELATION_TYPES", "GraphView", "VEdge", "VNode", "build_view",
           "iso"]

MEMORY_TYPES = ("fact", "preference", "instruction", "plan", "emotion", "observation", "reflection", "knowledge")
MEMORY_STATUSES = ("active", "pending", "superseded", "archived", "quarantined", "deleted")
RELATION_TYPES = ("MENTIONS", "RELATES", "SUPERSEDES", "DERIVED_FROM", "CONFLICTS_WITH", "NEXT", "DUPLICATE_OF")

_LABEL = 64


def iso(epoch: Any) -> str | None:
    """Epoch seconds as a readable UTC time (None stays None)."""
    if not isinstance(epoch, int | float):
        return None
    return datetime.fromtimestamp(float(epoch), tz=UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def _short(text: str, n: int = _LABEL) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "\u2026"


def entity_node_id(uid: str) -> str:
    return "e:" + hashlib.sha1(uid.encode("utf-8"), usedforsecurity=False).hexdigest()[:16]


@dataclass
class VNode:
    id: str
    kind: str  # memory | entity
    label: str
    type: str  # memory type, or "entity"
    status: str  # memory status, or "entity"
    data: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "label": self.label, "type": self.type, "status": self.status,
                "data": self.data}


@dataclass
class VEdge:
    source: str
    target: str
    rel: str  # one of RELATION_TYPES
    label: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "rel": self.rel, "label": self.label,
                "data": self.data}


@dataclass
class GraphView:
    nodes: list[VNode] = field(default_factory=list)
    edges: list[VEdge] = field(default_factory=list)
    title: str = "NeuSym memory graph"
    scope: dict[str, Any] = field(default_factory=dict)
    truncated: bool = False
    generated_at: float = field(default_factory=time.time)

    @property
    def memories(self) -> list[VNode]:
        return [n for n in self.nodes if n.kind == "memory"]

    @property
    def entities(self) -> list[VNode]:
        return [n for n in self.nodes if n.kind == "entity"]

    def counts(self) -> dict[str, Any]:
        by_rel: dict[str, int] = {}
        for e in self.edges:
            by_rel[e.rel] = by_rel.get(e.rel, 0) + 1
        return {"nodes": len(self.nodes), "edges": len(self.edges), "memories": len(self.memories),
                "entities": len(self.entities), "by_relation": by_rel, "truncated": self.truncated}

    def as_dict(self) -> dict[str, Any]:
        return {"title": self.title, "scope": self.scope, "truncated": self.truncated,
                "generated_at": self.generated_at, "generated": iso(self.generated_at),
                "nodes": [n.as_dict() for n in self.nodes], "edges": [e.as_dict() for e in self.edges]}


def _json_field(value: Any, default: Any) -> Any:
    if not isinstance(value, str):
        return default
    try:
        return json.loads(value)
    except ValueError:
        return default


def _memory_node(p: dict[str, Any]) -> VNode:
    mtype = str(p.get("type") or "observation")
    status = str(p.get("status") or "active")
    data: dict[str, Any] = {
        "id": p.get("id"),
        "content": p.get("content"),
        "created_at": p.get("created_at"),
        "valid_from": p.get("valid_from"),
        "valid_to": p.get("valid_to"),
        "expires_at": p.get("expires_at"),
        "importance": p.get("importance"),
        "confidence": p.get("confidence"),
        "strength": p.get("strength"),
        "version": p.get("version"),
        "user_id": p.get("user_id"),
        "agent_id": p.get("agent_id"),
        "session_id": p.get("session_id"),
        "speaker": p.get("speaker"),
        "origin": p.get("source_origin"),
        "plan_state": p.get("plan_state"),
        "plan_due": p.get("plan_due"),
        "tags": list(p.get("tags") or []),
        "flags": list(p.get("flags") or []),
        "entities": list(p.get("entity_names") or []),
        "triples": [f"{t.get('subject')} {'' if t.get('polarity', True) else 'not '}{t.get('predicate')} "
                    f"{t.get('object')}" for t in _json_field(p.get("triples_json"), []) if isinstance(t, dict)],
    }
    return VNode(id=f"m:{p['id']}", kind="memory", label=_short(str(p.get("content") or "")), type=mtype,
                 status=status, data={k: v for k, v in data.items() if v not in (None, [], "")})


def build_view(dump: GraphDump, *, title: str = "NeuSym memory graph", scope: dict[str, Any] | None = None,
               generated_at: float | None = None) -> GraphView:
    """Turn a graph dump into nodes and edges; edges whose ends are not both drawn are left out."""
    view = GraphView(title=title, scope=dict(scope or {}), truncated=dump.truncated,
                     generated_at=time.time() if generated_at is None else generated_at)
    ids: set[str] = set()
    for p in dump.memories:
        node = _memory_node(p)
        view.nodes.append(node)
        ids.add(node.id)
    degree: dict[str, int] = {}
    for m in dump.mentions:
        degree[str(m["uid"])] = degree.get(str(m["uid"]), 0) + 1
    for e in dump.entities:
        uid = str(e.get("uid"))
        node = VNode(id=entity_node_id(uid), kind="entity", label=_short(str(e.get("name") or e.get("key") or uid), 40),
                     type="entity", status="entity",
                     data={k: v for k, v in {"name": e.get("name"), "key": e.get("key"), "user_id": e.get("user_id"),
                                             "mentions": degree.get(uid, 0)}.items() if v is not None})
        view.nodes.append(node)
        ids.add(node.id)

    def add(edge: VEdge) -> None:
        if edge.source in ids and edge.target in ids:
            view.edges.append(edge)

    for m in dump.mentions:
        add(VEdge(f"m:{m['memory_id']}", entity_node_id(str(m["uid"])), "MENTIONS"))
    for r in dump.relates:
        props = r.get("props") or {}
        pred = str(props.get("predicate") or "relates")
        label = pred if props.get("polarity", True) else f"not {pred}"
        add(VEdge(entity_node_id(str(r["src"])), entity_node_id(str(r["dst"])), "RELATES", label,
                  {k: v for k, v in {"memory_id": props.get("memory_id"), "valid_from": props.get("valid_from"),
                                     "valid_to": props.get("valid_to"),
                                     "confidence": props.get("confidence")}.items() if v is not None}))
    for e in dump.edges:
        props = dict(e.get("props") or {})
        add(VEdge(f"m:{e['src']}", f"m:{e['dst']}", str(e["rel"]), str(props.get("kind") or ""),
                  {k: v for k, v in props.items() if isinstance(v, str | int | float | bool)}))
    return view
