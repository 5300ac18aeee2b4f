"""Governance scenario fixtures: real embedded FalkorDB, real FAISS, and a cached HashingEmbedder (so the embedding
cache is a real store a hard forget has to clean)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from neusym import NeuSymMemory
from neusym.embeddings import CachedEmbedder, HashingEmbedder, MiniLMEmbedder


@pytest.fixture
def mem(make_memory: Callable[..., NeuSymMemory]) -> NeuSymMemory:
    return make_memory(embedder=CachedEmbedder(HashingEmbedder(256)))


@pytest.fixture(scope="session")
def minilm_model() -> MiniLMEmbedder:
    """The real all-MiniLM-L6-v2, loaded once (tests marked ``minilm``: update detection reads meaning)."""
    loaded = MiniLMEmbedder()
    loaded.load()
    return loaded


@pytest.fixture
def sem(make_memory: Callable[..., NeuSymMemory], minilm_model: MiniLMEmbedder) -> NeuSymMemory:
    return make_memory(embedder=minilm_model)
