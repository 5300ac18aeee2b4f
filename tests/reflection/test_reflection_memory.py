"""Reflection through NeuSymMemory on the real embedded FalkorDB: storage, DERIVED_FROM, re-weighting, scoping."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from reflection_helpers import FailingModel, derived_from, reply, thirty_turns, write_session

from neusym import MemoryType, NeuSymMemory, Scope
from neusym.errors import RecordNotFoundError, ScopeError
from neusym.extraction import RuleExtractor
from neusym.llm import ScriptedChatModel
from neusym.reflection import ReflectionError
from neusym.reflection.api import common_scope as _common_scope


def session_ids(mem: NeuSymMemory, user: str, session: str) -> set[str]:
    return {r.id for r in mem.store.scope_memories(Scope(user_id=user, session_id=session))}


def test_thirty_turn_session_reflected_without_llm(memory: NeuSymMemory) -> None:
    write_session(memory, "ana", "s1", thirty_turns())
    sources = session_ids(memory, "ana", "s1")
    assert len(sources) >= 25

    ref = memory.session_end(user_id="ana", session_id="s1")
    assert ref is not None and ref.stored and ref.draft.method == "extractive"
    stored = memory.get(ref.id or "", user_id="ana")
    assert stored.type is MemoryType.REFLECTION and stored.source.origin == "reflection"
    assert stored.scope == Scope(user_id="ana", session_id="s1")
    assert derived_from(memory, stored.id) == sources  # DERIVED_FROM covers every source
    assert stored.metadata["reflection"]["source_count"] == len(sources)
    assert "1800" in stored.content and "Porto" in stored.content  # numbers and names survive
    assert stored.content.count("I live in Porto") == 1  # the repeated turn is de-duplicated
    # written through the normal path: embedded, indexed, searchable, audited
    hits = memory.search("Porto Farfetch coffee", user_id="ana", types=["reflection"], k=3)
    assert [h.id for h in hits] == [stored.id]
    assert memory.store.embeddings([stored.id])
    assert any(e["action"] == "reflect" for e in memory.history(stored.id, user_id="ana"))
    assert memory.session_end(user_id="ana", session_id="empty") is None


def test_llm_reflection_malformed_then_valid(make_memory: Callable[..., NeuSymMemory]) -> None:
    model = ScriptedChatModel(["I think Ana lives in Porto.",
                               reply("Ana lives in Porto, works at Farfetch and runs 10 km on Sundays.",
                                     cited=[f"m{i}" for i in range(1, 8)], covered=["m2"])])
    mem = make_memory(llm=model, extractor=RuleExtractor())  # the model only reflects
    write_session(mem, "ana", "s1", thirty_turns())
    sources = session_ids(mem, "ana", "s1")
    ref = mem.reflect(user_id="ana", session_id="s1", goal="plan a weekend")
    assert ref.draft.method == "llm" and len(model.calls) == 2
    assert derived_from(mem, ref.id or "") == sources
    edges = dict(mem.store.linked(ref.id or "", "DERIVED_FROM"))
    assert sum(1 for p in edges.values() if p["cited"]) == 7
    assert ref.memory is not None and ref.memory.metadata["reflection"]["goal"] == "plan a weekend"


def test_failing_model_loses_nothing(make_memory: Callable[..., NeuSymMemory]) -> None:
    model = FailingModel()
    mem = make_memory(llm=model, extractor=RuleExtractor())  # the model only reflects
    write_session(mem, "ana", "s1", thirty_turns()[:10])
    before = {r.id: (r.strength, r.flags, r.status) for r in mem.store.scope_memories(Scope(user_id="ana"))}
    with pytest.raises(ReflectionError):
        mem.reflect(user_id="ana", session_id="s1")
    assert model.calls == 3
    after = {r.id: (r.strength, r.flags, r.status) for r in mem.store.scope_memories(Scope(user_id="ana"))}
    assert after == before  # no reflection written, no source touched
    assert mem.stats(user_id="ana")["by_type"].get("reflection", 0) == 0
    # opt-in degradation: the extractive reflector takes over
    ref = mem.reflect(user_id="ana", session_id="s1", fallback=True)
    assert ref.stored and ref.draft.method == "extractive-fallback"


def test_sources_are_reweighted(memory: NeuSymMemory) -> None:
    obs = memory.add("The weather was grey and rainy this afternoon", user_id="ana", infer=False)[0]
    fact = memory.add("I live in Porto.", user_id="ana", speaker="Ana")[0]
    model = ScriptedChatModel([reply("Ana lives in Porto; it rained.", cited=["m1", "m2"], covered=["m1", "m2"])])
    ordered = sorted([obs, fact], key=lambda r: (r.created_at, r.seq))
    ref = memory.reflect(user_id="ana", ids=[r.id for r in ordered], llm=model)
    cooled = memory.get(obs.id, user_id="ana")
    kept = memory.get(fact.id, user_id="ana")
    assert obs.type is MemoryType.OBSERVATION and ref.cooled == [obs.id]
    assert cooled.strength == pytest.approx(obs.strength * 0.5) and "reflected" in cooled.flags
    assert kept.strength == pytest.approx(fact.strength + 0.25) and fact.id in ref.reinforced


def test_archive_moves_covered_observations_out_of_default_search(memory: NeuSymMemory) -> None:
    obs = memory.add("The weather was grey and rainy this afternoon", user_id="ana", infer=False)[0]
    ref = memory.reflect(user_id="ana", ids=[obs.id], cool="archive", extractive=True)
    assert ref.cooled == [obs.id]
    assert memory.get(obs.id, user_id="ana").status.value == "archived"
    assert obs.id not in {h.id for h in memory.search("grey rainy weather afternoon", user_id="ana")}


def test_quality_check_keeps_lost_facts_hot(memory: NeuSymMemory) -> None:
    a = memory.add("The sky looked grey over the river this morning", user_id="ana", infer=False)[0]
    b = memory.add("The spare key code is 4512", user_id="ana", infer=False)[0]
    model = ScriptedChatModel([
        reply("Grey sky over the river; a spare key exists.", cited=["m1", "m2"], covered=["m1", "m2"]),
        '{"lost_key_fact": true, "missing": ["the spare key code is 4512"]}',
    ])
    ref = memory.reflect(user_id="ana", ids=[a.id, b.id], llm=model, quality_question="What is the key code?")
    assert ref.quality is not None and ref.quality.lost_key_fact and ref.quality.method == "llm"
    assert b.id not in ref.cooled and b.id in ref.reinforced  # the raw memory with the lost fact stays hot
    assert a.id in ref.cooled
    assert memory.get(b.id, user_id="ana").strength > b.strength


def test_quality_check_without_llm_uses_the_heuristic(memory: NeuSymMemory) -> None:
    recs = [memory.add(f"Note {i}: the parcel locker code is {1000 + i}", user_id="ana", infer=False)[0]
            for i in range(6)]
    from neusym.reflection import ReflectionBudget

    ref = memory.reflect(user_id="ana", ids=[r.id for r in recs], extractive=True,
                         budget=ReflectionBudget(output_tokens=16), quality_question="What is the locker code?")
    assert ref.quality is not None and ref.quality.lost_key_fact and ref.quality.method == "heuristic"
    assert set(ref.quality.hot_ids) and not set(ref.quality.hot_ids) & set(ref.cooled)


def test_reflecting_a_retrieval_result_and_an_entity_neighbourhood(memory: NeuSymMemory) -> None:
    write_session(memory, "ana", "s1", thirty_turns())
    hits = memory.search("sister Marta visiting", user_id="ana", k=4)
    ref = memory.reflect(user_id="ana", ids=[h.id for h in hits], goal="sister Marta visiting", extractive=True)
    assert derived_from(memory, ref.id or "") == {h.id for h in hits}
    nb = memory.reflect(user_id="ana", entity="Marta", extractive=True)
    assert nb.source_ids and all("Marta" in memory.get(i, user_id="ana").content for i in nb.source_ids)


def test_a_reflection_never_mixes_tenants(memory: NeuSymMemory) -> None:
    write_session(memory, "alice", "s1", [("user", "My secret project is called Bluebird.")] * 1
                  + [("user", "I live in Oslo.")])
    write_session(memory, "bob", "s1", [("user", "I live in Lima."), ("user", "I like sailing.")])
    bob_ids = session_ids(memory, "bob", "s1")
    ref = memory.reflect(user_id="alice", extractive=True)
    assert ref.scope.user_id == "alice"
    assert derived_from(memory, ref.id or "") == session_ids(memory, "alice", "s1")
    assert "Lima" not in ref.summary and "sailing" not in ref.summary
    with pytest.raises(RecordNotFoundError):  # bob's ids are invisible from alice's scope
        memory.reflect(user_id="alice", ids=list(bob_ids))
    # an agent-wide scope spanning two users is refused before anything is written
    memory.add("shared agent note one", agent_id="helper", user_id="alice", infer=False)
    memory.add("shared agent note two", agent_id="helper", user_id="bob", infer=False)
    with pytest.raises(ScopeError, match="needs a user_id"):  # the tenant rule refuses it first
        memory.reflect(agent_id="helper", extractive=True)
    helper = [r for u in ("alice", "bob") for r in memory.query(user_id=u, agent_id="helper")]
    assert len(helper) == 2
    with pytest.raises(ScopeError, match="never mixes tenants"):  # and the sources' own check, below it
        _common_scope(Scope(agent_id="helper"), helper)
    assert memory.stats(user_id="bob")["by_type"].get("reflection", 0) == 0


def test_common_scope_is_the_narrowest_shared_scope() -> None:
    from neusym import MemoryRecord

    a = MemoryRecord(content="x", scope=Scope(user_id="u", session_id="s1"))
    b = MemoryRecord(content="y", scope=Scope(user_id="u", session_id="s2"))
    assert _common_scope(Scope(user_id="u"), [a, b]) == Scope(user_id="u")
    assert _common_scope(Scope(user_id="u"), [a]) == Scope(user_id="u", session_id="s1")
    with pytest.raises(ScopeError):
        _common_scope(Scope(user_id="v"), [a])
