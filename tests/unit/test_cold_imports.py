"""Cold start: what a fresh interpreter imports for ``import neusym`` and ``neusym --help`` (issue 30 item 1).

A command line that only prints its help, or a program that only reads ``neusym.errors``, must not pay for the
graph client, FAISS, numpy, the embedding runtime, WordNet or a framework. Checked by module names in a fresh
interpreter (not by time: speed lives in ``benchmarks/cold_start.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

HEAVY = ("numpy", "faiss", "falkordb", "redis", "neo4j", "onnxruntime", "tokenizers", "torch", "pydantic",
         "langchain_core", "langgraph", "llama_index", "mcp", "mcp_neusym", "bm25s", "scipy")
OURS_HEAVY = ("neusym.facade", "neusym.engine", "neusym.knowledge", "neusym.governance", "neusym.embeddings",
              "neusym.symbolic", "neusym.retrieval", "neusym.extraction", "neusym.record")


def _modules_after(code: str) -> list[str]:
    probe = code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))\n"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env,
                         cwd=str(ROOT))
    loaded: list[str] = json.loads(out.stdout.strip().splitlines()[-1])
    return loaded


def _heavy(loaded: list[str]) -> list[str]:
    return sorted(m for m in loaded if m.split(".")[0] in HEAVY or m.startswith(OURS_HEAVY))


def test_import_neusym_loads_nothing_heavy() -> None:
    assert _heavy(_modules_after("import neusym")) == []


def test_help_loads_nothing_heavy() -> None:
    code = ("from neusym.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit as e:\n    assert e.code in (0, None), e.code\n")
    assert _heavy(_modules_after(code)) == []


def test_public_names_resolve_on_first_use() -> None:
    loaded = _modules_after("import neusym\nfrom neusym import ScopeError\nassert neusym.ScopeError is ScopeError")
    assert "neusym.errors" in loaded and "neusym.facade" not in loaded
    loaded = _modules_after("from neusym import NeuSymMemory, render_memories\nassert NeuSymMemory.__name__")
    assert "neusym.facade" in loaded and "neusym.prompting" in loaded


def test_unknown_name_is_an_attribute_error() -> None:
    import neusym

    try:
        neusym.NoSuchThing  # noqa: B018
    except AttributeError as err:
        assert "NoSuchThing" in str(err)
    else:
        raise AssertionError("expected AttributeError")


def test_every_public_name_has_a_home() -> None:
    import neusym

    assert sorted(neusym.__all__) == sorted(neusym._WHERE)
