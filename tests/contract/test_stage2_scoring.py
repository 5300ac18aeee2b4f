"""Stage 2 generated from the score-component registry, on both backends: every score is the weighted sum its
explanation shows, entity activation reaches multi-hop evidence, and the lexical context switch holds."""

from __future__ import annotations

import math
from collections.abc import Callable

from neusym import NeuSymMemory
from neusym.embeddings import HashingEmbedder
from neusym.retrieval.config import RetrievalConfig
from neusym.retrieval.recipes import HYBRID_GRAPH, LEXICAL_ONLY
from neusym.symbolic.scoring import COMPONENTS, default_fact_weights

FILLER = [f"{name} walked to the {place} on day {i}" for i, (name, place) in enumerate(
    [("Nora", "bakery"), ("Omar", "harbour"), ("Priya", "library"), ("Quinn", "stadium"), ("Rosa", "market"),
     ("Sven", "museum"), ("Tara", "station"), ("Umar", "garden"), ("Vera", "clinic"), ("Wes", "school"),
     ("Xena", "theatre"), ("Yuri", "airport"), ("Zoe", "beach"), ("Ivan", "office"), ("Jade", "park")])]


def _fill(mem: NeuSymMemory) -> None:
    mem.add("Alice bought a Fender guitar in Seattle.", user_id="u", infer=False)
    mem.add("Alice practices with the Fender every evening.", user_id="u", infer=False)
    mem.add("The Fender needs new strings before Friday.", user_id="u", infer=False)  # no query word at all
    for text in FILLER:
        mem.add(text, user_id="u", infer=False)


def test_score_is_the_weighted_sum_the_explanation_shows(make_memory: Callable[..., NeuSymMemory]) -> None:
    mem = make_memory()
    _fill(mem)
    mem.add([{"role": "user", "content": "Did you see Alice's Fender?", "name": "Bob"},
             {"role": "user", "content": "Yes, it is red.", "name": "Carol"}], user_id="u", session_id="s")
    cfg = HYBRID_GRAPH.with_weights(activation=0.2, dense=0.1, lexical=0.1)
    results = mem.search("What guitar does Alice play?", user_id="u", k=20, recipe=cfg)
    assert results
    seen: set[str] = set()
    for r in results:
        e = r.explanation
        assert set(e.components) == {c.name for c in COMPONENTS}
        w = cfg.weights_for(r.memory.source.speaker)
        total = sum(w[c.name] * e.components[c.name] for c in COMPONENTS) * e.type_weight
        assert math.isclose(r.score, total, rel_tol=1e-9, abs_tol=1e-12)
        for c in COMPONENTS:
            if c.name not in ("dense", "similarity"):  # stage 1 reports those from the candidate itself
                assert getattr(e, c.field) == e.components[c.name], c.name
            if e.components[c.name]:
                seen.add(c.name)
        assert e.weights == w.as_dict()
    assert {"similarity", "entity", "activation", "importance"} <= seen


def test_turns_and_facts_are_scored_with_their_own_weights(make_memory: Callable[..., NeuSymMemory]) -> None:
    # nearly the same statement twice: once a conversation turn (a speaker), once a standalone fact; a boost given to one
    # shape's weights only decides which of the two ranks first, and each score is the sum of its own shape's
    mem = make_memory()
    _fill(mem)
    assert mem.add("Alice tunes the cello on Sundays.", user_id="u", speaker="Bob", session_id="s", infer=False)
    assert mem.add("Every Sunday, Alice tunes her old cello in the attic.", user_id="u", infer=False)
    query = "When does Alice tune the cello?"
    base = HYBRID_GRAPH.with_(name="shapes")
    for boosted, cfg in (("fact", base.with_fact_weights(confidence=3.0)),
                         ("turn", base.with_turn_weights(confidence=3.0))):
        res = [r for r in mem.search(query, user_id="u", k=40, recipe=cfg) if "cello" in r.content]
        assert len(res) == 2
        top = res[0]
        assert (top.memory.source.speaker is None) == (boosted == "fact")
        for r in res:
            w = cfg.weights_for(r.memory.source.speaker)
            e = r.explanation
            assert e.weights == w.as_dict()
            assert math.isclose(r.score, sum(w[c.name] * e.components[c.name] for c in COMPONENTS) * e.type_weight,
                                rel_tol=1e-9, abs_tol=1e-12)
    # one set unless a recipe gives two; the default recipe gives facts the registry's fact weights
    assert RetrievalConfig().fact_weights is None and RetrievalConfig().facts == RetrievalConfig().weights
    assert HYBRID_GRAPH.facts.as_dict() == default_fact_weights() != HYBRID_GRAPH.weights.as_dict()


