"""NeuSymMiddleware in create_agent: memories injected before the model call, the exchange saved after it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.tools import tool

from langchain_neusym import NeuSymMiddleware
from neusym import NeuSymMemory, ScopeError


def _cfg(user: str, thread: str) -> dict[str, Any]:
    return {"configurable": {"user_id": user, "thread_id": thread}}


def test_remembers_across_threads_and_keeps_tenants_apart(memory: NeuSymMemory,
                                                          scripted: Callable[..., Any]) -> None:
    model = scripted(["Noted.", "You are allergic to peanuts.", "I don't know."])
    agent = create_agent(model, [], system_prompt="You are helpful.", middleware=[NeuSymMiddleware(memory)])
    agent.invoke({"messages": [HumanMessage("I am allergic to peanuts.")]}, _cfg("ana", "t1"))
    saved = memory.query(user_id="ana")
    assert {r.scope.session_id for r in saved} == {"t1"}
    assert any("peanuts" in r.content for r in saved)
    assert not any(r.content == "Noted." for r in saved)  # small talk is not remembered (issue 30)

    agent.invoke({"messages": [HumanMessage("Am I allergic to anything?")]}, _cfg("ana", "t2"))
    system = model.prompts[1][0]
    assert isinstance(system, SystemMessage)
    assert system.text.startswith("You are helpful.") and "peanuts" in system.text  # session 1 reached session 2

    agent.invoke({"messages": [HumanMessage("Am I allergic to anything?")]}, _cfg("bob", "b1"))
    assert "peanuts" not in model.prompt_text(2)


def test_saves_once_per_answer_not_per_tool_step(memory: NeuSymMemory, scripted: Callable[..., Any]) -> None:
    @tool
    def weather(city: str) -> str:
        """Weather for a city."""
        return "sunny"

    model = scripted([AIMessage(content="", tool_calls=[{"name": "weather", "args": {"city": "Lisbon"},
                                                         "id": "w1", "type": "tool_call"}]),
                      "It is sunny in Lisbon."])
    agent = create_agent(model, [weather], middleware=[NeuSymMiddleware(memory, user_id="ana")])
    agent.invoke({"messages": [HumanMessage("What's the weather in Lisbon?")]})
    contents = sorted(r.content for r in memory.query(user_id="ana"))
    assert contents == ["It is sunny in Lisbon.", "What's the weather in Lisbon?"]


def test_inject_and_save_switches(memory: NeuSymMemory, scripted: Callable[..., Any]) -> None:
    memory.add("Ana's cat is called Miso.", user_id="ana")
    model = scripted(["ok", "ok"])
    silent = create_agent(model, [], middleware=[NeuSymMiddleware(memory, user_id="ana", inject=False,
                                                                  save=False)])
    silent.invoke({"messages": [HumanMessage("What is my cat called?")]})
    assert "Miso" not in model.prompt_text(0) and len(memory.query(user_id="ana")) == 1
    reader = create_agent(model, [], middleware=[NeuSymMiddleware(memory, user_id="ana", save=False)])
    reader.invoke({"messages": [HumanMessage("What is my cat called?")]})
    assert "Miso" in model.prompt_text(1) and len(memory.query(user_id="ana")) == 1


@dataclass
class Ctx:
    user_id: str


async def test_async_agent_with_runtime_context(memory: NeuSymMemory, scripted: Callable[..., Any]) -> None:
    model = scripted(["Noted.", "Your sister is Rita."])
    agent = create_agent(model, [], middleware=[NeuSymMiddleware(memory)], context_schema=Ctx)
    await agent.ainvoke({"messages": [HumanMessage("My sister is called Rita.")]}, context=Ctx("ana"))
    assert memory.query(user_id="ana")
    await agent.ainvoke({"messages": [HumanMessage("What is my sister called?")]}, context=Ctx("ana"))
    assert "Rita" in model.prompt_text(1)
    assert not memory.query(user_id="default")


def test_bound_scope_and_tools(memory: NeuSymMemory, scripted: Callable[..., Any]) -> None:
    middleware = NeuSymMiddleware(memory, user_id="ana", tools=True)
    assert [t.name for t in middleware.tools] == ["remember", "recall", "forget", "update_memory"]
    model = scripted(["hi"])
    agent = create_agent(model, [], middleware=[middleware])
    with pytest.raises(ScopeError):
        agent.invoke({"messages": [HumanMessage("hello there")]}, _cfg("bob", "x"))
