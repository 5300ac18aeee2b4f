"""Helpers for the governance scenario tests: look inside every store directly (graph, BM25 postings, FAISS
storage, embedding cache) instead of trusting the API that wrote them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np

from neusym import NeuSymMemory
from neusym.embeddings import CachedEmbedder, HashingEmbedder
from neusym.retrieval.lexical import tokenize

JAN = datetime(2024, 1, 15, tzinfo=UTC)
MAR = datetime(2024, 3, 10, tzinfo=UTC)
JUN = datetime(2024, 6, 1, tzinfo=UTC)
SEP = datetime(2024, 9, 1, tzinfo=UTC)


def graph_rows(mem: NeuSymMemory, cypher: str, **params: Any) -> list[dict[str, Any]]:
    return mem.cypher(cypher, params, all_tenants=True)


def lexical_hits(mem: NeuSymMemory, text: str) -> list[int]:
    """Positions whose BM25 postings contain any term of ``text``, ignoring the alive mask (raw index contents)."""
    lex = mem.derived.lexical
    out: set[int] = set()
    for term in tokenize(text):
        out.update(lex.postings(term).tolist())
    return sorted(out)


def faiss_best(mem: NeuSymMemory, text: str) -> float:
    """Best cosine of ``text``'s document vector against every vector FAISS still stores (live or tombstoned)."""
    vec = HashingEmbedder(256).embed_documents([text])[0]
    n = mem.derived.faiss.ntotal
    if n == 0:
        return 0.0
    stored = mem.derived.faiss._base.reconstruct_n(0, n)
    return float(np.max(stored @ vec))


def cache_holds(mem: NeuSymMemory, text: str) -> bool:
    cache = mem.embedder
    assert isinstance(cache, CachedEmbedder)
    return any(cache._key(kind, text) in cache._store for kind in (b"d", b"q"))


def status(mem: NeuSymMemory, memory_id: str, user_id: str) -> str:
    """A memory's status as stored now (read back through ``get``)."""
    return str(mem.get(memory_id, user_id=user_id).status.value)