def test_activation_brings_in_what_the_best_hits_share(make_memory: Callable[..., NeuSymMemory]) -> None:
    mem = make_memory()
    _fill(mem)
    # two candidates and no query-entity expansion (which reaches it through Alice -RELATES- Fender): only the
    # activation the two best hits share can bring the third memory in
    narrow = HYBRID_GRAPH.with_(candidates=2, graph_expand=False, name="narrow")
    query = "What guitar does Alice play?"
    off = {r.content: r for r in mem.search(query, user_id="u", k=10, recipe=narrow)}
    strings = "The Fender needs new strings before Friday."
    assert strings not in off  # stage 1 (2 candidates) never proposes it
    on = {r.content: r for r in mem.search(query, user_id="u", k=10, recipe=narrow.with_weights(activation=0.3))}
    assert strings in on
    hit = on[strings].explanation
    assert hit.activation > 0 and hit.similarity == 0.0 and hit.via == "graph"
    assert any("best hits" in p for p in hit.path)
    assert on["Alice bought a Fender guitar in Seattle."].explanation.activation > 0
    # no source shares it: nothing to spread (a single seed, support 2 required)
    lone = {r.content for r in mem.search(query, user_id="u", k=10,
                                          recipe=narrow.with_(activation_seeds=1).with_weights(activation=0.3))}
    assert strings not in lone


def test_lexical_only_is_plain_bm25(make_memory: Callable[..., NeuSymMemory]) -> None:
    mem = make_memory()
    mem.add([{"role": "user", "content": "Did you go to the pottery class?", "name": "Ann"},
             {"role": "user", "content": "Yes, last Friday!", "name": "Bea"}], user_id="u", session_id="s")
    ctx = [r.content for r in mem.search("pottery", user_id="u", k=5, recipe=LEXICAL_ONLY.with_(lexical_context=True))]
    plain = [r.content for r in mem.search("pottery", user_id="u", k=5, recipe=LEXICAL_ONLY)]
    assert "Bea: Yes, last Friday!" in ctx  # the reply matches through its session neighbour's words
    assert plain == ["Ann: Did you go to the pottery class?"]


def test_activation_does_not_depend_on_the_candidate_depth(make_memory: Callable[..., NeuSymMemory]) -> None:
    # the seeds are each channel's best hits taken before the fused cut to the candidate depth: a BM25 hit that
    # the dense channel ranks low falls out of a shallow fused pool, but it still seeds the same activation
    # (8 hashed dimensions: a dense channel that disagrees with BM25; BM25 barely counts in the fusion)
    mem = make_memory(embedder=HashingEmbedder(8))
    _fill(mem)
    base = HYBRID_GRAPH.with_(graph_expand=False, activation_seeds=2, lexical_weight=0.01,
                              name="seeds").with_weights(activation=0.3)
    for query in ("guitar evening", "Friday evening", "strings harbour"):
        by_depth = []
        for depth in (2, 20):
            res = mem.search(query, user_id="u", k=20, recipe=base.with_(candidates=depth))
            by_depth.append({r.content: r.explanation.activation for r in res})
        shallow, deep = by_depth
        common = set(shallow) & set(deep)
        assert any(deep[c] > 0 for c in common), query
        assert {c: shallow[c] for c in common} == {c: deep[c] for c in common}, query
