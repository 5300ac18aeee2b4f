"""Two-stage retrieval: stage 1 (FAISS + BM25, fused) in process, stage 2 (filters, expansion, scoring) in Cypher."""

from neusym.retrieval.config import RetrievalConfig
from neusym.retrieval.recipes import (
    DENSE_ONLY,
    HYBRID,
    HYBRID_GRAPH,
    HYBRID_RRF,
    HYBRID_SYMBOLIC,
    LEXICAL_ONLY,
    RECIPES,
)

__all__ = ["DENSE_ONLY", "HYBRID", "HYBRID_GRAPH", "HYBRID_RRF", "HYBRID_SYMBOLIC", "LEXICAL_ONLY", "RECIPES", "RetrievalConfig"]
