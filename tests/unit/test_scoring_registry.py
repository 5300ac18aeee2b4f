"""The score-component registry and the typed weights (no database: statement shape and config validation)."""

from __future__ import annotations

import pickle

import pytest
from pydantic import ValidationError

from neusym.record import ScoreExplanation
from neusym.retrieval.config import DEFAULT_WEIGHTS, RetrievalConfig, ScoreWeights
from neusym.retrieval.recipes import HYBRID_GRAPH, LEXICAL_ONLY, RECIPES
from neusym.symbolic.rescoring import stage2_columns, stage2_statement
from neusym.symbolic.scoring import COMPONENTS, component, default_fact_weights, default_weights


def test_every_component_is_weighted_summed_returned_and_explained() -> None:
    names = [c.name for c in COMPONENTS]
    assert len(set(names)) == len(names)
    assert set(ScoreWeights().values) == set(names) == set(DEFAULT_WEIGHTS)
    for by in ("id", "nid"):
        stmt = stage2_statement(by)
        for c in COMPONENTS:
            assert f"wv.{c.name} * {c.column}" in stmt  # in the sum (wv: the memory's shape's weights)
            assert f"{c.cypher} AS {c.column}" in stmt  # computed once, by the registry's expression
            assert c.field in ScoreExplanation.model_fields  # reported
        assert stmt.count("wv.") == len(COMPONENTS)
        assert "CASE WHEN m.speaker IS NULL THEN $wf ELSE $w END AS wv" in stmt
    assert set(stage2_columns()) >= {c.column for c in COMPONENTS} | {"score", "tw", "matched"}


def test_no_scoring_constant_is_left_in_the_statement() -> None:
    stmt = stage2_statement()
    for literal in ("+ 2.0", "/ 2.0", "THEN 0.5", "86400"):
        assert literal not in stmt, literal
    for param in ("$hub_slack", "$hop_discount", "$strength_max", "$act_src", "$act_support"):
        assert param in stmt


def test_weight_typo_is_refused_and_missing_weights_keep_their_defaults() -> None:
    with pytest.raises(ValidationError, match="recencey"):
        RetrievalConfig(weights={"recency": 0.2, "recencey": 1})
    with pytest.raises(ValidationError, match="recencey"):
        ScoreWeights(recencey=1.0)
    with pytest.raises(ValidationError):
        ScoreWeights(recency=-1.0)
    with pytest.raises(ValidationError):
        ScoreWeights(recency=float("nan"))
    cfg = RetrievalConfig(weights={"recency": 0.2})
    assert cfg.weights["recency"] == 0.2
    assert cfg.weights["similarity"] == component("similarity").default == 1.0  # was 0.0 after the old merge
    assert cfg.weights.as_dict() == {**default_weights(), "recency": 0.2}


def test_shape_weights_change_one_shape_and_with_weights_changes_both() -> None:
    # a standalone fact's weights come from the registry's ``fact`` defaults; a turn's from ``default``
    assert HYBRID_GRAPH.facts.as_dict() == default_fact_weights()
    assert {n for n in default_fact_weights() if default_fact_weights()[n] != default_weights()[n]} == {
        c.name for c in COMPONENTS if c.fact is not None and c.fact != c.default}
    t = HYBRID_GRAPH.with_turn_weights(recency=0.4)
    assert t.weights["recency"] == 0.4 and t.facts == HYBRID_GRAPH.facts
    f = HYBRID_GRAPH.with_fact_weights(recency=0.4)
    assert f.facts["recency"] == 0.4 and f.weights == HYBRID_GRAPH.weights
    both = HYBRID_GRAPH.with_weights(recency=0.4)
    assert both.weights["recency"] == both.facts["recency"] == 0.4
    assert both.facts["entity"] == default_fact_weights()["entity"]  # the fact set keeps its own values
    assert both.weights_for("Bob") is both.weights and both.weights_for(None) is both.facts
    assert pickle.loads(pickle.dumps(both)) == both
    assert RetrievalConfig.model_validate(both.model_dump()) == both
    with pytest.raises(ValidationError, match="recencey"):
        RetrievalConfig(fact_weights={"recencey": 1.0})
    assert HYBRID_GRAPH.uses("dense") and not HYBRID_GRAPH.with_fact_weights(dense=0.0).uses("dense")


def test_recipe_weights_cannot_be_changed_for_the_whole_process() -> None:
    before = HYBRID_GRAPH.weights.as_dict()
    with pytest.raises(TypeError):
        HYBRID_GRAPH.weights["similarity"] = 0  # type: ignore[index]
    with pytest.raises(TypeError):
        HYBRID_GRAPH.weights.values["similarity"] = 0  # type: ignore[index]
    with pytest.raises(TypeError):
        HYBRID_GRAPH.type_weights["emotion"] = 5.0  # type: ignore[index]
    with pytest.raises(ValidationError):
        HYBRID_GRAPH.weights.similarity = 0.0  # type: ignore[attr-defined]
    derived = HYBRID_GRAPH.with_weights(similarity=0.5)
    assert derived.weights["similarity"] == 0.5 and derived.weights["neighbour"] == HYBRID_GRAPH.weights["neighbour"]
    assert HYBRID_GRAPH.weights.as_dict() == before


def test_only_replace_serialisation_and_pickle() -> None:
    none = ScoreWeights.only(similarity=1.0)
    assert none["similarity"] == 1.0 and sum(none.values.values()) == 1.0
    assert none.replace(entity=0.3)["entity"] == 0.3
    with pytest.raises(ValidationError):
        none.replace(entiti=0.3)
    cfg = HYBRID_GRAPH.with_weights(activation=0.2)
    assert cfg.model_dump()["weights"]["activation"] == 0.2  # flat in dumps
    assert RetrievalConfig.model_validate_json(cfg.model_dump_json()) == cfg
    assert pickle.loads(pickle.dumps(cfg)) == cfg
    assert cfg.with_(candidates=7).weights == cfg.weights
    # an explicit depth is the depth of both shapes unless the fact depth is given too
    assert HYBRID_GRAPH.depth_for(False) != HYBRID_GRAPH.depth_for(True)
    assert HYBRID_GRAPH.with_(candidates=7).depth_for(False) == HYBRID_GRAPH.with_(candidates=7).depth_for(True) == 7
    both = HYBRID_GRAPH.with_(candidates=7, fact_candidates=9)
    assert (both.depth_for(True), both.depth_for(False)) == (7, 9)
    assert HYBRID_GRAPH.with_(lexical_weight=0.3).fact_candidates == HYBRID_GRAPH.fact_candidates


def test_lexical_only_is_plain_bm25_and_recipes_keep_their_boosts() -> None:
    assert LEXICAL_ONLY.lexical_context is False and not LEXICAL_ONLY.dense
    assert HYBRID_GRAPH.lexical_context is True
    for name in ("dense_only", "lexical_only", "hybrid", "hybrid_rrf"):
        w = RECIPES[name].weights
        assert w["similarity"] == 1.0 and sum(w.values.values()) == 1.0, name
