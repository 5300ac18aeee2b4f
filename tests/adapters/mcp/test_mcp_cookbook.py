"""The MCP cookbook recipe runs as a script, offline: a LangGraph agent reaches the NeuSym MCP server through
``langchain-mcp-adapters`` (one server process per conversation) and the recipe asserts that a session-1 fact
reaches session 2's prompt and that a forgotten fact reaches no later prompt."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
RECIPE = ROOT / "cookbook" / "mcp_langgraph_agent.py"


@pytest.mark.timeout(600)
def test_mcp_recipe_runs_and_shows_the_memory_effect(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("NEUSYM_CHAT_MODEL", "NEUSYM_GRAPH", "NEUSYM_USER")}
    env.update(NEUSYM_FAST_EMBEDDER="1", NEUSYM_DATA_DIR=str(tmp_path / "data"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, str(RECIPE)], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=540)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4: " in done.stdout


def test_mcp_recipe_has_an_explanation() -> None:
    text = RECIPE.with_suffix(".md").read_text(encoding="utf-8")
    assert "python cookbook/mcp_langgraph_agent.py" in text and "NEUSYM_CHAT_MODEL" in text
