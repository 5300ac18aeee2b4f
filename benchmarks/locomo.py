"""LoCoMo evidence retrieval: NeuSym (every recipe = the ablation) against baselines, in ONE run on ONE embedder.

    python -m benchmarks.locomo ../shared/data/locomo/locomo_dev.json --out benchmarks/results

Each conversation is its own scope (``user_id`` = sample id, ``session_id`` per LoCoMo session). Every dialog turn
becomes one memory, LLM-free (``infer=False``): content ``"Speaker: text"`` plus ``[image: caption]`` when the turn
shared a picture, the session date/time as event time (``valid_from``), the dia_id as ``source.ref``. For every
question of categories 1-4 (5 is reported apart) each system returns its top 50 and we score evidence recall
R@1/5/10/25/50 (mean over questions of |evidence in top k| / |evidence|) and NDCG@10 (binary relevance).

Baselines index exactly the same strings with exactly the same vectors (documents are encoded once and shared):
dense-only FAISS, BM25-only (bm25s), RRF of both (k=60), LangChain's community ``FAISS`` vector store retriever, and
mem0 OSS 2.2.1 in its LLM-free mode (``infer=False``, FAISS store, the same local MiniLM through mem0's huggingface
embedder). Latency is the median wall time of one search call with the query vector already computed (every system gets the
same cached query vectors); one live MiniLM query embedding is measured apart and reported next to it.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import build_embedder, machine_info, pct, quiet_logs, write_json

KS = (1, 5, 10, 25, 50)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_EVIDENCE = re.compile(r"D\d+:\d+")
_SESSION = re.compile(r"session_(\d+)$")

# The NeuSym ablation, in the order the report shows it. Each entry is (label, recipe name, config changes).
ABLATION: list[tuple[str, str, dict[str, Any]]] = [
    ("neusym: dense only", "dense_only", {}),
    ("neusym: BM25 only (session context)", "lexical_only", {}),
    ("neusym: stage 1, RRF fusion", "hybrid_rrf", {}),
    ("neusym: stage 1 (linear fusion)", "hybrid", {}),
    ("neusym: + symbolic rescoring", "hybrid_symbolic", {}),
    ("neusym: + graph expansion", "hybrid_graph", {"neighbours": False, "temporal": False}),
    ("neusym: + conversation neighbours", "hybrid_graph", {"temporal": False}),
    ("neusym: + temporal = full (default)", "hybrid_graph", {}),
]
BASELINES = ("dense (FAISS)", "BM25 (bm25s)", "RRF (dense+BM25)", "LangChain FAISS", "mem0 OSS (infer=False)")


# ---------------------------------------------------------------------------------------------------------- data
@dataclass
class Turn:
    conv: str
    ref: str
    speaker: str
    text: str  # what the speaker said (+ image caption), without the speaker prefix
    session: int
    when: datetime

    @property
    def content(self) -> str:
        return f"{self.speaker}: {self.text}"


@dataclass
class Question:
    conv: str
    question: str
    answer: str
    category: int
    evidence: list[str]


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def parse_when(text: str) -> datetime:
    """LoCoMo session stamps look like ``1:56 pm on 8 May, 2023``."""
    return datetime.strptime(text.strip().upper().replace("  ", " "), "%I:%M %p ON %d %B, %Y").replace(tzinfo=UTC)


def load_locomo(path: Path, *, limit_convs: int | None = None, limit_questions: int | None = None) -> list[Conversation]:
    data = json.loads(Path(path).read_text())
    convs: list[Conversation] = []
    for rec in data[:limit_convs]:
        sid = str(rec["sample_id"])
        c = Conversation(sid)
        conv = rec["conversation"]
        sessions = sorted((int(m.group(1)), k) for k in conv if (m := _SESSION.match(k)))
        for n, key in sessions:
            if not conv.get(key):
                continue
            when = parse_when(conv[f"{key}_date_time"])
            for i, t in enumerate(conv[key]):
                text = str(t.get("text") or "").strip()
                cap = t.get("blip_caption")
                if cap:
                    text = f"{text} [image: {cap}]".strip()
                if not text:
                    continue
                c.turns.append(Turn(sid, str(t["dia_id"]), str(t["speaker"]), text, n, when + timedelta(seconds=i)))
        for q in rec.get("qa", []):
            ev = list(dict.fromkeys(e for s in q.get("evidence") or [] for e in _EVIDENCE.findall(str(s))))
            if not ev:
                continue
            c.questions.append(Question(sid, str(q["question"]), str(q.get("answer", q.get("adversarial_answer", ""))),
                                        int(q["category"]), ev))
        if limit_questions is not None:
            c.questions = c.questions[:limit_questions]
        convs.append(c)
    return convs


# ---------------------------------------------------------------------------------------------------------- metrics
def score(ranked: Sequence[str], evidence: Sequence[str]) -> dict[str, float]:
    """R@k for KS and NDCG@10 with binary relevance (duplicates in ``ranked`` count once, at their first rank)."""
    seen: list[str] = list(dict.fromkeys(ranked))
    ev = set(evidence)
    out = {f"R@{k}": len(ev.intersection(seen[:k])) / len(ev) for k in KS}
    dcg = sum(1.0 / math.log2(i + 2) for i, r in enumerate(seen[:10]) if r in ev)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(len(ev), 10)))
    out["NDCG@10"] = dcg / idcg if idcg else 0.0
    return out


def aggregate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Means (in %) over categories 1-4, per category, and category 5 apart."""
    def mean(sel: list[dict[str, Any]]) -> dict[str, float]:
        if not sel:
            return {}
        return {m: round(100.0 * statistics.fmean(r["scores"][m] for r in sel), 2)
                for m in [*(f"R@{k}" for k in KS), "NDCG@10"]} | {"n": len(sel)}

    main = [r for r in rows if r["category"] in (1, 2, 3, 4)]
    lat = [r["ms"] for r in rows]
    return {
        "overall": mean(main),
        "per_category": {str(c): mean([r for r in rows if r["category"] == c]) for c in (1, 2, 3, 4)},
        "category_5": mean([r for r in rows if r["category"] == 5]),
        "latency_ms": {"p50": round(pct(lat, 50), 2), "p95": round(pct(lat, 95), 2)},
    }


