"""The public surface of ``llama_index_neusym``: pinned exports, framework base classes, no namespace packages."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.memory import BaseMemory, BaseMemoryBlock

import llama_index_neusym
from llama_index_neusym import NeuSymChatMemory, NeuSymMemoryBlock, NeuSymRetriever

ROOT = Path(__file__).resolve().parents[3]
EXPECTED_ALL = ["MEMORY_QA_TEMPLATE", "MemoryNode", "NeuSymChatMemory", "NeuSymMemoryBlock", "NeuSymRetriever",
                "__version__", "render_nodes"]


def test_all_is_pinned() -> None:
    assert sorted(llama_index_neusym.__all__) == EXPECTED_ALL
    for name in llama_index_neusym.__all__:
        assert hasattr(llama_index_neusym, name)


def test_framework_base_classes() -> None:
    assert BaseRetriever in NeuSymRetriever.__mro__
    assert BaseMemoryBlock in NeuSymMemoryBlock.__mro__
    assert BaseMemory in NeuSymChatMemory.__mro__
    # nothing abstract left: each class implements every hook its base declares
    for cls in (NeuSymRetriever, NeuSymMemoryBlock, NeuSymChatMemory):
        assert not getattr(cls, "__abstractmethods__", frozenset()), cls


def test_no_llama_index_namespace_files() -> None:
    # a llama_index/__init__.py in this repo would shadow the installed llama_index.core
    assert not (ROOT / "llama_index").exists()
    assert not list(ROOT.glob("**/llama_index/__init__.py"))


def test_no_dependency_on_llama_index_neo4j_packages() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    deps = list(meta["project"]["dependencies"])
    for extra in meta["project"].get("optional-dependencies", {}).values():
        deps.extend(extra)
    assert not [d for d in deps if d.lower().startswith("llama-index") and "neo4j" in d.lower()]
    assert not [m for m in sys.modules if m.startswith("llama_index") and "neo4j" in m]
