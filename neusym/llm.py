"""One narrow LLM contract for every LLM-backed step, and adapters that need no framework import.

The engine only ever asks a model for text given a system and a user prompt, then validates JSON itself. That is
what every LangChain chat model, LlamaIndex LLM and plain callable can do, so the engine needs no provider factory
and no framework import: the adapters below duck-type the objects users already have.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ValidationError

from neusym.errors import ExtractionError, InvalidInputError
from neusym.language import regex as rx

__all__ = ["ChatModel", "ScriptedChatModel", "as_chat_model", "complete_json"]

M = TypeVar("M", bound=BaseModel)


@runtime_checkable
class ChatModel(Protocol):
    def complete(self, system: str, user: str) -> str: ...


class _LangChainChat:
    """Any LangChain ``BaseChatModel`` (or Runnable taking messages): ``invoke([("system", ..), ("human", ..)])``."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def complete(self, system: str, user: str) -> str:
        out = self.model.invoke([("system", system), ("human", user)])
        content = getattr(out, "content", out)
        if isinstance(content, list):  # content blocks
            content = "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
        return str(content)


class _LlamaIndexLLM:
    """Any LlamaIndex ``LLM``: ``complete(prompt).text`` (works for chat and completion models alike)."""

    def __init__(self, llm: Any) -> None:
        self.llm = llm

    def complete(self, system: str, user: str) -> str:
        out = self.llm.complete(f"{system}\n\n{user}")
        return str(getattr(out, "text", out))


class _CallableChat:
    def __init__(self, fn: Callable[[str], str]) -> None:
        self.fn = fn

    def complete(self, system: str, user: str) -> str:
        return str(self.fn(f"{system}\n\n{user}"))


def as_chat_model(obj: Any) -> ChatModel | None:
    """Wrap a LangChain chat model, a LlamaIndex LLM, a ``ChatModel`` or a ``str -> str`` callable."""
    if obj is None:
        return None
    if isinstance(obj, _LangChainChat | _LlamaIndexLLM | _CallableChat | ScriptedChatModel):
        return obj
    from_llama_index = any(c.__module__.startswith("llama_index") for c in type(obj).__mro__)
    if from_llama_index and hasattr(obj, "complete"):
        return _LlamaIndexLLM(obj)
    if hasattr(obj, "invoke"):
        return _LangChainChat(obj)
    if hasattr(obj, "complete") and callable(obj.complete):
        try:
            return obj if isinstance(obj, ChatModel) else _LlamaIndexLLM(obj)
        except TypeError:
            return _LlamaIndexLLM(obj)
    if callable(obj):
        return _CallableChat(obj)
    raise InvalidInputError(f"cannot use {type(obj).__name__} as a chat model (need invoke(), complete() or a callable)")


class ScriptedChatModel:
    """A deterministic fake for tests and offline demos: returns its scripted replies in order.

    Items that are exceptions are raised instead of returned, so tests can simulate a failing provider.
    ``calls`` records every (system, user) prompt it received.
    """

    def __init__(self, replies: Iterable[str | BaseException], *, repeat_last: bool = False) -> None:
        self.replies = list(replies)
        self.repeat_last = repeat_last
        self.calls: list[tuple[str, str]] = []

    def complete(self, system: str, user: str) -> str:
        self.calls.append((system, user))
        if not self.replies:
            raise ExtractionError("scripted chat model ran out of replies")
        reply = self.replies[0] if (self.repeat_last and len(self.replies) == 1) else self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return reply


_FENCE = rx.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def _json_candidates(text: str) -> list[str]:
    cands = [m.group(1) for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        cands.append(text[start : end + 1])
    cands.append(text)
    return cands


def complete_json(
    model: ChatModel,
    system: str,
    user: str,
    schema: type[M],
    *,
    retries: int = 2,
) -> M:
    """Ask for JSON matching ``schema``; on malformed output, re-ask with the validation error, ``retries`` times.

    Raises:
        ExtractionError: every attempt failed (the caller falls back to its LLM-free path).
    """
    prompt = user
    last_error = ""
    for _attempt in range(retries + 1):
        try:
            text = model.complete(system, prompt)
        except ExtractionError:
            raise
        except Exception as err:  # provider errors: count as a failed attempt
            last_error = f"model call failed: {type(err).__name__}: {err}"
            continue
        for cand in _json_candidates(text):
            try:
                return schema.model_validate(json.loads(cand))
            except (ValueError, ValidationError, RecursionError) as err:  # RecursionError: "[[[[..." thousands deep
                last_error = str(err)[:500]
        prompt = (
            f"{user}\n\nYour previous reply was not valid JSON for the schema ({last_error}). "
            "Reply with the JSON object only."
        )
    raise ExtractionError(f"model output did not validate after {retries + 1} attempts: {last_error}")