# ---------------------------------------------------------------------------------------------------------- systems
SearchFn = Callable[[Conversation, str, int], list[str]]


def _dense_system(convs: list[Conversation], emb: Any) -> SearchFn:
    import faiss

    idx: dict[str, tuple[Any, list[str]]] = {}
    for c in convs:
        vecs = emb.embed_documents([t.content for t in c.turns])
        ix = faiss.IndexFlatIP(vecs.shape[1])
        ix.add(np.ascontiguousarray(vecs, dtype=np.float32))
        idx[c.sample_id] = (ix, [t.ref for t in c.turns])

    def search(c: Conversation, q: str, k: int) -> list[str]:
        ix, refs = idx[c.sample_id]
        _, ids = ix.search(emb.embed_query(q).reshape(1, -1), min(k, len(refs)))
        return [refs[i] for i in ids[0] if i >= 0]

    return search


def _bm25_system(convs: list[Conversation]) -> SearchFn:
    import bm25s

    idx: dict[str, tuple[Any, list[str]]] = {}
    for c in convs:
        model = bm25s.BM25()
        model.index(bm25s.tokenize([t.content for t in c.turns], stopwords="en", show_progress=False),
                    show_progress=False)
        idx[c.sample_id] = (model, [t.ref for t in c.turns])

    def search(c: Conversation, q: str, k: int) -> list[str]:
        model, refs = idx[c.sample_id]
        toks = bm25s.tokenize([q], stopwords="en", show_progress=False)
        if not toks.vocab:  # only stopwords
            return []
        res, scores = model.retrieve(toks, k=min(k, len(refs)), show_progress=False)
        return [refs[int(i)] for i, s in zip(res[0], scores[0], strict=True) if s > 0]

    return search


def _rrf_system(dense: SearchFn, bm25: SearchFn, depth: int = 50, rrf_k: int = 60) -> SearchFn:
    def search(c: Conversation, q: str, k: int) -> list[str]:
        fused: dict[str, float] = {}
        for ranked in (dense(c, q, depth), bm25(c, q, depth)):
            for r, ref in enumerate(ranked):
                fused[ref] = fused.get(ref, 0.0) + 1.0 / (rrf_k + 1 + r)
        return sorted(fused, key=lambda x: -fused[x])[:k]

    return search


