"""Text embedders: the protocol the engine codes against, the offline default model, and adapters.

Nothing here imports LangChain or LlamaIndex: their embedding objects are recognised by shape in
:func:`as_embedder`, so the core package stays installable without either framework.
"""

from __future__ import annotations

import threading

from neusym.embeddings.adapters import as_embedder
from neusym.embeddings.base import Embedder, EmbeddingError
from neusym.embeddings.cache import CachedEmbedder
from neusym.embeddings.hashing import HashingEmbedder
from neusym.embeddings.local import MINILM_DIMENSION, MINILM_NAME, MiniLMEmbedder

__all__ = [
    "MINILM_DIMENSION",
    "MINILM_NAME",
    "CachedEmbedder",
    "Embedder",
    "EmbeddingError",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "as_embedder",
    "default_embedder",
]

_default: CachedEmbedder | None = None
_default_lock = threading.Lock()


def default_embedder() -> CachedEmbedder:
    """The process-wide default: all-MiniLM-L6-v2 (loaded lazily, offline) behind an LRU cache.

    Shared rather than built per call because every memory opened in a process would otherwise load its own copy
    of the model (~90 MB and seconds of start-up); the vectors are deterministic, so sharing the cache is safe.
    """
    global _default
    with _default_lock:
        if _default is None:
            _default = CachedEmbedder(MiniLMEmbedder())
        return _default
