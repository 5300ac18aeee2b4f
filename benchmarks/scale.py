"""Speed and scale: add throughput, search latency per stage, RSS, disk, open/catch-up time, against store size.

    python -m benchmarks.scale --sizes 10000,100000 --minilm-sizes 10000 --out benchmarks/results

Two kinds of run, in one process so ratios are against the same machine state:

* ``precomputed`` (every size in ``--sizes``): memories carry precomputed random unit vectors (a lookup "embedder"),
  which isolates the storage/retrieval engine from the model. Queries are noisy copies of stored vectors.
* ``minilm`` (every size in ``--minilm-sizes``): the real offline all-MiniLM-L6-v2 embeds queries live (end-to-end
  latency); documents are encoded by MiniLM for real up to ``--minilm-encode-max`` memories (the add-throughput
  ratio against raw MiniLM), above that they reuse precomputed vectors so a 100k store does not take an hour to
  encode (query latency does not depend on the document vectors' values). ``--embedder`` picks the query model
  (``minilm``: the default, onnxruntime int8; ``minilm@N``: with N intra-op threads; ``minilm-torch``: the fp32
  sentence-transformers model, needs ``neusym[torch]``); ``--compare-embedders`` interleaves more models query by
  query on the same store (same-process ratios). Each query is also embedded alone right before its search
  ("embedder alone"), and Python's garbage collections during the query loop are recorded (``gc.callbacks``).

Baselines measured in the same run at the same sizes: LangChain community ``FAISS`` (``from_embeddings`` /
``add_embeddings`` / ``similarity_search_by_vector``) and mem0 OSS 2.2.1 with ``infer=False`` (FAISS store; mem0
saves its whole FAISS index on every insert, so it is filled only up to ``--mem0-max`` memories).

NeuSym stores get their first ``--api-max`` memories through the public ``add``/``add_batch`` (the add throughput
columns); above that the rest is bulk-loaded below the API (graph create + index apply, no extraction/governance,
column "bulk load") so that 100k/1M stores for the SEARCH measurements take minutes, not hours.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import dir_size, machine_info, pct, pid_rss_mb, quiet_logs, rss_mb, write_json

DIM = 384
_NAMES = [f"{a}{b}" for a in ("Al", "Be", "Ca", "Da", "El", "Fa", "Ga", "Ha", "Io", "Ju", "Ka", "Li", "Ma", "No", "Ol",
                              "Pa", "Qu", "Ra", "Sa", "Ta")
          for b in ("ice", "rt", "rl", "na", "ex", "ora", "bel", "rry", "nn", "lia")]
_VERBS = ["likes", "visited", "bought", "painted", "cooked", "read", "planned", "fixed", "sold", "wrote", "found",
          "lost", "booked", "watched", "built", "met", "called", "cleaned", "ordered", "shared"]
_NOUNS = ["guitar", "bike", "garden", "novel", "camera", "kitchen", "laptop", "ticket", "poster", "sofa", "recipe",
          "song", "boat", "tent", "map", "lamp", "jacket", "album", "puzzle", "letter", "coffee", "museum", "park",
          "concert", "office", "window", "ladder", "piano", "bridge", "market"]
_PLACES = ["Paris", "Berlin", "Lisbon", "Oslo", "Quito", "Lima", "Osaka", "Cairo", "Dublin", "Austin", "Denver",
           "Porto", "Seville", "Krakow", "Nairobi", "Hanoi", "Perth", "Bergen", "Tunis", "Zagreb"]


def synthetic_texts(n: int, seed: int = 7) -> list[str]:
    """Short memory-like statements with names and places (so extraction finds entities, as in real use)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, len(_NAMES), n)
    v = rng.integers(0, len(_VERBS), n)
    o = rng.integers(0, len(_NOUNS), (n, 2))
    p = rng.integers(0, len(_PLACES), n)
    return [f"{_NAMES[a[i]]} {_VERBS[v[i]]} the {_NOUNS[o[i, 0]]} and a {_NOUNS[o[i, 1]]} in {_PLACES[p[i]]} "
            f"(note {i})" for i in range(n)]


