"""The default path (import, open, add, search with the default embedder) never imports torch.

In a fresh interpreter, because the test process itself may have torch loaded by other tests. The child fails if
any torch-family module is imported, however indirectly (a transitive import from a dependency counts too).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CHILD = textwrap.dedent(
    """
    import json, sys
    from neusym import NeuSymMemory
    with NeuSymMemory(sys.argv[1]) as mem:
        mem.add("My daughter is allergic to peanuts.", user_id="ana")
        mem.add("The quarterly report was published on Tuesday.", user_id="ana")
        hits = mem.search("what food is my kid allergic to?", user_id="ana", k=2)
        name = mem.embedder.name
    heavy = sorted(m for m in sys.modules
                   if m.split(".")[0] in ("torch", "sentence_transformers", "transformers", "tensorflow", "jax"))
    print(json.dumps({"top": hits[0].content, "embedder": name, "heavy": heavy}))
    """
)


@pytest.mark.minilm
def test_default_embedder_path_imports_no_torch(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("NEUSYM_EMBEDDER", None)
    proc = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "data")], capture_output=True, text=True,
                          timeout=300, env=env, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["embedder"] == "sentence-transformers/all-MiniLM-L6-v2@onnx-int8"
    assert out["top"] == "My daughter is allergic to peanuts."  # semantic, not lexical: "kid"/"food" are not in it
    assert out["heavy"] == []
