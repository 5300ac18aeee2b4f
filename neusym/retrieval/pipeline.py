"""Two-stage retrieval.

Stage 1 (neural, in process): FAISS top-N and BM25 top-N inside the caller's scope, fused by reciprocal rank.
Stage 2 (symbolic, one Cypher statement): filters, entity/relation expansion, conversation neighbours, re-scoring
with every component returned. Optional stage 3: any reranker.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

import numpy as np

from neusym.extraction import entity_key
from neusym.extraction.vocabulary import topic_predicates
from neusym.language import regex as rx
from neusym.record import Scope, ScoreExplanation, SearchResult
from neusym.retrieval.config import RetrievalConfig
from neusym.retrieval.derived import DerivedIndexes
from neusym.retrieval.geometry import pool_geometry
from neusym.retrieval.lexical import STOPWORDS
from neusym.retrieval.temporal import parse_time_window
from neusym.symbolic.convert import entity_namespace, entity_uid, props_to_record
from neusym.symbolic.rescoring import SymbolicFilters, stage2_statement
from neusym.symbolic.scoring import COMPONENTS
from neusym.symbolic.store import SymbolicStore

__all__ = ["Candidate", "DenseSearch", "Reranker", "Stage1", "StageTimings", "query_entity_keys", "query_entity_uids",
           "run_search", "stage1"]

Reranker = Callable[[str, list[SearchResult]], list[SearchResult]]
"""Stage 3: takes the query and stage-2 results, returns them re-ordered (and optionally re-scored)."""


class DenseSearch(Protocol):
    """Stage 1's dense channel when it is not the in-process FAISS index (e.g. the graph's native vector index,
    :class:`neusym.retrieval.graph_vectors.GraphVectorSearch`): top-``n`` (nids, cosines) inside ``scope`` with one
    of ``statuses``. ``eligible``/``total``: memories in the scope / in the whole index, from the catalog."""

    def __call__(self, qvec: np.ndarray, scope: Scope, statuses: list[str], n: int, *, eligible: int,
                 total: int) -> tuple[list[int], list[float]]: ...

_STAGE2 = {"id": stage2_statement("id"), "nid": stage2_statement("nid")}
_STAGE1_FIELDS = frozenset({"similarity", "dense", "lexical", "dense_rank", "lexical_rank"})
_WORD = rx.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)


@dataclass
class Candidate:
    nid: int
    sim: float = 0.0
    dense: float | None = None
    lex: float | None = None
    lexn: float | None = None  # BM25 divided by the query's best BM25 in scope
    drank: int | None = None
    lrank: int | None = None


@dataclass
class Stage1:
    """Stage 1's output: the fused candidates (best first), how many memories the scope holds (stage 2 uses it to
    discount hub entities), the query's best BM25 in scope (the lexical normaliser; 1.0 without BM25 hits), and
    the activation seeds: the nids in either channel's top ``activation_seeds``, taken BEFORE the fused cut to
    ``candidates`` (a channel's rank-3 hit with a weak other channel can fall out of the fused pool; the seeds,
    and so the activation, must not depend on the depth or the fusion weights)."""

    candidates: list[Candidate]
    eligible: int
    best_lexical: float = 1.0
    seeds: list[int] = field(default_factory=list)
    turns: bool = True  # the scope's best hits are mostly conversation turns (depth ``candidates``, not facts')
    depth: int = 0  # the candidate depth used


@dataclass
class StageTimings:
    embed_ms: float = 0.0
    stage1_ms: float = 0.0
    stage2_ms: float = 0.0
    rerank_ms: float = 0.0
    candidates: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def query_entity_uids(query: str, scope: Scope, max_grams: int = 3, limit: int = 64) -> list[str]:
    """Uids of the query's word n-grams in the tenant's entity namespace; stage 2 keeps those that exist.

    Matching n-grams against existing entity keys (instead of running NER on a short, often lower-case query)
    links "what does caroline like" to the entity Caroline.
    """
    ns = entity_namespace(scope)
    return [entity_uid(ns, k) for k in query_entity_keys(query, max_grams, limit)]


def query_entity_keys(query: str, max_grams: int = 3, limit: int = 64) -> list[str]:
    """Entity keys of the query's word n-grams (stage 2 looks them up through the indexed ``Entity.key``)."""
    words = [w.lower() for w in _WORD.findall(query)]
    keys: list[str] = []
    for n in range(1, max_grams + 1):
        for i in range(len(words) - n + 1):
            gram = words[i : i + n]
            if gram[0] in STOPWORDS or gram[-1] in STOPWORDS:
                continue
            k = entity_key(" ".join(gram))
            if k and k not in keys:
                keys.append(k)
    return keys[:limit]


