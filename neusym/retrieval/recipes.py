"""Named retrieval recipes (graphiti-style presets). Benchmarks and explanations refer to them by name."""

from __future__ import annotations

from neusym.retrieval.config import RetrievalConfig, ScoreWeights
from neusym.symbolic.scoring import default_fact_weights

__all__ = [
    "DENSE_ONLY",
    "HYBRID",
    "HYBRID_GRAPH",
    "HYBRID_RRF",
    "HYBRID_SYMBOLIC",
    "LEXICAL_ONLY",
    "RECIPES",
    "get_recipe",
]

_NO_BOOSTS = ScoreWeights.only(similarity=1.0)
_FACTS = ScoreWeights(values=default_fact_weights())  # standalone facts (no speaker): their own weights
# stage-1 depth on a scope of standalone facts when stage 2 re-scores (conversation turns keep ``candidates``, 50):
# on the LoCoMo observations stage-1 recall is 91 at 50 and 97 at 100, and stage 2's boosts use the difference
_FACT_DEPTH = 100

DENSE_ONLY = RetrievalConfig(name="dense_only", lexical=False, graph_expand=False, neighbours=False,
                             temporal=False, weights=_NO_BOOSTS)
LEXICAL_ONLY = RetrievalConfig(name="lexical_only", dense=False, lexical_context=False, graph_expand=False,
                               neighbours=False, temporal=False, weights=_NO_BOOSTS)
"""Plain BM25 over each memory's own words (no session context): the classic lexical baseline."""
HYBRID_RRF = RetrievalConfig(name="hybrid_rrf", fusion="rrf", graph_expand=False, neighbours=False, temporal=False,
                             weights=_NO_BOOSTS)
"""Stage 1 only, classic: dense + BM25 fused by reciprocal rank."""
HYBRID = RetrievalConfig(name="hybrid", graph_expand=False, neighbours=False, temporal=False, weights=_NO_BOOSTS)
"""Stage 1 only, as the default pipeline runs it: both channels scored on every candidate, linear fusion."""
HYBRID_SYMBOLIC = RetrievalConfig(name="hybrid_symbolic", graph_expand=False, neighbours=False, temporal=False,
                                  fact_weights=_FACTS, fact_candidates=_FACT_DEPTH)
"""Stage 2 filters and re-scores (recency, importance, confidence, type, strength, entity match, the candidate-pool
geometry), no expansion."""
HYBRID_GRAPH = RetrievalConfig(name="hybrid_graph", fact_weights=_FACTS, fact_candidates=_FACT_DEPTH)
"""The default: full two-stage retrieval with entity/relation expansion, conversation neighbours and time;
conversation turns and standalone facts each scored with their own weights (see ``fact_weights``)."""

RECIPES: dict[str, RetrievalConfig] = {
    r.name: r for r in (DENSE_ONLY, LEXICAL_ONLY, HYBRID_RRF, HYBRID, HYBRID_SYMBOLIC, HYBRID_GRAPH)
}


def get_recipe(name: str) -> RetrievalConfig:
    from neusym.errors import InvalidInputError

    try:
        return RECIPES[name]
    except KeyError:
        raise InvalidInputError(f"unknown retrieval recipe {name!r}; known: {sorted(RECIPES)}") from None
