"""``NeuSymChatMemory``: a legacy LlamaIndex ``BaseMemory`` (chat engines, older agents) backed by NeuSym.

One instance is one conversation (the legacy memories are per-conversation objects): a short-term
``ChatMemoryBuffer`` keyed by ``session_id`` holds the recent turns, and every message put into it is also written
to NeuSym under ``user_id``/``agent_id``/``session_id`` at once, so nothing is lost if the process stops. ``get``
returns the buffer led by a system message with NeuSym's ``build_context`` for the latest turns: reflections and
relevant memories of every session of that user (``read_scope``), never another user's. Because writes are
immediate, that context can repeat a statement of the current conversation. New code should prefer ``Memory`` +
:class:`NeuSymMemoryBlock`.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock
from llama_index.core.bridge.pydantic import ConfigDict, Field, field_validator
from llama_index.core.memory import BaseMemory, ChatMemoryBuffer
from llama_index.core.storage.chat_store import BaseChatStore

from llama_index_neusym._common import (
    WRITE_METADATA,
    ReadScope,
    make_scope,
    message_text,
    messages_to_turns,
    open_memory,
    query_text,
    read_scope,
)
from neusym import NeuSymMemory

__all__ = ["NeuSymChatMemory"]


class NeuSymChatMemory(BaseMemory):
    """Chat memory for one conversation with long-term recall of the user's earlier conversations.

    ``reset``/``areset`` clear only the short-term buffer; long-term memories are removed with NeuSym's own
    ``delete``/``forget``, which audit what they remove.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: NeuSymMemory = Field(exclude=True, description="The NeuSym memory read and written.")
    primary_memory: ChatMemoryBuffer = Field(description="Short-term buffer of this conversation.")
    user_id: str = Field(description="Tenant: the only user whose memories are read or written.")
    agent_id: str | None = Field(default=None, description="Agent id written on every memory (optional).")
    session_id: str = Field(default_factory=lambda: uuid.uuid4().hex, description="This conversation's id.")
    read_scope: ReadScope = Field(default="user", description="What recall covers: 'user', 'agent' or 'session'.")
    budget_tokens: int = Field(default=800, ge=1, description="Token budget of the memory system message.")
    retrieval_context_window: int = Field(default=3, ge=1, description="Latest messages used as the query.")
    store_roles: list[str] = Field(default_factory=lambda: ["user", "assistant"],
                                   description="Roles of messages that are remembered long-term.")
    infer: bool = Field(default=True, description="Extract facts (True) or store each message verbatim (False).")

    @field_validator("user_id", "agent_id", "session_id")
    @classmethod
    def _check_ids(cls, v: str | None) -> str | None:
        if v is not None:
            make_scope(v)
        return v

    @classmethod
    def class_name(cls) -> str:
        return "NeuSymChatMemory"

    @classmethod
    def from_defaults(  # type: ignore[override]
        cls,
        memory: NeuSymMemory | None = None,
        *,
        user_id: str,
        agent_id: str | None = None,
        session_id: str | None = None,
        chat_history: list[ChatMessage] | None = None,
        chat_store: BaseChatStore | None = None,
        token_limit: int | None = None,
        data_dir: str | Path | None = None,
        embed_model: Any = None,
        llm: Any = None,
        memory_kwargs: dict[str, Any] | None = None,
        **fields: Any,
    ) -> NeuSymChatMemory:
        """Wrap ``memory`` or open one in ``data_dir`` (``embed_model``/``llm`` may be LlamaIndex objects;
        ``memory_kwargs`` go to :class:`NeuSymMemory`). ``chat_history`` seeds the short-term buffer only;
        ``chat_store``/``token_limit`` configure it."""
        mem = open_memory(memory, data_dir=data_dir, embed_model=embed_model, llm=llm, **(memory_kwargs or {}))
        sid = session_id or uuid.uuid4().hex
        buffer = ChatMemoryBuffer.from_defaults(chat_history=chat_history, chat_store=chat_store,
                                                chat_store_key=sid, token_limit=token_limit)
        return cls(memory=mem, primary_memory=buffer, user_id=user_id, agent_id=agent_id, session_id=sid,
                   **fields)

    # ------------------------------------------------------------------ helpers
    def _context_args(self, input: str | None, history: list[ChatMessage]) -> tuple[str, dict[str, Any]]:
        query = query_text(history, self.retrieval_context_window, input)
        scope = read_scope(self.read_scope, self.user_id, self.agent_id, self.session_id)
        return query, {"scope": scope, "budget_tokens": self.budget_tokens}

    @staticmethod
    def _with_context(history: list[ChatMessage], context: str) -> list[ChatMessage]:
        """``history`` with the context as (or prepended to) its system message; stored messages are not mutated."""
        if not context:
            return history
        block = TextBlock(text=context)
        if history and history[0].role == MessageRole.SYSTEM:
            first = history[0]
            merged = ChatMessage(role=MessageRole.SYSTEM, blocks=[block, *first.blocks],
                                 additional_kwargs=dict(first.additional_kwargs))
            return [merged, *history[1:]]
        return [ChatMessage(role=MessageRole.SYSTEM, blocks=[block]), *history]

    def _turns(self, messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
        return messages_to_turns(messages, self.store_roles)

    def _write_args(self) -> dict[str, Any]:
        return {"scope": make_scope(self.user_id, self.agent_id, self.session_id), "infer": self.infer,
                "metadata": dict(WRITE_METADATA)}

    def _remember(self, messages: Sequence[ChatMessage]) -> None:
        if turns := self._turns(messages):
            self.memory.add(turns, **self._write_args())

    async def _aremember(self, messages: Sequence[ChatMessage]) -> None:
        if turns := self._turns(messages):
            await self.memory.aio.add(turns, **self._write_args())

    def _new_messages(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        """The part of ``messages`` that extends the current buffer (all of it if it is not an extension)."""
        current = self.primary_memory.get_all()
        same = len(current) <= len(messages) and all(
            a.role == b.role and message_text(a) == message_text(b) for a, b in zip(current, messages, strict=False))
        return messages[len(current):] if same else messages

    # ------------------------------------------------------------------ BaseMemory
    def get(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        """The short-term history, led by the user's relevant long-term context (NeuSym's ``build_context``)."""
        history = self.primary_memory.get(input=input, **kwargs)
        query, args = self._context_args(input, history)
        built = self.memory.reflection.build_context(query, **args) if query else None
        return self._with_context(history, built.text if built is not None else "")

    async def aget(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        history = await self.primary_memory.aget(input=input, **kwargs)
        query, args = self._context_args(input, history)
        built = await self.memory.aio.reflection.build_context(query, **args) if query else None
        return self._with_context(history, built.text if built is not None else "")

    def get_all(self) -> list[ChatMessage]:
        return self.primary_memory.get_all()

    async def aget_all(self) -> list[ChatMessage]:
        return await self.primary_memory.aget_all()

    def put(self, message: ChatMessage) -> None:
        self._remember([message])
        self.primary_memory.put(message)

    async def aput(self, message: ChatMessage) -> None:
        await self._aremember([message])
        await self.primary_memory.aput(message)

    def put_messages(self, messages: list[ChatMessage]) -> None:
        self._remember(messages)
        self.primary_memory.put_messages(messages)

    async def aput_messages(self, messages: list[ChatMessage]) -> None:
        await self._aremember(messages)
        await self.primary_memory.aput_messages(messages)

    def set(self, messages: list[ChatMessage]) -> None:
        """Replace the short-term history; only messages that are new to it are written long-term."""
        self._remember(self._new_messages(messages))
        self.primary_memory.set(messages)

    async def aset(self, messages: list[ChatMessage]) -> None:
        await self._aremember(self._new_messages(messages))
        await self.primary_memory.aset(messages)

    def reset(self) -> None:
        self.primary_memory.reset()

    async def areset(self) -> None:
        await self.primary_memory.areset()
