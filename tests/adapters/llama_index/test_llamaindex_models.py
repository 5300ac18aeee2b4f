"""LlamaIndex embedding models and LLMs are accepted wherever NeuSym takes an embedder or a chat model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import llama_index.core.instrumentation as instrument
import pytest
from llama_index.core.base.llms.types import ChatMessage, CompletionResponse, LLMMetadata
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.llm import LLMCompletionStartEvent
from llama_index.core.llms.custom import CustomLLM
from llama_index.core.llms.mock import MockLLM
from llama_index.core.memory import Memory

from llama_index_neusym import NeuSymChatMemory, NeuSymMemoryBlock, NeuSymRetriever
from neusym import NeuSymConfig


class Prompts(BaseEventHandler):
    seen: list[str] = []

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        if isinstance(event, LLMCompletionStartEvent):
            self.seen.append(event.prompt)


@pytest.fixture
def prompts() -> Iterator[Prompts]:
    handler = Prompts(seen=[])
    dispatcher = instrument.get_dispatcher()
    dispatcher.add_event_handler(handler)
    yield handler
    dispatcher.event_handlers.remove(handler)


@pytest.fixture
def config(falkordb_dir: Path, graph_name: str) -> NeuSymConfig:
    return NeuSymConfig(data_dir=falkordb_dir, graph_name=graph_name, appendfsync="everysec")


def test_llamaindex_embedding_model(config: NeuSymConfig) -> None:
    retriever = NeuSymRetriever.from_defaults(memory_kwargs={"config": config}, embed_model=MockEmbedding(embed_dim=16),
                                              user_id="ana")
    mem = retriever.memory
    try:
        assert mem.embedder.name.startswith("llamaindex:") and mem.embedder.dimension == 16
        mem.add("Ana keeps bees on her balcony.", user_id="ana")
        assert "bees" in retriever.retrieve("Who keeps bees?")[0].node.get_content()
    finally:
        mem.close()


async def test_llamaindex_llm_extracts_and_reflects(config: NeuSymConfig, prompts: Prompts) -> None:
    # MockLLM echoes its prompt, which is not valid JSON: NeuSym asks it, then falls back to its LLM-free path
    block = NeuSymMemoryBlock.from_defaults(memory_kwargs={"config": config}, embed_model=MockEmbedding(embed_dim=8),
                                            llm=MockLLM(), user_id="ana")
    try:
        session = Memory.from_defaults(session_id="s1", memory_blocks=[block])
        await session.aput(ChatMessage(role="user", content="I am learning to play the cello."))
        written = await block.aend_session(session)
        assert written and len(written[0]) >= 1
        asked = [p for p in prompts.seen if "learning to play the cello" in p]
        assert any(p.startswith("You extract long-term memories") for p in asked)  # extraction asked the LLM
        assert any(p.startswith("You consolidate") for p in asked)  # so did session_end's reflection
    finally:
        block.memory.close()


class JsonLLM(CustomLLM):
    """A user's own LlamaIndex LLM (defined outside ``llama_index.*``) that answers extraction prompts in JSON."""

    prompts: list[str] = []

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata()

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        return CompletionResponse(text='{"memories": [{"content": "The user plays the cello.", "type": "fact"}]}')

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError


def test_custom_llamaindex_llm_subclass_gets_the_whole_prompt(config: NeuSymConfig) -> None:
    llm = JsonLLM(prompts=[])
    chat = NeuSymChatMemory.from_defaults(memory_kwargs={"config": config}, embed_model=MockEmbedding(embed_dim=8),
                                          llm=llm, user_id="ana")
    try:
        chat.put(ChatMessage(role="user", content="I play the cello every evening."))
        assert any("cello every evening" in p for p in llm.prompts)
        assert [r.content for r in chat.memory.query(user_id="ana")] == ["The user plays the cello."]
    finally:
        chat.memory.close()
