"""Retrieval, save and reflection as LCEL Runnables: composition, scopes from config, and tenants."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.messages import HumanMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough

from langchain_neusym import NeuSymReflectionRunnable, NeuSymRetrievalRunnable, NeuSymSaveRunnable
from neusym import NeuSymMemory, ScopeError, SearchResult
from neusym.prompting import OPEN, PREAMBLE


def _chat_chain(memory: NeuSymMemory, model: Any) -> Any:
    prompt = ChatPromptTemplate.from_messages([("system", "Known about the user:\n{context}"), ("human", "{input}")])
    return (RunnablePassthrough.assign(context=NeuSymRetrievalRunnable(memory=memory))
            | RunnablePassthrough.assign(output=prompt | model | StrOutputParser())
            | NeuSymSaveRunnable(memory=memory))


def test_lcel_chat_chain_remembers_across_sessions(memory: NeuSymMemory, scripted: Callable[..., Any]) -> None:
    model = scripted(["Noted.", "You live in Porto.", "No idea."])
    chain = _chat_chain(memory, model)
    out = chain.invoke({"input": "I live in Porto."}, {"configurable": {"user_id": "ana", "session_id": "s1"}})
    assert out["output"] == "Noted." and out["input"] == "I live in Porto."
    chain.invoke({"input": "Where do I live?"}, {"configurable": {"user_id": "ana", "session_id": "s2"}})
    assert "Porto" in model.prompt_text(1)
    chain.invoke({"input": "Where do I live?"}, {"configurable": {"user_id": "bob", "session_id": "b1"}})
    assert "Porto" not in model.prompt_text(2)
    assert {r.scope.session_id for r in memory.query(user_id="ana")} == {"s1", "s2"}


async def test_async_chain(memory: NeuSymMemory, scripted: Callable[..., Any]) -> None:
    model = scripted(["Noted.", "Tuesdays."])
    chain = _chat_chain(memory, model)
    cfg = {"configurable": {"user_id": "ana", "thread_id": "t1"}}
    await chain.ainvoke({"input": "I swim on Tuesdays."}, cfg)
    await chain.ainvoke({"input": "When do I swim?"}, {"configurable": {"user_id": "ana", "thread_id": "t2"}})
    assert "Tuesdays" in model.prompt_text(1)
    assert {r.scope.session_id for r in memory.query(user_id="ana")} == {"t1", "t2"}


def test_retrieval_outputs_and_inputs(two_tenants: NeuSymMemory) -> None:
    docs = NeuSymRetrievalRunnable(memory=two_tenants, user_id="ana", output="documents", k=1)
    got = docs.invoke("allergic peanuts")
    assert len(got) == 1 and isinstance(got[0], Document) and got[0].metadata["user_id"] == "ana"
    results = NeuSymRetrievalRunnable(memory=two_tenants, user_id="ana", output="results",
                                      search_kwargs={"types": ["fact", "preference", "observation"]})
    hits = results.invoke([HumanMessage("hello"), HumanMessage("favourite city")])
    assert hits and all(isinstance(h, SearchResult) for h in hits)
    context = NeuSymRetrievalRunnable(memory=two_tenants, user_id="ana", input_key="question", header="Facts:")
    text = context.invoke({"question": "favourite city"})
    assert text.splitlines()[:3] == [OPEN, PREAMBLE, "Facts:"] and "Lisbon" in text
    assert context.invoke({"question": ""}) == ""
    with pytest.raises(ValueError):
        context.invoke({"input": "no question key"})
    with pytest.raises(ValueError):
        NeuSymRetrievalRunnable(memory=two_tenants, search_kwargs={"types": ["fact"]})  # filters need hits


def test_tenant_scoping(two_tenants: NeuSymMemory) -> None:
    open_ = NeuSymRetrievalRunnable(memory=two_tenants, output="documents", k=10)
    bob = open_.invoke("allergic peanuts Lisbon", {"configurable": {"user_id": "bob"}})
    assert bob and {d.metadata["user_id"] for d in bob} == {"bob"}
    bound = NeuSymRetrievalRunnable(memory=two_tenants, user_id="ana")
    with pytest.raises(ScopeError):
        bound.invoke("peanuts", {"configurable": {"user_id": "bob"}})
    with pytest.raises(ScopeError):
        NeuSymSaveRunnable(memory=two_tenants, user_id="ana").invoke({"input": "x", "output": "y"},
                                                                     {"configurable": {"user_id": "bob"}})


def test_save_runnable_shapes(memory: NeuSymMemory) -> None:
    save = NeuSymSaveRunnable(memory=memory, user_id="ana", session_id="s1")
    value = [HumanMessage("I adopted a puppy named Bolt."), {"role": "assistant", "content": "Bolt suits a fast puppy."}]
    assert save.invoke(value) is value
    assert {r.content for r in memory.query(user_id="ana")} >= {"I adopted a puppy named Bolt.", "Bolt suits a fast puppy."}
    with pytest.raises(ValueError):
        save.invoke({"unrelated": "x"})


def test_reflection_runnable(memory: NeuSymMemory) -> None:
    memory.add_batch(["Ana ran 5 km on Monday.", "Ana ran 8 km on Wednesday.", "Ana ran 12 km on Saturday."],
                     user_id="ana", session_id="run")
    step = NeuSymReflectionRunnable(memory=memory, user_id="ana")
    report = step.invoke({"extractive": True})
    assert report["stored"] and report["scope"]["user_id"] == "ana" and len(report["source_ids"]) == 3
    assert memory.get(report["id"], user_id="ana").type.value == "reflection"
    obj = NeuSymReflectionRunnable(memory=memory, user_id="ana", output="reflection").invoke({"extractive": True})
    assert obj.stored and obj.memory.type.value == "reflection"
    with pytest.raises(ScopeError):
        step.invoke(None, {"configurable": {"user_id": "bob"}})
    with pytest.raises(ScopeError):
        step.invoke({"user_id": "bob", "extractive": True})


async def test_reflection_runnable_async(memory: NeuSymMemory) -> None:
    memory.add_batch(["Bob bought flour.", "Bob bought yeast."], user_id="bob")
    report = await NeuSymReflectionRunnable(memory=memory).ainvoke({"extractive": True},
                                                                    {"configurable": {"user_id": "bob"}})
    assert report["stored"] and report["scope"]["user_id"] == "bob"
