"""Governed write speed with and without the similarity steps (slot updates, contradictions by meaning), one process.

    python -m benchmarks.governance.write_speed /work/shared/data/locomo/locomo_dev.json [--n 5000] [--chunk 500]

The same ~5k texts (LoCoMo dev turns and observations, then the everyday-fact sentences, cycled) go through
``add_batch`` twice, into two tenants, in interleaved chunks: once with :class:`~neusym.governance.updates.UpdateDetector`
and :class:`~neusym.governance.contradictions.ContradictionFinder` switched off, once on. Vectors are computed
once beforehand and passed in (``add_batch(vectors=...)``), so the ratio isolates what governance costs rather than
hiding it behind the embedder. A first write under another tenant pays the one-off costs (slot descriptions and
constraint categories embedded, WordNet loaded) before the timed chunks.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._common import build_embedder, quiet_logs
from benchmarks.locomo_data import load_locomo


def main(argv: list[str] | None = None) -> int:
    from neusym import NeuSymConfig, NeuSymMemory

    p = argparse.ArgumentParser(prog="python -m benchmarks.governance.write_speed", description=__doc__)
    p.add_argument("file", type=Path)
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--chunk", type=int, default=500)
    a = p.parse_args(argv)
    quiet_logs()
    texts = [d.text for c in load_locomo(a.file) for s in ("turns", "observations") for d in c.docs(s)]
    facts = Path(__file__).resolve().parents[1] / "data" / "everyday_facts.txt"
    texts += [t.strip() for t in facts.read_text().splitlines() if t.strip() and not t.startswith("#")]
    texts = [texts[i % len(texts)] for i in range(a.n)]
    emb = build_embedder("minilm")
    vecs = np.asarray(emb.embed_documents(texts), dtype=np.float32)
    work = Path(tempfile.mkdtemp(prefix="neusym-write-speed-"))
    try:
        mem = NeuSymMemory(config=NeuSymConfig(data_dir=work / "neusym", graph_name="speed", appendfsync="everysec"),
                           embedder=emb)
        gov = mem._engine.governor
        # one-off costs of a process's first governed write (embedding the slot descriptions and constraint
        # categories, loading WordNet) are paid here, outside the timed chunks: the ratio is about throughput
        mem.add_batch(texts[:20], user_id="speed-warm-up", infer=False, vectors=vecs[:20])
        spent = {"off": 0.0, "on": 0.0}
        for start in range(0, a.n, a.chunk):
            for arm in ("off", "on"):
                embed = gov.embed if arm == "on" else None
                gov.updates.embed = embed
                gov.contradictions.enabled = arm == "on"
                t0 = time.perf_counter()
                mem.add_batch(texts[start:start + a.chunk], user_id=f"speed-{arm}", infer=False,
                              vectors=vecs[start:start + a.chunk])
                spent[arm] += time.perf_counter() - t0
        mem.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    off, on = a.n / spent["off"], a.n / spent["on"]
    print(f"add_batch of {a.n} memories (chunks of {a.chunk}, vectors given): similarity steps off {off:.1f}/s, "
          f"on {on:.1f}/s, ratio {on / off:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
