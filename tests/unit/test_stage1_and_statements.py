"""Stage 1 (channel filling and fusion over the in-process indexes) and the statement builders' shape and
parameters, without a graph: the derived indexes are filled in memory exactly as a catch-up would fill them."""

from __future__ import annotations

import re

import pytest

from neusym.embeddings import HashingEmbedder
from neusym.engine.candidates import search_filters
from neusym.record import Scope
from neusym.retrieval.derived import DerivedIndexes
from neusym.retrieval.pipeline import stage1
from neusym.retrieval.recipes import DENSE_ONLY, HYBRID_GRAPH, LEXICAL_ONLY
from neusym.symbolic import cypher as q
from neusym.symbolic.rescoring import stage2_statement, symbolic_query_statement
from neusym.symbolic.store import RELATIONS

EMB = HashingEmbedder(64)
TEXTS = {
    1: ("alice", "s1", "Alice adopted a beagle called Max"),
    2: ("alice", "s1", "the weather was rainy all week"),
    3: ("alice", "s2", "Max the beagle loves the park"),
    4: ("bob", "s1", "Bob adopted a beagle too"),
    5: ("alice", "s2", "groceries: milk, bread, coffee"),
}


@pytest.fixture
def derived() -> DerivedIndexes:
    d = DerivedIndexes(EMB.dimension, None, model=EMB.name, faiss_kind="flat", background_upgrade=False)
    vecs = EMB.embed_documents([t for _, _, t in TEXTS.values()])
    d.apply([{"nid": nid, "id": f"m{nid}", "seq": nid, "content": text, "status": "active", "user_id": user,
              "agent_id": None, "session_id": session, "embedding": vecs[i]}
             for i, (nid, (user, session, text)) in enumerate(TEXTS.items())])
    d.apply([{"nid": 5, "id": "m5", "seq": 6, "content": TEXTS[5][2], "status": "archived", "user_id": "alice",
              "agent_id": None, "session_id": "s2", "embedding": vecs[4]}])
    return d


ALICE = Scope(user_id="alice")


def _run(derived: DerivedIndexes, query: str, cfg: object, scope: Scope = ALICE,
         statuses: tuple[str, ...] = ("active", "pending")) -> list[int]:
    out = stage1(derived, query, EMB.embed_query(query), scope, list(statuses), cfg)  # type: ignore[arg-type]
    return [c.nid for c in out.candidates]


def test_stage1_stays_in_scope_and_status(derived: DerivedIndexes) -> None:
    got = _run(derived, "beagle adopted", HYBRID_GRAPH)
    assert 4 not in got  # bob's
    assert 5 not in got  # archived
    assert set(got) <= {1, 2, 3}
    assert _run(derived, "beagle", HYBRID_GRAPH, scope=Scope(user_id="alice", session_id="s2")) == [3]
    assert 5 in _run(derived, "groceries coffee", HYBRID_GRAPH, statuses=("archived",))


def test_linear_fusion_fills_both_channels(derived: DerivedIndexes) -> None:
    out = stage1(derived, "beagle Max", EMB.embed_query("beagle Max"), Scope(user_id="alice"), ["active"],
                 HYBRID_GRAPH)
    for c in out.candidates:  # a candidate found by one channel is scored on the other too
        assert c.dense is not None
        assert c.sim == pytest.approx((max(c.dense, 0.0) + HYBRID_GRAPH.lexical_weight * (c.lexn or 0.0))
                                      / (1 + HYBRID_GRAPH.lexical_weight))
    assert out.candidates[0].nid in (1, 3) and out.eligible == 3
    assert [c.sim for c in out.candidates] == sorted((c.sim for c in out.candidates), reverse=True)


def test_single_channel_recipes(derived: DerivedIndexes) -> None:
    lex = stage1(derived, "rainy weather", None, Scope(user_id="alice"), ["active"], LEXICAL_ONLY)
    assert lex.candidates[0].nid == 2 and all(c.drank is None for c in lex.candidates)
    dense = stage1(derived, "rainy weather", EMB.embed_query("rainy weather"), Scope(user_id="alice"), ["active"],
                   DENSE_ONLY)
    assert all(c.lrank is None for c in dense.candidates)
    rrf = HYBRID_GRAPH.with_(fusion="rrf")
    out = stage1(derived, "beagle", EMB.embed_query("beagle"), Scope(user_id="alice"), ["active"], rrf)
    assert max(c.sim for c in out.candidates) <= 1.0 + 1e-9


# ---------------------------------------------------------------------------------------------------- statements
def _params(statement: str) -> set[str]:
    return set(re.findall(r"\$([A-Za-z_]\w*)", statement))


@pytest.mark.parametrize("order", ["recent", "oldest", "due", "importance"])
def test_the_query_statement_gets_every_parameter_it_names(order: str) -> None:
    """What :meth:`Engine.query` sends (scope ids, the filters' parameters, now, limit, offset) covers every
    ``$name`` of the statement: a missing one would be a runtime error on one backend and a silent null on the
    other."""
    sc = Scope(user_id="u")
    filters = search_filters(sc, entities=["Ana"], predicate="lives_in", objects=["Porto"], types=["fact"])
    sent = {*sc.as_params(), *filters.params(), "now", "limit", "offset"}
    assert _params(symbolic_query_statement(order)) <= sent
    with pytest.raises(KeyError):
        symbolic_query_statement("random")


def test_search_filters_are_typed() -> None:
    sc = Scope(user_id="u")
    f = search_filters(sc)
    assert f.statuses == ["active", "pending"]
    assert search_filters(sc, valid_at=5.0).statuses == ["active", "pending", "superseded"]
    assert search_filters(sc, entities=["Ana"]).entity_uids == ["u\x1fana"]
    from neusym import InvalidInputError

    with pytest.raises(InvalidInputError):
        search_filters(sc, statuses=["nope"])
    with pytest.raises(InvalidInputError):
        search_filters(sc, entities=[5])  # type: ignore[list-item]


def test_one_statement_writes_name_their_parameters() -> None:
    """The mutation path's statements, and the relation types they may touch."""
    assert _params(q.APPLY_CHANGES) == {"n", "sets", "unlinks", "links", "close", "audits", "user_id", "token",
                                        "now"}
    assert {"SUPERSEDES", "CONFLICTS_WITH", "DUPLICATE_OF"} <= RELATIONS
    for rel in ("SUPERSEDES", "CONFLICTS_WITH", "DUPLICATE_OF"):
        assert f"[x:{rel}]" in q.APPLY_CHANGES
    assert "$audits" in q.RELINK and "$audits_json" in q.UPDATE_UNLINK and "$audits" in q.UPDATE_PROPS
    assert _params(q.AUDIT_FOR_MEMORY) == {"memory_id", "user_id", "agent_id", "session_id"}
    assert "st.valid_to" in q.CREATE_MEMORIES  # a supersession closes the old facts in the create statement
    for stmt in (q.APPLY_CHANGES, q.UPDATE_PROPS, q.UPDATE_UNLINK, q.CREATE_MEMORIES, q.PURGE_MARK):
        assert "c.value = c.value + $n" in stmt  # every change the indexes must see is numbered


def test_stage2_statement_names_no_unknown_parameter() -> None:
    for by in ("id", "nid"):
        names = _params(stage2_statement(by))
        assert {"w", "user_id", "agent_id", "session_id", "statuses"} <= names
        assert not {n for n in names if n.startswith("_")}

