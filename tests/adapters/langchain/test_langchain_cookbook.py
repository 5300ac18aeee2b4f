"""The LangChain cookbook recipes run as scripts, offline, and assert the memory effect themselves.

Each recipe opens its memory afresh per "session" (as a new process would) and asserts that a fact from session 1
reaches the model's prompt in session 2 and that a forgotten fact reaches no later prompt. Here they run exactly
as a user runs them, with the scripted model (``NEUSYM_CHAT_MODEL`` unset) and the fast embedder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
COOKBOOK = ROOT / "cookbook"
RECIPES = ["langchain_lcel_chat", "langchain_conversation_chain", "langchain_agent_store", "langchain_rag_retriever"]


@pytest.mark.parametrize("name", RECIPES)
def test_recipe_runs_and_shows_the_memory_effect(name: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("NEUSYM_CHAT_MODEL", "NEUSYM_GRAPH")}
    env.update(NEUSYM_FAST_EMBEDDER="1", NEUSYM_DATA_DIR=str(tmp_path / "data"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, str(COOKBOOK / f"{name}.py")], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("name", RECIPES)
def test_recipe_has_an_explanation(name: str) -> None:
    doc = COOKBOOK / f"{name}.md"
    assert doc.is_file()
    text = doc.read_text(encoding="utf-8")
    assert f"python cookbook/{name}.py" in text and "NEUSYM_CHAT_MODEL" in text
