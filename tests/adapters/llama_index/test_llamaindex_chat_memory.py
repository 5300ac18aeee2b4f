"""NeuSymChatMemory, the legacy ``BaseMemory``: short-term buffer plus long-term recall, sync and async."""

from __future__ import annotations

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms.mock import MockFunctionCallingLLMWithChatMemoryOfLastCall, MockLLM

from llama_index_neusym import NeuSymChatMemory
from neusym import NeuSymMemory


def user(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


def test_put_writes_and_a_later_conversation_recalls(mem: NeuSymMemory) -> None:
    first = NeuSymChatMemory.from_defaults(mem, user_id="alice", session_id="c1")
    first.put(user("My passport number ends in 4471."))
    first.put(ChatMessage(role="assistant", content="Got it."))
    assert {r.scope.session_id for r in mem.query(user_id="alice")} == {"c1"}
    assert [m.content for m in first.get_all()] == ["My passport number ends in 4471.", "Got it."]

    second = NeuSymChatMemory.from_defaults(mem, user_id="alice", session_id="c2")
    messages = second.get(input="What does my passport number end in?")
    assert messages[0].role == MessageRole.SYSTEM and "4471" in str(messages[0].content)
    assert second.get_all() == []  # long-term recall does not touch the short-term buffer


def test_existing_system_message_is_extended_not_mutated(mem: NeuSymMemory) -> None:
    mem.add("Alice's favourite number is 17.", user_id="alice", session_id="old")
    chat = NeuSymChatMemory.from_defaults(
        mem, user_id="alice", chat_history=[ChatMessage(role="system", content="Be brief."), user("hi")])
    messages = chat.get(input="favourite number")
    assert messages[0].role == MessageRole.SYSTEM
    assert "17" in str(messages[0].content) and "Be brief." in str(messages[0].content)
    assert chat.get_all()[0].content == "Be brief."  # the stored message is unchanged


def test_no_cross_tenant_recall(mem: NeuSymMemory) -> None:
    NeuSymChatMemory.from_defaults(mem, user_id="bob").put(user("Bob's locker code is 9931."))
    alice = NeuSymChatMemory.from_defaults(mem, user_id="alice")
    alice.put(user("I need my locker code."))
    assert all("9931" not in str(m.content) for m in alice.get(input="locker code 9931"))


def test_set_writes_only_new_messages_and_reset_keeps_long_term(mem: NeuSymMemory) -> None:
    chat = NeuSymChatMemory.from_defaults(mem, user_id="alice", infer=False)
    history = [user("I live in Ghent."), ChatMessage(role="assistant", content="Nice city.")]
    chat.set(history)
    chat.set([*history, user("I cycle to work.")])
    assert sorted(r.content for r in mem.query(user_id="alice")) == ["I cycle to work.", "I live in Ghent.",
                                                                      "Nice city."]
    chat.reset()
    assert chat.get_all() == [] and len(mem.query(user_id="alice")) == 3


async def test_async_twins(mem: NeuSymMemory) -> None:
    chat = NeuSymChatMemory.from_defaults(mem, user_id="alice", session_id="a1")
    await chat.aput(user("My train leaves from platform 9."))
    await chat.aput_messages([ChatMessage(role="assistant", content="Noted."), user("And I sit in coach B.")])
    assert len(await chat.aget_all()) == 3
    later = NeuSymChatMemory.from_defaults(mem, user_id="alice", session_id="a2")
    messages = await later.aget(input="Which platform and coach?")
    assert "platform 9" in str(messages[0].content) and "coach B" in str(messages[0].content)
    await later.aset([user("hello")])
    await later.areset()
    assert await later.aget_all() == []


AGENT_WARNINGS = "ignore:The `__fields__`|The `__fields_set__`|Accessing the 'model_:DeprecationWarning"


@pytest.mark.filterwarnings(AGENT_WARNINGS)  # llama-index-workflows inspects the agent's pydantic attributes
async def test_as_agent_memory(mem: NeuSymMemory) -> None:
    mem.add("Alice is vegetarian.", user_id="alice", session_id="earlier")
    llm = MockFunctionCallingLLMWithChatMemoryOfLastCall()
    chat = NeuSymChatMemory.from_defaults(mem, user_id="alice", session_id="now")
    await FunctionAgent(llm=llm, tools=[]).run(user_msg="Suggest a vegetarian dinner for me.", memory=chat)
    assert llm.last_chat_messages and any("Alice is vegetarian" in str(m.content) for m in llm.last_chat_messages)
    assert {r.scope.session_id for r in mem.query(user_id="alice")} == {"earlier", "now"}


def test_in_a_chat_engine(mem: NeuSymMemory) -> None:
    mem.add("Alice's sister is called Maya.", user_id="alice", session_id="earlier")
    chat = NeuSymChatMemory.from_defaults(mem, user_id="alice")
    engine = SimpleChatEngine.from_defaults(llm=MockLLM(), memory=chat)
    engine.chat("What is my sister called?")
    assert [m.role for m in chat.get_all()] == [MessageRole.USER, MessageRole.ASSISTANT]


def test_validation(mem: NeuSymMemory) -> None:
    with pytest.raises(ValueError):
        NeuSymChatMemory.from_defaults(mem, user_id="")
    with pytest.raises(ValueError):
        NeuSymChatMemory.from_defaults(mem, user_id="alice", read_scope="all")
    assert "memory" not in NeuSymChatMemory.from_defaults(mem, user_id="alice").model_dump()
