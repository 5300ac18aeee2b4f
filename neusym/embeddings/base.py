"""The embedding contract every part of NeuSym codes against, plus the checks shared by all implementations.

Vectors are unit-length float32 so that the FAISS inner-product index *is* a cosine index and scores from different
embedders share one scale ([-1, 1]); normalising once here means nothing downstream has to remember to do it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

# EmbeddingError is defined in neusym.errors and re-exported here, where it used to live
from neusym.errors import DimensionMismatchError, EmbeddingError, InvalidInputError

__all__ = ["EmbeddingError", "Embedder", "FloatMatrix", "check_texts", "first_row", "to_unit_matrix"]

FloatMatrix = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """What the engine needs from an embedding model.

    ``name`` is persisted next to the FAISS index: when it changes, stored vectors are no longer comparable with new
    queries and the index must be rebuilt, so it must identify the model *and* anything that changes its outputs.
    ``dimension`` is read-only so that implementations may compute it lazily (adapters probe the model once).
    """

    @property
    def dimension(self) -> int: ...

    @property
    def name(self) -> str: ...

    def embed_documents(self, texts: list[str]) -> FloatMatrix:
        """Return a C-contiguous float32 array of shape ``(len(texts), dimension)`` with L2-normalised rows."""
        ...

    def embed_query(self, text: str) -> FloatMatrix:
        """Return a float32 array of shape ``(dimension,)``, L2-normalised.

        Separate from :meth:`embed_documents` because asymmetric models (instruction/prefix models) embed questions
        differently from the passages that answer them.
        """
        ...


def check_texts(texts: Any) -> list[str]:
    """Return ``texts`` as a list of ``str`` or raise :class:`InvalidInputError`.

    A bare string is refused: iterating it would silently embed one vector per character.
    """
    if isinstance(texts, str | bytes):
        raise InvalidInputError("texts must be a list of strings, not a single string (use embed_query)")
    if not isinstance(texts, Sequence):
        try:
            texts = list(texts)
        except TypeError as err:
            raise InvalidInputError(f"texts must be a list of strings, got {type(texts).__name__}") from err
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise InvalidInputError(f"texts[{i}] must be a str, got {type(t).__name__}")
    return out


def to_unit_matrix(raw: Any, *, rows: int, dimension: int | None, source: str) -> FloatMatrix:
    """Coerce a model's raw output into a validated ``(rows, dim)`` float32 matrix with unit-length rows.

    Models are foreign code: lists of lists, float64 tensors, ragged rows and NaNs all occur in practice, and a bad
    vector written into the index poisons every later search, so every output is checked at the boundary.
    ``dimension=None`` accepts any width (used while an adapter is still discovering its dimension).
    """
    try:
        arr = np.asarray(raw, dtype=np.float32)
    except (ValueError, TypeError) as err:
        # Ragged lists (rows of different lengths) land here.
        raise DimensionMismatchError(f"{source} returned vectors of inconsistent length: {err}") from err
    if rows == 0 and arr.size == 0:
        width = dimension if dimension is not None else (arr.shape[-1] if arr.ndim == 2 else 0)
        return np.zeros((0, width), dtype=np.float32)
    if arr.ndim == 1 and rows == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2 or arr.shape[0] != rows:
        raise EmbeddingError(f"{source} returned an array of shape {arr.shape}; expected ({rows}, dimension)")
    if arr.shape[1] == 0:
        raise DimensionMismatchError(f"{source} returned zero-length vectors")
    if dimension is not None and arr.shape[1] != dimension:
        raise DimensionMismatchError(
            f"{source} returned {arr.shape[1]}-dimensional vectors; expected {dimension}"
        )
    if not np.isfinite(arr).all():
        bad = int(np.flatnonzero(~np.isfinite(arr).all(axis=1))[0])
        raise EmbeddingError(f"{source} returned NaN or infinite values (first bad row: {bad})")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    if (norms <= 1e-12).any():
        bad = int(np.flatnonzero(norms.ravel() <= 1e-12)[0])
        raise EmbeddingError(
            f"{source} returned an all-zero vector (row {bad}); cosine similarity is undefined"
        )
    if np.all(np.abs(norms - 1.0) <= 1e-5):
        # Already unit length: leave the bits alone so re-validation (e.g. by the cache) is exactly idempotent.
        return np.ascontiguousarray(arr, dtype=np.float32)
    return np.ascontiguousarray(arr / norms, dtype=np.float32)


def first_row(matrix: FloatMatrix) -> FloatMatrix:
    """``matrix[0]`` as a 1-D vector, typed (numpy's stubs type integer indexing as ``Any``)."""
    row: FloatMatrix = matrix[0]
    return row
