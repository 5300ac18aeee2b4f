"""Every fenced Python block of the README runs as written (issue 30 item 5).

Each block is a script: it runs alone, in a fresh interpreter, in an empty working directory with an empty
``NEUSYM_DATA_DIR``, and must define everything it uses. The only substitutions are the remote models a reader
would use (``init_chat_model("openai:...")``, LlamaIndex's ``OpenAI``): offline scripted stand-ins, installed before
the block runs. The block naming ``NEO4J_URI`` runs against the Neo4j test server. What a block says it prints (a
trailing ``# <value>`` on a print line) is checked against what it printed.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from neo4j_server.fixtures import neo4j_server  # noqa: F401 - the Neo4j block's server

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

_PRELUDE = r'''
import runpy, sys, types

sys.path.insert(0, sys.argv[2])  # the cookbook: its scripted LangChain model
from langchain_models import ScriptedChatModel


def init_chat_model(*args, **kwargs):  # what a reader's remote model is replaced with
    return ScriptedChatModel(["Hello! How can I help?", "Noted."] * 20)


import langchain.chat_models
langchain.chat_models.init_chat_model = init_chat_model

from llama_index.core.llms.mock import MockFunctionCallingLLM

fake = types.ModuleType("llama_index.llms.openai")
fake.OpenAI = lambda *args, **kwargs: MockFunctionCallingLLM()
sys.modules["llama_index.llms.openai"] = fake

runpy.run_path(sys.argv[1], run_name="__main__")
'''

_CLEARED = ("NEO4J_URI", "NEO4J_URL", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE", "NEUSYM_BACKEND",
            "FALKORDB_HOST", "FALKORDB_PORT", "NEUSYM_DEFAULT_USER_ID", "NEUSYM_INDEX_PATH")


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


BLOCKS = python_blocks(README.read_text(encoding="utf-8"))


def _claims(block: str) -> list[str]:
    """Values a block says its prints show: ``print(...)  # value``."""
    return [m.group(1).strip() for m in re.finditer(r"^[ \t]*print\(.*\)[ \t]*#[ \t]*(.+)$", block, re.M)]


def _wipe(conn: Any) -> None:
    from neusym.symbolic.executors.neo4j import Neo4jExecutor

    executor = Neo4jExecutor(url=conn.uri, username=conn.username, password=conn.password, database=conn.database)
    try:
        executor.run("MATCH (n) DETACH DELETE n")
    finally:
        executor.close()


def _params() -> list[object]:
    out: list[object] = []
    for i, block in enumerate(BLOCKS):
        marks = [pytest.mark.neo4j] if "NEO4J_URI" in block else []
        out.append(pytest.param(i, id=f"block{i}", marks=[*marks, pytest.mark.minilm]))
    return out


def test_the_readme_has_python_blocks() -> None:
    assert len(BLOCKS) >= 8
    for block in BLOCKS:
        ast.parse(block)  # a block with top-level await would be a SyntaxError here


@pytest.mark.parametrize("index", _params())
def test_block_runs_as_written(index: int, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    block = BLOCKS[index]
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED}
    env.update(NEUSYM_DATA_DIR=str(tmp_path / "data"), PYTHONPATH=str(ROOT), NEUSYM_CACHE_DIR=str(tmp_path / "cache"))
    if "NEO4J_URI" in block:
        conn = request.getfixturevalue("neo4j_server")
        _wipe(conn)  # the shared test server: start from an empty database, and leave one (finalizer)
        request.addfinalizer(lambda: _wipe(conn))
        env.update(NEO4J_URI=conn.uri, NEO4J_USERNAME=conn.username, NEO4J_PASSWORD=conn.password,
                   NEO4J_DATABASE=conn.database)
    script = tmp_path / "block.py"
    script.write_text(block, encoding="utf-8")
    prelude = tmp_path / "prelude.py"
    prelude.write_text(_PRELUDE, encoding="utf-8")
    work = tmp_path / "cwd"
    work.mkdir()
    done = subprocess.run([sys.executable, str(prelude), str(script), str(ROOT / "cookbook")], cwd=work, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"block {index} failed:\n{block}\n--- stderr ---\n{done.stderr[-4000:]}"
    printed = done.stdout.splitlines()
    for claim in _claims(block):
        assert any(line.strip() == claim or line.strip().endswith(claim) for line in printed), \
            f"block {index} claims {claim!r}; it printed:\n{done.stdout}"
