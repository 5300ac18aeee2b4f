"""LangChain and LangGraph adapters for NeuSym.

    from neusym import NeuSymMemory as Engine
    from langchain_neusym import NeuSymRetriever, NeuSymStore, NeuSymMiddleware, NeuSymToolkit

    mem = Engine()                                                    # embedded FalkorDB + FAISS in ~/.neusym
    retriever = NeuSymRetriever(memory=mem, user_id="ana", k=5)       # two-stage search as Documents
    store = NeuSymStore(mem)                                          # LangGraph BaseStore (namespace -> scope)
    agent = create_agent(model, NeuSymToolkit(memory=mem).get_tools(), store=store,
                         middleware=[NeuSymMiddleware(mem)])          # recall before, save after each answer

``NeuSymChatMemory`` is the classic ``langchain_classic`` chain memory (the same name as LlamaIndex's chat memory,
since it is the same idea); the engine is ``neusym.NeuSymMemory``.
"""

from langchain_neusym._common import render_documents, result_to_document
from langchain_neusym.memory import NeuSymChatMemory
from langchain_neusym.middleware import NeuSymMiddleware
from langchain_neusym.retrievers import NeuSymRetriever
from langchain_neusym.runnables import NeuSymReflectionRunnable, NeuSymRetrievalRunnable, NeuSymSaveRunnable
from langchain_neusym.stores import NeuSymStore
from langchain_neusym.tools import (
    NeuSymForgetTool,
    NeuSymRecallTool,
    NeuSymRememberTool,
    NeuSymToolkit,
    NeuSymUpdateTool,
)
from neusym import __version__

__all__ = [
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
