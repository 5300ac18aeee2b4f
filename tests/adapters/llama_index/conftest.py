"""Fixtures for the LlamaIndex adapter tests: real NeuSym memories (embedded FalkorDB, hashing embedder)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from llama_index.core.utils import get_tokenizer

from neusym import NeuSymMemory


@pytest.fixture
def tokens() -> Callable[[str], int]:
    tokenize: Callable[[str], Any] = get_tokenizer()
    return lambda text: len(tokenize(text))


@pytest.fixture
def mem(make_memory: Callable[..., NeuSymMemory]) -> NeuSymMemory:
    return make_memory()
