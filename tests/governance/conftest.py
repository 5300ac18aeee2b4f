"""Governance scenario fixtures: real embedded FalkorDB, real FAISS, and a cached HashingEmbedder (so the embedding
cache is a real store a hard forget has to clean)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from neusym import NeuSymMemory
from neusym.embeddings import CachedEmbedder, HashingEmbedder


@pytest.fixture
def mem(make_memory: Callable[..., NeuSymMemory]) -> NeuSymMemory:
    return make_memory(embedder=CachedEmbedder(HashingEmbedder(256)))
