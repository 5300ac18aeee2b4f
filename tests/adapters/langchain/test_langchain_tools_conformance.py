"""langchain-tests' standard tool suites, unmodified, on every tool of ``NeuSymToolkit`` (issue 30 item 5):
``ToolsUnitTests`` (construction, name, input schema, the example call matching it) and ``ToolsIntegrationTests``
(a ``ToolCall`` in, a valid ``ToolMessage`` out, sync and async; a plain call does not raise). Real memory."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

from langchain_neusym import NeuSymToolkit
from langchain_neusym.tools import NeuSymForgetTool, NeuSymRecallTool, NeuSymRememberTool, NeuSymUpdateTool
from neusym import NeuSymMemory

USER = "conformance"


class _Seeded:
    """A memory with one stored fact the id-taking tools can act on."""

    tool_class: type[BaseTool]

    @pytest.fixture(autouse=True)
    def _seeded(self, memory: NeuSymMemory) -> None:
        self._memory = memory
        self._id = memory.add("Ana's locker is number 12.", user_id=USER, infer=False)[0].id

    @property
    def tool_constructor(self) -> type[BaseTool]:
        return self.tool_class

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        return {"memory": self._memory, "user_id": USER}


class TestRememberUnit(_Seeded, ToolsUnitTests):
    tool_class = NeuSymRememberTool
    tool_invoke_params_example = {"content": "Ana's bike is blue.", "type": "fact"}


class TestRememberIntegration(_Seeded, ToolsIntegrationTests):
    tool_class = NeuSymRememberTool
    tool_invoke_params_example = {"content": "Ana's bike is blue."}


class TestRecallUnit(_Seeded, ToolsUnitTests):
    tool_class = NeuSymRecallTool
    tool_invoke_params_example = {"query": "locker number"}


class TestRecallIntegration(_Seeded, ToolsIntegrationTests):
    tool_class = NeuSymRecallTool
    tool_invoke_params_example = {"query": "locker number"}


class TestForgetUnit(_Seeded, ToolsUnitTests):
    tool_class = NeuSymForgetTool

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"memory_id": self._id, "reason": "asked to"}


class TestForgetIntegration(_Seeded, ToolsIntegrationTests):
    tool_class = NeuSymForgetTool

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"memory_id": self._id}


class TestUpdateUnit(_Seeded, ToolsUnitTests):
    tool_class = NeuSymUpdateTool

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"memory_id": self._id, "content": "Ana's locker is number 14."}


class TestUpdateIntegration(_Seeded, ToolsIntegrationTests):
    tool_class = NeuSymUpdateTool

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"memory_id": self._id, "content": "Ana's locker is number 14."}


def test_the_suites_cover_every_toolkit_tool(memory: NeuSymMemory) -> None:
    covered = {NeuSymRememberTool, NeuSymRecallTool, NeuSymForgetTool, NeuSymUpdateTool}
    assert {type(t) for t in NeuSymToolkit(memory=memory, user_id=USER).get_tools()} == covered
