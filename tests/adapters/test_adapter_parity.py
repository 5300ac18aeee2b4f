"""Both adapter packages describe a memory the same way: the shared keys of a LangChain ``Document`` and a LlamaIndex
``NodeWithScore`` come from one function (neusym.adapter_support), and both bind scopes by the same rule."""

from __future__ import annotations

import pytest

from langchain_neusym import NeuSymRetriever as LCRetriever
from langchain_neusym import result_to_document
from llama_index_neusym import NeuSymRetriever as LIRetriever
from llama_index_neusym._common import result_to_node
from neusym import NeuSymMemory, ScopeError
from neusym.adapter_support import result_metadata


def test_document_and_node_share_the_memory_metadata(memory: NeuSymMemory) -> None:
    memory.add("Ana is allergic to peanuts", user_id="ana", session_id="s1", infer=False)
    hit = memory.search("peanuts", user_id="ana", k=1)[0]
    shared = result_metadata(hit)
    doc, node = result_to_document(hit), result_to_node(hit)
    assert {k: doc.metadata[k] for k in shared} == shared == {k: node.node.metadata[k] for k in shared}
    assert set(doc.metadata) - set(shared) == {"score", "explanation"}
    assert {"expires_at", "metadata"} <= set(shared)  # a node carries them too (they once differed)
    assert set(node.node.metadata) - set(shared) == {"score_components"}
    assert doc.metadata["explanation"] == node.node.metadata["score_components"]
    assert doc.metadata["score"] == node.score and doc.id == node.node.id_ == hit.id


def test_retrievers_bind_scopes_alike(memory: NeuSymMemory) -> None:
    lc = LCRetriever(memory=memory, user_id="ana", session_id="s1")
    li = LIRetriever(memory, user_id="ana", session_id="s1")
    assert li.scope.as_params() == {"user_id": "ana", "agent_id": None, "session_id": "s1"}
    with pytest.raises(ScopeError, match="bound to user_id='ana'"):
        lc.invoke("peanuts", user_id="bob")
    assert LIRetriever(memory).scope == memory.default_scope
