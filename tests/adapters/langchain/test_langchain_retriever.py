"""NeuSymRetriever: the langchain-tests conformance suite, plus documents, k, filters, callbacks and tenants."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda
from langchain_tests.integration_tests import RetrieversIntegrationTests

from langchain_neusym import NeuSymRetriever
from neusym import InvalidInputError, NeuSymMemory, ScopeError

CORPUS = [
    "The garden needs watering every morning.",
    "Tomatoes in the garden ripen in August.",
    "The garden shed holds the lawn mower.",
    "Roses in the front garden bloom in June.",
    "The vegetable garden gets full sun.",
    "Garden compost is turned every week.",
]


class TestNeuSymRetrieverConformance(RetrieversIntegrationTests):
    """The standard suite, unmodified: k as constructor parameter and as invoke kwarg, sync and async."""

    @pytest.fixture(autouse=True)
    def _seeded(self, memory: NeuSymMemory) -> None:
        memory.add_batch(CORPUS, user_id="conformance", infer=False)
        self._memory = memory

    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return NeuSymRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"memory": self._memory, "user_id": "conformance"}

    @property
    def retriever_query_example(self) -> str:
        return "garden"


def test_documents_carry_id_type_times_score_and_explanation(two_tenants: NeuSymMemory) -> None:
    docs = NeuSymRetriever(memory=two_tenants, user_id="ana").invoke("allergic to peanuts", k=1)
    assert len(docs) == 1
    doc = docs[0]
    assert "peanuts" in doc.page_content
    md = doc.metadata
    assert doc.id == md["memory_id"]
    assert two_tenants.get(doc.id, user_id="ana").content == doc.page_content
    assert md["type"] and md["created_at"] and "updated_at" in md and "valid_from" in md
    assert md["user_id"] == "ana" and md["session_id"] == "s1"
    assert isinstance(md["score"], float) and md["score"] > 0
    assert md["explanation"]["similarity"] > 0 and md["explanation"]["weights"]
    assert "sim=" in md["score_explanation"]


async def test_async_matches_sync(two_tenants: NeuSymMemory) -> None:
    retriever = NeuSymRetriever(memory=two_tenants, user_id="ana", k=2)
    sync = retriever.invoke("peanuts", touch=False)
    asyn = await retriever.ainvoke("peanuts", touch=False)
    assert [d.id for d in sync] == [d.id for d in asyn]


def test_k_field_kwarg_and_zero(two_tenants: NeuSymMemory) -> None:
    retriever = NeuSymRetriever(memory=two_tenants, user_id="ana", k=1)
    assert len(retriever.invoke("peanuts Lisbon")) == 1
    assert len(retriever.invoke("peanuts Lisbon", k=2)) == 2
    assert retriever.invoke("peanuts", k=0) == []
    with pytest.raises(ValueError, match="non-negative"):
        NeuSymRetriever(memory=two_tenants, user_id="ana", k=-1)


def test_filters_as_fields_and_kwargs(memory: NeuSymMemory) -> None:
    memory.add("Ana prefers window seats.", user_id="ana", type="preference", tags=["travel"])
    memory.add("Ana flew to Porto on a window seat.", user_id="ana", type="observation", tags=["travel"])
    memory.add("Ana's window box has herbs.", user_id="ana", type="observation", tags=["home"])
    field = NeuSymRetriever(memory=memory, user_id="ana", k=5, search_kwargs={"types": ["preference"]})
    assert [d.metadata["type"] for d in field.invoke("window")] == ["preference"]
    plain = NeuSymRetriever(memory=memory, user_id="ana", k=5)
    tagged = plain.invoke("window", tags=["home"])
    assert [d.page_content for d in tagged] == ["Ana's window box has herbs."]
    with pytest.raises(InvalidInputError):
        plain.invoke("window", colour="red")
    with pytest.raises(ValueError, match="cannot set"):  # a filter never widens the scope
        NeuSymRetriever(memory=memory, search_kwargs={"user_id": "bob"})


def test_tenant_scoping(two_tenants: NeuSymMemory) -> None:
    bob = NeuSymRetriever(memory=two_tenants, user_id="bob", k=10)
    docs = bob.invoke("allergic to peanuts Lisbon")
    assert docs and all(d.metadata["user_id"] == "bob" for d in docs)
    # an open retriever takes the tenant per call, from kwargs or config
    open_ = NeuSymRetriever(memory=two_tenants, k=10)
    assert {d.metadata["user_id"] for d in open_.invoke("peanuts", user_id="ana")} == {"ana"}
    via_config = open_.invoke("peanuts", config={"configurable": {"user_id": "bob"}})
    assert {d.metadata["user_id"] for d in via_config} == {"bob"}
    # a bound tenant cannot be switched by a call
    with pytest.raises(ScopeError):
        bob.invoke("peanuts", user_id="ana")
    with pytest.raises(ScopeError):
        bob.invoke("peanuts", config={"configurable": {"user_id": "ana"}})
    # session narrowing
    ana_s2 = NeuSymRetriever(memory=two_tenants, user_id="ana", session_id="s2")
    assert ana_s2.invoke("peanuts") == []


class _Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.events: list[tuple[str, Any, Any]] = []

    def on_retriever_start(self, serialized: Any, query: str, *, run_id: UUID, parent_run_id: UUID | None = None,
                           tags: list[str] | None = None, metadata: dict[str, Any] | None = None,
                           **kwargs: Any) -> None:
        self.events.append(("start", parent_run_id, {"tags": tags, "metadata": metadata, "query": query}))

    def on_retriever_end(self, documents: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                         **kwargs: Any) -> None:
        self.events.append(("end", parent_run_id, len(documents)))

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.events.append(("chain", run_id, None))


def test_callbacks_propagate_and_nest(two_tenants: NeuSymMemory) -> None:
    retriever = NeuSymRetriever(memory=two_tenants, user_id="ana", k=1, tags=["neusym"])
    rec = _Recorder()
    retriever.invoke("peanuts", config={"callbacks": [rec], "tags": ["outer"], "metadata": {"app": "x"}})
    start = next(e for e in rec.events if e[0] == "start")
    assert set(start[2]["tags"]) >= {"neusym", "outer"}
    assert start[2]["metadata"]["app"] == "x" and start[2]["metadata"]["ls_retriever_name"] == "neusym"
    assert start[2]["metadata"]["ls_vector_store_provider"] == "NeuSym"
    assert ("end", None, 1) in rec.events

    rec = _Recorder()
    chain = RunnableLambda(lambda q: q) | retriever
    chain.invoke("peanuts", config={"callbacks": [rec]})
    parent = next(e[1] for e in rec.events if e[0] == "chain")
    assert next(e for e in rec.events if e[0] == "start")[1] == parent  # the retriever run nests in the chain
