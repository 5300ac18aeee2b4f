"""Search latency of the shipped recipe against the same recipe without this round's changes, on a LoCoMo store.

    python -m benchmarks.locomo_latency ../shared/data/locomo/locomo_dev.json --store observations

Why a separate, interleaved measurement: the main benchmark times each ablation row over all questions one row
after the other, and on a shared box the load moves by 2-3x between rows. Here every query is searched with every
recipe in turn (the order rotating with the query), so load drift hits all recipes alike; the first pass warms
up, the second is timed. Latency excludes the query embedding (cached, as in the main benchmark).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchmarks._common import build_embedder, quiet_logs
from benchmarks.locomo import NeuSymSystem
from benchmarks.locomo_data import STORES, load_locomo
from neusym.retrieval.config import RetrievalConfig
from neusym.retrieval.recipes import get_recipe

__all__ = ["RECIPES", "main"]

_FULL = get_recipe("hybrid_graph")
RECIPES: dict[str, RetrievalConfig] = {
    "shipped": _FULL,
    "without pool geometry": _FULL.with_weights(distinct=0.0, contrast=0.0),
    "one depth for both shapes": _FULL.with_(fact_candidates=None),
    "before (no geometry, one depth)": _FULL.with_(fact_candidates=None).with_weights(distinct=0.0, contrast=0.0),
}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.locomo_latency", description=(__doc__ or "").split("\n")[0])
    ap.add_argument("path", type=Path)
    ap.add_argument("--store", default="observations", choices=STORES)
    ap.add_argument("--embedder", default="minilm", choices=["minilm", "minilm-torch", "hashing"])
    ap.add_argument("--limit-convs", type=int, default=None)
    a = ap.parse_args(argv)
    quiet_logs()
    convs = load_locomo(a.path, limit_convs=a.limit_convs)
    emb = build_embedder(a.embedder, cache_queries=True)
    emb.embed_documents([d.content for c in convs for d in c.docs(a.store)])
    queries = [(c.sample_id, q.question) for c in convs for q in c.questions if q.category in (1, 2, 3, 4)]
    emb.prime_queries([q for _, q in queries])
    work = Path(tempfile.mkdtemp(prefix="neusym-locomo-latency-"))
    names = list(RECIPES)
    wall: dict[str, list[float]] = {k: [] for k in names}
    s1: dict[str, list[float]] = {k: [] for k in names}
    s2: dict[str, list[float]] = {k: [] for k in names}
    ns = NeuSymSystem(convs, a.store, emb, work)
    try:
        for timed in (False, True):
            for i, (conv, q) in enumerate(queries):
                for k in names[i % len(names):] + names[: i % len(names)]:
                    fn = ns.system(k, RECIPES[k])
                    t0 = time.perf_counter()
                    fn(conv, q, 10)
                    if timed:
                        wall[k].append((time.perf_counter() - t0) * 1000)
                        s1[k].append(ns.memory.admin.last_timings.stage1_ms)
                        s2[k].append(ns.memory.admin.last_timings.stage2_ms)
    finally:
        ns.close()
        shutil.rmtree(work, ignore_errors=True)
    sys.stdout.write(f"store {a.store}: {len(queries)} queries x {len(names)} recipes, interleaved, second pass timed\n\n"
                     "| recipe | search p50 ms | p95 | stage 1 p50 | stage 2 p50 | stage 2 p95 |\n"
                     "|---|---:|---:|---:|---:|---:|\n")
    for k in names:
        p = np.percentile
        sys.stdout.write(f"| {k} | {p(wall[k], 50):.1f} | {p(wall[k], 95):.1f} | {p(s1[k], 50):.1f} | "
                         f"{p(s2[k], 50):.1f} | {p(s2[k], 95):.1f} |\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
