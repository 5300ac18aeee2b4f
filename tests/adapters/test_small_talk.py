"""Small talk is not remembered by the chat integrations (issue 30 item 2).

"hi" and "Hello Ana!" used to become active memories that came back under "Relevant memories". Every chat path
(LangChain middleware and classic memory, LlamaIndex memory, MCP ``remember`` with messages) passes conversation
turns; a turn that is only small talk is refused as "not memorable", counted in the decisions and audited, while a
short real fact in the same conversation is kept. A statement passed as a plain string is stored as asked, and the
policy can keep small talk too.
"""

from __future__ import annotations

from collections.abc import Callable

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from llama_index.core.base.llms.types import ChatMessage
from mcp.shared.memory import create_connected_server_and_client_session

from langchain_neusym import NeuSymChatMemory as LangChainChatMemory
from langchain_neusym import NeuSymMiddleware
from llama_index_neusym import NeuSymChatMemory as LlamaChatMemory
from mcp_neusym import ServerSettings, build_server
from neusym import NeuSymMemory
from neusym.governance.policy import GovernancePolicy


def _contents(memory: NeuSymMemory, user: str) -> list[str]:
    return sorted(r.content for r in memory.query(user_id=user))


def _not_memorable(memory: NeuSymMemory, user: str) -> list[str]:
    return [e["reason"] for e in memory.audit_log(user_id=user, actions=["reject"])
            if str(e["reason"]).startswith("not memorable: small talk")]


def test_langchain_middleware(memory: NeuSymMemory) -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage("Hello Ana!"), AIMessage("Noted, you are vegan.")]))
    agent = create_agent(model, [], middleware=[NeuSymMiddleware(memory, user_id="ana")])
    agent.invoke({"messages": [HumanMessage("hi")]})
    assert _contents(memory, "ana") == []
    assert len(_not_memorable(memory, "ana")) == 2  # both turns counted, neither stored
    agent.invoke({"messages": [HumanMessage("I'm vegan")]})
    assert _contents(memory, "ana") == ["I'm vegan", "Noted, you are vegan."]


def test_langchain_classic_memory(memory: NeuSymMemory) -> None:
    chat = LangChainChatMemory(memory=memory, user_id="ana", session_id="s1")
    chat.save_context({"input": "ok thanks"}, {"response": "You're welcome!"})
    chat.save_context({"input": "lol"}, {"response": "Glad you liked it :)"})
    assert _contents(memory, "ana") == []
    chat.save_context({"input": "Ana is my sister"}, {"response": "Got it."})
    assert _contents(memory, "ana") == ["Ana is my sister"]
    assert len(_not_memorable(memory, "ana")) == 5  # "Got it." too


def test_llamaindex_memory(memory: NeuSymMemory) -> None:
    chat = LlamaChatMemory.from_defaults(memory, user_id="ana", session_id="c1")
    chat.put(ChatMessage(role="user", content="sounds good"))
    chat.put(ChatMessage(role="assistant", content="Great!"))
    chat.put(ChatMessage(role="user", content="I'm vegan"))
    assert _contents(memory, "ana") == ["I'm vegan"]
    assert [m.content for m in chat.get_all()] == ["sounds good", "Great!", "I'm vegan"]  # the buffer keeps all


async def test_mcp_chat_ingest(memory: NeuSymMemory) -> None:
    server = build_server(memory, ServerSettings(user_id="ana"))
    async with create_connected_server_and_client_session(server) as s:
        res = await s.call_tool("remember", {"messages": [{"role": "user", "content": "Hello!"},
                                                         {"role": "assistant", "content": "Hi Ana, how are you?"},
                                                         {"role": "user", "content": "I play the cello"}]})
        out = res.structuredContent
        assert out is not None and not res.isError
    assert [d["action"] for d in out["decisions"]].count("reject") == 2
    assert [m["content"] for m in out["stored"]] == ["I play the cello"]
    assert _contents(memory, "ana") == ["I play the cello"]


def test_a_plain_statement_is_stored_as_asked(memory: NeuSymMemory) -> None:
    res = memory.add("hi", user_id="ana")
    assert [r.content for r in res] == ["hi"]


def test_the_policy_can_keep_small_talk(make_memory: Callable[..., NeuSymMemory]) -> None:
    keep = make_memory(governance=GovernancePolicy(small_talk="store"))
    keep.add([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello Ana!"}], user_id="ana")
    assert _contents(keep, "ana") == ["Hello Ana!", "hi"]
