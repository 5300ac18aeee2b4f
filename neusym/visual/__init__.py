"""Pictures of a memory graph: a self-contained interactive HTML page (no CDN, works offline), GraphML for
Gephi/yEd/NetworkX and Mermaid text for Markdown. All three draw the same :class:`GraphView`, built from a
:func:`neusym.symbolic.transfer.collect` dump (no Cypher here)."""

from neusym.visual.graphml import to_graphml
from neusym.visual.html import to_html
from neusym.visual.mermaid import to_mermaid
from neusym.visual.model import GraphView, VEdge, VNode, build_view

__all__ = ["GraphView", "VEdge", "VNode", "build_view", "to_graphml", "to_html", "to_mermaid"]
