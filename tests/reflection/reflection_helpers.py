"""Shared helpers for the reflection tests (plain functions; fixtures live in tests/conftest.py)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from typing import Any

from neusym import NeuSymMemory
from neusym.errors import ExtractionError

TOPICS = [
    "I live in Porto with my partner Rui.",
    "I work at Farfetch as a data engineer since 2021.",
    "My sister Marta is visiting on 14 March 2025.",
    "I love specialty coffee, especially flat whites.",
    "I run 10 km every Sunday morning.",
    "My budget for the new laptop is 1800 euros.",
    "I am allergic to cats.",
    "I am learning Japanese on Duolingo.",
    "My favourite band is Radiohead.",
    "I want to visit Kyoto in April.",
]


def thirty_turns() -> list[tuple[str, str]]:
    """30 turns: user statements (some repeated, some with dates/numbers) and assistant replies."""
    turns: list[tuple[str, str]] = []
    for i in range(15):
        turns.append(("user", TOPICS[i % len(TOPICS)] if i < 10 else f"Reminder {i}: I read {i * 3} pages today."))
        turns.append(("assistant", f"Noted, thanks for telling me about item {i}."))
    return turns


def write_session(mem: NeuSymMemory, user_id: str, session_id: str, turns: Sequence[tuple[str, str]]) -> None:
    for role, text in turns:
        mem.add([{"role": role, "content": text, "name": "Ana" if role == "user" else "assistant"}],
                user_id=user_id, session_id=session_id)


def derived_from(mem: NeuSymMemory, reflection_id: str) -> set[str]:
    return {i for i, _props in mem.store.linked(reflection_id, "DERIVED_FROM")}


def reply(summary: str, *, cited: Sequence[str] = (), covered: Sequence[str] = (),
          conflicts: Sequence[dict[str, Any]] = (), importance: float = 0.7, tags: Sequence[str] = ("profile",),
          goal_relevance: str = "") -> str:
    return json.dumps({"summary": summary, "goal_relevance": goal_relevance, "importance": importance,
                       "tags": list(tags), "conflicts": list(conflicts), "cited": list(cited),
                       "covered": list(covered)})


_ALIAS = re.compile(r"^(m\d+) \(", re.MULTILINE)


class CitingModel:
    """A fake remote model that answers every reflection prompt with valid JSON citing every alias it was shown
    (a ``ChatModel``: ``complete(system, user)``). ``calls`` records the prompts."""

    def __init__(self, summary_words: int = 20) -> None:
        self.calls: list[tuple[str, str]] = []
        self.summary_words = summary_words
        self.lock = threading.Lock()

    def complete(self, system: str, user: str) -> str:
        with self.lock:
            self.calls.append((system, user))
            n = len(self.calls)
        aliases = _ALIAS.findall(user)
        words = " ".join(f"fact{n}_{i}" for i in range(self.summary_words))
        return reply(f"Summary {n} of {len(aliases)} memories: {words}.", cited=aliases, covered=aliases)


class GatedModel:
    """Blocks inside ``complete`` until released: proves the fast path never waits for reflection."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.inner = CitingModel()

    def complete(self, system: str, user: str) -> str:
        self.entered.set()
        if not self.release.wait(timeout=120):
            raise ExtractionError("gate never released")
        return self.inner.complete(system, user)


class FailingModel:
    """A provider that always errors."""

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, system: str, user: str) -> str:
        self.calls += 1
        raise RuntimeError("provider unavailable")