def random_unit(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.empty((n, DIM), dtype=np.float32)
    for s in range(0, n, 100_000):  # chunks keep the float64 temporaries small at 1M
        block = rng.standard_normal((min(100_000, n - s), DIM), dtype=np.float32)
        out[s : s + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


class LookupEmbedder:
    """Documents: a precomputed vector per text (cost: a dict lookup). Queries: a precomputed vector too, or the
    live ``query_model`` (end-to-end latency with the real model)."""

    def __init__(self, texts: Sequence[str], vectors: np.ndarray, *, query_model: Any = None, name: str) -> None:
        self.row = {t: i for i, t in enumerate(texts)}
        self.vectors = vectors
        self.query_model = query_model
        self.query_vectors: dict[str, np.ndarray] = {}
        self.query_models: dict[str, Any] = {}  # label -> model, interleaved per query by _measure_neusym
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return DIM

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if all(t in self.row for t in texts):
            return self.vectors[[self.row[t] for t in texts]]
        # texts the benchmark did not generate: the engine's own reference phrases (governance's attribute-slot
        # descriptions, a constraint's targets), embedded once per process; a stable pseudo-random vector each
        return np.stack([self.vectors[self.row[t]] if t in self.row else _stable_vector(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        if self.query_model is not None:
            return np.asarray(self.query_model.embed_query(text), dtype=np.float32)
        return self.query_vectors[text]


def _governed() -> Any:
    """The whole governed write path a default (MiniLM) user runs, also on precomputed random vectors: the update
    pair model otherwise runs only on the vectors it was fitted on (``GovernancePolicy.update_model``)."""
    from neusym.governance.policy import GovernancePolicy

    return GovernancePolicy(update_model="on")


def _stable_vector(text: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def _queries(texts: list[str], vectors: np.ndarray, n: int, seed: int) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(texts), size=min(n, len(texts)), replace=False)
    qv = vectors[idx] + 0.35 * rng.standard_normal((len(idx), DIM)).astype(np.float32) / np.sqrt(DIM)
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    qs = [re.sub(r" \(note \d+\)$", "", texts[i]).replace(" the ", " a ") + "?" for i in idx]
    return qs, qv.astype(np.float32)


def query_model(spec: str) -> Any:
    """``minilm`` | ``minilm@THREADS`` | ``minilm-torch`` -> a loaded embedder."""
    name, _, threads = spec.partition("@")
    if name == "minilm":
        from neusym.embeddings import MiniLMEmbedder

        model: Any = MiniLMEmbedder(num_threads=int(threads) if threads else None)
    elif name == "minilm-torch":
        from neusym.embeddings import SentenceTransformerEmbedder

        model = SentenceTransformerEmbedder(num_threads=int(threads) if threads else None)
    else:
        raise SystemExit(f"unknown embedder {spec!r} (minilm[@N] | minilm-torch[@N])")
    model.load()
    return model


class GcProbe:
    """Python garbage collections (generation, pause) while active, via ``gc.callbacks``: a full collection walks
    every container object the process holds, so at 100k memories it is a candidate for the search tail."""

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float, float]] = []  # (generation, start perf_counter, ms)
        self._t0 = 0.0

    def __enter__(self) -> GcProbe:
        gc.callbacks.append(self._cb)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._cb)

    def _cb(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            self.pauses.append((int(info["generation"]), self._t0, (time.perf_counter() - self._t0) * 1000))

    def summary(self, windows: list[tuple[float, float]], slow: set[int]) -> dict[str, Any]:
        """Collections per generation, their pauses, and how many of the ``slow`` query windows had one."""
        by_gen: dict[str, dict[str, float]] = {}
        for gen, _, ms in self.pauses:
            d = by_gen.setdefault(str(gen), {"n": 0, "total_ms": 0.0, "max_ms": 0.0})
            d["n"] += 1
            d["total_ms"] = round(d["total_ms"] + ms, 3)
            d["max_ms"] = round(max(d["max_ms"], ms), 3)
        hit = [i for i, (a, b) in enumerate(windows) if any(a <= t <= b for _, t, _ in self.pauses)]
        return {"by_generation": by_gen, "queries_with_gc": len(hit),
                "slow_queries_with_gc": len([i for i in hit if i in slow]), "slow_queries": len(slow),
                "tracked_objects": len(gc.get_objects()), "frozen": gc.get_freeze_count()}


def _lat(values: list[float]) -> dict[str, float]:
    return {"p50": round(pct(values, 50), 2), "p95": round(pct(values, 95), 2), "p99": round(pct(values, 99), 2)}


def _server_pid(mem: Any) -> int | None:
    emb = getattr(mem._engine.executor, "embedded", None)
    pid = getattr(emb, "server_pid", None)  # the redis-server itself (``process`` is its watchdog since round 3)
    if pid is not None:
        return int(pid)
    try:
        import json

        return int(json.loads((Path(mem.config.data_dir) / "falkordb.lock").read_text())["pid"])
    except Exception:  # noqa: BLE001 - best effort
        return None


# ---------------------------------------------------------------------------------------------------------- NeuSym
_ENTITY = re.compile(r"^(\S+) .* in (\S+) \(note \d+\)$")


def bulk_load(mem: Any, texts: list[str], emb: Any, batch: int) -> float:
    """Fill a store below the public API: graph create + derived-index apply, no extraction or governance.

    Used only to reach the large sizes for SEARCH measurements in reasonable time (the public ``add_batch`` is
    measured separately, and its cost is dominated by per-memory extraction, screening and dedup). Entities (the
    name and the place of each synthetic statement) are set directly so graph expansion has realistic work.
    Returns memories/s."""
    from neusym.record import MemoryRecord, Scope, Source

    scope = Scope(user_id="u0")
    t0 = time.perf_counter()
    for s in range(0, len(texts), batch):
        chunk = texts[s : s + batch]
        recs = []
        for t in chunk:
            m = _ENTITY.match(t)
            recs.append(MemoryRecord(content=t, scope=scope, entities=[m.group(1), m.group(2)] if m else [],
                                     source=Source(origin="import")))
        vecs = emb.embed_documents(chunk)
        with mem._engine.mutation(scope, in_process=True) as m:  # the one write path, minus governance
            created = mem._engine.store.create(recs, vecs)
            m.applied([{"nid": r.nid, "id": r.id, "seq": r.seq, "content": r.content,
                        "status": r.status.value, **r.scope.as_params(), "embedding": vecs[i]}
                       for i, r in enumerate(created)], [r.seq for r in created])
    return len(texts) / (time.perf_counter() - t0)


def bench_neusym(n: int, texts: list[str], emb: Any, queries: list[str], workdir: Path, *, faiss_kind: str,
                 batch: int, single: int, api_max: int, reuse: bool = False, gc_freeze: bool = False) -> dict[str, Any]:
    """``reuse``: ``workdir`` keeps the filled store between runs (``--store-dir``); a second run skips the fill
    and reports the fill numbers measured by the run that filled it (marked ``fill_from``)."""
    import json

    from neusym import NeuSymConfig, NeuSymMemory

    cfg = NeuSymConfig(data_dir=workdir, graph_name="scale", faiss_kind=faiss_kind)  # type: ignore[arg-type]
    marker = workdir / "filled.json"
    rss0 = rss_mb()
    if reuse and marker.exists():
        out = json.loads(marker.read_text())
        out["fill_from"] = out.get("fill_from") or out.get("filled_at")
        owner = _start_server(cfg, out)  # timed replay; the memory attaches to this server
        mem = NeuSymMemory(config=cfg, embedder=emb, governance=_governed())
        return _measure_neusym(mem, out, cfg, emb, queries, n, rss0, persist=True, owner=owner, gc_freeze=gc_freeze)
    mem = NeuSymMemory(config=cfg, embedder=emb, governance=_governed())
    out = {"system": "neusym", "size": n, "faiss_kind": faiss_kind}
    # single adds first (an empty-ish store), then the batched bulk fill
    t_single: list[float] = []
    for t in texts[:single]:
        t0 = time.perf_counter()
        mem.add(t, user_id="u0", infer=False)
        t_single.append(time.perf_counter() - t0)
    out["add_single_per_s"] = round(len(t_single) / sum(t_single), 1) if t_single else None
    out["add_single_ms"] = _lat([x * 1000 for x in t_single])
    fill = 0.0
    chunk_rates: list[float] = []
    api_end = min(n, max(api_max, single))
    for s in range(single, api_end, batch):
        items = texts[s : min(api_end, s + batch)]
        given = emb.embed_documents(items)  # the public precomputed-vector path: add_batch(vectors=...)
        c0 = time.perf_counter()
        mem.add_batch(items, user_id="u0", infer=False, vectors=given)
        spent = time.perf_counter() - c0
        fill += spent
        chunk_rates.append(len(items) / spent)
    out["add_batch_per_s"] = round((api_end - single) / fill, 1) if fill and api_end > single else None
    out["add_batch_last_chunks_per_s"] = round(float(np.median(chunk_rates[-5:])), 1) if chunk_rates else None
    out["api_added"] = api_end
    if api_end < n:  # the rest below the public API (see bulk_load), reported apart
        out["bulk_load_per_s"] = round(bulk_load(mem, texts[api_end:n], emb, batch), 1)
    mem._engine.derived.save()
    if faiss_kind == "auto" and mem._engine.derived.faiss.maybe_upgrade():
        mem._engine.derived.save()
    out["faiss_structure"] = mem._engine.derived.faiss.structure
    out["filled_at"] = time.strftime("%Y-%m-%d %H:%M")
    if reuse:
        marker.write_text(json.dumps(out))
    return _measure_neusym(mem, out, cfg, emb, queries, n, rss0, persist=reuse, gc_freeze=gc_freeze)


def _start_server(cfg: Any, out: dict[str, Any]) -> Any:
    """Start the embedded graph server on its own (timed: it replays its append-only file first)."""
    from neusym.symbolic.executors.embedded import EmbeddedFalkorDB

    server = EmbeddedFalkorDB(cfg.data_dir, appendfsync=cfg.appendfsync, start_timeout=3600)
    t0 = time.perf_counter()
    server.start()
    out["graph_server_start_s"] = round(time.perf_counter() - t0, 3)
    return server


def _measure_neusym(mem: Any, out: dict[str, Any], cfg: Any, emb: Any, queries: list[str], n: int, rss0: float,
                    *, persist: bool, owner: Any = None, gc_freeze: bool = False) -> dict[str, Any]:
    from neusym import NeuSymMemory
    from neusym.retrieval.recipes import get_recipe

    workdir = Path(cfg.data_dir)
    recipe = get_recipe("hybrid_graph")
    live = getattr(emb, "query_models", None) or {}
    models = list(live.items()) or [("precomputed", None)]
    for q in queries[:20]:  # warm-up
        for _, model in models:
            emb.query_model = model
            mem.search(q, user_id="u0", k=10, recipe=recipe, touch=False)
    if gc_freeze:
        gc.collect()
        gc.freeze()  # everything loaded so far leaves the collector's generations
    per: dict[str, dict[str, list[float]]] = {label: {k: [] for k in ("wall", "e", "s1", "s2", "alone")}
                                              for label, _ in models}
    windows: list[tuple[float, float]] = []
    with GcProbe() as probe:
        for i, q in enumerate(queries):
            for j in range(len(models)):  # rotate the order per query: no model always runs first
                label, model = models[(i + j) % len(models)]
                emb.query_model = model
                m = per[label]
                if model is not None:
                    t0 = time.perf_counter()
                    model.embed_query(q)
                    m["alone"].append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                mem.search(q, user_id="u0", k=10, recipe=recipe, touch=False)
                t1 = time.perf_counter()
                m["wall"].append((t1 - t0) * 1000)
                if label == models[0][0]:
                    windows.append((t0, t1))
                lt = mem.admin.last_timings
                m["e"].append(lt.embed_ms)
                m["s1"].append(lt.stage1_ms)
                m["s2"].append(lt.stage2_ms)
    emb.query_model = models[0][1]
    if gc_freeze:
        gc.unfreeze()
    first = per[models[0][0]]
    wall, e, s1, s2 = first["wall"], first["e"], first["s1"], first["s2"]
    out["search_ms"] = _lat(wall)
    out["embed_ms"] = _lat(e)
    out["stage1_ms"] = _lat(s1)
    out["stage2_ms"] = _lat(s2)
    out["stages12_ms"] = _lat([a + b for a, b in zip(s1, s2, strict=True)])
    slow_cut = pct(wall, 95)
    out["gc"] = probe.summary(windows, {i for i, w in enumerate(wall) if w >= slow_cut})
    out["gc_freeze"] = gc_freeze
    if models[0][1] is not None:
        out["query_models"] = {}
        for label, m in per.items():
            row = {"search_ms": _lat(m["wall"]), "embed_in_search_ms": _lat(m["e"]), "embed_alone_ms": _lat(m["alone"]),
                   "stages12_ms": _lat([a + b for a, b in zip(m["s1"], m["s2"], strict=True)])}
            row["search_over_embed_alone"] = {q: round(row["search_ms"][q] / row["embed_alone_ms"][q], 2)
                                              for q in ("p50", "p95")}
            out["query_models"][label] = row
        out["embed_alone_ms"] = out["query_models"][models[0][0]]["embed_alone_ms"]
    out["rss_mb"] = round(rss_mb() - rss0, 1)
    pid = _server_pid(mem)
    out["graph_server_rss_mb"] = round(pid_rss_mb(pid), 1) if pid else None
    mem.close()
    if owner is not None:  # a server started before the memory outlives it: stop it so the reopen below is cold
        owner.stop()
    gc.collect()
    out["disk_bytes_per_memory"] = round(dir_size(workdir) / n, 1)
    # Re-open: the embedded graph server replays its append-only file first (timed on its own, with a timeout long
    # enough for big stores), then NeuSym loads FAISS + BM25 and checks the graph's write sequence.
    server = _start_server(cfg, out)
    try:
        t0 = time.perf_counter()
        mem = NeuSymMemory(config=cfg, embedder=emb, governance=_governed())
        mem.search(queries[0], user_id="u0", k=10, touch=False)
        out["open_s"] = round(time.perf_counter() - t0, 3)
        mem.close()
        if persist:  # rebuild into a copy so the kept store keeps its saved indexes
            backup = Path(str(cfg.index_dir) + ".kept")
            shutil.rmtree(backup, ignore_errors=True)
            shutil.copytree(cfg.index_dir, backup)
        shutil.rmtree(cfg.index_dir, ignore_errors=True)  # lose the derived indexes: rebuilt from the graph
        t0 = time.perf_counter()
        mem = NeuSymMemory(config=cfg, embedder=emb, governance=_governed())
        out["catch_up_s"] = round(time.perf_counter() - t0, 3)
        mem.close()
        if persist:
            shutil.rmtree(cfg.index_dir, ignore_errors=True)
            backup.rename(cfg.index_dir)
    finally:
        server.stop()
    return out


# ---------------------------------------------------------------------------------------------------------- baselines
def bench_langchain(n: int, texts: list[str], emb: Any, queries: list[str], workdir: Path, *,
                    batch: int, single: int) -> dict[str, Any]:
    from langchain_community.vectorstores import FAISS
    from langchain_core.embeddings import Embeddings

    class _Emb(Embeddings):
        def embed_documents(self, t: list[str]) -> list[list[float]]:
            return emb.embed_documents(t).tolist()  # type: ignore[no-any-return]

        def embed_query(self, t: str) -> list[float]:
            return emb.embed_query(t).tolist()  # type: ignore[no-any-return]

    rss0 = rss_mb()
    out: dict[str, Any] = {"system": "langchain_faiss", "size": n}
    lc = _Emb()
    vs = FAISS.from_texts(texts[:1], lc, metadatas=[{"user_id": "u0"}])
    t_single = []
    for t in texts[1:single]:
        t0 = time.perf_counter()
        vs.add_texts([t], metadatas=[{"user_id": "u0"}])
        t_single.append(time.perf_counter() - t0)
    out["add_single_per_s"] = round(len(t_single) / sum(t_single), 1) if t_single else None
    t0 = time.perf_counter()
    for s in range(single, n, batch):
        items = texts[s : min(n, s + batch)]
        vs.add_texts(items, metadatas=[{"user_id": "u0"}] * len(items))
    fill = time.perf_counter() - t0
    out["add_batch_per_s"] = round((n - single) / fill, 1) if fill else None
    for q in queries[:20]:
        vs.similarity_search(q, k=10)
    wall = []
    for q in queries:
        t0 = time.perf_counter()
        vs.similarity_search(q, k=10)
        wall.append((time.perf_counter() - t0) * 1000)
    out["search_ms"] = _lat(wall)
    out["rss_mb"] = round(rss_mb() - rss0, 1)
    path = workdir / "lc"
    vs.save_local(str(path))
    out["disk_bytes_per_memory"] = round(dir_size(path) / n, 1)
    del vs
    t0 = time.perf_counter()
    FAISS.load_local(str(path), lc, allow_dangerous_deserialization=True)
    out["open_s"] = round(time.perf_counter() - t0, 3)
    return out


def bench_mem0(n: int, texts: list[str], emb: Any, queries: list[str], workdir: Path, *,
               single: int) -> dict[str, Any]:
    os.environ["MEM0_TELEMETRY"] = "False"
    from mem0 import Memory

    class _Mem0Emb:  # mem0's embedder interface, backed by the same vectors / model as NeuSym's run
        config = None

        def embed(self, text: str, memory_action: str | None = None) -> list[float]:
            if memory_action == "search":
                return emb.embed_query(text).tolist()  # type: ignore[no-any-return]
            return emb.embed_documents([text])[0].tolist()  # type: ignore[no-any-return]

        def embed_batch(self, items: list[str], memory_action: str = "add") -> list[list[float]]:
            return emb.embed_documents(items).tolist()  # type: ignore[no-any-return]

    rss0 = rss_mb()
    m = Memory.from_config({
        "vector_store": {"provider": "faiss", "config": {"collection_name": "scale", "path": str(workdir / "m0"),
                                                         "embedding_model_dims": DIM, "distance_strategy": "cosine"}},
        "embedder": {"provider": "huggingface", "config": {"huggingface_base_url": "http://127.0.0.1:9/v1",
                                                           "embedding_dims": DIM}},
        "llm": {"provider": "openai", "config": {"api_key": "unused-offline",
                                                 "openai_base_url": "http://127.0.0.1:9/v1"}},
        "history_db_path": str(workdir / "m0.db"),
    })
    m.embedding_model = _Mem0Emb()
    out: dict[str, Any] = {"system": "mem0_oss", "size": n}
    times = []
    for t in texts[:n]:
        t0 = time.perf_counter()
        m.add([{"role": "user", "content": t}], user_id="u0", infer=False)
        times.append(time.perf_counter() - t0)
    out["add_single_per_s"] = round(min(single, n) / sum(times[:single]), 1)
    out["add_single_last_per_s"] = round(min(single, n) / sum(times[-single:]), 1)
    out["add_batch_per_s"] = None  # mem0 has no batch add; a message list is still one embed + insert each
    out["add_total_per_s"] = round(n / sum(times), 1)
    for q in queries[:20]:
        m.search(q, filters={"user_id": "u0"}, top_k=10, threshold=0.0)
    wall = []
    for q in queries:
        t0 = time.perf_counter()
        m.search(q, filters={"user_id": "u0"}, top_k=10, threshold=0.0)
        wall.append((time.perf_counter() - t0) * 1000)
    out["search_ms"] = _lat(wall)
    out["rss_mb"] = round(rss_mb() - rss0, 1)
    out["disk_bytes_per_memory"] = round((dir_size(workdir / "m0") + os.path.getsize(workdir / "m0.db")) / n, 1)
    return out


# ---------------------------------------------------------------------------------------------------------- raw model
def raw_minilm(model: Any, texts: list[str], n_queries: int = 100) -> dict[str, Any]:
    sample = texts[:2000]
    model.embed_documents(sample[:64])
    t0 = time.perf_counter()
    model.embed_documents(sample)
    docs_per_s = len(sample) / (time.perf_counter() - t0)
    qs = []
    for t in texts[:n_queries]:
        t0 = time.perf_counter()
        model.embed_query(t)
        qs.append((time.perf_counter() - t0) * 1000)
    return {"encode_batch_per_s": round(docs_per_s, 1), "query_ms": _lat(qs)}


def extraction_cost(texts: list[str]) -> dict[str, float]:
    from neusym.extraction import RuleExtractor

    ex = RuleExtractor()
    sample = texts[:2000]
    t0 = time.perf_counter()
    for t in sample:
        ex.extract(t)
    ms = (time.perf_counter() - t0) * 1000 / len(sample)
    return {"rule_extraction_ms_per_memory": round(ms, 3), "max_per_s": round(1000 / ms, 1)}


# ---------------------------------------------------------------------------------------------------------- run
def run(*, sizes: Sequence[int], minilm_sizes: Sequence[int], out_dir: Path | None, queries: int = 200,
        batch: int = 1000, single: int = 200, mem0_max: int = 10_000, minilm_encode_max: int = 10_000,
        hnsw_from: int = 1_000_000, systems: Sequence[str] = ("neusym", "langchain", "mem0"), api_max: int = 10_000,
        png: bool = True, store_dir: Path | None = None, embedder: str = "minilm",
        compare_embedders: Sequence[str] = (), gc_freeze: bool = False) -> dict[str, Any]:
    quiet_logs()
    biggest = max([*sizes, *minilm_sizes])
    texts = synthetic_texts(biggest)
    vectors = random_unit(biggest, seed=11)
    report: dict[str, Any] = {"benchmark": "scale", "machine": machine_info("benchmarks.scale"), "runs": [], "notes": []}
    report["extraction"] = extraction_cost(texts)
    model: Any = None
    query_models: dict[str, Any] = {}
    if minilm_sizes:
        for spec in dict.fromkeys([embedder, *compare_embedders]):
            query_models[spec] = query_model(spec)
        model = query_models[embedder]
        report["query_embedders"] = {spec: m.name for spec, m in query_models.items()}
        report["raw_minilm"] = raw_minilm(model, texts)
        if len(query_models) > 1:
            report["raw_query_models"] = {spec: raw_minilm(m, texts) for spec, m in query_models.items()}
    plan = [("precomputed", n) for n in sizes] + [("minilm", n) for n in minilm_sizes]
    for mode, n in plan:
        qs, qv = _queries(texts[:n], vectors[:n], queries, seed=n)
        if mode == "precomputed":
            emb = LookupEmbedder(texts[:n], vectors[:n], name=f"precomputed-random-{DIM}")
            emb.query_vectors = dict(zip(qs, qv, strict=True))
        else:
            vecs = vectors[:n].copy()
            encoded = min(n, minilm_encode_max)
            t0 = time.perf_counter()
            vecs[:encoded] = model.embed_documents(texts[:encoded])
            report.setdefault("minilm_encode", {})[str(n)] = round(encoded / (time.perf_counter() - t0), 1)
            emb = LookupEmbedder(texts[:n], vecs, query_model=model, name=f"minilm+lookup-{DIM}")
            emb.query_models = query_models
        kind = "hnsw" if n >= hnsw_from else "auto"
        for system in systems:
            if system == "mem0" and n > mem0_max:
                continue
            keep = store_dir is not None and system == "neusym"
            work = (store_dir / f"neusym-{mode}-{n}" if keep and store_dir is not None
                    else Path(tempfile.mkdtemp(prefix=f"neusym-scale-{system}-")))
            work.mkdir(parents=True, exist_ok=True)
            try:
                gc.collect()
                if system == "neusym":
                    res = bench_neusym(n, texts[:n], emb, qs, work, faiss_kind=kind, batch=batch, single=single,
                                       api_max=api_max, reuse=keep, gc_freeze=gc_freeze)
                elif system == "langchain":
                    res = bench_langchain(n, texts[:n], emb, qs, work, batch=batch, single=single)
                else:
                    res = bench_mem0(n, texts[:n], emb, qs, work, single=single)
            except Exception as err:  # noqa: BLE001 - report and go on with the other systems
                report["notes"].append(f"{system} at {n} ({mode}) failed: {type(err).__name__}: {err}")
                continue
            finally:
                if not keep:
                    shutil.rmtree(work, ignore_errors=True)
            res["mode"] = mode
            report["runs"].append(res)
            print(f"{mode:11s} {system:16s} n={n:>8d} add1 {res.get('add_single_per_s')}/s "
                  f"batch {res.get('add_batch_per_s')}/s search p50/p95 {res['search_ms']['p50']}/"
                  f"{res['search_ms']['p95']} ms", file=sys.stderr)
    # the add-throughput ratio against raw MiniLM, end to end (documents encoded inside add_batch)
    if model is not None and "neusym" in systems:
        m = min(minilm_encode_max, min(minilm_sizes))
        ratio = _minilm_add_ratio(model, texts[:m], batch)
        report["minilm_add"] = ratio
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        write_json(out_dir / "scale.json", report)
        (out_dir / "scale.md").write_text(markdown(report))
        if png:
            plot(report, out_dir / "scale.png")
    return report


def _minilm_add_ratio(model: Any, texts: list[str], batch: int) -> dict[str, Any]:
    """LLM-free add with the real model in the loop vs the raw model encoding the same texts, back to back."""
    from neusym import NeuSymConfig, NeuSymMemory

    work = Path(tempfile.mkdtemp(prefix="neusym-scale-e2e-"))
    try:
        t0 = time.perf_counter()
        model.embed_documents(texts)
        raw = len(texts) / (time.perf_counter() - t0)
        mem = NeuSymMemory(config=NeuSymConfig(data_dir=work, graph_name="e2e"), embedder=model)
        t0 = time.perf_counter()
        for s in range(0, len(texts), batch):
            mem.add_batch(texts[s : s + batch], user_id="u0", infer=False)
        add = len(texts) / (time.perf_counter() - t0)
        mem.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"n": len(texts), "raw_encode_per_s": round(raw, 1), "add_batch_per_s": round(add, 1),
            "ratio": round(add / raw, 3)}


# ---------------------------------------------------------------------------------------------------------- output
def markdown(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [f"Scale, machine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB; {m['date']}; `{m['command']}`.",
             "", "| mode | system | memories | add single /s | add batch /s | bulk load /s | search p50 | p95 | p99 ms | "
             "embed p95 | stage1 p95 | stage2 p95 | stages 1+2 p95 ms | RSS MB (+server) | disk B/mem | server replay s "
             "| open s | catch-up s |", "|---|---|---:|" + "---:|" * 15]
    for r in report["runs"]:
        s = r["search_ms"]

        def g(key: str, sub: str = "p95", r: dict[str, Any] = r) -> str:
            v = r.get(key)
            return f"{v[sub]:.2f}" if isinstance(v, dict) else "-"
        rss = f"{r.get('rss_mb')}" + (f" (+{r['graph_server_rss_mb']})" if r.get("graph_server_rss_mb") else "")
        lines.append(f"| {r['mode']} | {r['system']} | {r['size']:,} | {r.get('add_single_per_s') or '-'} | "
                     f"{r.get('add_batch_per_s') or '-'} | {r.get('bulk_load_per_s') or '-'} | {s['p50']:.2f} | {s['p95']:.2f} | {s['p99']:.2f} | "
                     f"{g('embed_ms')} | {g('stage1_ms')} | {g('stage2_ms')} | {g('stages12_ms')} | {rss} | "
                     f"{r.get('disk_bytes_per_memory')} | {r.get('graph_server_start_s', '-')} | {r.get('open_s', '-')} | "
                     f"{r.get('catch_up_s', '-')} |")
    for r in report["runs"]:
        for label, qm in (r.get("query_models") or {}).items():
            lines.append(f"Query model {label} ({report.get('query_embedders', {}).get(label, label)}) at "
                         f"{r['size']:,}: search p50/p95 {qm['search_ms']['p50']}/{qm['search_ms']['p95']} ms; "
                         f"embedder alone p50/p95 {qm['embed_alone_ms']['p50']}/{qm['embed_alone_ms']['p95']} ms; "
                         f"stages 1+2 p95 {qm['stages12_ms']['p95']} ms; search/embedder-alone "
                         f"{qm['search_over_embed_alone']['p50']}x (p50), {qm['search_over_embed_alone']['p95']}x (p95).")
        g = r.get("gc")
        if g:
            gens = ", ".join(f"gen{k}: {v['n']} (max {v['max_ms']} ms)" for k, v in sorted(g["by_generation"].items()))
            lines.append(f"GC during the {r['mode']} {r['system']} {r['size']:,} query loop"
                         f"{' (gc.freeze after load)' if r.get('gc_freeze') else ''}: {gens or 'none'}; "
                         f"{g['slow_queries_with_gc']} of the {g['slow_queries']} slowest (>= p95) queries overlapped "
                         f"a collection; {g['tracked_objects']:,} tracked objects.")
    raw = report.get("raw_minilm")
    if raw:
        lines += ["", f"Raw MiniLM in the same run: batch encode {raw['encode_batch_per_s']} sentences/s; one query "
                  f"p50 {raw['query_ms']['p50']} ms / p95 {raw['query_ms']['p95']} ms."]
    if report.get("minilm_add"):
        a = report["minilm_add"]
        lines.append(f"LLM-free add with MiniLM in the loop ({a['n']:,} memories, add_batch): {a['add_batch_per_s']}/s "
                     f"vs raw encode {a['raw_encode_per_s']}/s = {a['ratio']}x.")
    ex = report["extraction"]
    lines.append(f"Rule extraction (runs on every add, also with infer=False, for graph links): "
                 f"{ex['rule_extraction_ms_per_memory']} ms/memory (caps add at {ex['max_per_s']}/s on one core).")
    lines += [f"Note: {n}" for n in report.get("notes", [])]
    return "\n".join(lines) + "\n"


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6))
    runs = report["runs"]
    series: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in runs:
        series.setdefault((r["mode"], r["system"]), []).append(r)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, ((mode, system), rs) in enumerate(sorted(series.items())):
        rs = sorted(rs, key=lambda r: r["size"])
        xs = [r["size"] for r in rs]
        label = f"{system} ({mode})"
        col = colors[i % len(colors)]
        for q, style in (("p50", "-"), ("p95", "--"), ("p99", ":")):
            axes[0].plot(xs, [r["search_ms"][q] for r in rs], style, marker="o", color=col,
                         label=f"{label} {q}" if q == "p50" else None)
        if system == "neusym":
            axes[1].plot(xs, [r["stage1_ms"]["p95"] for r in rs], "-", marker="s", label=f"stage 1 p95 ({mode})")
            axes[1].plot(xs, [r["stage2_ms"]["p95"] for r in rs], "--", marker="s", label=f"stage 2 p95 ({mode})")
            axes[1].plot(xs, [r["embed_ms"]["p95"] for r in rs], ":", marker="s", label=f"query embed p95 ({mode})")
        for key, style in (("add_batch_per_s", "-"), ("add_single_per_s", "--")):
            ys = [r.get(key) for r in rs]
            if any(y for y in ys):
                axes[2].plot([x for x, y in zip(xs, ys, strict=True) if y], [y for y in ys if y], style, marker="o",
                             color=col, label=f"{label} {key.split('_')[1]}")
    axes[0].set_title("search latency, end to end (solid p50, dashed p95, dotted p99)")
    axes[0].set_ylabel("ms")
    axes[1].set_title("NeuSym per stage (p95)")
    axes[1].set_ylabel("ms")
    axes[2].set_title("add throughput")
    axes[2].set_ylabel("memories / s")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("memories in store")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=6)
    fig.suptitle(f"NeuSym scale ({report['machine']['cores']} cores, {report['machine']['date']})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000", help="precomputed-vector store sizes")
    ap.add_argument("--minilm-sizes", default="10000", help="store sizes with live MiniLM queries ('' = none)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--single", type=int, default=200, help="single adds measured at the start of each fill")
    ap.add_argument("--mem0-max", type=int, default=10_000)
    ap.add_argument("--minilm-encode-max", type=int, default=10_000)
    ap.add_argument("--hnsw-from", type=int, default=1_000_000, help="store size from which FAISS is HNSW")
    ap.add_argument("--systems", default="neusym,langchain,mem0")
    ap.add_argument("--api-max", type=int, default=10_000,
                    help="memories added through the public add/add_batch per store; the rest is bulk-loaded")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    ap.add_argument("--no-png", action="store_true")
    ap.add_argument("--embedder", default="minilm",
                    help="live query model: minilm (default, onnxruntime), minilm@N (N threads), minilm-torch")
    ap.add_argument("--compare-embedders", default="",
                    help="more query models interleaved per query on the same store, e.g. minilm@1,minilm-torch")
    ap.add_argument("--gc-freeze", action="store_true", help="gc.freeze() after the store is loaded")
    ap.add_argument("--store-dir", type=Path, default=None,
                    help="keep NeuSym's filled stores here; a later run with the same sizes skips the fill")
    a = ap.parse_args(argv)

    def ints(s: str) -> list[int]:
        return [int(x) for x in s.split(",") if x.strip()]

    report = run(sizes=ints(a.sizes), minilm_sizes=ints(a.minilm_sizes), out_dir=a.out, queries=a.queries,
                 batch=a.batch, single=a.single, mem0_max=a.mem0_max, minilm_encode_max=a.minilm_encode_max,
                 hnsw_from=a.hnsw_from, systems=[s for s in a.systems.split(",") if s], api_max=a.api_max,
                 png=not a.no_png, store_dir=a.store_dir, embedder=a.embedder,
                 compare_embedders=[x for x in a.compare_embedders.split(",") if x], gc_freeze=a.gc_freeze)
    print(markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
