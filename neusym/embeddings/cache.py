"""An in-process LRU cache in front of any embedder.

Agents re-embed the same strings constantly (the same user question across turns, entity names, memories that are
re-scored during consolidation), and a model forward pass costs milliseconds while a dict lookup costs nanoseconds.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from neusym.embeddings.base import Embedder, FloatMatrix, check_texts, first_row, to_unit_matrix
from neusym.errors import InvalidInputError

__all__ = ["CachedEmbedder"]


class CachedEmbedder:
    """LRU cache keyed by ``sha256(model name, kind, text)`` around ``inner``.

    Keys are digests rather than the texts so memory stays bounded by ``max_items`` (memories may be up to 1 MB of
    text); the model name is part of the key so a cache can never hand out vectors of a different model, and the
    kind (document/query) is because asymmetric models embed the same string differently in the two roles.

    Batch-aware: a batch is split into hits and misses and only the distinct misses go to the model, in one call,
    because batching is where transformer throughput comes from. The model is called *outside* the lock so a slow
    (e.g. remote) model does not block cache hits in other threads; two threads missing the same text at the same
    moment may both compute it, which is harmless.

    ``hits``/``misses`` count texts: every text answered from the cache (including repeats inside one batch) is a
    hit, every distinct text sent to the model is a miss. ``name`` and ``dimension`` are the inner model's, since
    caching does not change the vectors.
    """

    def __init__(self, inner: Embedder, max_items: int = 10_000) -> None:
        if isinstance(max_items, bool) or not isinstance(max_items, int) or max_items < 0:
            raise InvalidInputError(
                f"max_items must be a non-negative int (0 disables caching), got {max_items!r}"
            )
        if not callable(getattr(inner, "embed_documents", None)) or not callable(
            getattr(inner, "embed_query", None)
        ):
            raise InvalidInputError(
                f"inner must be an Embedder (see neusym.embeddings.as_embedder), got {inner!r}"
            )
        self.inner = inner
        self.max_items = max_items
        self._store: OrderedDict[bytes, FloatMatrix] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def hits(self) -> int:
        return self._hits

    @property
    def misses(self) -> int:
        return self._misses

    def __len__(self) -> int:
        return len(self._store)

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r}, max_items={self.max_items}, size={len(self._store)})"

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {
                "hits": self._hits,
                "misses": self._misses,
                "size": len(self._store),
                "max_items": self.max_items,
            }

    def clear(self) -> None:
        """Drop every cached vector and reset the counters."""
        with self._lock:
            self._store.clear()
            self._hits = 0
            self._misses = 0

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        items = check_texts(texts)
        if not items:
            return self.inner.embed_documents([])
        keys = [self._key(b"d", t) for t in items]
        found: list[FloatMatrix | None] = [None] * len(items)
        miss_first: dict[bytes, int] = {}  # distinct missing key -> position in the model batch
        miss_texts: list[str] = []
        with self._lock:
            for i, key in enumerate(keys):
                vec = self._store.get(key)
                if vec is not None:
                    self._store.move_to_end(key)
                    found[i] = vec
                elif key not in miss_first:
                    miss_first[key] = len(miss_texts)
                    miss_texts.append(items[i])
            self._misses += len(miss_texts)
            self._hits += len(items) - len(miss_texts)

        fresh: FloatMatrix | None = None
        if miss_texts:
            raw = self.inner.embed_documents(miss_texts)
            known = next((v.shape[0] for v in found if v is not None), None)
            fresh = to_unit_matrix(raw, rows=len(miss_texts), dimension=known, source=self.name)
            self._put_many([(key, fresh[pos]) for key, pos in miss_first.items()])

        dim = fresh.shape[1] if fresh is not None else next(v for v in found if v is not None).shape[0]
        out = np.empty((len(items), dim), dtype=np.float32)
        for i, key in enumerate(keys):
            vec = found[i]
            if vec is None:
                assert fresh is not None
                vec = fresh[miss_first[key]]
            out[i] = vec
        return out

    def embed_query(self, text: str) -> FloatMatrix:
        if not isinstance(text, str):
            raise InvalidInputError(f"text must be a str, got {type(text).__name__}")
        key = self._key(b"q", text)
        with self._lock:
            vec = self._store.get(key)
            if vec is not None:
                self._store.move_to_end(key)
                self._hits += 1
                hit: FloatMatrix = vec.copy()
                return hit
            self._misses += 1
        raw = self.inner.embed_query(text)
        fresh = first_row(
            to_unit_matrix(np.asarray(raw).reshape(1, -1), rows=1, dimension=None, source=self.name)
        )
        self._put_many([(key, fresh)])
        return fresh

    def _key(self, kind: bytes, text: str) -> bytes:
        h = hashlib.sha256(self.name.encode("utf-8", "surrogatepass"))
        h.update(b"\x00" + kind + b"\x00")
        # surrogatepass: a key must exist for any str; whether the model accepts the text is the model's business.
        h.update(text.encode("utf-8", "surrogatepass"))
        return h.digest()

    def _put_many(self, entries: list[tuple[bytes, Any]]) -> None:
        if self.max_items == 0:
            return
        with self._lock:
            for key, vec in entries:
                stored = np.array(vec, dtype=np.float32, copy=True)
                stored.setflags(
                    write=False
                )  # shared between callers; a caller mutating it must not corrupt others
                self._store[key] = stored
                self._store.move_to_end(key)
            while len(self._store) > self.max_items:
                self._store.popitem(last=False)
