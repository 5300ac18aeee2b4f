"""Conflict scenarios without an LLM: functional updates, preference flips, contradictions, strategies, history."""

from __future__ import annotations

from datetime import UTC, datetime

from gov_helpers import JAN, JUN, MAR, SEP, graph_rows

from neusym import NeuSymMemory
from neusym.extraction import RuleExtractor
from neusym.governance import Action, GovernancePolicy
from neusym.llm import ScriptedChatModel

U = "ana"


def test_moving_city_new_address_wins_old_is_history(mem: NeuSymMemory) -> None:
    porto = mem.add("I live in Porto.", user_id=U, valid_from=JAN)[0]
    res = mem.add("I moved to Lisbon.", user_id=U, valid_from=JUN)
    lisbon = res[0]
    d = res.decisions[0]
    assert d.action is Action.STORE and d.supersedes == [porto.id]
    assert "supersedes" in d.reason and "Porto" not in d.reason  # reasons never quote content

    old = mem.get(porto.id, user_id=U)
    assert old.status.value == "superseded" and old.valid_to == JUN
    edge = graph_rows(mem, "MATCH (a:Memory)-[s:SUPERSEDES]->(b:Memory) RETURN a.id AS a, b.id AS b, "
                           "s.predicate AS p")
    assert edge == [{"a": lisbon.id, "b": porto.id, "p": "lives_in"}]
    closed = graph_rows(mem, "MATCH ()-[r:RELATES {memory_id: $id}]->() RETURN r.valid_to AS t", id=porto.id)
    assert closed and all(r["t"] == JUN.timestamp() for r in closed)

    # default retrieval: only the current address
    assert [h.id for h in mem.search("where do I live", user_id=U)] == [lisbon.id]
    # point-in-time: March was still Porto, September is Lisbon (search and the symbolic query agree)
    march = mem.search("where did I live", user_id=U, valid_at=MAR)
    assert [h.id for h in march] == [porto.id]
    assert "historical (superseded)" in march[0].explanation.warnings
    assert [r.id for r in mem.facts_at(MAR, predicate="lives_in", user_id=U)] == [porto.id]
    assert [r.id for r in mem.facts_at(SEP, predicate="lives_in", user_id=U)] == [lisbon.id]
    assert [r.id for r in mem.fact_history("lives_in", user_id=U)] == [porto.id, lisbon.id]
    # the history stays queryable explicitly as well
    assert porto.id in [r.id for r in mem.query(user_id=U, statuses=["superseded"])]


def test_phone_number_changed_twice(mem: NeuSymMemory) -> None:
    first = mem.add("My phone number is 555-1234.", user_id=U, valid_from=JAN)[0]
    second = mem.add("My new number is 555-9876.", user_id=U, valid_from=MAR)[0]
    third = mem.add("My new number is 555-0000.", user_id=U, valid_from=JUN)[0]
    history = mem.fact_history("phone", user_id=U)
    assert [(r.id, r.status.value) for r in history] == [
        (first.id, "superseded"), (second.id, "superseded"), (third.id, "active")]
    assert history[0].valid_to == MAR and history[1].valid_to == JUN
    assert [r.id for r in mem.facts_at(datetime(2024, 4, 1, tzinfo=UTC), predicate="phone", user_id=U)] == [second.id]
    current = mem.query(user_id=U, predicate="phone")
    assert [r.id for r in current] == [third.id]
    # each supersession is audited on the memory it ended
    assert [h["action"] for h in mem.history(first.id, user_id=U)] == ["admit", "supersede"]
    assert mem.history(second.id, user_id=U)[-1]["details"]["by"] == third.id


def test_coffee_preference_flipped_both_ways(mem: NeuSymMemory) -> None:
    loves = mem.add("I love coffee.", user_id=U)[0]
    flip = mem.add("I don't like coffee anymore.", user_id=U)
    assert flip.decisions[0].supersedes == [loves.id]
    assert mem.get(loves.id, user_id=U).status.value == "superseded"
    hates = mem.add("I prefer tea over coffee.", user_id=U)  # prefers(coffee, False): same sign, no conflict
    assert hates.decisions[0].supersedes == []
    again = mem.add("Actually I love coffee again.", user_id=U)
    assert flip[0].id in again.decisions[0].supersedes
    assert hates[0].id in again.decisions[0].supersedes  # the rejected alternative flipped back too
    live = {r.content for r in mem.query(user_id=U, predicate="likes")}
    assert live == {"Actually I love coffee again."}


