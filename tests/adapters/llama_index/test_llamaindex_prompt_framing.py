"""The LlamaIndex memory block and chat memory show stored injection attempts only as framed, quoted records
(and withhold the one listed for review), also after ``Memory`` truncates the block."""

from __future__ import annotations

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import Memory
from prompt_injections import QUERY, assert_framed, store_attempts

from llama_index_neusym import NeuSymChatMemory, NeuSymMemoryBlock
from neusym import NeuSymMemory
from neusym.prompting import CLOSE, OPEN


def _system(messages: list[ChatMessage]) -> str:
    return "\n".join(str(m.content) for m in messages if m.role == MessageRole.SYSTEM)


async def test_memory_block(mem: NeuSymMemory) -> None:
    store_attempts(mem, user_id="alice")
    block = NeuSymMemoryBlock(memory=mem, user_id="alice", budget_tokens=1500)
    memory = Memory.from_defaults(session_id="s1", memory_blocks=[block])
    await memory.aput(ChatMessage(role="user", content=QUERY))
    assert_framed(_system(await memory.aget()))
    # Memory cuts the block when it is over its share: records go from the end, the frame stays
    text = await block.aget(messages=[ChatMessage(role="user", content=QUERY)])
    cut = await block.atruncate(text, 40)
    assert cut is not None and cut.count("\n- ") < text.count("\n- ")
    lines = cut.splitlines()
    assert lines[0] == OPEN and lines[-1] == CLOSE


def test_chat_memory(mem: NeuSymMemory) -> None:
    store_attempts(mem, user_id="alice", session_id="earlier")
    chat = NeuSymChatMemory.from_defaults(mem, user_id="alice", session_id="now", budget_tokens=1500)
    messages = chat.get(input=QUERY)
    assert messages[0].role == MessageRole.SYSTEM
    assert_framed(_system(messages))
