"""GraphML (Gephi, yEd, Cytoscape, NetworkX ``read_graphml``) of a :class:`GraphView`, written with the standard
library's ElementTree so text is always escaped correctly."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from neusym.visual.model import GraphView, iso

__all__ = ["to_graphml"]

_NS = "http://graphml.graphdrawing.org/xmlns"

# (key id, for, attr.name, attr.type)
_NODE_KEYS = (
    ("kind", "string"), ("label", "string"), ("type", "string"), ("status", "string"), ("content", "string"),
    ("memory_id", "string"), ("user_id", "string"), ("agent_id", "string"), ("session_id", "string"),
    ("created_at", "string"), ("valid_from", "string"), ("valid_to", "string"), ("importance", "double"),
    ("confidence", "double"), ("tags", "string"), ("flags", "string"), ("mentions", "int"),
)
_EDGE_KEYS = (("rel", "string"), ("label", "string"), ("memory_id", "string"), ("valid_to", "string"))


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or None
    return str(value)


def to_graphml(view: GraphView) -> str:
    """The view as a GraphML document (directed; times as ISO-8601 UTC strings)."""
    ET.register_namespace("", _NS)
    root = ET.Element(f"{{{_NS}}}graphml")
    for name, kind in _NODE_KEYS:
        ET.SubElement(root, f"{{{_NS}}}key", {"id": f"n_{name}", "for": "node", "attr.name": name,
                                              "attr.type": kind})
    for name, kind in _EDGE_KEYS:
        ET.SubElement(root, f"{{{_NS}}}key", {"id": f"e_{name}", "for": "edge", "attr.name": name,
                                              "attr.type": kind})
    graph = ET.SubElement(root, f"{{{_NS}}}graph", {"id": "neusym", "edgedefault": "directed"})
    desc = ET.SubElement(graph, f"{{{_NS}}}desc")
    desc.text = f"{view.title} ({', '.join(f'{k}={v}' for k, v in view.scope.items() if v)})"
    for n in view.nodes:
        el = ET.SubElement(graph, f"{{{_NS}}}node", {"id": n.id})
        d = n.data
        values: dict[str, Any] = {
            "kind": n.kind, "label": n.label, "type": n.type, "status": n.status,
            "content": d.get("content") if n.kind == "memory" else d.get("name"),
            "memory_id": d.get("id") if n.kind == "memory" else None, "user_id": d.get("user_id"),
            "agent_id": d.get("agent_id"), "session_id": d.get("session_id"), "created_at": iso(d.get("created_at")),
            "valid_from": iso(d.get("valid_from")), "valid_to": iso(d.get("valid_to")),
            "importance": d.get("importance"), "confidence": d.get("confidence"), "tags": d.get("tags"),
            "flags": d.get("flags"), "mentions": d.get("mentions"),
        }
        for name, _ in _NODE_KEYS:
            text = _text(values.get(name))
            if text is not None:
                ET.SubElement(el, f"{{{_NS}}}data", {"key": f"n_{name}"}).text = text
    for i, e in enumerate(view.edges):
        el = ET.SubElement(graph, f"{{{_NS}}}edge", {"id": f"x{i}", "source": e.source, "target": e.target})
        values = {"rel": e.rel, "label": e.label or None, "memory_id": e.data.get("memory_id"),
                  "valid_to": iso(e.data.get("valid_to"))}
        for name, _ in _EDGE_KEYS:
            text = _text(values.get(name))
            if text is not None:
                ET.SubElement(el, f"{{{_NS}}}data", {"key": f"e_{name}"}).text = text
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
