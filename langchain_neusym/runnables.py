"""NeuSym steps as LCEL Runnables: retrieval (context for a prompt), saving a turn, and reflection.

    chain = (
        RunnablePassthrough.assign(context=NeuSymRetrievalRunnable(memory=mem))
        | RunnablePassthrough.assign(output=prompt | model | StrOutputParser())
        | NeuSymSaveRunnable(memory=mem)
    )
    chain.invoke({"input": "..."}, config={"configurable": {"user_id": "ana", "session_id": "s2"}})

Scope ids come from the runnable's fields (bound) and, for ids left open, from ``config["configurable"]``
(``user_id``/``agent_id``/``session_id``; ``thread_id`` as the session) or the LangGraph runtime context.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig, RunnableSerializable
from pydantic import Field, field_validator, model_validator

from langchain_neusym._common import (
    SCOPE_KEYS,
    ReadScope,
    ScopedModel,
    abuild_context,
    asearch_shown,
    build_context,
    check_search_kwargs,
    config_ids,
    last_human_text,
    message_text,
    read_scope,
    resolve_scope,
    result_to_document,
    runtime_ids,
    search_shown,
)
from neusym import InvalidInputError, Scope, ScopeError, SearchResult
from neusym.reflection.api import Reflection

__all__ = ["NeuSymReflectionRunnable", "NeuSymRetrievalRunnable", "NeuSymSaveRunnable"]


class _ScopedRunnable(RunnableSerializable[Any, Any], ScopedModel):
    """A Runnable bound to a memory; open scope ids come from the run's config or the LangGraph context."""

    def _resolve(self, config: RunnableConfig | None) -> Scope:
        return resolve_scope(self.memory, self.bound_ids(), config_ids(config, thread_as_session=True),
                             runtime_ids())


