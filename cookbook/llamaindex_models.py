"""Model choice for the LlamaIndex recipes: a real model from ONE environment variable, else llama-index-core mocks.

    NEUSYM_LLAMA_LLM=openai:gpt-4o-mini   # pip install llama-index-llms-openai; the key comes from OPENAI_API_KEY
    NEUSYM_LLAMA_LLM=ollama:llama3.1      # pip install llama-index-llms-ollama; a local Ollama server, no key

Unset (CI, the test suite): the recipes use llama-index-core's offline mocks, so they run anywhere.
``NEUSYM_FAST_EMBEDDER=1`` swaps the local all-MiniLM-L6-v2 embedder for NeuSym's hashing embedder (tests only:
it is fast and deterministic but not semantic).
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["LLM_ENV", "pick_embedder", "pick_llm"]

LLM_ENV = "NEUSYM_LLAMA_LLM"


def pick_llm(mock: Any) -> Any:
    """The LlamaIndex LLM named by ``NEUSYM_LLAMA_LLM`` (``provider:model``), or ``mock`` when it is unset."""
    spec = os.environ.get(LLM_ENV, "").strip()
    if not spec:
        return mock
    provider, _, model = spec.partition(":")
    if not model:
        raise SystemExit(f"{LLM_ENV} must look like 'openai:gpt-4o-mini' or 'ollama:llama3.1', got {spec!r}")
    if provider == "openai":
        from llama_index.llms.openai import OpenAI  # pip install llama-index-llms-openai

        return OpenAI(model=model)
    if provider == "ollama":
        from llama_index.llms.ollama import Ollama  # pip install llama-index-llms-ollama

        return Ollama(model=model, request_timeout=120.0)
    raise SystemExit(f"{LLM_ENV}: unknown provider {provider!r} (use openai or ollama)")


def pick_embedder() -> Any:
    """``None`` (NeuSym's default local MiniLM) unless ``NEUSYM_FAST_EMBEDDER=1`` asks for the hashing embedder.

    Any LlamaIndex ``BaseEmbedding`` works here too, e.g. ``HuggingFaceEmbedding(model_name=...)``.
    """
    if os.environ.get("NEUSYM_FAST_EMBEDDER") == "1":
        from neusym.embeddings import HashingEmbedder

        return HashingEmbedder(256)
    return None