def stage1(
    derived: DerivedIndexes,
    query: str,
    qvec: np.ndarray | None,
    scope: Scope,
    statuses: list[str],
    cfg: RetrievalConfig,
    dense: DenseSearch | None = None,
) -> Stage1:
    """Fused candidates (see :class:`Stage1`).

    Fusion ``linear`` (default) scores every candidate of either channel on BOTH channels (the raw cosine of a
    BM25-only hit is computed from its stored vector, the BM25 of a dense-only hit is read from the same scoring
    pass) and mixes them: ``sim = (max(cos, 0) + lexical_weight * bm25 / best_bm25) / (1 + lexical_weight)``.
    Ranks throw away how much better the best match is, and a candidate found by one channel only would otherwise
    count as zero on the other. ``rrf`` keeps reciprocal-rank fusion (the classic baseline recipe).
    """
    mask, allow, eligible = derived.scope_view(scope, statuses)
    n_max = max(cfg.depth_for(True), cfg.depth_for(False))
    cands: dict[int, Candidate] = {}
    seeds: list[int] = []
    ids_l: list[int] = []
    scores_l: list[float] = []
    if cfg.dense and qvec is not None and (allow is None or len(allow) > 0):
        if dense is not None:
            ids_l, scores_l = dense(qvec, scope, statuses, n_max, eligible=eligible, total=derived.catalog.live)
        else:
            ids, scores = derived.faiss.search(qvec, n_max, allow_ids=allow)
            ids_l, scores_l = ids.tolist(), scores.tolist()
    lex_all: np.ndarray | None = None
    top = 1.0
    positions = np.zeros(0, dtype=np.int64)
    lex_scores = np.zeros(0)
    if cfg.lexical:
        lex_all = derived.lexical.score_all(query, mask, context=cfg.lexical_context)
        positions, lex_scores = derived.lexical.top(lex_all, n_max)
        top = float(lex_scores[0]) if len(lex_scores) else 1.0
    turns = _mostly_turns(derived, ids_l, positions, min(cfg.depth_for(True), cfg.depth_for(False)))
    n = cfg.depth_for(turns)
    for rank, (nid, s) in enumerate(zip(ids_l[:n], scores_l[:n], strict=False)):
        if nid < 0:
            continue
        c = cands.setdefault(nid, Candidate(nid))
        c.dense, c.drank = float(s), rank
        if rank < cfg.activation_seeds:
            seeds.append(nid)
    if cfg.lexical:
        positions = positions[:n]
        nids = derived.catalog.nid[positions] if len(positions) else np.zeros(0, dtype=np.int64)
        for rank, (nid, s) in enumerate(zip(nids.tolist(), lex_scores[:n].tolist(), strict=False)):
            c = cands.setdefault(int(nid), Candidate(int(nid)))
            c.lex, c.lexn, c.lrank = float(s), float(s) / top, rank
            if rank < cfg.activation_seeds and int(nid) not in seeds:
                seeds.append(int(nid))
    if cfg.fusion == "linear":
        _fill_missing_channels(derived, cands, qvec if cfg.dense else None, lex_all, top)
        wd = 1.0 if cfg.dense and qvec is not None else 0.0
        wl = cfg.lexical_weight if cfg.lexical else 0.0
        for c in cands.values():
            fused = wd * max(c.dense or 0.0, 0.0) + wl * (c.lexn or 0.0)
            c.sim = fused / (wd + wl) if wd + wl else 0.0
    else:
        channels = int(cfg.dense) + int(cfg.lexical)
        best = channels / (cfg.rrf_k + 1.0)
        for c in cands.values():
            rrf = 0.0
            if c.drank is not None:
                rrf += 1.0 / (cfg.rrf_k + 1.0 + c.drank)
            if c.lrank is not None:
                rrf += 1.0 / (cfg.rrf_k + 1.0 + c.lrank)
            c.sim = rrf / best if best else 0.0
    ordered = sorted(cands.values(), key=lambda c: -c.sim)
    return Stage1(ordered[: max(n, 1)], eligible, top, seeds, turns=turns, depth=n)


def _mostly_turns(derived: DerivedIndexes, dense_nids: Sequence[int], lexical_positions: np.ndarray,
                  n: int) -> bool:
    """Whether most of the channels' best ``n`` hits (each channel's top ``n``) are conversation turns (memories
    with a speaker). The scope's shape is read off the hits rather than configured: one store may hold a chat
    log in one scope and extracted facts in another. No hits: turns (the ``candidates`` depth)."""
    cat = derived.catalog
    pos = [cat.pos_of[nid] for nid in dense_nids[:n] if nid >= 0 and nid in cat.pos_of]
    flags = np.concatenate([cat.turn[np.asarray(pos, dtype=np.int64)], cat.turn[lexical_positions[:n]]])
    return not len(flags) or bool(flags.mean() >= 0.5)


