"""A scripted chat model for ``--llm scripted``: proves the LLM plumbing runs, says nothing about LLM quality.

It answers every prompt with the same uninformative reply (``{}``), so every LLM-backed step (extraction, judge,
arbiter) must either parse it or fall back to its rules. The report carries how many calls each run made, which is the
evidence that the LLM path was taken at all.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field


class ScriptedChatModel(BaseChatModel):
    reply: str = "{}"
    calls: list[int] = Field(default_factory=lambda: [0])  # a mutable cell: the model itself is frozen-ish pydantic

    @property
    def _llm_type(self) -> str:
        return "neusym-govbench-scripted"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        self.calls[0] += 1
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self.reply))])

    @property
    def call_count(self) -> int:
        return self.calls[0]
