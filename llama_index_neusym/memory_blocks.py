"""``NeuSymMemoryBlock``: NeuSym as the long-term memory block of a LlamaIndex ``Memory``.

Scopes: the block is built for ONE tenant (``user_id``) and optionally one ``agent_id``. The ``session_id`` that
``Memory`` passes on every call becomes the NeuSym ``session_id`` of what the block writes; reads cover the whole
user (``read_scope="user"``, the default: remembering across sessions is the point), or only the block's agent
(``"agent"``) or only the current session (``"session"``). Never another user's. The session arrives with each
call and is never stored on the block, so one block can serve many ``Memory`` sessions at once (unlike
LlamaIndex's ``VectorMemoryBlock``, which pins every session to the first session's filter, llama_index #22701).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import llama_index.core.instrumentation as instrument
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import Field, field_validator
from llama_index.core.memory import BaseMemoryBlock, Memory
from llama_index.core.storage.chat_store.base_db import MessageStatus
from llama_index.core.utils import get_tokenizer

from llama_index_neusym._common import (
    WRITE_METADATA,
    ReadScope,
    make_scope,
    messages_to_turns,
    open_memory,
    query_text,
    read_scope,
    truncate_context,
)
from neusym import AddResult, NeuSymMemory

__all__ = ["NeuSymMemoryBlock"]

dispatcher = instrument.get_dispatcher(__name__)  # memory blocks get no spans from LlamaIndex by themselves


class NeuSymMemoryBlock(BaseMemoryBlock[str]):
    """Long-term memory for ``Memory.from_defaults(memory_blocks=[NeuSymMemoryBlock(...)])``.

    * ``_aput`` receives the chat messages ``Memory`` flushes out of its short-term queue and stores them through
      NeuSym's write path (extraction, governance, dedup), tagged with the flushing session's id.
    * ``_aget`` asks NeuSym's context builder for the latest messages: reflections and the most relevant memories,
      with careful-use marks (superseded, conflicting, low confidence), in at most ``budget_tokens`` tokens.
    * :meth:`aend_session` writes what is still in a session's short-term queue (short sessions never overflow
      it) and ends the session in NeuSym (which reflects it).
    """

    name: str = Field(default="long_term_memory", description="The block's tag in the memory template.")
    memory: NeuSymMemory = Field(exclude=True, description="The NeuSym memory read and written.")
    user_id: str = Field(description="Tenant: the only user whose memories this block reads or writes.")
    agent_id: str | None = Field(default=None, description="Agent id written on every memory (optional).")
    read_scope: ReadScope = Field(default="user", description="What reads cover: 'user', 'agent' or 'session'.")
    budget_tokens: int = Field(default=800, ge=1, description="Token budget of the returned context.")
    retrieval_context_window: int = Field(default=3, ge=1, description="Latest messages used as the query.")
    store_roles: list[str] = Field(default_factory=lambda: ["user", "assistant"],
                                   description="Roles of flushed messages that are remembered.")
    infer: bool = Field(default=True, description="Extract facts (True) or store each message verbatim (False).")
    tokenizer_fn: Callable[[str], Sequence[Any]] = Field(default_factory=get_tokenizer, exclude=True,
                                                         description="Counts tokens when Memory truncates.")

    @field_validator("user_id", "agent_id")
    @classmethod
    def _check_ids(cls, v: str | None) -> str | None:
        if v is not None:
            make_scope(v)  # same rules as NeuSym scope ids: non-empty, no NUL, <= 512 chars
        return v

    @classmethod
    def from_defaults(
        cls,
        memory: NeuSymMemory | None = None,
        *,
        user_id: str,
        agent_id: str | None = None,
        data_dir: str | Path | None = None,
        embed_model: Any = None,
        llm: Any = None,
        memory_kwargs: dict[str, Any] | None = None,
        **block_fields: Any,
    ) -> NeuSymMemoryBlock:
        """Wrap ``memory``, or open one in ``data_dir`` with an optional LlamaIndex ``embed_model`` / ``llm``
        (``memory_kwargs`` go to :class:`NeuSymMemory`); ``block_fields`` set the block's other fields."""
        mem = open_memory(memory, data_dir=data_dir, embed_model=embed_model, llm=llm, **(memory_kwargs or {}))
        return cls(memory=mem, user_id=user_id, agent_id=agent_id, **block_fields)

    # ------------------------------------------------------------------ read
    @dispatcher.span
    async def _aget(
        self,
        messages: list[ChatMessage] | None = None,
        session_id: str | None = None,
        **block_kwargs: Any,
    ) -> str:
        query = query_text(messages, self.retrieval_context_window)
        if not query:
            return ""
        scope = read_scope(self.read_scope, self.user_id, self.agent_id, session_id)
        # no recent_messages: Memory already shows the chat history next to this block
        built = await self.memory.aio.reflection.build_context(query, scope=scope,
                                                               budget_tokens=self.budget_tokens)
        return built.text

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """Drop the lowest-ranked lines first (the context lists best first); ``None`` when nothing is left."""
        return truncate_context(content, tokens_to_truncate, self.tokenizer_fn)

    # ------------------------------------------------------------------ write
    @dispatcher.span
    async def _aput(self, messages: list[ChatMessage]) -> None:
        await self._remember(messages)

    async def _remember(self, messages: Sequence[ChatMessage], session_id: str | None = None) -> list[AddResult]:
        """Write messages under ``session_id``, else grouped by the ``session_id`` that ``Memory`` stamped on them
        (a message without one is written to the user/agent scope)."""
        by_session: dict[str | None, list[ChatMessage]] = {}
        for m in messages:
            sid = session_id or m.additional_kwargs.get("session_id")
            by_session.setdefault(sid if isinstance(sid, str) and sid else None, []).append(m)
        written: list[AddResult] = []
        for sid, group in by_session.items():
            turns = messages_to_turns(group, self.store_roles)
            if turns:
                written.append(await self.memory.aio.add(turns, scope=make_scope(self.user_id, self.agent_id, sid),
                                                         infer=self.infer, metadata=dict(WRITE_METADATA)))
        return written

    @dispatcher.span
    async def aend_session(self, memory: Memory, *, reflect: bool = True) -> list[AddResult]:
        """Remember what is still in ``memory``'s short-term queue, then end the session in NeuSym.

        ``Memory`` only hands messages to blocks when its queue overflows, so a short conversation would otherwise
        never reach long-term memory. Messages already flushed are archived by ``Memory`` and not written again;
        writing the active ones twice (calling this twice) is harmless because NeuSym merges exact duplicates
        within a session. With ``reflect`` NeuSym's ``session_end`` consolidates the session into a reflection.
        Returns the write results (their ``decisions`` say what governance did).
        """
        active = await memory.sql_store.get_messages(memory.session_id, status=MessageStatus.ACTIVE)
        written = await self._remember(active, session_id=memory.session_id)
        if reflect:
            await self.memory.aio.reflection.session_end(session_id=memory.session_id, user_id=self.user_id,
                                                         agent_id=self.agent_id)
        return written
