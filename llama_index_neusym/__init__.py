"""LlamaIndex adapters for NeuSym: a retriever, a ``Memory`` block and a legacy chat memory.

    from llama_index.core.memory import Memory
    from llama_index_neusym import NeuSymMemoryBlock, NeuSymRetriever

    block = NeuSymMemoryBlock.from_defaults(data_dir="~/.neusym", user_id="ana")
    memory = Memory.from_defaults(session_id="chat-42", memory_blocks=[block])
    retriever = NeuSymRetriever(block.memory, user_id="ana", similarity_top_k=5)

The import path is flat (``llama_index_neusym``) on purpose: the package never adds files under the
``llama_index`` namespace, which would shadow ``llama_index.core``.
"""

from llama_index_neusym._common import MEMORY_QA_TEMPLATE, MemoryNode, render_nodes
from llama_index_neusym.memory import NeuSymChatMemory
from llama_index_neusym.memory_blocks import NeuSymMemoryBlock
from llama_index_neusym.retrievers import NeuSymRetriever
from neusym import __version__

__all__ = ["MEMORY_QA_TEMPLATE", "MemoryNode", "NeuSymChatMemory", "NeuSymMemoryBlock", "NeuSymRetriever",
           "__version__", "render_nodes"]
