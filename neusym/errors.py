"""Typed errors for NeuSym.

Callers catch at the level they need::

    NeuSymError
    ├── InvalidInputError          bad text, wrong types, bad scope keys, bad k, bad filters (also a ValueError)
    │   ├── ScopeError             missing/unknown scope keys, or an operation that would cross tenants
    │   └── UnsafeQueryError       raw Cypher that is not read-only
    ├── RecordNotFoundError        no memory with that id *in this scope* (also a KeyError)
    ├── BackendError               the graph database failed
    │   ├── BackendUnavailableError  cannot start/reach the database (binary missing, server down, auth)
    │   ├── StoreInUseError          an operation that needs the store to itself (re-embed) while others hold it
    │   ├── GraphIntegrityError      the graph broke an invariant NeuSym relies on (damaged; stop writing to it)
    │   │   └── StoreDamagedError      the graph's files lost acknowledged writes (AOF, manifest, behind its index)
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
    "StoreDamagedError",
    "StoreInUseError",
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


class StoreInUseError(BackendError):
    """An operation that must have the store to itself (a re-embed rewrites every vector: a process still writing
    with the old embedder would leave it mixed-width) found other processes holding it. ``holders`` names them
    (pid and command line, where the system can tell); close them, or wait, and run it again."""

    def __init__(self, message: str, *, holders: list[str] | None = None) -> None:
        super().__init__(message)
        self.holders = list(holders or [])


class GraphIntegrityError(BackendError):
    """The graph breaks an invariant every NeuSym write keeps: a node under two kinds' labels (an ``Audit:Memory``),
    a memory without its id, a tombstone beside a live memory, a label entry of a deleted node. Raised by the check
    after every purge (and by anything that finds such a graph) instead of going on writing into a damaged graph.
    ``problems`` lists what was found; the message says how to recover."""

    def __init__(self, message: str, *, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = list(problems or [])


class StoreDamagedError(GraphIntegrityError):
    """The store's persisted graph is missing acknowledged writes, or would be opened without them: AOF files with no
    manifest (or no AOF directory where a store was), a damaged AOF the server skipped commands of while loading
    (``== CRITICAL ==`` in its log), or a graph whose write sequence is behind the derived indexes' watermark (the
    indexes saw writes the graph no longer has).

    NeuSym refuses to open such a store rather than serve an empty or silently shortened one, and keeps the files
    as they are (no AOF compaction until the damage is accepted). ``files`` names them; ``recovery`` says what to
    do (usually: copy the data directory, then restore a backup, or accept what is there with
    ``NEUSYM_ACCEPT_DAMAGE=1`` for one open, which keeps a copy of the damaged files)."""

    def __init__(self, message: str, *, files: list[str] | None = None, recovery: str = "",
                 problems: list[str] | None = None) -> None:
        super().__init__(f"{message}\nfiles: {', '.join(files or []) or '-'}\nrecovery: {recovery}",
                         problems=problems or [message])
        self.files = list(files or [])
        self.recovery = recovery


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
    """Saving FAISS/BM25 failed (disk full, read-only directory). Also an ``OSError`` carrying the original
    ``errno``.

    ``graph_committed`` is True when the call that raised it had written to the graph (an add, edit, forget...):
    that write IS committed, so a caller must not repeat the call (a retried add would store the memory twice). The
    in-memory indexes keep serving the change, and the next open catches the files up from the graph."""

    graph_committed: bool = False


class ExtractionError(NeuSymError):
    """An LLM-backed step returned unusable output after its bounded retries."""


class PolicyViolationError(NeuSymError):
    """Governance refused an operation."""


class ClosedError(NeuSymError):
    """The memory (or one of its stores) was used after ``close()``."""