def test_allergy_vs_pet_is_flagged_not_superseded(mem: NeuSymMemory) -> None:
    allergy = mem.add("I'm allergic to cats.", user_id=U)[0]
    res = mem.add("I have a cat named Tom.", user_id=U)
    pet = res[0]
    assert res.decisions[0].contradicts == [allergy.id] and res.decisions[0].supersedes == []
    assert "contradiction" in mem.get(allergy.id, user_id=U).flags and "contradiction" in pet.flags
    assert {mem.get(i, user_id=U).status.value for i in (allergy.id, pet.id)} == {"active"}
    link = graph_rows(mem, "MATCH (a)-[c:CONFLICTS_WITH]->(b) RETURN a.id AS a, b.id AS b, c.rule AS rule")
    assert link == [{"a": pet.id, "b": allergy.id, "rule": "allergy"}]
    queue = {(i.kind, i.memory_id) for i in mem.review_queue(user_id=U)}
    assert queue == {("contradiction", allergy.id), ("contradiction", pet.id)}
    # both are still retrievable: a contradiction is information, not an update
    assert {h.id for h in mem.search("cat", user_id=U)} >= {allergy.id, pet.id}
    # a vegetarian who loves steak is the same kind of contradiction
    mem.add("I am vegetarian.", user_id="bo")
    steak = mem.add("I love steak.", user_id="bo")
    assert steak.decisions[0].contradicts


def test_ask_strategy_marks_both_pending_with_warning(make_memory) -> None:  # type: ignore[no-untyped-def]
    mem = make_memory(governance=GovernancePolicy(conflict_strategy="ask"))
    a = mem.add("I work at Google.", user_id=U)[0]
    res = mem.add("I work at Spotify.", user_id=U)
    b = res[0]
    assert res.decisions[0].action is Action.REVIEW and res.decisions[0].conflicts_with == [a.id]
    for mid in (a.id, b.id):
        rec = mem.get(mid, user_id=U)
        assert rec.status.value == "pending" and "conflict_pending" in rec.flags
    hits = mem.search("where do I work", user_id=U)
    assert {h.id for h in hits} == {a.id, b.id}
    assert all("conflicting memory pending review" in h.explanation.warnings for h in hits)
    assert graph_rows(mem, "MATCH (x)-[:CONFLICTS_WITH]->(y) RETURN x.id AS x, y.id AS y") == [{"x": b.id, "y": a.id}]
    # review: the user confirms Spotify; Google becomes history
    mem.review_approve(b.id, user_id=U)
    assert mem.get(b.id, user_id=U).status.value == "active"
    old = mem.get(a.id, user_id=U)
    assert old.status.value == "superseded" and old.valid_to is not None and "conflict_pending" not in old.flags
    assert mem.review_queue(user_id=U, kind="conflict") == []


def test_per_predicate_strategy_and_source_trust(make_memory) -> None:  # type: ignore[no-untyped-def]
    mem = make_memory(governance=GovernancePolicy(conflict_strategy="source_trust"))
    stated = mem.add("I live in Ghent.", user_id=U)[0]
    guessed = mem.add("I live in Brussels.", user_id=U, origin="agent")
    assert guessed.decisions[0].conflicts_with == [stated.id]  # an inference does not overwrite a statement
    assert mem.get(stated.id, user_id=U).status.value == "active"
    assert guessed[0].status.value == "pending"
    told = mem.add("I live in Antwerp.", user_id=U)  # the user themself: trusted at least as much -> recency
    assert stated.id in told.decisions[0].supersedes
    mem.configure_governance(conflict_strategy_by_predicate={"married_to": "ask"})
    mem.add("I'm married to Ana.", user_id="lee")
    res = mem.add("I'm married to Bea.", user_id="lee")
    assert res.decisions[0].conflicts_with and not res.decisions[0].supersedes


