"""Fixed tables of texts embedded once per model, not once per process.

Governance compares new memories with package constants (attribute-slot descriptions, filler texts): the same few
hundred texts every start, a third of a second of MiniLM on two cores before the first write. Their vectors are
cached on disk (:mod:`neusym.cache_files`) under the hash of the model's *content key* and the texts.

A content key must change whenever the vectors could: only embedders that pin their weights by checksum declare
one (the default MiniLM: model and tokenizer sha256). Any other embedder (a LangChain model behind an API, a local
directory that may be replaced) has none, and its tables are embedded in process as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from neusym.cache_files import cached_array, content_digest
from neusym.loading import loading

__all__ = ["content_key_of", "table_embedder"]


def content_key_of(embedder: Any) -> str | None:
    """The embedder's content key, looking through wrappers (``.inner``) that keep the model's name."""
    name = str(getattr(embedder, "name", ""))
    current: Any = embedder
    for _ in range(8):  # bounded against a cycle of .inner references
        key = getattr(current, "content_key", None)
        if isinstance(key, str) and key:
            return key
        current = getattr(current, "inner", None)
        if current is None or str(getattr(current, "name", "")) != name:
            return None
    return None


def table_embedder(embedder: Any, *, what: str = "description vectors") -> Callable[[Sequence[str]], np.ndarray]:
    """``texts -> vectors`` for fixed tables: cached on disk when the embedder has a content key."""
    key = content_key_of(embedder)
    dim = int(embedder.dimension)

    def embed(texts: Sequence[str]) -> np.ndarray:
        items = list(texts)

        def compute() -> np.ndarray:
            with loading(f"{what} ({len(items)} texts)"):
                return np.asarray(embedder.embed_documents(items), dtype=np.float32)

        if key is None:
            return compute()
        digest = content_digest([key, str(dim), *items])
        return cached_array("tables", digest, compute, shape=(len(items), dim))

    return embed
