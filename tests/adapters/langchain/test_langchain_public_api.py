"""The public surface of ``langchain_neusym`` is pinned, and each class sits on the framework base it claims."""

from __future__ import annotations

import langchain_neusym

EXPECTED_ALL = [
    "NeuSymChatMemory",
    "NeuSymForgetTool",
    "NeuSymMiddleware",
    "NeuSymRecallTool",
    "NeuSymReflectionRunnable",
    "NeuSymRememberTool",
    "NeuSymRetrievalRunnable",
    "NeuSymRetriever",
    "NeuSymSaveRunnable",
    "NeuSymStore",
    "NeuSymToolkit",
    "NeuSymUpdateTool",
    "__version__",
    "render_documents",
    "result_to_document",
]


def test_all_is_pinned() -> None:
    assert sorted(langchain_neusym.__all__) == EXPECTED_ALL
    for name in EXPECTED_ALL:
        assert hasattr(langchain_neusym, name)


def test_framework_bases() -> None:
    from langchain.agents.middleware import AgentMiddleware
    from langchain_classic.base_memory import BaseMemory
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import Runnable
    from langchain_core.tools import BaseTool, BaseToolkit
    from langgraph.store.base import BaseStore

    assert issubclass(langchain_neusym.NeuSymRetriever, BaseRetriever)
    assert issubclass(langchain_neusym.NeuSymChatMemory, BaseMemory)
    assert issubclass(langchain_neusym.NeuSymStore, BaseStore)
    assert issubclass(langchain_neusym.NeuSymMiddleware, AgentMiddleware)
    assert issubclass(langchain_neusym.NeuSymToolkit, BaseToolkit)
    for tool in ("NeuSymRememberTool", "NeuSymRecallTool", "NeuSymForgetTool", "NeuSymUpdateTool"):
        assert issubclass(getattr(langchain_neusym, tool), BaseTool)
    for runnable in ("NeuSymRetrievalRunnable", "NeuSymSaveRunnable", "NeuSymReflectionRunnable"):
        assert issubclass(getattr(langchain_neusym, runnable), Runnable)