def test_weak_claim_never_overwrites_and_backfilled_history(mem: NeuSymMemory) -> None:
    home = mem.add("I live in Lisbon.", user_id=U, valid_from=JUN)[0]
    maybe = mem.add("Maybe I live in Paris?", user_id=U)
    assert maybe.decisions[0].conflicts_with == [home.id] and mem.get(home.id, user_id=U).status.value == "active"
    # an older fact added later is stored as history, not as the current value
    past = mem.add("I live in Porto.", user_id=U, valid_from=JAN)
    assert past.decisions[0].superseded_by == home.id
    rec = mem.get(past[0].id, user_id=U)
    assert rec.status.value == "superseded" and rec.valid_to == JUN
    assert [r.id for r in mem.facts_at(MAR, predicate="lives_in", user_id=U)] == [past[0].id]
    # "no longer" ends a state without a new value
    ended = mem.add("I no longer live in Lisbon.", user_id=U)
    assert home.id in ended.decisions[0].supersedes


def test_conflicts_stay_inside_a_tenant_and_span_its_sessions(mem: NeuSymMemory) -> None:
    mine = mem.add("I live in Porto.", user_id="a", session_id="s1")[0]
    mem.add("I live in Oslo.", user_id="b", session_id="s1")
    later = mem.add("I live in Lisbon.", user_id="a", session_id="s2")
    assert later.decisions[0].supersedes == [mine.id]
    assert [r.status.value for r in mem.query(user_id="b")] == ["active"]


def test_in_batch_update(mem: NeuSymMemory) -> None:
    res = mem.add([{"role": "user", "content": "My phone number is 555-1111."},
                   {"role": "user", "content": "My new number is 555-2222."}], user_id=U)
    by = {r.content: r for r in res}
    assert by["My phone number is 555-1111."].status.value == "superseded"
    assert by["My new number is 555-2222."].status.value == "active"
    assert graph_rows(mem, "MATCH (a)-[:SUPERSEDES]->(b) RETURN a.content AS a, b.content AS b") == [
        {"a": "My new number is 555-2222.", "b": "My phone number is 555-1111."}]


# ---------------------------------------------------------------------- LLM arbiter (scripted fakes)
def _arbiter_memory(make_memory, replies):  # type: ignore[no-untyped-def]
    llm = ScriptedChatModel(replies)
    mem = make_memory(llm=llm, extractor=RuleExtractor(), governance=GovernancePolicy(llm_arbiter=True))
    mem.add("I'm allergic to cats.", user_id=U)
    return mem, llm


def test_llm_arbiter_can_clear_a_contradiction(make_memory) -> None:  # type: ignore[no-untyped-def]
    mem, llm = _arbiter_memory(make_memory, ['{"verdict": "compatible", "reason": "allergy is mild"}'])
    res = mem.add("I have a cat named Tom.", user_id=U)
    assert res.decisions[0].contradicts == [] and "contradiction" not in res[0].flags
    assert res.decisions[0].details["arbitrated"][0]["arbiter"] == "compatible"  # type: ignore[index]
    assert len(llm.calls) == 1 and "allergic to cats" in llm.calls[0][1]


def test_llm_arbiter_malformed_then_valid(make_memory) -> None:  # type: ignore[no-untyped-def]
    mem, llm = _arbiter_memory(make_memory, ["not json at all", '{"verdict": "contradiction"}'])
    res = mem.add("I have a cat named Tom.", user_id=U)
    assert res.decisions[0].contradicts and len(llm.calls) == 2
    assert "not valid JSON" in llm.calls[1][1]


def test_llm_arbiter_failing_falls_back_to_rules(make_memory) -> None:  # type: ignore[no-untyped-def]
    mem, llm = _arbiter_memory(make_memory, [RuntimeError("provider down")] * 3)
    res = mem.add("I have a cat named Tom.", user_id=U)
    assert res.decisions[0].contradicts  # flagged by the rule anyway
    assert res.decisions[0].details["contradictions"][0]["arbiter"] == "rules-fallback"  # type: ignore[index]


def test_a_move_dated_before_it_was_said_supersedes_an_undated_home(mem: NeuSymMemory) -> None:
    """Every memory has a validity start; one that is only *when it was said* ("I live in Porto", today) is not a
    stated date, so "I moved to Lisbon last month" said after it is the current value (the demo's story)."""
    porto = mem.add("I live in Porto.", user_id="mv")[0]
    res = mem.add("I moved to Lisbon last month.", user_id="mv")
    assert res.decisions[0].supersedes == [porto.id]
    assert mem.get(porto.id, user_id="mv").status.value == "superseded"
    assert mem.get(res[0].id, user_id="mv").status.value == "active"
