"""The engine: stores, derived indexes, embedder, extractor, governor, the write lock and events.

Layers (imports point down only; ``tests/unit/test_layers.py`` walks them):

    neusym.facade (NeuSymMemory)  ->  neusym.services (governance, reflection, review)  ->  neusym.engine
    ->  governance/reflection components, retrieval, extraction  ->  neusym.symbolic, neusym.neural, embeddings
"""

from neusym.engine.core import AddResult, Engine, open_executor
from neusym.engine.mutation import Events, Mutation
from neusym.engine.scope import resolve_scope

__all__ = ["AddResult", "Engine", "Events", "Mutation", "open_executor", "resolve_scope"]
