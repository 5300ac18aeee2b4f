"""Stage 1 reads the scope's shape (conversation turns with speakers, or standalone facts) off its best hits and
uses that shape's candidate depth; the catalog's turn flags survive a save and a rebuild from the graph; the
pool-geometry components reach stage 2 and its explanations."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from neusym import NeuSymMemory
from neusym.engine.candidates import search_filters
from neusym.record import SearchResult
from neusym.retrieval.config import RetrievalConfig
from neusym.retrieval.pipeline import StageTimings, run_search
from neusym.retrieval.recipes import HYBRID_GRAPH

FACTS = [f"Ana keeps a {thing} in her flat in Lisbon." for thing in
         ("red bicycle", "small piano", "lemon tree", "old radio", "chess board", "glass lamp", "wool rug",
          "blue kettle")]
TURNS = [("Ben", f"I fixed the {thing} in the garage this morning.") for thing in
         ("old radio", "blue kettle", "red bicycle", "glass lamp", "wool rug", "lemon press", "chess clock",
          "small piano")]


def _fill(mem: NeuSymMemory) -> None:
    for text in FACTS:
        mem.add(text, user_id="facts", infer=False)
    for speaker, text in TURNS:
        mem.add(text, speaker=speaker, user_id="chat", session_id="s1", infer=False)


def _search(mem: NeuSymMemory, user: str, query: str, cfg: RetrievalConfig) -> tuple[list[SearchResult],
                                                                                      StageTimings]:
    sc = mem.scope_for(user_id=user)
    t = StageTimings()
    res = run_search(mem.store, mem.derived, query=query, qvec=mem.embedder.embed_query(query), scope=sc, k=20,
                     filters=search_filters(sc), cfg=cfg, timings=t, now=1.9e9)
    return res, t


def _turn_flags(mem: NeuSymMemory) -> dict[str, bool]:
    cat = mem.derived.catalog
    out = {}
    for r in mem.cypher("MATCH (m:Memory) RETURN m.nid AS nid, m.content AS c", {}, all_tenants=True, limit=100):
        out[str(r["c"])] = bool(cat.turn[cat.pos_of[int(r["nid"])]])
    return out


def test_each_scope_gets_its_shapes_depth(memory: NeuSymMemory) -> None:
    _fill(memory)
    cfg = HYBRID_GRAPH.with_(candidates=3, fact_candidates=6)
    res, t = _search(memory, "facts", "what does Ana keep in her flat", cfg)
    assert t.extra["shape"] == "facts" and t.candidates == 6
    res, t = _search(memory, "chat", "what did Ben fix in the garage", cfg)
    assert t.extra["shape"] == "turns" and t.candidates == 3
    # without a depth for facts, both shapes use ``candidates``
    res, t = _search(memory, "facts", "what does Ana keep in her flat", cfg.with_(fact_candidates=None))
    assert t.candidates == 3


def test_turn_flags_survive_a_reopen_and_a_rebuild(make_memory: Callable[..., NeuSymMemory]) -> None:
    mem = make_memory()
    _fill(mem)
    flags = _turn_flags(mem)
    assert sum(flags.values()) == len(TURNS) and len(flags) == len(FACTS) + len(TURNS)
    mem.derived.save()
    again = make_memory()  # the same graph and data directory: the saved index is loaded
    assert _turn_flags(again) == flags
    again.derived.catalog.turn[:] = False  # forget them: a rebuild from the graph must find them again
    again.derived.rebuild(again.store)
    assert _turn_flags(again) == flags


def test_geometry_reaches_stage_2_and_the_explanation(memory: NeuSymMemory) -> None:
    _fill(memory)
    on = HYBRID_GRAPH.with_weights(distinct=0.5, contrast=0.5)
    res, _ = _search(memory, "facts", "Ana's piano", on)
    comps = [r.explanation.components for r in res]
    assert all(0.0 <= c["distinct"] <= 1.0 and 0.0 <= c["contrast"] <= 1.0 for c in comps)
    assert any(c["distinct"] > 0 for c in comps) and any(c["contrast"] > 0 for c in comps)
    assert all(r.explanation.distinct == r.explanation.components["distinct"] for r in res)
    # each result's score is the weighted sum the explanation shows
    for r in res:
        e = r.explanation
        total = sum(e.weights[n] * v for n, v in e.components.items()) * e.type_weight
        assert np.isclose(r.score, total)
    off = HYBRID_GRAPH.with_weights(distinct=0.0, contrast=0.0)
    res_off, _ = _search(memory, "facts", "Ana's piano", off)
    assert all(r.explanation.components["distinct"] == 0.0 for r in res_off)  # not computed when unweighted
