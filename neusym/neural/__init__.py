"""Dense-vector retrieval: the FAISS index that stores one normalised embedding per memory, keyed by its ``nid``."""

from __future__ import annotations

from neusym.neural.index import FaissIndex, IndexKind

__all__ = ["FaissIndex", "IndexKind"]
