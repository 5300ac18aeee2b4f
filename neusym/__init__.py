"""NeuSym: a persistent, self-curating hybrid neuro-symbolic memory for LLM agents.

    from neusym import NeuSymMemory
    with NeuSymMemory() as mem:                      # embedded FalkorDB + FAISS in ~/.neusym
        mem.add("I moved to Lisbon last month", user_id="ana")  # user_id: the tenant, on every call
        for hit in mem.search("where does Ana live?", user_id="ana"):
            print(hit.content, hit.score, hit.explanation.summary())
"""

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
from neusym.facade import AddResult, NeuSymMemory
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

__all__ = [
    "AddResult",
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
    "SearchResult",
    "Source",
    "StoreDamagedError",
    "StoreInUseError",
    "Triple",
    "UnsafeQueryError",
    "__version__",
    "render_memories",
]