def _geometry(derived: DerivedIndexes, cands: Sequence[Candidate], qvec: np.ndarray | None,
              cfg: RetrievalConfig) -> tuple[list[float], list[float]]:
    """The ``distinct`` and ``contrast`` components of each candidate, in candidate order (zeros when neither is
    weighted or there is no query vector); see :mod:`neusym.retrieval.geometry`. Reads the candidates' stored
    vectors (the caller holds the derived indexes' lock): cost one ``n x n`` product of the ``n`` candidates."""
    n = len(cands)
    if not (cfg.uses("distinct") or cfg.uses("contrast")) or qvec is None or n == 0:
        return [0.0] * n, [0.0] * n
    nids = [c.nid for c in cands]
    known = [i for i, nid in enumerate(nids) if derived.faiss.contains(nid)]
    vecs = np.zeros((n, derived.dimension), dtype=np.float32)
    if known:
        vecs[known] = derived.faiss.reconstruct(np.asarray([nids[i] for i in known], dtype=np.int64))
    distinct, contrast = pool_geometry(vecs, qvec, cfg.distinct_k)
    return distinct.tolist(), contrast.tolist()


def _fill_missing_channels(derived: DerivedIndexes, cands: dict[int, Candidate], qvec: np.ndarray | None,
                           lex_all: np.ndarray | None, top: float) -> None:
    """Give every candidate both channel scores (cost: one small reconstruct + a lookup per candidate)."""
    if qvec is not None:
        missing = [c.nid for c in cands.values() if c.dense is None and derived.faiss.contains(c.nid)]
        if missing:
            dots = derived.faiss.reconstruct(np.asarray(missing, dtype=np.int64)) @ np.asarray(qvec, np.float32)
            for nid, d in zip(missing, dots.tolist(), strict=True):
                cands[nid].dense = float(d)
    if lex_all is not None:
        pos_of = derived.catalog.pos_of
        for c in cands.values():
            if c.lex is None:
                pos = pos_of.get(c.nid)
                if pos is not None and pos < len(lex_all) and lex_all[pos] > 0:
                    c.lex = float(lex_all[pos])
                    c.lexn = c.lex / top


def run_search(
    store: SymbolicStore,
    derived: DerivedIndexes,
    *,
    query: str,
    qvec: np.ndarray | None,
    scope: Scope,
    k: int,
    filters: SymbolicFilters,
    cfg: RetrievalConfig,
    now: float | None = None,
    reranker: Reranker | None = None,
    timings: StageTimings | None = None,
    dense: DenseSearch | None = None,
) -> list[SearchResult]:
    timings = timings or StageTimings()
    now = time.time() if now is None else now
    t0 = time.perf_counter()
    with derived.lock:  # one consistent snapshot: a concurrent write grows the catalog, BM25 and FAISS under us
        s1 = stage1(derived, query, qvec, scope, filters.statuses, cfg, dense)
        cands, scope_size = s1.candidates, s1.eligible
        cand_ids = derived.catalog.keys_of([c.nid for c in cands])
        seed_nids = s1.seeds if cfg.uses("activation") else []
        seed_ids = derived.catalog.keys_of(seed_nids) if cand_ids is not None else None
        if cand_ids is not None and seed_ids is None:  # a seed without a known id: look everything up by nid
            cand_ids = None
        distinct, contrast = _geometry(derived, cands, qvec, cfg)
    t1 = time.perf_counter()
    timings.stage1_ms = (t1 - t0) * 1000
    timings.candidates = len(cands)
    timings.extra["best_lexical"] = s1.best_lexical
    timings.extra["shape"] = "turns" if s1.turns else "facts"
    window = parse_time_window(query, datetime.fromtimestamp(now, UTC)) if cfg.temporal else None
    expand = cfg.graph_expand
    w = cfg.weights.as_dict()
    wf = cfg.facts.as_dict()
    if not cfg.neighbours:
        w["neighbour"] = wf["neighbour"] = 0.0
    act = bool(seed_nids)
    q_keys = query_entity_keys(query) if (expand or act or cfg.uses("entity") or cfg.uses("speaker")) else []
    params: dict[str, Any] = {
        **scope.as_params(),
        **filters.params(),
        # parallel lists: stage 2 reads a candidate's scores by position (see stage2_statement)
        "cand_nids": [c.nid for c in cands],
        "cand_ids": cand_ids,
        "cand_sim": [c.sim for c in cands],
        "cand_dense": [c.dense for c in cands],
        "cand_lexn": [c.lexn for c in cands],
        "cand_distinct": distinct,
        "cand_contrast": contrast,
        "act_src": seed_nids if cand_ids is None else seed_ids,
        "cand_sim_by_nid": {str(c.nid): c.sim for c in cands},
        "q_keys": q_keys,
        "q_preds": topic_predicates(query) if w["predicate"] or wf["predicate"] else [],
        "q_uids": [entity_uid(entity_namespace(scope), k_) for k_ in q_keys],
        "hub_degree": cfg.hub_degree,
        "hub_fraction": cfg.hub_fraction,
        "hub_slack": cfg.hub_slack,
        "scope_size": float(max(scope_size, 1)),
        "expand_limit": cfg.expand_limit if expand else 0,
        "hop_limit": cfg.hop_limit if expand else 0,
        "hop_discount": cfg.hop_discount,
        "act_limit": cfg.activation_limit if act else 0,
        "act_support": cfg.activation_support,
        "act_query": cfg.activation_query,
        "now": now,
        "half_life": cfg.half_life_days * 86400.0,
        "strength_max": cfg.strength_max,
        "w": w,
        "wf": wf,
        "type_weights": dict(cfg.type_weights),
        "t_from": window[0] if window else None,
        "t_to": window[1] if window else None,
        "min_score": cfg.min_score,
        "k": int(k) if reranker is None else max(int(k) * 3, int(k)),
    }
    rows = store.executor.run(_STAGE2["nid" if cand_ids is None else "id"], params, write=False)
    t2 = time.perf_counter()
    timings.stage2_ms = (t2 - t1) * 1000
    by_nid = {c.nid: c for c in cands}
    results = [_to_result(r, w if r.get("speaker") is not None else wf, cfg, by_nid.get(r["nid"])) for r in rows]
    if reranker is not None and results:
        results = reranker(query, results)[:k]
        timings.rerank_ms = (time.perf_counter() - t2) * 1000
    return results[:k]


