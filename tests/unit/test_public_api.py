"""The engine's public surface is pinned: an accidental export change fails here, not in a user's import."""

from __future__ import annotations

import subprocess
import sys

import neusym

EXPECTED = [
    "AddResult", "AsyncNeuSymMemory", "BackendError", "BackendUnavailableError", "ClosedError", "Decision", "DimensionMismatchError",
    "EmbedderMismatchError", "EmbeddingError", "ExportReport", "ExtractionError", "ForgetPreview", "ForgetReport",
    "GraphIntegrityError", "ImportReport",
    "IndexCorruptionError", "IndexPersistenceError", "InvalidInputError", "MemoryRecord", "MemoryStatus", "MemoryType",
    "ModelIntegrityError", "NeuSymConfig", "NeuSymError", "NeuSymMemory", "PlanState", "PolicyViolationError",
    "RecordNotFoundError", "RestoreReport", "RetrievalConfig", "ReviewItem", "Scope", "ScopeError", "ScoreExplanation",
    "SearchFilters", "SearchResult", "Source", "StoreDamagedError",
    "StoreInUseError", "Triple", "UnsafeQueryError", "__version__", "render_memories",
]


def test_all_is_pinned() -> None:
    assert sorted(neusym.__all__) == sorted(EXPECTED)
    for name in neusym.__all__:
        assert hasattr(neusym, name)


def test_error_tree() -> None:
    for name in ("InvalidInputError", "RecordNotFoundError", "BackendError", "ClosedError", "ExtractionError",
                 "IndexCorruptionError", "PolicyViolationError"):
        assert issubclass(getattr(neusym, name), neusym.NeuSymError)
    assert issubclass(neusym.InvalidInputError, ValueError)
    assert issubclass(neusym.RecordNotFoundError, KeyError)
    assert issubclass(neusym.ScopeError, neusym.InvalidInputError)
    assert issubclass(neusym.BackendUnavailableError, neusym.BackendError)
    assert issubclass(neusym.EmbeddingError, neusym.BackendError)
    assert issubclass(neusym.GraphIntegrityError, neusym.BackendError)


def test_embedding_error_old_import_paths() -> None:
    """``EmbeddingError`` moved to neusym.errors; the paths it had before still name the same class."""
    from neusym.embeddings import EmbeddingError as from_package
    from neusym.embeddings.base import EmbeddingError as from_base
    from neusym.errors import EmbeddingError

    assert from_package is from_base is EmbeddingError is neusym.EmbeddingError


def test_engine_imports_no_framework() -> None:
    code = ("import sys, neusym; bad = [m for m in sys.modules if m.split('.')[0] in "
            "('langchain', 'langchain_core', 'langgraph', 'llama_index')]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
