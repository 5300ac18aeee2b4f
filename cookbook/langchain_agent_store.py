"""Recipe: a ``create_agent`` agent with NeuSym as its LangGraph store and its memory tools.

    python cookbook/langchain_agent_store.py                                 # offline, scripted tool calls
    NEUSYM_CHAT_MODEL=openai:gpt-4o-mini python cookbook/langchain_agent_store.py

Three pieces, one memory: ``NeuSymStore`` is the agent's ``store=`` (a profile kept by the agent's own tools
through ``runtime.store``), ``NeuSymToolkit`` gives the model remember/recall/forget/update_memory, and
``NeuSymMiddleware`` puts relevant memories into every model call. See langchain_agent_store.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_models import PromptLog, open_memory, pick_chat_model, uses_real_model

from langchain_neusym import NeuSymMiddleware, NeuSymStore, NeuSymToolkit
from neusym import NeuSymMemory
from neusym.prompting import render_texts

SYSTEM = ("You are Ana's meal planner. Before answering questions about the user, call `recall`. Save durable "
          "facts with `remember`; when the user asks you to forget something, `recall` it and `forget` each id. "
          "Keep profile settings (name, household size) with save_profile/read_profile.")


@dataclass
class UserContext:
    """Per-run context: the tools and the middleware read the tenant from here, never from the model."""

    user_id: str


@tool
def save_profile(setting: str, value: str, runtime: ToolRuntime[UserContext]) -> str:
    """Save one profile setting of the current user (e.g. setting='household', value='2 people')."""
    runtime.store.put(("profiles", runtime.context.user_id), setting, {"content": f"{setting}: {value}"})
    return f"saved {setting}"


@tool
def read_profile(runtime: ToolRuntime[UserContext]) -> str:
    """Read the current user's profile settings."""
    items = runtime.store.search(("profiles", runtime.context.user_id))
    # stored values are memory text: framed and quoted as data, like every memory a model is shown
    return render_texts([i.value["content"] for i in items], heading="Profile settings") or "no profile yet"


def build_agent(memory: NeuSymMemory, model: Any) -> Any:
    return create_agent(
        model,
        [*NeuSymToolkit(memory=memory).get_tools(), save_profile, read_profile],
        system_prompt=SYSTEM,
        store=NeuSymStore(memory, user_index=1),  # namespace ("profiles", user_id): element 1 is the tenant
        middleware=[NeuSymMiddleware(memory, save=False)],  # inject memories; the tools do the writing
        context_schema=UserContext,
    )


def _call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}])


def _forget_recalled(messages: list[BaseMessage]) -> AIMessage:
    """Scripted step: forget every recalled memory that mentions peanuts (a real model reads the ids itself)."""
    recalled = next(m for m in reversed(messages) if isinstance(m, ToolMessage)).text
    # each recalled record is one line "- [id] (date, type, score) "text"" inside the <neusym_memories> block
    ids = [line[3:line.index("]")] for line in recalled.splitlines() if line.startswith("- [") and "peanut" in line]
    calls = [{"name": "forget", "args": {"memory_id": i}, "id": f"f{n}", "type": "tool_call"}
             for n, i in enumerate(ids)]
    return AIMessage(content="", tool_calls=calls)


SCRIPT = [
    # session 1: remember the allergy, save the profile
    _call("remember", {"content": "Ana is allergic to peanuts.", "type": "fact"}, "s1a"),
    _call("save_profile", {"setting": "household", "value": "2 people"}, "s1b"),
    "Got it: no peanuts, and meals for two.",
    # session 2: recall before planning
    _call("recall", {"query": "food allergies"}, "s2a"),
    _call("read_profile", {}, "s2b"),
    "Thai green curry for two, made without peanuts.",
    # session 3: forget the allergy
    _call("recall", {"query": "peanut allergy"}, "s3a"),
    _forget_recalled,
    "Done, I forgot your peanut allergy.",
    # session 4: plan again
    _call("recall", {"query": "food allergies"}, "s4a"),
    _call("read_profile", {}, "s4b"),
    "How about a satay stir-fry for two?",
]


def main() -> None:
    log = PromptLog()
    model = pick_chat_model(SCRIPT)

    def ask(memory: NeuSymMemory, text: str) -> str:
        agent = build_agent(memory, model)
        out = agent.invoke({"messages": [HumanMessage(text)]}, {"callbacks": [log]}, context=UserContext("ana"))
        return str(out["messages"][-1].text)

    with open_memory() as memory:  # session 1
        print("1:", ask(memory, "I'm allergic to peanuts. We are two at home."))
        profile = NeuSymStore(memory, user_index=1).get(("profiles", "ana"), "household")
        assert profile is not None and "2 people" in profile.value["content"], "the store kept the profile"

    with open_memory() as memory:  # session 2, a new process
        mark = log.mark()
        print("2:", ask(memory, "What should I cook tonight?"))
        assert "peanut" in log.since(mark).lower(), "the session-1 fact should reach the session-2 prompt"

    with open_memory() as memory:  # session 3
        print("3:", ask(memory, "Please forget my peanut allergy."))

    with open_memory() as memory:  # session 4
        mark = log.mark()
        print("4:", ask(memory, "What should I cook tonight?"))
        forgotten = "peanut" not in log.since(mark).lower()
        if uses_real_model() and not forgotten:
            print("note: the model did not forget every peanut memory (its choice of tool calls)")
        else:
            assert forgotten, "a forgotten fact must not reach the prompt"
        assert "2 people" in log.since(mark) or uses_real_model(), "the profile is still there"


if __name__ == "__main__":
    main()
