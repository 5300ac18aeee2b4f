"""Inputs to candidate memories: free text or chat messages in any common shape, turn by turn.

Accepted message shapes: ``{"role": .., "content": ..}`` dicts (OpenAI style, with optional ``name``),
``(role, content)`` tuples, and objects with ``type``/``role`` and ``content`` (LangChain ``BaseMessage``,
LlamaIndex ``ChatMessage``), so no framework import is needed here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from neusym.errors import InvalidInputError
from neusym.record import validate_text

__all__ = ["Turn", "normalize_messages"]

_ROLE_ALIASES = {"human": "user", "user": "user", "ai": "assistant", "assistant": "assistant", "system": "system",
                 "tool": "tool", "function": "tool", "chatbot": "assistant", "model": "assistant"}


@dataclass
class Turn:
    role: str
    content: str
    speaker: str | None = None
    index: int = 0


def _content(value: Any) -> str:
    if isinstance(value, list):  # content blocks
        return "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in value)
    return value  # type: ignore[no-any-return]


def normalize_messages(messages: Sequence[Any] | Iterable[Any]) -> list[Turn]:
    turns: list[Turn] = []
    for i, m in enumerate(messages):
        if isinstance(m, dict):
            role, content, name = m.get("role", "user"), m.get("content"), m.get("name") or m.get("speaker")
        elif isinstance(m, tuple) and len(m) == 2:
            role, content, name = m[0], m[1], None
        elif hasattr(m, "content"):
            role = getattr(m, "role", None) or getattr(m, "type", "user")
            role = getattr(role, "value", role)
            content, name = m.content, getattr(m, "name", None)
        else:
            raise InvalidInputError(f"message {i} has an unsupported shape ({type(m).__name__})")
        role_s = _ROLE_ALIASES.get(str(role).lower(), str(role).lower())
        text = validate_text(_content(content), field=f"message {i} content")
        turns.append(Turn(role=role_s, content=text, speaker=name if isinstance(name, str) else None, index=i))
    if not turns:
        raise InvalidInputError("messages is empty")
    return turns