class NeuSymRetrievalRunnable(_ScopedRunnable):
    """Two-stage retrieval as a Runnable.

    Input: a query string, a dict (``input_key``, default ``"input"``) or a list of messages (the last user
    message is the query). Output (``output``): ``"context"`` (default) - NeuSym's context builder text
    (reflections and memories with careful-use marks) within ``max_tokens`` tiktoken tokens, ready for a prompt
    variable; ``"documents"`` - ``Document`` objects as :class:`NeuSymRetriever` returns them; ``"results"`` -
    raw :class:`neusym.SearchResult` objects. ``search_kwargs`` (filters) apply to the last two.
    """

    name: str | None = "NeuSymRetrieval"
    read_scope: ReadScope = "user"
    k: int = Field(default=5, ge=0, le=1000)
    max_tokens: int = Field(default=1000, ge=0)
    encoding: str = "cl100k_base"
    header: str = ""
    input_key: str = "input"
    output: Literal["context", "documents", "results"] = "context"
    search_kwargs: dict[str, Any] = Field(default_factory=dict)

    @field_validator("search_kwargs")
    @classmethod
    def _check_search_kwargs(cls, value: dict[str, Any]) -> dict[str, Any]:
        return check_search_kwargs(value)

    @model_validator(mode="after")
    def _filters_need_hits(self) -> NeuSymRetrievalRunnable:
        if self.search_kwargs and self.output == "context":
            raise InvalidInputError("search_kwargs filter hits; use output='documents' or 'results' with them")
        return self

    def _query(self, value: Any) -> str:
        if isinstance(value, str):
            return value.strip()
        if isinstance(value, Mapping):
            if self.input_key not in value:
                raise InvalidInputError(f"retrieval input has no {self.input_key!r} key (keys: {sorted(value)})")
            return self._query(value[self.input_key])
        if isinstance(value, BaseMessage):
            return value.text.strip()
        if isinstance(value, Sequence):
            return last_human_text(value)
        if hasattr(value, "to_messages"):  # a PromptValue
            return last_human_text(value.to_messages())
        raise InvalidInputError(f"cannot read a query from {type(value).__name__}")

    def _shape(self, results: list[SearchResult]) -> list[Document] | list[SearchResult]:
        return results if self.output == "results" else [result_to_document(r) for r in results]

    def _run(self, value: Any, config: RunnableConfig) -> Any:
        query = self._query(value)
        scope = read_scope(self._resolve(config), self.read_scope)
        if self.output == "context":
            return build_context(self.memory, query, scope, max_tokens=self.max_tokens, k=self.k,
                                 encoding=self.encoding, header=self.header)
        return self._shape(search_shown(self.memory, query, scope, k=self.k, **self.search_kwargs) if query else [])

    async def _arun(self, value: Any, config: RunnableConfig) -> Any:
        query = self._query(value)
        scope = read_scope(self._resolve(config), self.read_scope)
        if self.output == "context":
            return await abuild_context(self.memory, query, scope, max_tokens=self.max_tokens, k=self.k,
                                        encoding=self.encoding, header=self.header)
        return self._shape(await asearch_shown(self.memory, query, scope, k=self.k, **self.search_kwargs)
                           if query else [])

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:  # noqa: A002
        return self._call_with_config(self._run, input, config, **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:  # noqa: A002
        return await self._acall_with_config(self._arun, input, config, **kwargs)


class NeuSymSaveRunnable(_ScopedRunnable):
    """Save a conversation turn through NeuSym's write path and pass the input through unchanged.

    Input: a dict with ``input_key`` (the user's message, default ``"input"``) and ``output_key`` (the answer,
    default ``"output"``; a message or a string), or a list of messages saved as they are.
    """

    name: str | None = "NeuSymSave"
    input_key: str = "input"
    output_key: str = "output"
    infer: bool = True

    def _turns(self, value: Any) -> list[dict[str, str]]:
        if isinstance(value, Mapping):
            turns = []
            for key, role in ((self.input_key, "user"), (self.output_key, "assistant")):
                if key in value and (text := message_text(value[key]) if value[key] is not None else ""):
                    turns.append({"role": role, "content": text})
            if not turns:
                raise InvalidInputError(f"nothing to save: no text under {self.input_key!r}/{self.output_key!r}")
            return turns
        if isinstance(value, Sequence) and not isinstance(value, str):
            return [{"role": m.type if isinstance(m, BaseMessage) else str(m.get("role", "user")),
                     "content": message_text(m)} for m in value if message_text(m)]
        raise InvalidInputError(f"cannot save {type(value).__name__}; pass a dict or a list of messages")

    def _run(self, value: Any, config: RunnableConfig) -> Any:
        self.memory.add(self._turns(value), scope=self._resolve(config), infer=self.infer)
        return value

    async def _arun(self, value: Any, config: RunnableConfig) -> Any:
        await self.memory.aadd(self._turns(value), scope=self._resolve(config), infer=self.infer)
        return value

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:  # noqa: A002
        return self._call_with_config(self._run, input, config, **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:  # noqa: A002
        return await self._acall_with_config(self._arun, input, config, **kwargs)


class NeuSymReflectionRunnable(_ScopedRunnable):
    """NeuSym's reflection step (consolidating the scope's memories into a ``reflection`` memory) as a Runnable.

    Input: ``None`` or a dict of :meth:`neusym.NeuSymMemory.reflect` options (``ids``, ``entity``, ``goal``,
    ``extractive``, ``cool``, ...; never scope ids, which come from the runnable and the config). Output: the
    report as a JSON-friendly dict (``output="dict"``, default: what traces and chains handle well) or the
    :class:`neusym.reflection.api.Reflection` object (``output="reflection"``).
    """

    name: str | None = "NeuSymReflection"
    output: Literal["dict", "reflection"] = "dict"

    @staticmethod
    def _kwargs(value: Any) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise InvalidInputError(f"reflection input must be None or a dict of reflect() options, got "
                                    f"{type(value).__name__}")
        scoped = sorted(set(value) & {*SCOPE_KEYS, "scope"})
        if scoped:
            raise ScopeError(f"reflection input cannot set {scoped}; the scope comes from the runnable and config")
        return dict(value)

    def _shape(self, report: Reflection) -> Any:
        return report.as_dict() if self.output == "dict" else report

    def _run(self, value: Any, config: RunnableConfig) -> Any:
        return self._shape(self.memory.reflect(scope=self._resolve(config), **self._kwargs(value)))

    async def _arun(self, value: Any, config: RunnableConfig) -> Any:
        return self._shape(await self.memory.areflect(scope=self._resolve(config), **self._kwargs(value)))

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:  # noqa: A002
        return self._call_with_config(self._run, input, config, **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:  # noqa: A002
        return await self._acall_with_config(self._arun, input, config, **kwargs)
