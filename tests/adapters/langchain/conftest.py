"""Fixtures for the LangChain adapter tests: a real memory (embedded FalkorDB, HashingEmbedder), two tenants, and
the cookbook's scripted chat model (extended here to keep the prompts it received)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from pydantic import Field

from neusym import NeuSymMemory

COOKBOOK = Path(__file__).resolve().parents[3] / "cookbook"
sys.path.insert(0, str(COOKBOOK))

from langchain_models import ScriptedChatModel  # noqa: E402


class RecordingChatModel(ScriptedChatModel):
    """The cookbook's scripted model, also keeping every prompt it was sent."""

    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> Any:
        self.prompts.append(list(messages))
        return super()._generate(messages, stop, run_manager, **kwargs)

    def prompt_text(self, index: int = -1) -> str:
        return "\n".join(m.text for m in self.prompts[index])


@pytest.fixture
def scripted() -> Callable[..., RecordingChatModel]:
    return RecordingChatModel


@pytest.fixture
def two_tenants(memory: NeuSymMemory) -> NeuSymMemory:
    """Ana and Bob both talk about peanuts; every adapter must keep them apart."""
    memory.add("I am allergic to peanuts.", user_id="ana", session_id="s1")
    memory.add("My favourite city is Lisbon.", user_id="ana", session_id="s1")
    memory.add("I love peanuts and sailing.", user_id="bob", session_id="b1")
    return memory
