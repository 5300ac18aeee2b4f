"""Typed errors for NeuSym.

Callers catch at the level they need::

    NeuSymError
    ├── InvalidInputError          bad text, wrong types, bad scope keys, bad k, bad filters (also a ValueError)
    │   ├── ScopeError             missing/unknown scope keys, or an operation that would cross tenants
    │   └── UnsafeQueryError       raw Cypher that is not read-only
    ├── RecordNotFoundError        no memory with that id *in this scope* (also a KeyError)
    ├── BackendError               the graph database failed
    │   ├── BackendUnavailableError  cannot start/reach the database (binary missing, server down, auth)
    │   ├── GraphIntegrityError      the graph broke an invariant NeuSym relies on (damaged; stop writing to it)
    │   ├── DimensionMismatchError   embedding size differs from the stored index
    │   │   └── EmbedderMismatchError  the store was embedded by another model (re-embed: neusym reindex --reembed)
    │   └── EmbeddingError           the embedding model failed or returned unusable vectors (NaN/inf, zero, shape)
    │       └── ModelIntegrityError  a model file's sha256 is not the pinned one (damaged or substituted)
    ├── IndexCorruptionError       the FAISS file could not be read (recovered by a rebuild from the graph)
    ├── IndexPersistenceError      the derived indexes could not be saved (disk full...); the graph has the change
    ├── ExtractionError            an LLM step produced unusable output after its retries
    ├── PolicyViolationError       governance refused an operation (e.g. forgetting without confirmation)
    └── ClosedError                the memory was used after close()

Driver exceptions are wrapped with ``raise ... from err`` so the original stays in ``__cause__``.
"""

from __future__ import annotations

__all__ = [
    "BackendError",
    "BackendUnavailableError",
    "ClosedError",
    "DimensionMismatchError",
    "EmbedderMismatchError",
    "EmbeddingError",
    "ExtractionError",
    "GraphIntegrityError",
    "IndexCorruptionError",
    "IndexPersistenceError",
    "InvalidInputError",
    "ModelIntegrityError",
    "NeuSymError",
    "PolicyViolationError",
    "RecordNotFoundError",
    "ScopeError",
    "UnsafeQueryError",
]


class NeuSymError(Exception):
    """Root of every error NeuSym raises on purpose."""


class InvalidInputError(NeuSymError, ValueError):
    """The caller passed something NeuSym will not store or cannot interpret."""


class ScopeError(InvalidInputError):
    """A scope was missing, malformed, or would let one tenant touch another's memories."""


class UnsafeQueryError(InvalidInputError):
    """Raw Cypher passed to the read-only entry point tried to write or call a procedure."""


class RecordNotFoundError(NeuSymError, KeyError):
    """No memory with that id is visible in the given scope."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else "record not found"


class BackendError(NeuSymError):
    """The graph database reported an error."""


class BackendUnavailableError(BackendError):
    """The graph database could not be started or reached."""


class GraphIntegrityError(BackendError):
    """The graph breaks an invariant every NeuSym write keeps: a node under two kinds' labels (an ``Audit:Memory``),
    a memory without its id, a tombstone beside a live memory, a label entry of a deleted node. Raised by the check
    after every purge (and by anything that finds such a graph) instead of going on writing into a damaged graph.
    ``problems`` lists what was found; the message says how to recover."""

    def __init__(self, message: str, *, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = list(problems or [])


class DimensionMismatchError(BackendError):
    """An embedding's dimension differs from the one the store was created with."""


class EmbedderMismatchError(DimensionMismatchError):
    """The store's memories were embedded by another model than the one this process uses.

    Vectors of two models are not comparable even when their widths match, so opening is refused rather than
    returning nonsense rankings. ``stored`` and ``current`` are the two
    :class:`~neusym.embeddings.identity.EmbedderIdentity` values. The fix is to open with the original embedder,
    or to re-embed every memory with the new one: ``neusym reindex --reembed`` (or
    ``NeuSymMemory(..., reembed=True)``), which is batched and resumable."""

    def __init__(self, message: str, *, stored: object = None, current: object = None) -> None:
        super().__init__(message)
        self.stored = stored
        self.current = current


class EmbeddingError(BackendError):
    """The embedding model failed or returned vectors that cannot be used (NaN/inf, all-zero, wrong shape).

    A :class:`BackendError` so callers that already treat a failing backend as retryable/abortable handle a broken
    model the same way."""


class ModelIntegrityError(EmbeddingError):
    """A model or tokenizer file does not have the sha256 it is pinned to: damaged, truncated or substituted.

    Refused before any vector is computed, because a wrong model produces plausible vectors and a persisted index
    built from them is silently poisoned."""


class IndexCorruptionError(NeuSymError):
    """The persisted FAISS index is unreadable; it is rebuilt from the graph."""


class IndexPersistenceError(NeuSymError, OSError):
    """Saving FAISS/BM25 failed (disk full, read-only directory). The graph change the call made is committed;
    the in-memory indexes keep serving it, and the next open catches the files up from the graph. Also an
    ``OSError`` carrying the original ``errno``."""


class ExtractionError(NeuSymError):
    """An LLM-backed step returned unusable output after its bounded retries."""


class PolicyViolationError(NeuSymError):
    """Governance refused an operation."""


class ClosedError(NeuSymError):
    """The memory (or one of its stores) was used after ``close()``."""
