"""Accept the embedding objects users already have, without importing their frameworks.

The engine must stay importable without LangChain or LlamaIndex installed, so their classes are recognised by shape
(duck typing) instead of ``isinstance``. Every adapted model is distrusted: outputs are shape-checked, checked for
NaN/inf and normalised, because one bad vector in the index silently corrupts every later search.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from neusym.embeddings.base import (
    Embedder,
    EmbeddingError,
    FloatMatrix,
    check_texts,
    first_row,
    to_unit_matrix,
)
from neusym.embeddings.cache import CachedEmbedder
from neusym.embeddings.hashing import HashingEmbedder
from neusym.embeddings.identity import EmbedderIdentity
from neusym.embeddings.onnx import OnnxEmbedder
from neusym.embeddings.sentence_transformer import SentenceTransformerEmbedder
from neusym.errors import DimensionMismatchError, InvalidInputError, NeuSymError

__all__ = ["as_embedder"]

_PROBE_TEXT = "NeuSym dimension probe."
_MODEL_ATTRS = ("model", "model_name", "model_id", "deployment", "repo_id")
_NATIVE = (HashingEmbedder, OnnxEmbedder, SentenceTransformerEmbedder, CachedEmbedder)


def as_embedder(obj: Any, *, name: str | None = None, dimension: int | None = None) -> Embedder:
    """Return an :class:`~neusym.embeddings.base.Embedder` for ``obj``.

    Accepted, in this order of recognition:

    * a NeuSym embedder (returned unchanged) or any object already following the protocol (wrapped and checked);
    * a LlamaIndex ``BaseEmbedding`` (``get_text_embedding_batch`` / ``get_query_embedding``);
    * a LangChain ``Embeddings`` (``embed_documents`` / ``embed_query`` returning lists);
    * a callable mapping ``list[str]`` to an ``(n, dim)`` array-like (used for queries too).

    ``name`` overrides the derived model id; pass it whenever the derived one (class + model attribute) could stay
    the same while the vectors change, e.g. for callables and lambdas, because the name is what tells a persisted
    index that it must be rebuilt. ``dimension``, if given, is enforced instead of probing the model.
    """
    if dimension is not None and (
        isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1
    ):
        raise InvalidInputError(f"dimension must be a positive int, got {dimension!r}")
    if obj is None:
        raise InvalidInputError("an embedder is required, got None")
    if isinstance(obj, (*_NATIVE, _AdaptedEmbedder)) and name is None:
        if dimension is not None and dimension != obj.dimension:
            raise DimensionMismatchError(
                f"{obj.name} produces {obj.dimension}-dimensional vectors, not {dimension}"
            )
        return obj

    cls = type(obj)
    qual = f"{cls.__module__}.{cls.__qualname__}"
    if _has(obj, "embed_documents", "embed_query"):
        own_dim = getattr(obj, "dimension", None)
        own_name = getattr(obj, "name", None)
        if (
            isinstance(own_dim, int)
            and not isinstance(own_dim, bool)
            and isinstance(own_name, str)
            and own_name
        ):
            # Already speaks the NeuSym protocol; keep its identity but still check what it returns.
            if dimension is not None and dimension != own_dim:
                raise DimensionMismatchError(f"{own_name} declares dimension {own_dim}, not {dimension}")
            return _AdaptedEmbedder(
                name or own_name, obj.embed_documents, obj.embed_query, dimension=own_dim, kind="embedder"
            )
    if _has(obj, "get_text_embedding_batch", "get_query_embedding"):
        return _AdaptedEmbedder(
            name or f"llamaindex:{qual}{_model_suffix(obj)}",
            obj.get_text_embedding_batch,
            obj.get_query_embedding,
            dimension=dimension,
            kind="llamaindex",
        )
    if _has(obj, "embed_documents", "embed_query"):
        return _AdaptedEmbedder(
            name or f"langchain:{qual}{_model_suffix(obj)}",
            obj.embed_documents,
            obj.embed_query,
            dimension=dimension,
            kind="langchain",
        )
    if callable(obj):
        fn_name = getattr(obj, "__qualname__", None) or cls.__qualname__
        module = getattr(obj, "__module__", None) or cls.__module__
        return _AdaptedEmbedder(
            name or f"callable:{module}.{fn_name}", obj, None, dimension=dimension, kind="callable"
        )
    raise InvalidInputError(
        f"cannot use {cls.__name__} as an embedder: expected a NeuSym Embedder, a LangChain Embeddings, "
        "a LlamaIndex BaseEmbedding, or a callable list[str] -> vectors"
    )


def _has(obj: Any, *methods: str) -> bool:
    return all(callable(getattr(obj, m, None)) for m in methods)


def _model_suffix(obj: Any) -> str:
    for attr in _MODEL_ATTRS:
        value = getattr(obj, attr, None)
        if isinstance(value, str) and value and value != "unknown":
            return f":{value}"
    return ""


class _AdaptedEmbedder:
    """Wraps foreign embed functions behind the NeuSym protocol, discovering the dimension on first use.

    The dimension is learnt lazily (from the first real call, or from one probe when asked before any call) so
    that wrapping a remote embedding API costs nothing until it is actually needed; after that every output must
    match it, which turns a silently swapped model into a :class:`DimensionMismatchError`.
    """

    def __init__(
        self,
        name: str,
        documents_fn: Callable[[list[str]], Any],
        query_fn: Callable[[str], Any] | None,
        *,
        dimension: int | None,
        kind: str,
    ) -> None:
        self._name = name
        self._documents_fn = documents_fn
        self._query_fn = query_fn
        self._dim = dimension
        self._kind = kind
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        if self._dim is None:
            self.embed_documents([_PROBE_TEXT])
        assert self._dim is not None
        return self._dim

    @property
    def identity(self) -> EmbedderIdentity:
        """The wrapped object's own identity when it declares one under the same name, else name + framework."""
        inner = getattr(getattr(self._documents_fn, "__self__", None), "identity", None)
        if isinstance(inner, EmbedderIdentity) and inner.name == self._name:
            return inner
        return EmbedderIdentity(name=self._name, model=self._name, dimension=self.dimension, runtime=self._kind)

    def __repr__(self) -> str:
        return f"<{self._kind} embedder {self._name!r} dimension={self._dim}>"

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        items = check_texts(texts)
        if not items:
            return np.zeros((0, self.dimension), dtype=np.float32)
        raw = self._call(self._documents_fn, items)
        out = to_unit_matrix(raw, rows=len(items), dimension=self._dim, source=self._name)
        self._learn(out.shape[1])
        return out

    def embed_query(self, text: str) -> FloatMatrix:
        if not isinstance(text, str):
            raise InvalidInputError(f"text must be a str, got {type(text).__name__}")
        if self._query_fn is None:
            return first_row(self.embed_documents([text]))
        raw = self._call(self._query_fn, text)
        out = to_unit_matrix(raw, rows=1, dimension=self._dim, source=self._name)
        self._learn(out.shape[1])
        return first_row(out)

    def _call(self, fn: Callable[[Any], Any], arg: Any) -> Any:
        try:
            return fn(arg)
        except NeuSymError:
            raise
        except Exception as err:
            # Foreign failures (HTTP errors, model crashes) become one catchable type; the original is kept.
            raise EmbeddingError(f"embedding model {self._name} failed: {type(err).__name__}: {err}") from err

    def _learn(self, width: int) -> None:
        with self._lock:
            if self._dim is None:
                self._dim = width
            elif width != self._dim:
                raise DimensionMismatchError(
                    f"{self._name} returned {width}-dimensional vectors after earlier {self._dim}-dimensional ones"
                )
