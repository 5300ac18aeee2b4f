"""Mermaid flowchart text of a :class:`GraphView`, to paste into Markdown (GitHub renders it)."""

from __future__ import annotations

from neusym.visual.model import MEMORY_STATUSES, MEMORY_TYPES, GraphView

__all__ = ["to_mermaid"]

TYPE_FILL = {
    "fact": "#4e79a7", "preference": "#f28e2b", "instruction": "#e15759", "plan": "#76b7b2", "emotion": "#edc948",
    "observation": "#9d9da1", "reflection": "#b07aa1", "knowledge": "#59a14f",
}
_STATUS_STYLE = {
    "pending": "stroke:#ff9f1c,stroke-width:3px,stroke-dasharray:4 2",
    "superseded": "opacity:0.55,stroke-dasharray:5 3",
    "archived": "opacity:0.35",
    "quarantined": "stroke:#d62728,stroke-width:4px",
    "deleted": "opacity:0.2",
}
_ARROW = {"MENTIONS": "-->", "RELATES": "==>", "NEXT": "-.->", "SUPERSEDES": "-.->", "DERIVED_FROM": "-.->",
          "CONFLICTS_WITH": "-.-x", "DUPLICATE_OF": "-.->"}


def _label(text: str) -> str:
    """Mermaid label text inside double quotes: entity codes for the characters its parser would trip on."""
    out = " ".join(str(text).split())
    for ch, code in (("&", "#amp;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;"), ("|", "#124;"),
                     ("`", "#96;")):
        out = out.replace(ch, code)
    return out


def to_mermaid(view: GraphView, *, direction: str = "LR") -> str:
    """A ``flowchart``: memories as boxes coloured by type, entities as stadiums, status as a second class."""
    short: dict[str, str] = {}
    lines = [f"%% {view.title}: {len(view.memories)} memories, {len(view.entities)} entities, "
             f"{len(view.edges)} edges" + (" (truncated)" if view.truncated else ""),
             f"flowchart {direction}"]
    for i, n in enumerate(view.nodes):
        sid = f"{'m' if n.kind == 'memory' else 'e'}{i}"
        short[n.id] = sid
        if n.kind == "memory":
            lines.append(f'  {sid}["{_label(n.type + ": " + n.label)}"]:::{n.type}')
        else:
            lines.append(f'  {sid}(["{_label(n.label)}"]):::entity')
    for e in view.edges:
        arrow = _ARROW.get(e.rel, "-->")
        text = e.label if e.rel == "RELATES" else ("" if e.rel == "MENTIONS" else e.rel)
        mid = f'|"{_label(text)}"|' if text else ""
        lines.append(f"  {short[e.source]} {arrow}{mid} {short[e.target]}")
    for t in MEMORY_TYPES:
        lines.append(f"  classDef {t} fill:{TYPE_FILL[t]},color:#fff,stroke:#333")
    lines.append("  classDef entity fill:#e0f3f5,color:#0b4f57,stroke:#17becf")
    for s in MEMORY_STATUSES:
        if s in _STATUS_STYLE:
            lines.append(f"  classDef {s} {_STATUS_STYLE[s]}")
    by_status: dict[str, list[str]] = {}
    for n in view.memories:
        if n.status in _STATUS_STYLE:
            by_status.setdefault(n.status, []).append(short[n.id])
    for s, ids in by_status.items():
        lines.append(f"  class {','.join(ids)} {s}")
    return "\n".join(lines) + "\n"
