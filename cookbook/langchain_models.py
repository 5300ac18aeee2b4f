"""Shared setup for the LangChain recipes: the chat model from ONE environment variable, the memory, a prompt log.

    NEUSYM_CHAT_MODEL=openai:gpt-4o-mini       # pip install langchain-openai; the key comes from OPENAI_API_KEY
    NEUSYM_CHAT_MODEL=ollama:llama3.1          # pip install langchain-ollama; a local Ollama server, no key

Any ``provider:model`` that ``langchain.chat_models.init_chat_model`` understands works. Unset (CI, the test suite):
the recipes use :class:`ScriptedChatModel`, an offline fake that replays scripted answers, so they run anywhere.
``NEUSYM_DATA_DIR`` picks where the memory lives (default: a fresh temporary folder, so a run never touches
``~/.neusym``); ``NEUSYM_FAST_EMBEDDER=1`` swaps the local all-MiniLM-L6-v2 embedder for NeuSym's hashing embedder
(tests only: fast and deterministic, not semantic).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from neusym import NeuSymMemory

__all__ = ["MODEL_ENV", "PromptLog", "ScriptedChatModel", "data_dir", "forget_about", "open_memory", "pick_chat_model",
           "uses_real_model"]

MODEL_ENV = "NEUSYM_CHAT_MODEL"

Step = AIMessage | str | Callable[[list[BaseMessage]], AIMessage | str]


class ScriptedChatModel(GenericFakeChatModel):
    """An offline chat model that replays ``script`` in order and accepts ``bind_tools`` (for agents).

    A step may be a callable ``messages -> AIMessage | str``: an agent's next tool call can then depend on what a
    previous tool returned (a memory id, say), as a real model's would.
    """

    script: list[Any] = Field(default_factory=list)

    def __init__(self, script: Sequence[Step], **kwargs: Any) -> None:
        super().__init__(messages=iter(()), script=list(script), **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        if not self.script:
            raise RuntimeError("ScriptedChatModel ran out of scripted answers")
        step = self.script.pop(0)
        reply = step(list(messages)) if callable(step) else step
        message = AIMessage(content=reply) if isinstance(reply, str) else reply
        return ChatResult(generations=[ChatGeneration(message=message)])

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self


class PromptLog(BaseCallbackHandler):
    """Records every prompt a chat model receives (fake or real): how the recipes check what memory injected."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def on_chat_model_start(self, serialized: Any, messages: list[list[BaseMessage]], **kwargs: Any) -> None:
        for batch in messages:
            self.prompts.append("\n".join(f"{m.type}: {m.text}" for m in batch))

    @property
    def last(self) -> str:
        return self.prompts[-1] if self.prompts else ""

    def mark(self) -> int:
        return len(self.prompts)

    def since(self, mark: int) -> str:
        return "\n\n".join(self.prompts[mark:])


def pick_chat_model(script: Sequence[Step]) -> BaseChatModel:
    """The model named by ``NEUSYM_CHAT_MODEL`` (``provider:model``), else a :class:`ScriptedChatModel`."""
    spec = os.environ.get(MODEL_ENV, "").strip()
    if not spec:
        return ScriptedChatModel(script)
    from langchain.chat_models import init_chat_model

    return init_chat_model(spec, temperature=0)


def uses_real_model() -> bool:
    return bool(os.environ.get(MODEL_ENV, "").strip())


_DATA_DIR: Path | None = None


def data_dir() -> Path:
    """``NEUSYM_DATA_DIR`` or a fresh temporary folder (created once per process)."""
    global _DATA_DIR
    if _DATA_DIR is None:
        env = os.environ.get("NEUSYM_DATA_DIR")
        _DATA_DIR = Path(env).expanduser() if env else Path(tempfile.mkdtemp(prefix="neusym-recipe-"))
    return _DATA_DIR


def open_memory(**kwargs: Any) -> NeuSymMemory:
    """Open the recipe's memory. Call it again later to model a new process: everything persisted is back."""
    if os.environ.get("NEUSYM_FAST_EMBEDDER") == "1":
        from neusym.embeddings import HashingEmbedder

        kwargs.setdefault("embedder", HashingEmbedder(256))
    return NeuSymMemory(data_dir(), **kwargs)



def forget_about(memory: NeuSymMemory, topic: str, **scope: str) -> list[str]:
    """What "please forget my allergy" does: governance's forget-by-meaning, previewed, then applied.

    ``forget_preview`` lists what matches the topic (by stated predicate, entity and meaning); ``forget(preview=)``
    archives exactly those: out of every read at once, purged by the janitor after the retention period (pass
    ``hard=True`` to purge now). Returns the forgotten ids.
    """
    preview = memory.governance.forget_preview(topic, **scope)
    for item in preview.items:
        print(f"  forgetting {item.id}: {item.content}")
    return memory.forget(preview=preview, reason=f"user asked to forget {topic!r}", **scope).ids
