"""``NeuSymMiddleware`` for ``langchain.agents.create_agent``: recall before the model call, save after it.

Before every model call NeuSym's context builder runs on the last user message (two-stage retrieval of reflections
and memories, cut to a token budget) and its text is appended to the system message. When the model gives its final answer (an ``AIMessage`` without tool
calls) the user message and that answer are saved as one turn through NeuSym's write path.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.tools import BaseTool

from langchain_neusym._common import (
    ReadScope,
    abuild_context,
    bound_ids,
    build_context,
    check_memory,
    config_ids,
    last_human_text,
    read_scope,
    resolve_scope,
    runtime_ids,
)
from neusym import NeuSymMemory, Scope

__all__ = ["NeuSymMiddleware"]

DEFAULT_HEADER = "Relevant memories about the user (from earlier conversations):"


def _current_config() -> Mapping[str, Any] | None:
    try:
        from langgraph.config import get_config

        return get_config()
    except Exception:  # noqa: BLE001 - outside a graph run there is no config
        return None


def _final_answer(response: Any) -> AIMessage | None:
    messages: list[BaseMessage] = []
    if isinstance(response, AIMessage):
        messages = [response]
    elif isinstance(response, ModelResponse):
        messages = list(response.result)
    elif hasattr(response, "model_response"):
        messages = list(response.model_response.result)
    for m in reversed(messages):
        if isinstance(m, AIMessage):
            return None if m.tool_calls else m
    return None


class NeuSymMiddleware(AgentMiddleware):  # type: ignore[type-arg]
    """Long-term memory for ``create_agent`` agents.

    Args:
        memory: an open :class:`neusym.NeuSymMemory`.
        user_id / agent_id / session_id / scope: bound scope ids. Open ids are filled per run from
            ``config["configurable"]`` (``user_id``, ``agent_id``, ``session_id``; ``thread_id`` becomes the
            session) or the agent's ``context`` (an object or dict with those attributes).
        read_scope: how far recall reaches: ``"user"`` (default, every session), ``"agent"`` or ``"session"``.
        k / max_tokens / encoding / header: how many hits, their token budget (tiktoken) and the heading.
        inject / save: turn either half off (e.g. ``save=False`` when the agent saves with the memory tools).
        infer: run extraction on saved turns.
        tools: also register the memory tools (``remember``, ``recall``, ``forget``, ``update_memory``).

    Example::

        agent = create_agent(model, tools=[], middleware=[NeuSymMiddleware(mem)])
        agent.invoke({"messages": [("user", "I'm vegetarian")]}, {"configurable": {"user_id": "ana"}})
    """

    def __init__(
        self,
        memory: NeuSymMemory,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        scope: Scope | Mapping[str, Any] | None = None,
        read_scope: ReadScope = "user",
        k: int = 5,
        max_tokens: int = 800,
        encoding: str = "cl100k_base",
        header: str = DEFAULT_HEADER,
        inject: bool = True,
        save: bool = True,
        infer: bool = True,
        tools: bool = False,
    ) -> None:
        super().__init__()
        self.memory = check_memory(memory)
        self.bound = bound_ids(scope, user_id=user_id, agent_id=agent_id, session_id=session_id)
        self.read_scope = read_scope
        self.k, self.max_tokens, self.encoding, self.header = k, max_tokens, encoding, header
        self.inject, self.save, self.infer = inject, save, infer
        self.tools: list[BaseTool] = []
        if tools:
            from langchain_neusym.tools import NeuSymToolkit

            self.tools = NeuSymToolkit(memory=memory, **self.bound, read_scope=read_scope).get_tools()

    # ------------------------------------------------------------------ hooks
    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        scope = self._scope(request)
        query = last_human_text(request.messages)
        if self.inject and query:
            request = self._with_context(request, build_context(
                self.memory, query, read_scope(scope, self.read_scope), max_tokens=self.max_tokens, k=self.k,
                encoding=self.encoding, header=self.header))
        response = handler(request)
        answer = _final_answer(response)
        if self.save and query and answer is not None and answer.text.strip():
            self.memory.add(self._turn(query, answer), scope=scope, infer=self.infer)
        return response

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> Any:
        scope = self._scope(request)
        query = last_human_text(request.messages)
        if self.inject and query:
            request = self._with_context(request, await abuild_context(
                self.memory, query, read_scope(scope, self.read_scope), max_tokens=self.max_tokens, k=self.k,
                encoding=self.encoding, header=self.header))
        response = await handler(request)
        answer = _final_answer(response)
        if self.save and query and answer is not None and answer.text.strip():
            await self.memory.aio.add(self._turn(query, answer), scope=scope, infer=self.infer)
        return response

    # ------------------------------------------------------------------ helpers
    def _scope(self, request: ModelRequest) -> Scope:
        context = getattr(request.runtime, "context", None) if request.runtime is not None else None
        return resolve_scope(self.memory, self.bound, config_ids(_current_config(), thread_as_session=True),
                             runtime_ids(context) if context is not None else None)

    @staticmethod
    def _turn(query: str, answer: AIMessage) -> list[dict[str, str]]:
        return [{"role": "user", "content": query}, {"role": "assistant", "content": answer.text.strip()}]

    @staticmethod
    def _with_context(request: ModelRequest, context: str) -> ModelRequest:
        if not context:
            return request
        current = request.system_message
        if current is None:
            system = SystemMessage(content=context)
        elif isinstance(current.content, str):
            system = SystemMessage(content=f"{current.content}\n\n{context}" if current.content else context)
        else:
            system = SystemMessage(content=[*current.content, {"type": "text", "text": context}])
        return request.override(system_message=system)
