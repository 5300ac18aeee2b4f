"""NeuSym: a persistent, self-curating hybrid neuro-symbolic memory for LLM agents.

    from neusym import NeuSymMemory
    with NeuSymMemory() as mem:                      # embedded FalkorDB + FAISS in ~/.neusym
        mem.add("I moved to Lisbon last month", user_id="ana")  # user_id: the tenant, on every call
        for hit in mem.search("where does Ana live?", user_id="ana"):
            print(hit.content, hit.score, hit.explanation.summary())

The public names are resolved on first use (PEP 562 ``__getattr__``): ``import neusym`` costs a few milliseconds,
so a command line that only prints its help, or a program that only needs ``neusym.errors``, never imports the
graph client, FAISS or the governance tables. ``from neusym import X`` works as before; type checkers read the
imports under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neusym._version import __version__
    from neusym.backup import ExportReport, RestoreReport
    from neusym.config import NeuSymConfig
    from neusym.errors import (
        BackendError,
        BackendUnavailableError,
        ClosedError,
        DimensionMismatchError,
        EmbedderMismatchError,
        EmbeddingError,
        ExtractionError,
        GraphIntegrityError,
        IndexCorruptionError,
        IndexPersistenceError,
        InvalidInputError,
        ModelIntegrityError,
        NeuSymError,
        PolicyViolationError,
        RecordNotFoundError,
        ScopeError,
        StoreDamagedError,
        StoreInUseError,
        UnsafeQueryError,
    )
    from neusym.facade import AddResult, AsyncNeuSymMemory, NeuSymMemory
    from neusym.filters import SearchFilters
    from neusym.governance.decisions import Decision
    from neusym.governance.forgetting import ForgetPreview, ForgetReport
    from neusym.governance.review import ReviewItem
    from neusym.importing import ImportReport
    from neusym.prompting import render_memories
    from neusym.record import (
        MemoryRecord,
        MemoryStatus,
        MemoryType,
        PlanState,
        Scope,
        ScoreExplanation,
        SearchResult,
        Source,
        Triple,
    )
    from neusym.retrieval.config import RetrievalConfig

_ERRORS = ("BackendError", "BackendUnavailableError", "ClosedError", "DimensionMismatchError",
           "EmbedderMismatchError", "EmbeddingError", "ExtractionError", "GraphIntegrityError", "IndexCorruptionError",
           "IndexPersistenceError", "InvalidInputError", "ModelIntegrityError", "NeuSymError",
           "PolicyViolationError", "RecordNotFoundError", "ScopeError", "StoreDamagedError", "StoreInUseError",
           "UnsafeQueryError")
_RECORDS = ("MemoryRecord", "MemoryStatus", "MemoryType", "PlanState", "Scope", "ScoreExplanation", "SearchResult",
            "Source", "Triple")

#: public name -> the module that defines it (imported on first access)
_WHERE: dict[str, str] = {
    **dict.fromkeys(_ERRORS, "neusym.errors"),
    **dict.fromkeys(_RECORDS, "neusym.record"),
    "AddResult": "neusym.facade",
    "AsyncNeuSymMemory": "neusym.facade",
    "NeuSymMemory": "neusym.facade",
    "SearchFilters": "neusym.filters",
    "NeuSymConfig": "neusym.config",
    "ExportReport": "neusym.backup",
    "RestoreReport": "neusym.backup",
    "ImportReport": "neusym.importing",
    "Decision": "neusym.governance.decisions",
    "ForgetPreview": "neusym.governance.forgetting",
    "ForgetReport": "neusym.governance.forgetting",
    "ReviewItem": "neusym.governance.review",
    "render_memories": "neusym.prompting",
    "RetrievalConfig": "neusym.retrieval.config",
    "__version__": "neusym._version",  # reads the installed metadata (~10 ms): only when asked
}

__all__ = [  # a literal, so type checkers see the re-exports; every name must be in _WHERE
    "AddResult",
    "AsyncNeuSymMemory",
    "BackendError",
    "BackendUnavailableError",
    "ClosedError",
    "Decision",
    "DimensionMismatchError",
    "EmbedderMismatchError",
    "EmbeddingError",
    "ExportReport",
    "ExtractionError",
    "ForgetPreview",
    "ForgetReport",
    "GraphIntegrityError",
    "ImportReport",
    "IndexCorruptionError",
    "IndexPersistenceError",
    "InvalidInputError",
    "MemoryRecord",
    "MemoryStatus",
    "MemoryType",
    "ModelIntegrityError",
    "NeuSymConfig",
    "NeuSymError",
    "NeuSymMemory",
    "PlanState",
    "PolicyViolationError",
    "RecordNotFoundError",
    "RestoreReport",
    "RetrievalConfig",
    "ReviewItem",
    "Scope",
    "ScopeError",
    "ScoreExplanation",
    "SearchFilters",
    "SearchResult",
    "Source",
    "StoreDamagedError",
    "StoreInUseError",
    "Triple",
    "UnsafeQueryError",
    "__version__",
    "render_memories",
]


def __getattr__(name: str) -> Any:
    """Import the module defining ``name`` on first access and keep the value as a module attribute."""
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'neusym' has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*__all__, *(k for k in globals() if k.startswith("__"))})