def _to_result(row: dict[str, Any], weights: dict[str, float], cfg: RetrievalConfig,
               cand: Candidate | None) -> SearchResult:
    """A stage-2 row as a result; the stage-1 numbers (similarity, channel scores, ranks) come from ``cand``
    (None for a memory that only graph expansion or activation brought in)."""
    record = props_to_record(row)
    values = {c.name: float(row.get(c.column) or 0.0) for c in COMPONENTS}
    matched: Sequence[str] = row.get("matched") or []
    graph = values["graph"]
    dense, lex = (cand.dense, cand.lex) if cand is not None else (None, None)
    via = "neural" if dense is not None else ("lexical" if lex is not None else (
        "graph" if graph or values["activation"] else "symbolic"))
    path: list[str] = []
    if matched:
        path = [f"query entity {', '.join(repr(m) for m in matched)}", "MENTIONS", "memory"]
    elif graph >= 1.0:
        path = ["query entity", "MENTIONS", "memory"]
    elif graph > 0:
        path = ["query entity", "RELATES", "entity", "MENTIONS", "memory"]
    if values["activation"] > 0:
        path = path + ["shares specific entities with the best hits"]
    if values["neighbour"] > 0:
        path = path + ["NEXT-neighbour of a candidate"]
    if values["speaker"] > 0:
        path = path + [f"said by {record.source.speaker}, named in the query"]
    if values["predicate"] > 0:
        path = path + ["states the fact the query asks about"]
    warnings_extra = ["contradicts another memory"] if "contradiction" in record.flags else []
    if "suspicious" in record.flags:
        warnings_extra.append("flagged suspicious by screening")
    warnings = []
    if "low_confidence" in record.flags or record.confidence < 0.5:
        warnings.append("low confidence")
    if "conflict_pending" in record.flags:
        warnings.append("conflicting memory pending review")
    if record.status.value == "superseded" or record.valid_to is not None:
        warnings.append("historical (superseded)")
    warnings.extend(warnings_extra)
    # each component's value goes to the explanation field the registry names; what stage 1 measured (the fused
    # similarity, raw cosine and BM25, the channel ranks) comes from the candidate itself
    fields = {c.field: values[c.name] for c in COMPONENTS if c.field and c.field not in _STAGE1_FIELDS}
    expl = ScoreExplanation(
        **fields,
        similarity=cand.sim if cand is not None else 0.0,
        dense=float(dense) if dense is not None else None,
        lexical=float(lex) if lex is not None else None,
        dense_rank=cand.drank if cand is not None else None,
        lexical_rank=cand.lrank if cand is not None else None,
        type_weight=float(row.get("tw") or 1.0),
        components=values,
        weights=dict(weights),
        path=path,
        via=via,
        warnings=warnings,
    )
    return SearchResult(memory=record, score=float(row["score"]), explanation=expl)
