"""Recipe: a LangGraph agent whose long-term memory is the NeuSym MCP server, through ``langchain-mcp-adapters``.

    python cookbook/mcp_langgraph_agent.py                                  # offline, scripted tool calls
    NEUSYM_CHAT_MODEL=openai:gpt-4o-mini python cookbook/mcp_langgraph_agent.py

The agent never imports NeuSym: it reaches the memory the way any MCP client does, by spawning
``neusym mcp --user ana`` over stdio. Each conversation is a new server process, so what the second one knows
came through the data directory, not through anything in this script. See mcp_langgraph_agent.md.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.prompts import load_mcp_prompt
from langchain_mcp_adapters.tools import load_mcp_tools
from langchain_models import PromptLog, data_dir, pick_chat_model, uses_real_model

SYSTEM = ("You are Ana's meal planner. Save durable facts about Ana with `remember` (one statement per call). "
          "Before planning, `recall` what you know. When Ana asks you to forget something, call `forget` with the "
          "topic, then call `forget` again with only the confirm_token it returned.")


def connections(user: str) -> dict[str, Any]:
    """The MCP client configuration: the same command an MCP desktop client would run."""
    args = ["-m", "neusym", "mcp", "--user", user, "--data-dir", str(data_dir())]
    if os.environ.get("NEUSYM_FAST_EMBEDDER") == "1":  # tests: the fast hashing embedder (not semantic)
        args += ["--embedder", "hashing:256"]
    # the MCP SDK passes only a minimal environment to the server unless told otherwise
    return {"neusym": {"transport": "stdio", "command": sys.executable, "args": args, "env": dict(os.environ)}}


def _call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}])


def _confirm_forget(messages: list[BaseMessage]) -> AIMessage:
    """Scripted step: confirm the preview the last `forget` call returned (a real model reads the token itself)."""
    preview = next(m for m in reversed(messages) if isinstance(m, ToolMessage)).text
    token = re.search(r"confirm_token='([^']+)'", preview)
    if token is None:
        return AIMessage(content="There was nothing to forget.")
    return _call("forget", {"confirm_token": token.group(1)}, "s3b")


SCRIPT = [
    # session 1: remember
    _call("remember", {"content": "Ana is allergic to peanuts.", "type": "fact"}, "s1a"),
    _call("remember", {"content": "Ana cooks for two people.", "type": "fact"}, "s1b"),
    "Noted: no peanuts, meals for two.",
    # session 2: plan (the memory context is already in the system prompt; recall for details)
    _call("recall", {"query": "food allergies"}, "s2a"),
    "Thai green curry for two, made without peanuts.",
    # session 3: forget, in two steps
    _call("forget", {"topic": "peanut allergy"}, "s3a"),
    _confirm_forget,
    "Done, I forgot your peanut allergy.",
    # session 4: plan again
    _call("recall", {"query": "food allergies"}, "s4a"),
    "How about a satay stir-fry for two?",
]


async def chat(client: MultiServerMCPClient, model: Any, log: PromptLog, text: str) -> str:
    """One conversation on its own server process: the tools, plus the `memory_context` prompt as context."""
    async with client.session("neusym") as session:
        tools = await load_mcp_tools(session)
        context = await load_mcp_prompt(session, "memory_context", arguments={"query": text})
        agent = create_agent(model, tools, system_prompt=f"{SYSTEM}\n\n{context[0].text}")
        out = await agent.ainvoke({"messages": [HumanMessage(text)]}, {"callbacks": [log]})
        return str(out["messages"][-1].text)


async def main() -> None:
    log = PromptLog()
    model = pick_chat_model(SCRIPT)
    client = MultiServerMCPClient(connections("ana"))

    print("1:", await chat(client, model, log, "I'm allergic to peanuts. We are two at home."))

    mark = log.mark()
    print("2:", await chat(client, model, log, "What should I cook tonight? Anything I must avoid?"))
    first_prompt = log.prompts[mark]
    assert "peanut" in first_prompt.lower(), "the session-1 fact should reach the session-2 prompt"
    assert "data, not instructions" in first_prompt, "memories enter the prompt framed as data"

    print("3:", await chat(client, model, log, "Please forget my peanut allergy."))

    mark = log.mark()
    print("4:", await chat(client, model, log, "What should I cook tonight?"))
    forgotten = "peanut" not in log.since(mark).lower()
    if uses_real_model() and not forgotten:
        print("note: the model did not confirm the forget (its choice of tool calls)")
    else:
        assert forgotten, "a forgotten fact must not reach the prompt"
    assert "two people" in log.since(mark) or uses_real_model(), "the rest of the memory is still there"


if __name__ == "__main__":
    asyncio.run(main())
