"""The LlamaIndex cookbook recipes run offline (llama-index-core mocks) and show the memory effect."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[3]
COOKBOOK = ROOT / "cookbook"
AGENT_WARNINGS = "ignore:The `__fields__`|The `__fields_set__`|Accessing the 'model_:DeprecationWarning"


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NEUSYM_LLAMA_LLM", raising=False)  # the mocks, whatever the developer's shell says
    monkeypatch.setenv("NEUSYM_FAST_EMBEDDER", "1")
    monkeypatch.syspath_prepend(str(COOKBOOK))


def recipe(name: str) -> ModuleType:
    return importlib.import_module(name)


@pytest.mark.filterwarnings(AGENT_WARNINGS)  # llama-index-workflows inspects the agent's pydantic attributes
async def test_agent_recipe_recalls_an_earlier_session(offline: None, tmp_path: Path) -> None:
    mod = recipe("llamaindex_agent_memory")
    outcome = await mod.main(tmp_path)
    assert outcome.recalled
    memory_messages = [m for m in outcome.seen_by_llm if "<long_term_memory>" in m]
    assert memory_messages and "peanuts" in memory_messages[0]
    assert outcome.seen_by_llm[-1] == mod.QUESTION  # ... and it arrived with session 2's question


def test_query_engine_recipe_answers_from_one_tenant(offline: None, tmp_path: Path) -> None:
    outcome = recipe("llamaindex_query_engine").main(tmp_path)
    assert outcome.ok
    assert "Lisbon" in outcome.sources[0]["text"] and "Lisbon" in outcome.answer and "Berlin" not in outcome.answer
    assert {s["user_id"] for s in outcome.sources} == {"ana"}
    assert all(s["memory_id"] and s["score_explanation"] for s in outcome.sources)


@pytest.mark.parametrize("script", ["llamaindex_agent_memory.py", "llamaindex_query_engine.py"])
def test_recipes_run_as_scripts(script: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NEUSYM_LLAMA_LLM"}
    env.update(NEUSYM_FAST_EMBEDDER="1", PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, str(COOKBOOK / script), str(tmp_path)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OK:" in done.stdout
