"""Admission decisions (store / low confidence / reject / quarantine with reasons) and duplicate handling."""

from __future__ import annotations

from datetime import timedelta

import pytest
from gov_helpers import graph_rows

from neusym import InvalidInputError, NeuSymMemory
from neusym.embeddings import CachedEmbedder, HashingEmbedder
from neusym.governance import Action, GovernancePolicy

# HashingEmbedder cosines are lower than MiniLM's for the same paraphrase; the defaults (0.95 / 0.88) are
# calibrated for MiniLM, so these tests use thresholds calibrated the same way for the hashing model.
HASHING_DEDUP = GovernancePolicy(near_duplicate_threshold=0.92, review_threshold=0.88)


@pytest.fixture
def dmem(make_memory) -> NeuSymMemory:  # type: ignore[no-untyped-def]
    return make_memory(embedder=CachedEmbedder(HashingEmbedder(256)), governance=HASHING_DEDUP)


# ---------------------------------------------------------------------- admission
def test_every_candidate_gets_a_decision_with_a_reason(mem: NeuSymMemory) -> None:
    user = mem.add("I work at Farfetch.", user_id="u")
    assert user.decisions[0].action is Action.STORE and user.decisions[0].reason.startswith("admitted")
    assert user[0].confidence == pytest.approx(0.9)

    agent = mem.add("The user probably enjoys jazz.", user_id="u", origin="agent", confidence=0.6)
    d = agent.decisions[0]
    assert d.action is Action.STORE_LOW_CONFIDENCE and "low confidence" in d.reason
    assert "low_confidence" in agent[0].flags and agent[0].strength == pytest.approx(0.5)
    assert agent[0].confidence == pytest.approx(0.42)  # 0.6 x agent trust 0.7
    hit = next(h for h in mem.search("jazz", user_id="u") if h.id == agent[0].id)
    assert "low confidence" in hit.explanation.warnings

    rejected = mem.add("Where do I live?", user_id="u", origin="tool")
    assert rejected.decisions[0].action is Action.REJECT and len(rejected) == 0
    assert "question" in rejected.decisions[0].reason
    assert mem.history(rejected.decisions[0].record.id, user_id="u")[0]["action"] == "reject"


def test_passing_emotion_is_not_a_durable_preference(mem: NeuSymMemory) -> None:
    res = mem.add("I'm feeling sad today.", user_id="u")
    rec = res[0]
    assert rec.type.value == "emotion" and rec.importance <= 0.3
    # the emotion TTL runs from when the feeling was (``today`` -> valid_from), not from when it was stored
    assert rec.expires_at is not None and rec.expires_at - (rec.valid_from or rec.created_at) == timedelta(days=3)
    assert "passing emotion" in res.decisions[0].reason or "emotion ttl" in res.decisions[0].reason
    explicit = mem.add("Always answer me in French.", user_id="u")
    assert explicit[0].type.value == "instruction" and explicit[0].importance >= 0.8
    assert explicit[0].expires_at is None and "explicit instruction" in explicit.decisions[0].reason


def test_thresholds_are_configurable(mem: NeuSymMemory) -> None:
    mem.configure_governance(store_threshold=0.95, low_confidence_threshold=0.5)
    assert mem.add("I work at Farfetch.", user_id="u").decisions[0].action is Action.STORE_LOW_CONFIDENCE
    mem.configure_governance(source_trust={"user": 1.0, "tool": 0.1})
    assert mem.add("The weather is nice.", user_id="u", origin="tool").decisions[0].action is Action.REJECT
    with pytest.raises(InvalidInputError):
        mem.configure_governance(store_threshold=0.1, low_confidence_threshold=0.4)


# ---------------------------------------------------------------------- dedup
def test_exact_duplicate_reinforces_and_keeps_both_provenances(dmem: NeuSymMemory) -> None:
    first = dmem.add("My sister Maya is a nurse in Leeds.", user_id="u", session_id="s", ref="msg-1")[0]
    again = dmem.add("my sister maya is a nurse in leeds", user_id="u", session_id="s", origin="agent", ref="msg-9")
    d = again.decisions[0]
    assert len(again) == 0 and d.action is Action.MERGE and d.target_id == first.id
    merged = dmem.get(first.id, user_id="u")
    assert merged.strength == pytest.approx(1.5) and merged.access_count == 1
    assert merged.source.ref == "msg-1"
    assert merged.metadata["provenance"][0]["ref"] == "msg-9"
    assert merged.metadata["provenance"][0]["origin"] == "agent"
    assert dmem.history(first.id, user_id="u")[-1]["action"] == "merge"


def test_near_duplicate_merges_and_middle_band_goes_to_review(dmem: NeuSymMemory) -> None:
    base = dmem.add("I really love hiking in the mountains on weekends.", user_id="u")[0]
    near = dmem.add("I really love hiking in the mountains on the weekends.", user_id="u")
    assert near.decisions[0].action is Action.MERGE and near.decisions[0].target_id == base.id
    assert near.decisions[0].details["similarity"] >= 0.92
    assert dmem.get(base.id, user_id="u").metadata["provenance"][0]["kind"] == "near"

    middle = dmem.add("I love hiking in the mountains on weekends!", user_id="u")
    d = middle.decisions[0]
    assert d.action is Action.REVIEW and middle[0].status.value == "pending" and "dedup_review" in middle[0].flags
    assert graph_rows(dmem, "MATCH (a)-[x:DUPLICATE_OF]->(b) RETURN a.id AS a, b.id AS b") == [
        {"a": middle[0].id, "b": base.id}]
    item = dmem.review_queue(user_id="u", kind="dedup")[0]
    assert item.memory_id == middle[0].id and item.related == [base.id]
    dmem.review_approve(middle[0].id, user_id="u")  # confirm: fold it into the original
    assert dmem.get(middle[0].id, user_id="u").status.value == "archived"
    assert dmem.get(base.id, user_id="u").strength == pytest.approx(2.0)

    other = dmem.add("I really love hiking in the mountains on weekend days.", user_id="u")
    if other.decisions[0].action is Action.REVIEW:  # not a duplicate after all: keep it as its own memory
        assert dmem.review_reject(other[0].id, user_id="u").status.value == "active"  # type: ignore[union-attr]


def test_near_duplicates_that_differ_in_meaning_never_merge(make_memory) -> None:  # type: ignore[no-untyped-def]
    mem = make_memory(governance=GovernancePolicy(near_duplicate_threshold=0.5, review_threshold=0.5))
    mem.add("My locker code is 1234.", user_id="u")
    assert mem.add("My locker code is 9876.", user_id="u").decisions[0].action is Action.STORE
    mem.add("I like jazz music a lot.", user_id="u")
    assert mem.add("I don't like jazz music a lot.", user_id="u").decisions[0].action is not Action.MERGE


def test_duplicates_inside_one_batch(dmem: NeuSymMemory) -> None:
    res = dmem.add_batch(["The boiler service is due in May.", "The boiler service is due in May!"], user_id="u")
    assert [d.action for d in res.decisions] == [Action.STORE, Action.MERGE]
    assert len(res) == 1
