"""Text embedders: the protocol the engine codes against, the offline default model, and adapters.

Nothing here imports LangChain, LlamaIndex or torch: framework embedding objects are recognised by shape in
:func:`as_embedder`, and the torch runtime (:class:`SentenceTransformerEmbedder`, ``neusym[torch]``) imports its
libraries only when a model is loaded, so the core package stays installable and importable without any of them.
"""

from __future__ import annotations

import threading

from neusym.embeddings.adapters import as_embedder
from neusym.embeddings.base import Embedder, EmbeddingError
from neusym.embeddings.cache import CachedEmbedder
from neusym.embeddings.hashing import HashingEmbedder
from neusym.embeddings.identity import EmbedderIdentity, identity_of
from neusym.embeddings.local import MINILM_DIMENSION, MINILM_MODEL_ID, MINILM_NAME, MiniLMEmbedder
from neusym.embeddings.onnx import OnnxEmbedder, OnnxModelFiles
from neusym.embeddings.sentence_transformer import SentenceTransformerEmbedder

__all__ = [
    "MINILM_DIMENSION",
    "MINILM_MODEL_ID",
    "MINILM_NAME",
    "CachedEmbedder",
    "Embedder",
    "EmbedderIdentity",
    "EmbeddingError",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "OnnxEmbedder",
    "OnnxModelFiles",
    "SentenceTransformerEmbedder",
    "as_embedder",
    "default_embedder",
    "identity_of",
    "preload",
]

_default: CachedEmbedder | None = None
_default_lock = threading.Lock()


def default_embedder() -> CachedEmbedder:
    """The process-wide default: all-MiniLM-L6-v2 on onnxruntime (loaded lazily, offline) behind an LRU cache.

    Shared rather than built per call because every memory opened in a process would otherwise load its own copy
    of the model (and its thread pool); the vectors are deterministic, so sharing the cache is safe.
    """
    global _default
    with _default_lock:
        if _default is None:
            _default = CachedEmbedder(MiniLMEmbedder())
        return _default


def preload(embedder: object) -> bool:
    """Load a local model now instead of on its first use (a server about to embed, say); ``True`` if one was
    loaded. Looks through wrappers (``.inner``); an embedder without a ``load()`` (a remote API) is left alone,
    since warming it would cost a request."""
    current: object | None = embedder
    for _ in range(8):  # bounded against a cycle of .inner references
        load = getattr(current, "load", None)
        if callable(load):
            load()
            return True
        current = getattr(current, "inner", None)
        if current is None:
            break
    return False
