"""The dense channel served by the graph's native vector index (``neural_backend="neo4j_vector"``).

Why: FAISS keeps every vector in every application process and rebuilds them on start. When a deployment outgrows
one process (many workers, millions of memories), the vectors can stay in Neo4j, which indexes
``Memory.embedding_vec`` with ``db.index.vector.queryNodes``; each process then keeps only the BM25 index and the
scope catalog (both caught up from the graph's write sequence as before).

How a stage-1 query is answered (:class:`GraphVectorSearch`):

* a tenant-sized scope (``user_id`` set, at most ``exact_below`` eligible memories): every memory of the scope is
  scored exactly in one statement (an indexed ``user_id`` lookup). A global ANN index filtered afterwards would need
  an over-fetch proportional to the whole database to find a small tenant's neighbours.
* otherwise: the ANN index is asked for ``top`` neighbours, over-fetched in proportion to the share of the index the
  scope covers, and filtered by scope and status in the same statement; ``top`` grows until ``n`` hits survive the
  filter, then an exact scan is the fallback.

Scores are exact cosines in [-1, 1] in both paths (``dialects.vector_similarity_expr``), the same numbers FAISS
gives, so fusion and explanations do not change with the backend.

:class:`GraphBackedIndex` stands in for the FAISS index of :class:`~neusym.retrieval.derived.DerivedIndexes` in
this mode, so every other caller of ``derived.faiss.search`` (near-duplicate detection, forgetting) is answered by
the graph too, while writes to it are no-ops (the graph already holds the vectors).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from neusym.neural import FaissIndex
from neusym.record import MemoryStatus, Scope
from neusym.symbolic.convert import decode_embedding
from neusym.symbolic.store import SymbolicStore

__all__ = ["GraphBackedIndex", "GraphVectorSearch"]


class GraphVectorSearch:
    """Dense search against the graph's vector index; the ``dense`` strategy of :func:`~neusym.retrieval.pipeline.stage1`.

    Args:
        store: the symbolic store (its vectors must be enabled: ``store.enable_vectors(dim, create=True)``).
        exact_below: score a ``user_id`` scope exactly when it holds at most this many eligible memories.
        overfetch: ANN neighbours requested per wanted hit, before scaling by the scope's share of the index.
        max_top: the largest ANN request; beyond it the exact scan takes over.
        exact_ids: allow-lists (governance callers) up to this size are scored exactly by nid.
    """

    def __init__(self, store: SymbolicStore, *, exact_below: int = 2000, overfetch: int = 4, max_top: int = 10_000,
                 exact_ids: int = 20_000) -> None:
        self.store = store
        self.exact_below = exact_below
        self.overfetch = max(1, overfetch)
        self.max_top = max(1, max_top)
        self.exact_ids = exact_ids

    def __call__(self, qvec: np.ndarray, scope: Scope, statuses: list[str], n: int, *, eligible: int,
                 total: int) -> tuple[list[int], list[float]]:
        """Top-``n`` (nids, cosines) in ``scope`` with one of ``statuses``, best first.

        ``eligible``: memories the scope holds with those statuses (from the in-process catalog); ``total``: memories
        in the whole index. Both only steer the strategy; the graph decides what matches.
        """
        if n <= 0 or eligible <= 0:
            return [], []
        want = min(n, eligible)
        if scope.user_id is not None and eligible <= self.exact_below:
            hits = self.store.vector_search(qvec, scope, statuses, n)
        else:
            share = max(total, eligible) / eligible
            top = min(self.max_top, max(n, math.ceil(n * self.overfetch * share)))
            while True:
                hits = self.store.vector_search(qvec, scope, statuses, n, top=top)
                if len(hits) >= want or top >= self.max_top or top >= total:
                    break
                top = min(self.max_top, top * 4)
            if len(hits) < want:  # the ANN neighbourhood held too few of the scope's memories
                hits = self.store.vector_search(qvec, scope, statuses, n)
        return [h[0] for h in hits], [h[1] for h in hits]

    def search_ids(self, qvec: np.ndarray, k: int, allow_ids: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """FAISS-style search: top-``k`` among ``allow_ids`` (None: the whole index), as int64/float32 arrays."""
        if k <= 0:
            return _arrays([])
        if allow_ids is None:
            return _arrays(self.store.vector_search(qvec, Scope(), _ANY_STATUS, k, top=max(k, k * self.overfetch)))
        allow = np.unique(np.asarray(allow_ids, dtype=np.int64).ravel())
        if allow.size == 0:
            return _arrays([])
        if allow.size <= self.exact_ids:
            return _arrays(self.store.vector_scores(qvec, allow.tolist(), k))
        # a huge allow-list: ask the ANN index, keep the allowed neighbours, widen until k are found
        allowed = set(allow.tolist())
        top = min(self.max_top, k * self.overfetch)
        while True:
            hits = self.store.vector_search(qvec, Scope(), _ANY_STATUS, top, top=top)
            kept = [h for h in hits if h[0] in allowed]
            if len(kept) >= k or top >= self.max_top or len(hits) < top:
                return _arrays(kept[:k])
            top = min(self.max_top, top * 4)


# every status a memory node can have: the allow-list or the caller filters, not the graph query
_ANY_STATUS = [s.value for s in MemoryStatus]


def _arrays(hits: list[tuple[int, float]]) -> tuple[np.ndarray, np.ndarray]:
    return (np.asarray([h[0] for h in hits], dtype=np.int64), np.asarray([h[1] for h in hits], dtype=np.float32))


class GraphBackedIndex(FaissIndex):
    """The FAISS index's place in :class:`DerivedIndexes` when the vectors live in the graph.

    Holds no vectors: ``add``/``remove`` are no-ops (the graph node already carries ``embedding_vec``, written by
    the same statement as the memory), ``search`` asks the graph, and the saved file stays empty.
    """

    def __init__(self, dimension: int, graph: GraphVectorSearch) -> None:
        super().__init__(dimension, kind="flat")
        self.graph = graph

    def add(self, ids: Any, vectors: Any) -> None:
        return None

    def remove(self, ids: Any) -> int:
        return 0

    def search(self, query: Any, k: int, allow_ids: Any = None) -> tuple[np.ndarray, np.ndarray]:
        q = np.asarray(query, dtype=np.float32).ravel()
        return self.graph.search_ids(q, int(k), allow_ids)

    def search_many(self, queries: Any, k: int, allow_ids: Any = None) -> list[tuple[np.ndarray, np.ndarray]]:
        """One graph query per row: the base class's batched FAISS pass would search the empty local index."""
        return [self.search(q, k, allow_ids) for q in np.atleast_2d(np.asarray(queries, dtype=np.float32))]

    def contains(self, id: int) -> bool:  # noqa: A002 - FaissIndex's signature
        """Every memory in the graph has its vector there; :meth:`reconstruct` answers for absent ones too."""
        return True

    def reconstruct(self, ids: Any) -> npt.NDArray[np.float32]:
        """The unit vectors of ``ids`` read from the graph (one query); zeros for memories that are gone, so a
        candidate deleted since stage 1 scores 0 instead of failing the search."""
        nids = [int(i) for i in np.asarray(ids, dtype=np.int64).ravel()]
        out = np.zeros((len(nids), self.dimension), dtype=np.float32)
        stored = self.graph.store.embeddings_by_nid(nids)
        for row, nid in enumerate(nids):
            emb = stored.get(nid)
            if emb is None:
                continue
            vec = decode_embedding(emb)
            norm = float(np.linalg.norm(vec))
            if vec.shape[0] == self.dimension and norm > 0:
                out[row] = vec / norm
        return out
