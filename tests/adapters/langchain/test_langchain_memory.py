"""Classic chain memory: ConversationChain / LLMChain remember across sessions, within a token budget, per tenant."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
from langchain_classic.chains import ConversationChain, LLMChain
from langchain_core.messages import SystemMessage
from langchain_core.prompts import PromptTemplate

from langchain_neusym import NeuSymChatMemory
from neusym import NeuSymMemory as Engine
from neusym.prompting import CLOSE, OPEN, PREAMBLE
from neusym.reflection.tokens import get_token_counter

# ConversationChain and LLMChain are deprecated upstream; these tests exist because users still run them
pytestmark = pytest.mark.filterwarnings("ignore::langchain_core._api.deprecation.LangChainDeprecationWarning")


def test_subclass_constructs_without_deprecation_warning(memory: Engine) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mem = NeuSymChatMemory(memory=memory, user_id="ana")
    assert mem.memory_variables == ["history"]


def test_conversation_chain_remembers_across_sessions(memory: Engine,
                                                      scripted: Callable[..., Any]) -> None:
    llm1 = scripted(["Noted."])
    ConversationChain(llm=llm1, memory=NeuSymChatMemory(memory=memory, user_id="ana", session_id="s1")).invoke(
        {"input": "I am allergic to peanuts."})
    stored = memory.query(user_id="ana", session_id="s1")
    assert any("peanuts" in r.content for r in stored)

    llm2 = scripted(["You are allergic to peanuts."])
    chain2 = ConversationChain(llm=llm2, memory=NeuSymChatMemory(memory=memory, user_id="ana", session_id="s2"))
    out = chain2.invoke({"input": "Am I allergic to anything?"})
    assert out["response"] == "You are allergic to peanuts."
    assert "peanuts" in llm2.prompt_text()          # the fact from session 1 reached the session-2 prompt

    llm3 = scripted(["I don't know."])
    ConversationChain(llm=llm3, memory=NeuSymChatMemory(memory=memory, user_id="bob")).invoke(
        {"input": "Am I allergic to anything?"})
    assert "peanuts" not in llm3.prompt_text()       # and never another tenant's prompt


def test_llm_chain_with_custom_keys(memory: Engine, scripted: Callable[..., Any]) -> None:
    memory.add("Ana's dog is called Pixel.", user_id="ana")
    prompt = PromptTemplate.from_template("Known facts:\n{facts}\nQuestion: {question}\nAnswer:")
    llm = scripted(["Pixel."])
    mem = NeuSymChatMemory(memory=memory, user_id="ana", session_id="s9", memory_key="facts", input_key="question")
    chain = LLMChain(llm=llm, prompt=prompt, memory=mem)
    assert chain.invoke({"question": "What is my dog called?"})["text"] == "Pixel."
    assert "Pixel" in llm.prompt_text()
    saved = [r.content for r in memory.query(user_id="ana", session_id="s9")]
    assert any("dog" in c for c in saved) and any(c == "Pixel." for c in saved)


def test_context_respects_token_budget(memory: Engine) -> None:
    memory.add_batch([f"Fact number {i} about the garden and its many plants." for i in range(30)], user_id="ana")
    counter = get_token_counter("cl100k_base")
    sizes = []
    for budget in (20, 150, 300, 600):
        mem = NeuSymChatMemory(memory=memory, user_id="ana", max_tokens=budget, k=30, header="Memories:")
        text = mem.load_memory_variables({"input": "garden plants"})["history"]
        assert counter.count(text) <= budget
        if budget >= 150:
            assert text.splitlines()[:3] == [OPEN, PREAMBLE, "Memories:"] and "garden" in text
            assert text.endswith(CLOSE)
        sizes.append(text.count("Fact number"))
    assert sizes == sorted(sizes) and sizes[-1] > sizes[1]  # a bigger budget holds more memories
    empty = NeuSymChatMemory(memory=memory, user_id="ana", max_tokens=0)
    assert empty.load_memory_variables({"input": "garden"}) == {"history": ""}


def test_return_messages(memory: Engine) -> None:
    memory.add("Ana speaks Portuguese.", user_id="ana")
    mem = NeuSymChatMemory(memory=memory, user_id="ana", return_messages=True)
    msgs = mem.load_memory_variables({"input": "Which language does Ana speak?"})["history"]
    assert len(msgs) == 1 and isinstance(msgs[0], SystemMessage) and "Portuguese" in msgs[0].content
    nobody = NeuSymChatMemory(memory=memory, user_id="nobody", return_messages=True)
    assert nobody.load_memory_variables({"input": "Which language?"})["history"] == []


def test_save_context_goes_through_the_write_path(memory: Engine) -> None:
    mem = NeuSymChatMemory(memory=memory, user_id="ana", session_id="s1")
    mem.save_context({"input": "My favourite colour is green."}, {"response": "Nice."})
    before = memory.stats(user_id="ana")["memories"]
    mem.save_context({"input": "My favourite colour is green."}, {"response": "Nice."})
    assert memory.stats(user_id="ana")["memories"] == before  # governance merged the exact duplicates
    audit = memory.history(memory.query(user_id="ana")[0].id, user_id="ana")
    assert {e["action"] for e in audit} >= {"admit"}
    with pytest.raises(ValueError):
        mem.save_context({"a": "x", "b": "y"}, {"response": "z"})  # ambiguous input key


def test_clear_is_scoped(memory: Engine) -> None:
    NeuSymChatMemory(memory=memory, user_id="ana", session_id="s1").save_context({"input": "I like tea."},
                                                                          {"response": "Ok."})
    NeuSymChatMemory(memory=memory, user_id="ana", session_id="s2").save_context({"input": "I like jazz."},
                                                                          {"response": "Ok."})
    memory.add("Bob likes tea too.", user_id="bob")
    NeuSymChatMemory(memory=memory, user_id="ana", session_id="s1").clear()
    assert memory.query(user_id="ana", session_id="s1") == []
    assert memory.query(user_id="ana", session_id="s2")
    assert memory.query(user_id="bob")


async def test_async_variants(memory: Engine) -> None:
    mem = NeuSymChatMemory(memory=memory, user_id="ana", session_id="s1")
    await mem.asave_context({"input": "I am training for a marathon."}, {"response": "Good luck!"})
    later = NeuSymChatMemory(memory=memory, user_id="ana", session_id="s2")
    loaded = await later.aload_memory_variables({"input": "What am I training for?"})
    assert "marathon" in loaded["history"]
    await mem.aclear()
    assert "marathon" not in (await later.aload_memory_variables({"input": "marathon"}))["history"]


def test_tenant_scoping(two_tenants: Engine) -> None:
    bob = NeuSymChatMemory(memory=two_tenants, user_id="bob")
    text = bob.load_memory_variables({"input": "allergic to peanuts, favourite city"})["history"]
    assert "Lisbon" not in text and "allergic" not in text
    assert "peanuts" in text  # Bob's own memory
