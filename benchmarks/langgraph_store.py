"""NeuSymStore (LangGraph ``BaseStore``) throughput and TTL costs.

    nice -n 10 python -m benchmarks.langgraph_store                 # this checkout
    PYTHONPATH=/work/main nice -n 10 python -m benchmarks.langgraph_store   # the last round, same session

* ``large_batches``: the workload of LangGraph's own ``test_large_batches`` (store suites of the SQL stores):
  ``M x N`` rounds of put, get, ``list_namespaces(max_depth=m+1)``, ``search(("test",))``, put again and delete,
  submitted to a 10-thread pool; reported as operations per second (6 ops per round).
* ``ttl_refresh``: a search returning 10 TTL items, with and without refresh-on-read (median ms of ``--reads``),
  and the audit entries written by 50 store operations on TTL items (puts, gets, searches).

An embedded FalkorDB in a temporary directory and the hashing embedder by default (the store's own cost, as
LangGraph's suites use fake embeddings); ``--embedder minilm`` for the default model. Medians, the load average,
and nothing asserted: speed lives here, not in tests.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

__all__ = ["main"]


def _memory(data_dir: str, embedder: str) -> Any:
    from neusym import NeuSymConfig, NeuSymMemory
    from neusym.embeddings import HashingEmbedder

    emb = HashingEmbedder(256) if embedder == "hashing" else None
    return NeuSymMemory(config=NeuSymConfig(data_dir=Path(data_dir), graph_name="bench"), embedder=emb)


def large_batches(mem: Any, n: int, m: int, threads: int) -> dict[str, float]:
    from langchain_neusym import NeuSymStore

    store = NeuSymStore(mem, all_tenants=True)
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        futures = []
        for j in range(m):
            ns = ("test", "foo", "bar", "baz", str(j % 2))
            for i in range(n):
                futures += [
                    pool.submit(store.put, ns, f"key{i}", value={"foo": "bar" + str(i)}),
                    pool.submit(store.get, ns, f"key{i}"),
                    pool.submit(store.list_namespaces, prefix=None, max_depth=j + 1),
                    pool.submit(store.search, ("test",)),
                    pool.submit(store.put, ns, f"key{i}", value={"foo": "bar" + str(i)}),
                    pool.submit(store.put, ns, f"key{i}", None),
                ]
        for f in futures:
            f.result()
    took = time.perf_counter() - started
    return {"ops": float(len(futures)), "seconds": took, "ops_per_s": len(futures) / took}


def ttl_refresh(mem: Any, reads: int) -> dict[str, float]:
    from langchain_neusym import NeuSymStore

    ns = ("ana", "ttl")
    store = NeuSymStore(mem, ttl={"default_ttl": 60.0, "refresh_on_read": True})
    for i in range(10):
        store.put(ns, f"k{i}", {"text": f"a note with a ttl, number {i}"})
    store.search(ns, limit=20)  # warm

    def timed(refresh: bool) -> float:
        t = time.perf_counter()
        assert len(store.search(ns, limit=20, refresh_ttl=refresh)) == 10
        return (time.perf_counter() - t) * 1000

    plain, refreshing = [], []
    for _ in range(reads):  # interleaved, so both see the same load
        plain.append(timed(False))
        refreshing.append(timed(True))
    audits_before = len(mem.audit_log(user_id="ana", limit=1000))
    for i in range(50):  # 50 operations on TTL items: a put, a get or a search in turn
        if i % 3 == 0:
            store.put(ns, f"k{i % 10}", {"text": f"a note with a ttl, number {i % 10}"})
        elif i % 3 == 1:
            store.get(ns, f"k{i % 10}")
        else:
            store.search(ns, limit=20)
    audits = len(mem.audit_log(user_id="ana", limit=1000)) - audits_before
    return {"search10_ms_no_refresh": statistics.median(plain), "search10_ms_refresh": statistics.median(refreshing),
            "audit_entries_after_50_ops": float(audits)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.langgraph_store", description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--m", type=int, default=10)
    p.add_argument("--threads", type=int, default=10)
    p.add_argument("--reads", type=int, default=21)
    p.add_argument("--embedder", choices=("hashing", "minilm"), default="hashing")
    p.add_argument("--only", choices=("all", "large_batches", "ttl_refresh"), default="all")
    p.add_argument("--out", type=Path, default=None)
    a = p.parse_args(argv)
    from benchmarks._common import quiet_logs

    quiet_logs()
    report: dict[str, Any] = {"load_before": os.getloadavg(), "code": str(Path(sys.modules["neusym"].__file__ or "")
                                                                            if "neusym" in sys.modules else "")}
    with tempfile.TemporaryDirectory(prefix="neusym-store-") as tmp:
        mem = _memory(tmp, a.embedder)
        try:
            import neusym

            report["code"] = str(Path(neusym.__file__ or "").parent)
            if a.only in ("all", "ttl_refresh"):
                report["ttl_refresh"] = ttl_refresh(mem, a.reads)
                print("ttl_refresh:", json.dumps(report["ttl_refresh"]), flush=True)
            if a.only in ("all", "large_batches"):
                report["large_batches"] = large_batches(mem, a.n, a.m, a.threads)
                print("large_batches:", json.dumps(report["large_batches"]), flush=True)
        finally:
            mem.close()
    report["load_after"] = os.getloadavg()
    print(f"load {report['load_before'][0]:.1f} -> {report['load_after'][0]:.1f}; code {report['code']}")
    if a.out is not None:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
