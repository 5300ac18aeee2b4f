"""``NeuSymChatMemory`` for classic ``langchain_classic`` chains (``ConversationChain``, ``LLMChain``).

Classic memory is deprecated upstream (``langchain_classic.base_memory.BaseMemory``, removal in 2.0) but still what
those chains take. This class only converts: the turn goes through NeuSym's write path (extraction + governance),
and the prompt variable is NeuSym's two-stage search on the current input, cut to a token budget.
"""

from __future__ import annotations

from typing import Any

from langchain_classic.base_memory import BaseMemory
from langchain_core.messages import BaseMessage, SystemMessage
from pydantic import Field

from langchain_neusym._common import (
    ReadScope,
    ScopedModel,
    abuild_context,
    build_context,
    read_scope,
    resolve_scope,
)
from neusym import InvalidInputError, Scope

__all__ = ["NeuSymChatMemory"]


class NeuSymChatMemory(BaseMemory, ScopedModel):
    """Classic chain memory backed by NeuSym.

    ``load_memory_variables`` runs NeuSym's context builder on the chain's input (two-stage search for
    reflections and raw memories, careful-use marks) and returns the text, at most ``max_tokens`` tiktoken
    ``encoding`` tokens, under ``memory_key``.
    ``save_context`` stores the user input and the chain's output as one conversation turn through the write
    path (extraction and governance). ``clear`` forgets this memory's scope through governance.

    Args:
        memory: an open :class:`neusym.NeuSymMemory`.
        user_id / agent_id / session_id / scope: where turns are written (at least one id, else the engine's
            default scope). ``read_scope`` says how far reads reach: ``"user"`` (default: every session of the
            user, which is what makes a chain remember across sessions), ``"agent"`` or ``"session"``.
        memory_key: the prompt variable (``history`` for ``ConversationChain``).
        input_key / output_key: which input/output to use when a chain has several.
        k / max_tokens / encoding / header: how many memories are fetched, the token budget the context (header
            included) must fit in, and an optional heading line.
        return_messages: return ``[SystemMessage(context)]`` instead of a string (for chat prompts).
        infer: run extraction on saved turns (``False`` stores them verbatim).
        hard_clear: ``clear()`` purges at once instead of governance's soft forget.

    Example::

        chain = ConversationChain(llm=llm, memory=NeuSymChatMemory(memory=mem, user_id="ana", session_id="s1"))
    """

    read_scope: ReadScope = "user"
    memory_key: str = "history"
    input_key: str | None = None
    output_key: str | None = None
    k: int = Field(default=8, ge=1, le=1000)
    max_tokens: int = Field(default=1000, ge=0)
    encoding: str = "cl100k_base"
    header: str = ""
    return_messages: bool = False
    infer: bool = True
    hard_clear: bool = False

    # ------------------------------------------------------------------ scopes
    @property
    def write_scope(self) -> Scope:
        """Where this memory writes (and what ``clear`` forgets)."""
        return resolve_scope(self.memory, self.bound_ids())

    @property
    def search_scope(self) -> Scope:
        """Where this memory reads."""
        return read_scope(self.write_scope, self.read_scope)

    # ------------------------------------------------------------------ BaseMemory
    @property
    def memory_variables(self) -> list[str]:
        return [self.memory_key]

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        context = build_context(self.memory, self._input_text(inputs), self.search_scope, max_tokens=self.max_tokens,
                                k=self.k, encoding=self.encoding, header=self.header)
        return {self.memory_key: self._shape(context)}

    async def aload_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        context = await abuild_context(self.memory, self._input_text(inputs), self.search_scope,
                                       max_tokens=self.max_tokens, k=self.k, encoding=self.encoding,
                                       header=self.header)
        return {self.memory_key: self._shape(context)}

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, str]) -> None:
        turns = self._turns(inputs, outputs)
        if turns:
            self.memory.add(turns, scope=self.write_scope, infer=self.infer)

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, str]) -> None:
        turns = self._turns(inputs, outputs)
        if turns:
            await self.memory.aio.add(turns, scope=self.write_scope, infer=self.infer)

    def clear(self) -> None:
        """Forget this memory's scope (``write_scope``): the session if ``session_id`` is set, else the user.

        Goes through governance's ``forget(everything=True)``: soft (archived, purged after the retention period)
        unless ``hard_clear`` is set."""
        self.memory.forget(everything=True, scope=self.write_scope, hard=self.hard_clear,
                           reason="langchain memory clear()")

    async def aclear(self) -> None:
        await self.memory.aio.forget(everything=True, scope=self.write_scope, hard=self.hard_clear,
                                     reason="langchain memory clear()")

    # ------------------------------------------------------------------ helpers
    def _prompt_input_key(self, inputs: dict[str, Any]) -> str:
        """The one input that is neither a memory variable nor ``stop`` (``langchain_classic``'s rule, inlined:
        importing ``langchain_classic.memory`` for it costs over a second)."""
        keys = sorted(set(inputs) - {*self.memory_variables, "stop"})
        if len(keys) != 1:
            raise InvalidInputError(f"one input key expected, got {keys}; set input_key")
        return keys[0]

    def _input_text(self, inputs: dict[str, Any]) -> str:
        key = self.input_key or self._prompt_input_key(inputs)
        value = inputs.get(key)
        if isinstance(value, BaseMessage):
            return value.text.strip()
        return str(value).strip() if value is not None else ""

    def _output_text(self, outputs: dict[str, Any]) -> str:
        if self.output_key is not None:
            key = self.output_key
        elif len(outputs) == 1:
            key = next(iter(outputs))
        elif "response" in outputs:
            key = "response"
        else:
            raise InvalidInputError(f"several outputs {sorted(outputs)}; set output_key")
        value = outputs.get(key)
        if isinstance(value, BaseMessage):
            return value.text.strip()
        return str(value).strip() if value is not None else ""

    def _turns(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> list[dict[str, str]]:
        turns = []
        if text := self._input_text(inputs):
            turns.append({"role": "user", "content": text})
        if text := self._output_text(outputs):
            turns.append({"role": "assistant", "content": text})
        return turns

    def _shape(self, context: str) -> str | list[BaseMessage]:
        if self.return_messages:
            return [SystemMessage(content=context)] if context else []
        return context