def _langchain_system(convs: list[Conversation], emb: Any) -> SearchFn:
    from langchain_community.vectorstores import FAISS
    from langchain_core.embeddings import Embeddings

    class _Emb(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return emb.embed_documents(texts).tolist()  # type: ignore[no-any-return]

        def embed_query(self, text: str) -> list[float]:
            return emb.embed_query(text).tolist()  # type: ignore[no-any-return]

    stores = {c.sample_id: FAISS.from_texts([t.content for t in c.turns], _Emb(),
                                            metadatas=[{"ref": t.ref} for t in c.turns]) for c in convs}

    def search(c: Conversation, q: str, k: int) -> list[str]:
        docs = stores[c.sample_id].as_retriever(search_kwargs={"k": k}).invoke(q)
        return [d.metadata["ref"] for d in docs]

    return search


def _mem0_system(convs: list[Conversation], emb: Any, workdir: Path, stats: dict[str, Any]) -> SearchFn:
    """mem0 OSS, LLM-free: ``add(..., infer=False)`` stores each message verbatim, ``search`` is its own scoring.

    mem0 is configured with its huggingface embedder (the same local MiniLM files work offline, checked while
    building this harness); here its ``embedding_model`` is then pointed at this run's shared vectors so every
    system indexes identical vectors and the run does not encode 2,760 turns a second time. One collection per
    conversation: mem0's FAISS store filters by user_id after an only-2x over-fetch, which would cost it recall in a
    shared collection. The LLM entry is a placeholder mem0's constructor requires; with ``infer=False`` it is never
    called (its base URL is a closed local port, so an accidental call would fail, not reach a network)."""
    import os

    os.environ["MEM0_TELEMETRY"] = "False"
    from mem0 import Memory

    class _SharedEmb:
        def embed(self, text: str, memory_action: str | None = None) -> list[float]:
            if memory_action == "search":
                return emb.embed_query(text).tolist()  # type: ignore[no-any-return]
            return emb.embed_documents([text])[0].tolist()  # type: ignore[no-any-return]

        def embed_batch(self, texts: list[str], memory_action: str = "add") -> list[list[float]]:
            return emb.embed_documents(texts).tolist()  # type: ignore[no-any-return]

    mems: dict[str, Any] = {}
    t_add, n_add = 0.0, 0
    for c in convs:
        cfg = {
            "vector_store": {"provider": "faiss", "config": {
                "collection_name": re.sub(r"\W", "_", c.sample_id), "path": str(workdir / "mem0" / c.sample_id),
                "embedding_model_dims": emb.dimension, "distance_strategy": "cosine"}},
            # base_url: construct without loading a second copy of the model; replaced by _SharedEmb below
            "embedder": {"provider": "huggingface", "config": {"huggingface_base_url": "http://127.0.0.1:9/v1",
                                                               "embedding_dims": emb.dimension}},
            "llm": {"provider": "openai", "config": {"api_key": "unused-offline",
                                                     "openai_base_url": "http://127.0.0.1:9/v1"}},
            "history_db_path": str(workdir / "mem0" / f"{c.sample_id}.db"),
        }
        m = Memory.from_config(cfg)
        m.embedding_model = _SharedEmb()
        t0 = time.perf_counter()
        for t in c.turns:
            m.add([{"role": "user", "content": t.content, "name": t.speaker}], user_id=c.sample_id,
                  metadata={"ref": t.ref}, infer=False)
        t_add += time.perf_counter() - t0
        n_add += len(c.turns)
        mems[c.sample_id] = m
    stats["mem0_add_per_s"] = round(n_add / t_add, 1) if t_add else None

    def search(c: Conversation, q: str, k: int) -> list[str]:
        res = mems[c.sample_id].search(q, filters={"user_id": c.sample_id}, top_k=k, threshold=0.0)
        return [(r.get("metadata") or {}).get("ref", "") for r in res.get("results", [])]

    return search


class NeuSymSystem:
    """One NeuSymMemory (embedded FalkorDB in a temp dir) holding every conversation, one scope each."""

    def __init__(self, convs: list[Conversation], emb: Any, workdir: Path) -> None:
        from neusym import NeuSymConfig, NeuSymMemory

        self.memory = NeuSymMemory(config=NeuSymConfig(data_dir=workdir / "neusym", graph_name="locomo",
                                                       appendfsync="everysec"), embedder=emb)
        self.stats: dict[str, Any] = {}
        t0 = time.perf_counter()
        stored = lost = 0
        for c in convs:
            for t in c.turns:
                res = self.memory.add(t.text, speaker=t.speaker, valid_from=t.when, ref=t.ref, user_id=c.sample_id,
                                      session_id=f"{c.sample_id}/S{t.session}", infer=False)
                stored += len(res)
                lost += 0 if res else 1
        dt = time.perf_counter() - t0
        self.stats.update({"turns": sum(len(c.turns) for c in convs), "stored": stored, "not_stored": lost,
                           "add_s": round(dt, 2), "add_per_s": round(stored / dt, 1) if dt else None})
        self.timings: dict[str, list[float]] = {}

    def system(self, label: str, recipe: str, changes: dict[str, Any]) -> SearchFn:
        from neusym.retrieval.recipes import get_recipe

        cfg = get_recipe(recipe).with_(**changes) if changes else get_recipe(recipe)
        stages = self.timings.setdefault(label, [])

        def search(c: Conversation, q: str, k: int) -> list[str]:
            res = self.memory.search(q, user_id=c.sample_id, k=k, recipe=cfg, touch=False)
            lt = self.memory.last_timings
            stages.append(lt.stage1_ms + lt.stage2_ms)
            return [r.memory.source.ref or "" for r in res]

        return search

    def close(self) -> None:
        self.memory.close()


# ---------------------------------------------------------------------------------------------------------- run
def evaluate(name: str, search: SearchFn, convs: list[Conversation], k: int = 50) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for c in convs:
        for q in c.questions:
            t0 = time.perf_counter()
            ranked = search(c, q.question, k)
            ms = (time.perf_counter() - t0) * 1000
            rows.append({"category": q.category, "scores": score(ranked, q.evidence), "ms": ms})
    out = aggregate(rows)
    out["system"] = name
    return out


def run(path: Path, *, out_dir: Path | None, embedder: str = "minilm", systems: Sequence[str] | None = None,
        limit_convs: int | None = None, limit_questions: int | None = None, png: bool = True) -> dict[str, Any]:
    quiet_logs()
    convs = load_locomo(path, limit_convs=limit_convs, limit_questions=limit_questions)
    emb = build_embedder(embedder, cache_queries=True)
    want = set(systems) if systems else {"dense", "bm25", "rrf", "langchain", "mem0", "neusym"}
    workdir = Path(tempfile.mkdtemp(prefix="neusym-locomo-"))
    report: dict[str, Any] = {
        "benchmark": "locomo", "machine": machine_info("benchmarks.locomo"), "input": str(path), "embedder": emb.name,
        "conversations": len(convs), "turns": sum(len(c.turns) for c in convs),
        "questions": {str(cat): sum(q.category == cat for c in convs for q in c.questions) for cat in range(1, 6)},
        "results": [], "ingest": {}, "notes": [],
    }
    t0 = time.perf_counter()
    emb.embed_documents([t.content for c in convs for t in c.turns])  # encode once, shared by every system
    report["ingest"]["encode_docs_per_s"] = round(report["turns"] / (time.perf_counter() - t0), 1)
    # Questions are encoded once too (batched; MiniLM is symmetric, embed_query == one-row embed_documents), so
    # latencies below exclude query embedding for EVERY system; its own cost is measured once and reported apart.
    questions = list(dict.fromkeys(q.question for c in convs for q in c.questions))
    emb.prime_queries(questions)
    report["query_embed_ms"] = emb.time_queries(questions[:60])
    try:
        fns: list[tuple[str, SearchFn]] = []
        dense = _dense_system(convs, emb)
        bm25 = _bm25_system(convs)
        if "dense" in want:
            fns.append((BASELINES[0], dense))
        if "bm25" in want:
            fns.append((BASELINES[1], bm25))
        if "rrf" in want:
            fns.append((BASELINES[2], _rrf_system(dense, bm25)))
        if "langchain" in want:
            fns.append((BASELINES[3], _langchain_system(convs, emb)))
        if "mem0" in want:
            try:
                fns.append((BASELINES[4], _mem0_system(convs, emb, workdir, report["ingest"])))
            except Exception as err:  # noqa: BLE001 - report why and go on
                report["notes"].append(f"mem0 left out: {type(err).__name__}: {err}")
        ns: NeuSymSystem | None = None
        if "neusym" in want:
            ns = NeuSymSystem(convs, emb, workdir)
            report["ingest"]["neusym"] = ns.stats
            for label, recipe, changes in ABLATION:
                fns.append((label, ns.system(label, recipe, changes)))
        for name, fn in fns:
            res = evaluate(name, fn, convs)
            if ns is not None and name in ns.timings:
                res["stages_ms_p50"] = round(pct(ns.timings[name], 50), 2)
            report["results"].append(res)
            print(f"{name:40s} R@5 {res['overall'].get('R@5', 0):5.1f}  R@10 {res['overall'].get('R@10', 0):5.1f}  "
                  f"p50 {res['latency_ms']['p50']:.1f} ms", file=sys.stderr)
        if ns is not None:
            ns.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        write_json(out_dir / "locomo.json", report)
        (out_dir / "locomo.md").write_text(markdown(report))
        if png:
            plot(report, out_dir / "locomo.png")
    return report


# ---------------------------------------------------------------------------------------------------------- output
def markdown(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [
        f"LoCoMo evidence retrieval, {report['conversations']} conversations / {report['turns']} turns, "
        f"{sum(int(v) for k, v in report['questions'].items() if k != '5')} questions (categories 1-4), "
        f"embedder {report['embedder']}. Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB; "
        f"{m['date']}; `{m['command']}`.",
        "",
        "| system | R@1 | R@5 | R@10 | R@25 | R@50 | NDCG@10 | cat1 R@10 | cat2 R@10 | cat3 R@10 | cat4 R@10 "
        "| cat5 R@10 | search p50 ms |",
        "|---|" + "---:|" * 12,
    ]
    qe = report.get("query_embed_ms") or {}
    for r in report["results"]:
        o, pc = r["overall"], r["per_category"]
        cells = [o.get(f"R@{k}", float("nan")) for k in KS] + [o.get("NDCG@10", float("nan"))]
        cells += [pc.get(str(c), {}).get("R@10", float("nan")) for c in (1, 2, 3, 4)]
        cells += [r["category_5"].get("R@10", float("nan"))]
        lines.append(f"| {r['system']} | " + " | ".join(f"{x:.1f}" for x in cells)
                     + f" | {r['latency_ms']['p50']:.1f} |")
    ing = report["ingest"]
    ns = ing.get("neusym") or {}
    lines += ["", f"Ingest: raw MiniLM batch encode {ing.get('encode_docs_per_s')} turns/s; NeuSym add (one call per "
              f"turn, infer=False) {ns.get('add_per_s')} turns/s, {ns.get('stored')}/{ns.get('turns')} stored; "
              f"mem0 add(infer=False) {ing.get('mem0_add_per_s')} turns/s."]
    lines.append(f"Search latencies exclude the query embedding (shared, precomputed for every system); one live "
                 f"{report['embedder']} query embedding costs p50 {qe.get('p50')} ms / p95 {qe.get('p95')} ms here.")
    lines += [f"Note: {n}" for n in report.get("notes", [])]
    return "\n".join(lines) + "\n"


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [("categories 1-4", "overall")] + [(f"cat {c}: {CATEGORIES[c]}", str(c)) for c in (1, 2, 3, 4)]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4.4), sharey=True)
    shown = [r for r in report["results"] if not r["system"].startswith("neusym:")
             or r["system"] in ("neusym: stage 1 (linear fusion)", "neusym: + symbolic rescoring",
                                "neusym: + temporal = full (default)")]
    for ax, (title, key) in zip(axes, panels, strict=True):
        for r in shown:
            data = r["overall"] if key == "overall" else r["per_category"].get(key, {})
            if not data:
                continue
            full = r["system"].startswith("neusym: + temporal")
            ax.plot(KS, [data[f"R@{k}"] for k in KS], marker="o", lw=2.6 if full else 1.3,
                    label=r["system"].replace(" = full (default)", " (full)"))
        ax.set_xscale("log")
        ax.set_xticks(KS, [str(k) for k in KS])
        ax.set_title(title)
        ax.set_xlabel("k")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("evidence recall@k (%)")
    axes[0].legend(fontsize=7, loc="lower right")
    fig.suptitle(f"LoCoMo evidence recall@k ({report['embedder']}, {report['machine']['date']})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.locomo", description=__doc__.split("\n")[0])
    ap.add_argument("path", type=Path, help="LoCoMo JSON (e.g. ../shared/data/locomo/locomo_dev.json)")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    ap.add_argument("--embedder", default="minilm", choices=["minilm", "minilm-torch", "hashing"])
    ap.add_argument("--systems", default="dense,bm25,rrf,langchain,mem0,neusym",
                    help="comma list of dense,bm25,rrf,langchain,mem0,neusym")
    ap.add_argument("--limit-convs", type=int, default=None)
    ap.add_argument("--limit-questions", type=int, default=None, help="per conversation")
    ap.add_argument("--no-png", action="store_true")
    a = ap.parse_args(argv)
    report = run(a.path, out_dir=a.out, embedder=a.embedder, systems=[s for s in a.systems.split(",") if s],
                 limit_convs=a.limit_convs, limit_questions=a.limit_questions, png=not a.no_png)
    print(markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
