"""Recipe: a LlamaIndex FunctionAgent that remembers a fact from an earlier session (Memory + NeuSymMemoryBlock).

    python cookbook/llamaindex_agent_memory.py                 # offline: llama-index-core's mock LLM
    NEUSYM_LLAMA_LLM=openai:gpt-4o-mini python cookbook/llamaindex_agent_memory.py

Session 1 tells the agent a fact; the session ends and its short-term chat history is gone. Session 2 is a new
``Memory`` with a new ``session_id`` and the same block: the block finds the fact in NeuSym and ``Memory`` puts it
in the system message, so the model sees it. The recipe checks exactly that, with any model, by recording the
messages of every LLM call (LlamaIndex instrumentation), and exits non-zero if the memory did not arrive.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import llama_index.core.instrumentation as instrument
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.llm import LLMChatStartEvent
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory
from llamaindex_models import pick_embedder, pick_llm

from llama_index_neusym import NeuSymMemoryBlock

FACT = "I am allergic to peanuts and my sister Maya lives in Lisbon."
QUESTION = "Can you suggest a snack for me?"


class SeenByLLM(BaseEventHandler):
    """Records the messages of every chat call, whatever the model: what the LLM saw is what we check."""

    calls: list[list[str]] = []

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        if isinstance(event, LLMChatStartEvent):
            self.calls.append([str(m.content or "") for m in event.messages])


@dataclass
class Outcome:
    answer: str
    seen_by_llm: list[str] = field(default_factory=list)  # messages of the last LLM call of session 2
    recalled: bool = False


async def main(data_dir: str | Path) -> Outcome:
    llm = pick_llm(MockFunctionCallingLLM())
    agent = FunctionAgent(llm=llm, tools=[], system_prompt="You are a helpful assistant with long-term memory.")
    block = NeuSymMemoryBlock.from_defaults(data_dir=data_dir, embed_model=pick_embedder(), user_id="ana")
    try:
        # Session 1: Ana says something worth remembering.
        monday = Memory.from_defaults(session_id="monday", memory_blocks=[block])
        await agent.run(user_msg=FACT, memory=monday)
        written = await block.aend_session(monday)  # short chats never overflow Memory: hand them over now
        print(f"session 1 stored {sum(len(w) for w in written)} memories for ana")

        # Session 2, later: fresh short-term memory, same long-term block.
        tuesday = Memory.from_defaults(session_id="tuesday", memory_blocks=[block])
        seen = SeenByLLM(calls=[])
        dispatcher = instrument.get_dispatcher()
        dispatcher.add_event_handler(seen)
        try:
            answer = await agent.run(user_msg=QUESTION, memory=tuesday)
        finally:
            dispatcher.event_handlers.remove(seen)
        last_call = seen.calls[-1] if seen.calls else []
        outcome = Outcome(answer=str(answer), seen_by_llm=last_call,
                          recalled=any("peanut" in m.lower() for m in last_call))
    finally:
        block.memory.close()
    return outcome


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else tmp))
    print("the model saw:\n" + "\n---\n".join(result.seen_by_llm))
    print(f"answer: {result.answer}")
    if not result.recalled:
        sys.exit("FAILED: the earlier-session fact did not reach the model")
    print("OK: the fact from session 1 reached the model in session 2")
