"""LoCoMo evidence retrieval on two store shapes: NeuSym (ablation, cross-validation) against baselines, ONE run.

    python -m benchmarks.locomo ../shared/data/locomo/locomo_dev.json --store turns --out benchmarks/results
    python -m benchmarks.locomo ../shared/data/locomo/locomo_dev.json --store observations --out benchmarks/results

``--store turns``: every dialog turn is one memory (``add(text, speaker=..., valid_from=session time, ref=dia_id,
session_id=..., infer=False)``). ``--store observations``: every LoCoMo observation sentence is one memory, a
standalone fact with no speaker (``add(text, valid_from=session time, ref=key, session_id=..., infer=False)``).
Each conversation is its own scope (``user_id`` = sample id). Recall is defined on evidence dia_ids for both shapes
(:mod:`benchmarks.locomo_data`): categories 1-4 are the headline, category 5 is reported apart.

What one run reports (``benchmarks/results/locomo_<store>.{json,md,png}``):

1. every baseline and the NeuSym ablation (each row adds one stage-2 part), measured by the engine, with search
   latency and the stage-1 recall at the candidate depth (the share of evidence stage 2 can see at all);
2. leave-one-conversation-out cross-validation: for each conversation, the weights, the BM25 share of fusion and
   the candidate depth are tuned on the other four (offline re-scoring, :mod:`benchmarks.locomo_offline`) and the
   tuned config is run by the engine on the held-out one; the pooled held-out figure is the headline, the
   in-sample figures (shipped defaults, and tuned on all five) beside it;
3. each stage-2 component's effect: in-sample (the default with that component's weight at 0) and cross-validated
   (re-tuned on four with that component held at 0, measured on the fifth), overall and per category;
4. recall against candidate depth; how many evidence memories were stored but are not findable (expired or
   superseded at ingest); and the check that the offline re-scorer reproduces the engine's rankings.

Baselines index exactly the same strings with exactly the same vectors (documents are encoded once and shared).
Latency is the median wall time of one search call with the query vector already computed (every system gets the
same cached query vectors); one live query embedding is measured apart and reported next to it.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import locomo_offline as off
from benchmarks._common import build_embedder, machine_info, pct, quiet_logs, write_json
from benchmarks.locomo_baselines import (
    SearchFn,
    bm25_system,
    dense_system,
    langchain_system,
    mem0_system,
    rrf_system,
)
from benchmarks.locomo_data import (
    CATEGORIES,
    KS,
    STORES,
    Conversation,
    Doc,
    Question,
    aggregate,
    load_locomo,
    parse_when,
    score,
)
from neusym.retrieval.config import RetrievalConfig
from neusym.retrieval.recipes import get_recipe
from neusym.symbolic.scoring import COMPONENTS

__all__ = ["ABLATION", "BASELINES", "CATEGORIES", "KS", "load_locomo", "main", "parse_when", "run", "score"]


def _recipe(name: str, **changes: Any) -> RetrievalConfig:
    cfg = get_recipe(name)
    return cfg.with_(**changes) if changes else cfg


# The NeuSym ablation, in the order the report shows it: each row adds one part to the row above it.
ABLATION: list[tuple[str, RetrievalConfig]] = [
    ("neusym: dense only", _recipe("dense_only")),
    ("neusym: BM25 only", _recipe("lexical_only")),
    ("neusym: stage 1, RRF fusion", _recipe("hybrid_rrf")),
    ("neusym: stage 1 (linear fusion)", _recipe("hybrid")),
    ("neusym: + symbolic rescoring", _recipe("hybrid_symbolic").with_weights(distinct=0.0, contrast=0.0)),
    ("neusym: + pool geometry (distinct, contrast)", _recipe("hybrid_symbolic")),
    ("neusym: + graph expansion", _recipe("hybrid_graph", neighbours=False, temporal=False)),
    ("neusym: + conversation neighbours", _recipe("hybrid_graph", temporal=False)),
    ("neusym: + temporal = full (default)", _recipe("hybrid_graph")),
]
FULL = ABLATION[-1][0]
# Switches that change stage 1 itself (so the offline re-scorer cannot show them): the full recipe without each.
SWITCHES: list[tuple[str, RetrievalConfig]] = [
    ("neusym: full without session-context BM25", _recipe("hybrid_graph", lexical_context=False)),
    # the two changes of 2026-12-03, each undone alone (R@10 and latency of the same run, before/after)
    ("neusym: full without pool geometry", _recipe("hybrid_graph").with_weights(distinct=0.0, contrast=0.0)),
    ("neusym: full, one depth (50) for both shapes", _recipe("hybrid_graph", fact_candidates=None)),
]
BASELINES = ("dense (FAISS)", "BM25 (bm25s)", "RRF (dense+BM25)", "LangChain FAISS", "mem0 OSS (infer=False)")
# Settings the offline re-scorer is checked on besides the ablation rows (engine vs offline, same questions).
CHECKS: list[tuple[str, RetrievalConfig]] = [
    ("check: depth 30, BM25 share 0.8", _recipe("hybrid_graph", candidates=30, fact_candidates=30,
                                                 lexical_weight=0.8)),
    ("check: activation 0.2", _recipe("hybrid_graph").with_weights(activation=0.2)),
    ("check: activation 0.2, depth 100, BM25 share 0.45",
     _recipe("hybrid_graph", candidates=100, fact_candidates=50, lexical_weight=0.45).with_weights(activation=0.2)),
]
SEARCHABLE = ("active", "pending")  # what a default search returns (pending review: found, with a warning)
CAPTURE_DEPTH = 1000  # the capture's candidate depth: the whole scope of a LoCoMo conversation, so every offline
# depth is exact (each channel's full ranking is known)
DEPTHS = (10, 20, 30, 50, 75, 100, 150, 200)


# ---------------------------------------------------------------------------------------------------------- NeuSym
class NeuSymSystem:
    """One NeuSymMemory (embedded FalkorDB in a temp dir) holding every conversation, one scope each."""

    def __init__(self, convs: list[Conversation], store: str, emb: Any, workdir: Path) -> None:
        from neusym import NeuSymConfig, NeuSymMemory

        self.memory = NeuSymMemory(config=NeuSymConfig(data_dir=workdir / "neusym", graph_name="locomo",
                                                       appendfsync="everysec"), embedder=emb)
        self.store = store
        self.stats: dict[str, Any] = {}
        t0 = time.perf_counter()
        stored = lost = 0
        for c in convs:
            for d in c.docs(store):
                res = self.memory.add(d.text, speaker=d.speaker, valid_from=d.when, ref=d.key, user_id=c.sample_id,
                                      session_id=f"{c.sample_id}/S{d.session}", infer=False)
                stored += len(res)
                lost += 0 if res else 1
        dt = time.perf_counter() - t0
        self.stats.update({"memories": sum(len(c.docs(store)) for c in convs), "stored": stored,
                           "not_stored": lost, "add_s": round(dt, 2), "add_per_s": round(stored / dt, 1) if dt else None})
        self.timings: dict[str, list[float]] = {}

    def system(self, label: str, cfg: RetrievalConfig) -> SearchFn:
        stages = self.timings.setdefault(label, [])

        def search(conv: str, q: str, k: int) -> list[str]:
            res = self.memory.search(q, user_id=conv, k=k, recipe=cfg, touch=False)
            lt = self.memory.admin.last_timings
            stages.append(lt.stage1_ms + lt.stage2_ms)
            return [r.memory.source.ref or "" for r in res]

        return search

    def capture(self, questions: Sequence[Question], cfg: RetrievalConfig) -> list[off.CapturedQuestion]:
        """Every memory stage 2 scores for each question at ``cfg``'s depth, with its explanation, plus the stage-1
        candidates stage 2 filtered out (expired, ...): they take a place in the pool and lend their score to
        their conversation neighbours, so the offline re-scorer must see them too."""
        from neusym.record import Scope
        from neusym.retrieval.pipeline import stage1

        depth = max(cfg.depth_for(True), cfg.depth_for(False))
        k = min(1000, depth + (cfg.expand_limit + cfg.hop_limit if cfg.graph_expand else 0))
        out = []
        for n, q in enumerate(questions):
            if n and n % 100 == 0:
                print(f"  capture {n}/{len(questions)}", file=sys.stderr)
            res = self.memory.search(q.question, user_id=q.conv, k=k, recipe=cfg, touch=False)
            best = float(self.memory.admin.last_timings.extra.get("best_lexical", 1.0))
            s1 = stage1(self.memory._engine.derived, q.question, self.memory.admin.embedder.embed_query(q.question),
                        Scope(user_id=q.conv), list(SEARCHABLE), cfg)
            scored = {r.memory.nid for r in res}
            phantoms = [off.PoolOnly(c.nid, c.dense, c.lex, c.drank, c.lrank) for c in s1.candidates
                        if c.nid not in scored]
            out.append(off.CapturedQuestion(best, [off.CaptureRow.of(r, r.memory.source.ref or "") for r in res],
                                            phantoms, complete=len(s1.candidates) < s1.depth))
        return out

    def vectors_of(self, conv: str) -> dict[int, np.ndarray]:
        """The stored vector of every memory of the scope, by nid (what stage 1's pool geometry reads)."""
        rows = self.memory.admin.cypher("MATCH (m:Memory) WHERE m.user_id = $u RETURN m.nid AS nid", {"u": conv},
                                  all_tenants=True, limit=1_000_000)
        faiss = self.memory._engine.derived.faiss
        nids = [int(r["nid"]) for r in rows if faiss.contains(int(r["nid"]))]
        if not nids:
            return {}
        vecs = faiss.reconstruct(np.asarray(nids, dtype=np.int64))
        return dict(zip(nids, vecs, strict=True))

    def next_of(self, conv: str) -> dict[int, list[int]]:
        """NEXT neighbours by nid (the conversation chain stage 2 reads for the neighbour component)."""
        rows = self.memory.admin.cypher("MATCH (a:Memory)-[:NEXT]->(b:Memory) WHERE a.user_id = $u "
                                  "RETURN a.nid AS a, b.nid AS b", {"u": conv}, all_tenants=True, limit=1_000_000)
        out: dict[int, list[int]] = {}
        for r in rows:
            out.setdefault(int(r["a"]), []).append(int(r["b"]))
            out.setdefault(int(r["b"]), []).append(int(r["a"]))
        return out

    def unfindable(self, convs: Sequence[Conversation], questions: Sequence[Question],
                   units: Sequence[Sequence[str]]) -> dict[str, Any]:
        """Evidence the store holds but no default search can return: every memory covering it was stored, then
        left the searchable set at ingest (expired TTL, superseded, quarantined). Not stored at all (a governance
        reject or merge) is counted apart. Pending review is searchable (returned with a warning)."""
        now = time.time()
        status: dict[tuple[str, str], str] = {}
        for c in convs:
            rows = self.memory.admin.cypher("MATCH (m:Memory) WHERE m.user_id = $u RETURN m.source_ref AS ref, "
                                      "m.status AS status, m.expires_at AS exp", {"u": c.sample_id},
                                      all_tenants=True, limit=1_000_000)
            for r in rows:
                s = str(r["status"])
                if s in SEARCHABLE and r["exp"] is not None and float(r["exp"]) <= now:
                    s = "expired"
                status[(c.sample_id, str(r["ref"]))] = s
        by_reason: dict[str, int] = {}
        memories: dict[str, int] = {}
        for s in status.values():
            memories[s] = memories.get(s, 0) + 1
        lost_q = 0
        n_units = 0
        conv_of = {c.sample_id: c for c in convs}
        for q, us in zip(questions, units, strict=True):
            if q.category not in (1, 2, 3, 4):
                continue
            docs = conv_of[q.conv].docs(self.store)
            q_lost = False
            for u in us:
                n_units += 1
                states = [status.get((q.conv, d.key), "not stored") for d in docs if u in d.refs]
                if any(st in SEARCHABLE for st in states):
                    continue
                reason = "expired" if "expired" in states else (states[0] if states else "not stored")
                by_reason[reason] = by_reason.get(reason, 0) + 1
                q_lost = True
            lost_q += q_lost
        return {"memories_by_status": memories, "evidence_units": n_units, "evidence_unfindable": by_reason,
                "questions_with_unfindable_evidence": lost_q}

    def graph_dump(self, conv: str) -> dict[str, Any]:
        """The scope's memory-entity graph (for analysis with ``--dump``): each memory's key and entity uids, each
        entity's mention count, the RELATES edges."""
        q = {"u": conv}
        mems = self.memory.admin.cypher("MATCH (m:Memory) WHERE m.user_id = $u RETURN m.nid AS nid, m.source_ref AS ref, "
                                  "m.entity_uids AS uids, m.status AS status", q, all_tenants=True, limit=1_000_000)
        ents = self.memory.admin.cypher("MATCH (e:Entity) WHERE e.user_id = $u RETURN e.uid AS uid, e.name AS name, "
                                  "e.mentions AS mentions", q, all_tenants=True, limit=1_000_000)
        rels = self.memory.admin.cypher("MATCH (a:Entity)-[r:RELATES]->(b:Entity) WHERE a.user_id = $u RETURN a.uid AS a, "
                                  "r.predicate AS p, b.uid AS b, r.memory_id AS mid", q, all_tenants=True,
                                  limit=1_000_000)
        return {"memories": mems, "entities": ents, "relates": rels}

    def close(self) -> None:
        self.memory.close()


# ---------------------------------------------------------------------------------------------------------- run
def _row(q: Question, ranked: Sequence[str], units: Sequence[str],
         refs: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    return {"category": q.category, "conv": q.conv,
            "scores": score(ranked, units, refs) if units else None,
            "scores_all": score(ranked, units, refs, total=len(q.evidence))}


def evaluate(name: str, search: SearchFn, questions: Sequence[Question], units: Sequence[Sequence[str]],
             refs_of: dict[str, dict[str, tuple[str, ...]]], k: int = 50,
             keep: dict[str, list[list[str]]] | None = None) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    ranked_all: list[list[str]] = []
    for q, u in zip(questions, units, strict=True):
        t0 = time.perf_counter()
        ranked = search(q.conv, q.question, k)
        ms = (time.perf_counter() - t0) * 1000
        ranked_all.append(ranked)
        rows.append(_row(q, ranked, u, refs_of[q.conv]) | {"ms": ms})
    if keep is not None:
        keep[name] = ranked_all
    out = aggregate(rows)
    out["system"] = name
    return out


def _r10(rows: list[dict[str, Any]], cat: int | None = None) -> float:
    sel = [r for r in rows if r["scores"] is not None
           and (r["category"] in (1, 2, 3, 4) if cat is None else r["category"] == cat)]
    return round(100.0 * statistics.fmean(r["scores"]["R@10"] for r in sel), 2) if sel else float("nan")


def _mean(mask: np.ndarray, values: np.ndarray) -> float:
    return round(100.0 * float(values[mask].mean()), 2) if mask.any() else float("nan")


def _cfg_summary(cfg: RetrievalConfig, base: RetrievalConfig, store: str = "turns") -> dict[str, Any]:
    """What tuning changed, in the weights this store's memories are scored with (turns: the turn weights;
    observations: the fact weights)."""
    mine, theirs = (cfg.weights, base.weights) if store == "turns" else (cfg.facts, base.facts)
    changed = {k: v for k, v in mine.items() if theirs.get(k) != v}
    return {"candidates": cfg.depth_for(store == "turns"), "lexical_weight": cfg.lexical_weight,
            "weights_changed": changed}


def neusym_report(ns: NeuSymSystem, questions: list[Question], units: list[list[str]],
                  refs_of: dict[str, dict[str, tuple[str, ...]]], convs: list[Conversation],
                  report: dict[str, Any], *, cv: bool = True, component_cv: bool = False,
                  dump: Path | None = None) -> None:
    """The ablation, the capture, the offline checks, cross-validation and component effects (into ``report``)."""
    keep: dict[str, list[list[str]]] = {}
    for label, cfg in ABLATION:
        res = evaluate(label, ns.system(label, cfg), questions, units, refs_of, keep=keep)
        res["stages_ms_p50"] = round(pct(ns.timings[label], 50), 2)
        report["results"].append(res)
        print(f"{label:40s} R@10 {res['overall'].get('R@10', 0):5.1f}  p50 {res['latency_ms']['p50']:.1f} ms",
              file=sys.stderr)
    for label, cfg in SWITCHES:
        res = evaluate(label, ns.system(label, cfg), questions, units, refs_of)
        res["stages_ms_p50"] = round(pct(ns.timings[label], 50), 2)
        report["switches"] = [*report.get("switches", []), res]
        print(f"{label:40s} R@10 {res['overall'].get('R@10', 0):5.1f}", file=sys.stderr)
    default = ABLATION[-1][1]
    t0 = time.perf_counter()
    # every memory of the scope is a candidate, and the activation is computed whatever its default weight, so
    # the offline re-scorer can weigh it (its values do not depend on the weight)
    rows = ns.capture(questions, default.with_(candidates=CAPTURE_DEPTH, fact_candidates=CAPTURE_DEPTH)
                      .with_weights(activation=1.0))
    capture_s = time.perf_counter() - t0
    vectors = {c.sample_id: ns.vectors_of(c.sample_id) for c in convs}
    qvecs = [ns.memory.admin.embedder.embed_query(q.question) for q in questions]
    if dump is not None:
        import pickle

        with open(dump, "wb") as fh:
            pickle.dump({"store": ns.store, "capture_depth": CAPTURE_DEPTH,
                         "questions": questions, "units": units, "refs_of": refs_of, "captured": rows,
                         "next_of": {c.sample_id: ns.next_of(c.sample_id) for c in convs},
                         "graph": {c.sample_id: ns.graph_dump(c.sample_id) for c in convs},
                         "vectors": vectors, "query_vectors": qvecs, "keep": keep}, fh)
    cap = off.Capture.build(questions, rows, units, refs_of, {c.sample_id: ns.next_of(c.sample_id) for c in convs},
                            CAPTURE_DEPTH, max_depth=max(DEPTHS), vectors=vectors, query_vectors=qvecs)
    main = (cap.category >= 1) & (cap.category <= 4) & (cap.units > 0)
    report["capture"] = {"depth": CAPTURE_DEPTH, "seconds": round(capture_s, 1),
                         "rows_per_question": round(float(cap.valid.sum(axis=1).mean()), 1),
                         "complete": cap.complete}
    # 1. the offline re-scorer must reproduce the engine on every ablation row
    # (rows whose BM25 differs from the capture's, plain BM25 without session context, cannot be re-scored offline)
    report["offline_check"] = {label: off.verify(cap, cfg, keep[label]) for label, cfg in ABLATION
                               if cfg.lexical_context == default.lexical_context}
    for label, cfg in CHECKS:  # settings the tuning visits: other depth and fusion, activation on
        fn = ns.system(label, cfg)
        report["offline_check"][label] = off.verify(cap, cfg, [fn(q.conv, q.question, 10) for q in questions])
    # 2. stage-1 recall at the candidate depth, per row
    for res, (_label, cfg) in zip([r for r in report["results"] if r["system"].startswith("neusym:")], ABLATION,
                                  strict=True):
        res["stage1_recall"] = _mean(main, off.pool_recall(cap, cfg))
        res["stage1_recall_expanded"] = _mean(main, off.pool_recall(cap, cfg, expanded=True))
        res["candidates"] = off.depth_of(cap, cfg)
    # 3. depth curve (default weights)
    report["depth"] = []
    for d in DEPTHS:
        cfg = default.with_(candidates=d, fact_candidates=d)
        r10 = off.recall_at(cap, off.rank(cap, cfg, 10))
        report["depth"].append({"candidates": d, "stage1_recall": _mean(main, off.pool_recall(cap, cfg)),
                                "R@10": _mean(main, r10)})
    # 4. in-sample component effects: the default with one weight (or switch) at 0
    comps = [c.name for c in COMPONENTS if c.name != "similarity"]
    base10 = off.recall_at(cap, off.rank(cap, default, 10))
    effects: dict[str, dict[str, Any]] = {}
    for c in comps:
        if not default.weights_for("x" if ns.store == "turns" else None)[c]:
            if c in off.DEFAULT_SPACE.weights:  # off by default: only its cross-validated effect (below)
                effects[c] = {"in_sample": None}
            continue
        r10 = off.recall_at(cap, off.rank(cap, default.with_weights(**{c: 0.0}), 10))
        effects[c] = {"in_sample": {"overall": round(_mean(main, base10) - _mean(main, r10), 2),
                                    **{str(k): round(_mean(main & (cap.category == k), base10)
                                                     - _mean(main & (cap.category == k), r10), 2) for k in (1, 2, 3, 4)}},
                      "questions_better": int(((base10 > r10) & main).sum()),
                      "questions_worse": int(((base10 < r10) & main).sum())}
    report["component_effects"] = effects
    if not cv or len(cap.conv_names) < 2:
        report["notes"].append("cross-validation skipped (needs at least two conversations)")
        return
    # 5. leave-one-conversation-out: tune on four, run the engine on the fifth
    t0 = time.perf_counter()
    folds = off.cross_validate(cap, default)
    held_rows: list[dict[str, Any]] = []
    fold_info = []
    for conv, cfg, train in folds:
        ci = cap.conv_names.index(conv)
        sel = [i for i, q in enumerate(questions) if q.conv == conv]
        label = f"cv:{conv}"
        res_rows: list[dict[str, Any]] = []
        fn = ns.system(label, cfg)
        for i in sel:
            q = questions[i]
            res_rows.append(_row(q, fn(q.conv, q.question, 50), units[i], refs_of[q.conv]))
        held_rows += res_rows
        offline = _mean(main & (cap.conv == ci), off.recall_at(cap, off.rank(cap, cfg, 10)))
        fold_info.append({"held_out": conv, "train_R@10": round(train, 2), "held_out_R@10": _r10(res_rows),
                          "held_out_R@10_offline": offline, "default_held_out_R@10": _mean(main & (cap.conv == ci),
                                                                                           base10),
                          "config": _cfg_summary(cfg, default, ns.store)})
    tuned_all, tuned_train = off.tune(cap, default)
    tuned_rows = evaluate("tuned on all (in-sample)", ns.system("tuned-all", tuned_all), questions, units, refs_of)
    report["cv"] = {
        "headline": aggregate(held_rows) | {"system": "NeuSym default recipe, LOCO-CV (tuned on 4, run on 5th)"},
        "folds": fold_info,
        "tuned_on_all": tuned_rows | {"config": _cfg_summary(tuned_all, default, ns.store)},
        "seconds": round(time.perf_counter() - t0, 1),
    }
    # 6. cross-validated effect of each component on the held-out conversation: each fold's tuned recipe against
    # the same recipe with that component at 0 (``--retune-components``: re-tune the rest with it held at 0, the
    # stricter and ~10x slower estimate)
    cv_full = off.held_out_recall(cap, folds)
    for c in effects:
        if component_cv:
            folds_c = off.cross_validate(cap, default.with_weights(**{c: 0.0}), frozen=[c])
        else:
            folds_c = [(conv, cfg.with_weights(**{c: 0.0}), train) for conv, cfg, train in folds]
        without = off.held_out_recall(cap, folds_c)
        effects[c]["cv"] = {"overall": round(_mean(main, cv_full) - _mean(main, without), 2),
                            **{str(k): round(_mean(main & (cap.category == k), cv_full)
                                          - _mean(main & (cap.category == k), without), 2)
                               for k in (1, 2, 3, 4)}}
        effects[c]["cv"]["retuned"] = component_cv
        print(f"component {c:12s} CV {effects[c]['cv']['overall']:+.2f}", file=sys.stderr)


def _loadavg() -> list[float] | None:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return None


def run(path: Path, *, out_dir: Path | None, store: str = "turns", embedder: str = "minilm",
        systems: Sequence[str] | None = None, limit_convs: int | None = None, limit_questions: int | None = None,
        png: bool = True, cv: bool = True, component_cv: bool = False, dump: Path | None = None) -> dict[str, Any]:
    if store not in STORES:
        raise SystemExit(f"unknown store {store!r} ({' | '.join(STORES)})")
    quiet_logs()
    convs = load_locomo(path, limit_convs=limit_convs, limit_questions=limit_questions)
    emb = build_embedder(embedder, cache_queries=True)
    want = set(systems) if systems else {"dense", "bm25", "rrf", "langchain", "mem0", "neusym"}
    docs: dict[str, list[Doc]] = {c.sample_id: c.docs(store) for c in convs}
    refs_of = {c.sample_id: {d.key: d.refs for d in c.docs(store)} for c in convs}
    questions: list[Question] = []
    units: list[list[str]] = []
    dropped = {str(k): 0 for k in range(1, 6)}
    ev_total = ev_cov = 0
    for c in convs:
        covered = c.covered(store)
        for q in c.questions:
            u = [e for e in q.evidence if e in covered]
            if q.category in (1, 2, 3, 4):
                ev_total += len(q.evidence)
                ev_cov += len(u)
            questions.append(q)  # also without covered evidence: the strict figures count it as missed
            units.append(u)
            if not u:
                dropped[str(q.category)] += 1
    workdir = Path(tempfile.mkdtemp(prefix="neusym-locomo-"))
    n_docs = sum(len(v) for v in docs.values())
    report: dict[str, Any] = {
        "benchmark": "locomo", "store": store, "machine": machine_info("benchmarks.locomo"), "input": str(path),
        "embedder": emb.name, "conversations": len(convs), "memories": n_docs,
        "questions": {str(cat): sum(q.category == cat and bool(u) for q, u in zip(questions, units, strict=True))
                      for cat in range(1, 6)},
        "questions_without_covered_evidence": dropped,
        "evidence_covered": {"ids": ev_total, "covered": ev_cov},
        "results": [], "ingest": {}, "notes": [],
    }
    report["machine"]["loadavg_start"] = _loadavg()
    t0 = time.perf_counter()
    emb.embed_documents([d.content for ds in docs.values() for d in ds])  # encode once, shared by every system
    report["ingest"]["encode_docs_per_s"] = round(n_docs / (time.perf_counter() - t0), 1)
    # Questions are encoded once too (batched; MiniLM is symmetric, embed_query == one-row embed_documents), so
    # latencies below exclude query embedding for EVERY system; its own cost is measured once and reported apart.
    qtexts = list(dict.fromkeys(q.question for q in questions))
    emb.prime_queries(qtexts)
    report["query_embed_ms"] = emb.time_queries(qtexts[:60])
    try:
        fns: list[tuple[str, SearchFn]] = []
        dense = dense_system(docs, emb)
        bm25 = bm25_system(docs)
        if "dense" in want:
            fns.append((BASELINES[0], dense))
        if "bm25" in want:
            fns.append((BASELINES[1], bm25))
        if "rrf" in want:
            fns.append((BASELINES[2], rrf_system(dense, bm25)))
        if "langchain" in want:
            fns.append((BASELINES[3], langchain_system(docs, emb)))
        if "mem0" in want:
            try:
                fns.append((BASELINES[4], mem0_system(docs, emb, workdir, report["ingest"])))
            except Exception as err:  # noqa: BLE001 - report why and go on
                report["notes"].append(f"mem0 left out: {type(err).__name__}: {err}")
        for name, fn in fns:
            res = evaluate(name, fn, questions, units, refs_of)
            report["results"].append(res)
            print(f"{name:40s} R@10 {res['overall'].get('R@10', 0):5.1f}  p50 {res['latency_ms']['p50']:.1f} ms",
                  file=sys.stderr)
        if "neusym" in want:
            ns = NeuSymSystem(convs, store, emb, workdir)
            try:
                report["ingest"]["neusym"] = ns.stats
                report["unfindable"] = ns.unfindable(convs, questions, units)
                neusym_report(ns, questions, units, refs_of, convs, report, cv=cv, component_cv=component_cv,
                              dump=dump)
            finally:
                ns.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    report["machine"]["loadavg_end"] = _loadavg()
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        write_json(out_dir / f"locomo_{store}.json", report)
        (out_dir / f"locomo_{store}.md").write_text(markdown(report))
        if png:
            plot(report, out_dir / f"locomo_{store}.png")
        combine(out_dir)
    return report


# ---------------------------------------------------------------------------------------------------------- output
def _f(x: Any) -> str:
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else (f"{x:.1f}" if isinstance(x, float)
                                                                               else str(x))


def markdown(report: dict[str, Any]) -> str:
    m = report["machine"]
    store = report.get("store", "turns")
    nq = sum(int(v) for k, v in report["questions"].items() if k != "5")
    ev = report.get("evidence_covered") or {}
    lines = [
        f"LoCoMo evidence retrieval, store `{store}`: {report['conversations']} conversations / "
        f"{report['memories']} memories, {nq} questions (categories 1-4; evidence ids covered by the store: "
        f"{ev.get('covered')}/{ev.get('ids')}), embedder {report['embedder']}. Machine: {m['cpu']}, {m['cores']} "
        f"cores, {m['memory_gb']} GB, load average {m.get('loadavg_start')} -> {m.get('loadavg_end')}; "
        f"{m['date']}; commit {m.get('git_commit')}; `{m['command']}`.",
        "",
        "| system | R@1 | R@5 | R@10 | R@25 | R@50 | NDCG@10 | cat1 R@10 | cat2 R@10 | cat3 R@10 | cat4 R@10 "
        "| cat5 R@10 | strict R@10 | stage-1 recall @depth | search p50 ms |",
        "|---|" + "---:|" * 14,
    ]
    qe = report.get("query_embed_ms") or {}

    def row(r: dict[str, Any], name: str | None = None) -> str:
        o, pc = r["overall"], r["per_category"]
        cells = [o.get(f"R@{k}", float("nan")) for k in KS] + [o.get("NDCG@10", float("nan"))]
        cells += [pc.get(str(c), {}).get("R@10", float("nan")) for c in (1, 2, 3, 4)]
        cells += [(r.get("category_5") or {}).get("R@10", float("nan"))]
        cells += [(r.get("overall_all") or {}).get("R@10", float("nan"))]
        s1 = (f"{r['stage1_recall']:.1f} @{r['candidates']}" if "stage1_recall" in r else "-")
        lat = r.get("latency_ms", {}).get("p50")
        return (f"| {name or r['system']} | " + " | ".join(_f(float(x)) for x in cells)
                + f" | {s1} | {_f(lat)} |")

    for r in report["results"]:
        lines.append(row(r))
    for r in report.get("switches", []):
        lines.append(row(r))
    cv = report.get("cv")
    if cv:
        lines.append(row(cv["headline"], "**NeuSym, leave-one-conversation-out CV (headline)**"))
        lines.append(row(cv["tuned_on_all"], "NeuSym tuned on all 5 (in-sample)"))
        lines += ["", "Cross-validation folds (tuned on the other conversations, run by the engine on the held-out "
                  "one):", "", "| held out | train R@10 | held-out R@10 | (offline) | shipped default on it | "
                  "depth | BM25 share | weights changed |", "|---|---:|---:|---:|---:|---:|---:|---|"]
        for f in cv["folds"]:
            c = f["config"]
            lines.append(f"| {f['held_out']} | {f['train_R@10']:.1f} | {f['held_out_R@10']:.1f} | "
                         f"{f['held_out_R@10_offline']:.1f} | {f['default_held_out_R@10']:.1f} | {c['candidates']} | "
                         f"{c['lexical_weight']} | " + ", ".join(f"{k}={v:g}" for k, v in c["weights_changed"].items())
                         + " |")
    eff = report.get("component_effects") or {}
    if eff:
        lines += ["", "Each stage-2 component's effect on R@10 (points; positive = the component helps): in-sample = "
                  "shipped default minus the default with that weight at 0; CV = held-out R@10 of each fold's tuned recipe "
                  "minus the same recipe with that component at 0 (re-tuned without it with --retune-components)."
                  " Each shape is scored with its own weights: turns (a speaker) with `weights`, facts with "
                  "`fact_weights`.", "",
                  "| component | in-sample all | cat1 | cat2 | cat3 | cat4 | questions +/- | CV all | CV cat1 | "
                  "CV cat2 | CV cat3 | CV cat4 |", "|---|" + "---:|" * 11]
        for c, e in eff.items():
            i, v = e["in_sample"], e.get("cv") or {}
            ins = (f"{i['overall']:+.2f} | " + " | ".join(f"{i[str(k)]:+.2f}" for k in (1, 2, 3, 4))
                   + f" | +{e['questions_better']}/-{e['questions_worse']}") if i else "(off) | - | - | - | - | -"
            lines.append(f"| {c} | {ins} | "
                         + (" | ".join(f"{v[x]:+.2f}" for x in ("overall", "1", "2", "3", "4")) if v
                            else "- | - | - | - | -") + " |")
    if report.get("depth"):
        lines += ["", "Candidate depth (default weights, offline): stage-1 recall (evidence in the pool) and final "
                  "R@10.", "", "| candidates | " + " | ".join(str(d["candidates"]) for d in report["depth"]) + " |",
                  "|---|" + "---:|" * len(report["depth"]),
                  "| stage-1 recall | " + " | ".join(f"{d['stage1_recall']:.1f}" for d in report["depth"]) + " |",
                  "| R@10 | " + " | ".join(f"{d['R@10']:.1f}" for d in report["depth"]) + " |"]
    ing = report["ingest"]
    ns = ing.get("neusym") or {}
    lines += ["", f"Ingest: batch encode {ing.get('encode_docs_per_s')} memories/s; NeuSym add (one call per "
              f"memory, infer=False) {ns.get('add_per_s')}/s, {ns.get('stored')}/{ns.get('memories')} stored; "
              f"mem0 add(infer=False) {ing.get('mem0_add_per_s')}/s."]
    uf = report.get("unfindable")
    if uf:
        lines.append(f"Stored but not findable at ingest (evidence units of categories 1-4 whose every memory left "
                     f"the searchable set): {uf['evidence_unfindable'] or 'none'} of {uf['evidence_units']} units; "
                     f"{uf['questions_with_unfindable_evidence']} questions affected. Memories by status: "
                     f"{uf['memories_by_status']}.")
    lines.append(f"Search latencies exclude the query embedding (shared, precomputed for every system); one live "
                 f"{report['embedder']} query embedding costs p50 {qe.get('p50')} ms / p95 {qe.get('p95')} ms here.")
    chk = report.get("offline_check")
    if chk:
        bad = {k: v for k, v in chk.items() if v["identical_top_k"] != v["questions"]}
        lines.append("Offline re-scorer vs engine (top-10 lists identical): "
                     + ("all rows, all questions" if not bad else
                        "; ".join(f"{k}: {v['identical_top_k']}/{v['questions']} (same set {v['same_set_top_k']})"
                                  for k, v in bad.items())) + ".")
    lines += [f"Note: {n}" for n in report.get("notes", [])]
    return "\n".join(lines) + "\n"


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [("categories 1-4", "overall")] + [(f"cat {c}: {CATEGORIES[c]}", str(c)) for c in (1, 2, 3, 4)]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4.4), sharey=True)
    shown = [r for r in report["results"] if not r["system"].startswith("neusym:")
             or r["system"] in ("neusym: stage 1 (linear fusion)", "neusym: + symbolic rescoring", FULL)]
    if report.get("cv"):
        shown.append(report["cv"]["headline"] | {"system": "neusym: LOCO-CV"})
    for ax, (title, key) in zip(axes, panels, strict=True):
        for r in shown:
            data = r["overall"] if key == "overall" else r["per_category"].get(key, {})
            if not data:
                continue
            bold = r["system"] in (FULL, "neusym: LOCO-CV")
            ax.plot(KS, [data[f"R@{k}"] for k in KS], marker="o", lw=2.6 if bold else 1.3,
                    label=r["system"].replace(" = full (default)", " (full)"))
        ax.set_xscale("log")
        ax.set_xticks(KS, [str(k) for k in KS])
        ax.set_title(title)
        ax.set_xlabel("k")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("evidence recall@k (%)")
    axes[0].legend(fontsize=7, loc="lower right")
    fig.suptitle(f"LoCoMo evidence recall@k, store {report.get('store', 'turns')} ({report['embedder']}, "
                 f"{report['machine']['date']})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


SUMMARY_ROWS = (("dense (FAISS)", "dense (FAISS)"), ("RRF (dense+BM25)", "RRF (dense+BM25)"),
                ("neusym: stage 1 (linear fusion)", "NeuSym stage 1 only"),
                (FULL, "NeuSym default, in-sample (chosen on this data)"))


def _summary_rows(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    by = {r["system"]: r for r in report["results"]}
    out = {label: by[name] for name, label in SUMMARY_ROWS if name in by}
    cv = report.get("cv")
    if cv:
        out["NeuSym tuned on all 5 (in-sample)"] = cv["tuned_on_all"]
        out["**NeuSym, leave-one-conversation-out CV**"] = cv["headline"]
    return out


def combine(out_dir: Path) -> dict[str, Any] | None:
    """``locomo.{json,md,png}``: both store shapes side by side (from ``locomo_turns.json`` and
    ``locomo_observations.json`` in ``out_dir``; each run writes its own, this joins whatever is there)."""
    import json

    reports = {st: json.loads((out_dir / f"locomo_{st}.json").read_text()) for st in STORES
               if (out_dir / f"locomo_{st}.json").exists()}
    if not reports:
        return None
    write_json(out_dir / "locomo.json", {"benchmark": "locomo", "stores": reports})
    cols = [(st, k) for st in reports for k in ("R@10", "1", "2", "3", "4", "s1")]
    head = " | ".join(f"{st} {'R@10' if k == 'R@10' else ('stage-1 recall' if k == 's1' else 'cat' + k)}"
                      for st, k in cols)
    lines = ["LoCoMo evidence R@10 on both store shapes (categories 1-4; cat1 multi-hop, cat2 temporal, cat3 "
             "open-domain, cat4 single-hop; stage-1 recall = evidence in the candidate pool stage 2 reorders). "
             "Per-shape reports: " + ", ".join(f"[locomo_{st}.md](locomo_{st}.md)" for st in reports) + ".", "",
             f"| system | {head} |", "|---|" + "---:|" * len(cols)]
    rows = {st: _summary_rows(r) for st, r in reports.items()}
    labels = list(dict.fromkeys(lab for r in rows.values() for lab in r))
    for lab in labels:
        cells = []
        for st, k in cols:
            r = rows[st].get(lab)
            if r is None:
                cells.append("-")
            elif k == "R@10":
                cells.append(_f(r["overall"].get("R@10")))
            elif k == "s1":
                cells.append(_f(r.get("stage1_recall")))
            else:
                cells.append(_f(r["per_category"].get(k, {}).get("R@10")))
        lines.append(f"| {lab} | " + " | ".join(cells) + " |")
    (out_dir / "locomo.md").write_text("\n".join(lines) + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return reports
    fig, axes = plt.subplots(1, len(reports), figsize=(7 * len(reports), 4.4), sharey=True, squeeze=False)
    cats = ["all", "1", "2", "3", "4"]
    for ax, (st, rs) in zip(axes[0], rows.items(), strict=True):
        width = 0.8 / max(len(rs), 1)
        for n, (lab, r) in enumerate(rs.items()):
            vals = [r["overall"].get("R@10", 0.0)] + [r["per_category"].get(c, {}).get("R@10", 0.0) for c in cats[1:]]
            ax.bar([i + n * width for i in range(len(cats))], vals, width, label=lab.replace("*", ""))
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(cats))],
                      ["cat 1-4"] + [f"cat {c}: {CATEGORIES[int(c)]}" for c in cats[1:]], fontsize=8)
        ax.set_title(f"store: {st}")
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("evidence R@10 (%)")
    axes[0][0].legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(out_dir / "locomo.png", dpi=110)
    plt.close(fig)
    return reports


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.locomo", description=(__doc__ or "").split("\n")[0])
    ap.add_argument("path", type=Path, help="LoCoMo JSON (e.g. ../shared/data/locomo/locomo_dev.json)")
    ap.add_argument("--store", default="turns", choices=STORES,
                    help="turns: one dialog turn = one memory; observations: one observation sentence = one memory")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    ap.add_argument("--embedder", default="minilm", choices=["minilm", "minilm-torch", "hashing"])
    ap.add_argument("--systems", default="dense,bm25,rrf,langchain,mem0,neusym",
                    help="comma list of dense,bm25,rrf,langchain,mem0,neusym")
    ap.add_argument("--limit-convs", type=int, default=None)
    ap.add_argument("--limit-questions", type=int, default=None, help="per conversation")
    ap.add_argument("--no-cv", action="store_true", help="skip cross-validation")
    ap.add_argument("--retune-components", action="store_true",
                    help="cross-validated effect of each component by re-tuning the others with it held at 0 "
                         "(default: each fold's tuned recipe with the component at 0; ~10x slower)")
    ap.add_argument("--no-png", action="store_true")
    ap.add_argument("--dump", type=Path, default=None,
                    help="pickle the capture and the memory-entity graph here (for offline analysis)")
    a = ap.parse_args(argv)
    report = run(a.path, out_dir=a.out, store=a.store, embedder=a.embedder,
                 systems=[s for s in a.systems.split(",") if s], limit_convs=a.limit_convs,
                 limit_questions=a.limit_questions, png=not a.no_png, cv=not a.no_cv,
                 component_cv=a.retune_components, dump=a.dump)
    print(markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
