"""Corrections of multi-valued memories end to end, and rollbacks that must leave exactly one current value.

A correction that names one value of a listed memory supersedes it and the engine writes the corrected successor
(DERIVED_FROM both, triples of its own, audited); rolling the supersession back ends the successor too, and so does
it end every other memory of the write that stated the newer value. Real MiniLM (the update model reads meaning),
real stores. Sentences are not taken from the governance benchmark.
"""

from __future__ import annotations

import pytest
from gov_helpers import JAN, graph_rows, status

from neusym import NeuSymMemory

pytestmark = pytest.mark.minilm


def _correct(sem: NeuSymMemory, uid: str) -> tuple[str, str, str]:
    old = sem.add("I speak Dutch, Polish and Greek.", user_id=uid, valid_from=JAN)[0]
    res = sem.add("Actually it's Turkish, not Greek.", user_id=uid)
    made = [r for r in res if r.metadata.get("derived") == "correction"]
    assert len(made) == 1, [d.reason for d in res.decisions]
    correction = next(r for r in res if r.id != made[0].id)
    return old.id, correction.id, made[0].id


def test_a_correction_of_one_listed_value_keeps_the_others_current(sem: NeuSymMemory) -> None:
    old, correction, made = _correct(sem, "s1")
    succ = sem.get(made, user_id="s1")
    assert succ.content == "I speak Dutch, Polish and Turkish."
    assert status(sem, old, "s1") == "superseded" and succ.status.value == "active"
    assert {t.object for t in succ.triples} >= {"Dutch", "Polish", "Turkish"}  # its own facts, re-extracted
    assert succ.valid_from == sem.get(old, user_id="s1").valid_from  # a correction: the old value never held
    links = graph_rows(sem, "MATCH (a:Memory {id: $id})-[r:DERIVED_FROM]->(b:Memory) RETURN b.id AS id, "
                            "r.role AS role, r.kind AS kind", id=made)
    assert {(r["id"], r["role"], r["kind"]) for r in links} == {(old, "corrected", "correction"),
                                                                 (correction, "correction", "correction")}
    admit = [e for e in sem.history(made, user_id="s1") if e["action"] == "admit"]
    assert admit and f"engine-made correction of memory {old} by memory {correction}" in admit[0]["reason"]
    sup = [e for e in sem.history(old, user_id="s1") if e["action"] == "supersede"]
    assert sup and sup[0]["details"]["by"] == correction and sup[0]["details"]["successor"] == made
    top = sem.search("Which languages do I speak?", user_id="s1", k=5, touch=False)
    current = " ".join(h.memory.content for h in top)
    assert "Dutch" in current and "Turkish" in current and "Greek." not in current.replace("not Greek", "")


def test_rolling_back_the_correction_ends_its_successor(sem: NeuSymMemory) -> None:
    old, correction, made = _correct(sem, "s2")
    sem.rollback(old, user_id="s2")
    assert status(sem, old, "s2") == "active"
    assert status(sem, correction, "s2") == "superseded"
    assert status(sem, made, "s2") == "superseded"
    assert any(e["action"] == "rollback" for e in sem.history(old, user_id="s2"))
    ended = [e for e in sem.history(made, user_id="s2") if e["action"] == "supersede"]
    assert ended and "engine-made successor" in ended[-1]["reason"]


def test_a_single_valued_correction_writes_no_successor(sem: NeuSymMemory) -> None:
    sem.add("My favourite painter is Turner.", user_id="s3", valid_from=JAN)
    res = sem.add("Sorry, not Turner, it's Constable.", user_id="s3")
    assert not [r for r in res if r.metadata.get("derived")]


def test_rollback_ends_every_memory_of_the_write_that_stated_the_new_value(sem: NeuSymMemory) -> None:
    old = sem.add("I live in Utrecht.", user_id="s4", valid_from=JAN)[0]
    res = sem.add([{"role": "user", "content": "Moved out of Utrecht last week."},
                   {"role": "user", "content": "Groningen is home now."}], user_id="s4")
    assert status(sem, old.id, "s4") == "superseded", [d.reason for d in res.decisions]
    sem.rollback(old.id, user_id="s4")
    assert status(sem, old.id, "s4") == "active"
    current = [r.content for r in res if status(sem, r.id, "s4") == "active"]
    assert current == [], current  # the old value is the one current value again


def test_rollback_of_a_memory_superseded_twice_in_one_write(sem: NeuSymMemory) -> None:
    old = sem.add("My phone number is 0711 5550 1234.", user_id="s5", valid_from=JAN)[0]
    res = sem.add([{"role": "user", "content": "My number changed to 0711 5550 9876."},
                   {"role": "assistant", "content": "Noted, your phone number is now 0711 5550 9876 instead of "
                                                    "0711 5550 1234."}], user_id="s5")
    by = [d.record.id for d in res.decisions if old.id in d.supersedes]
    assert len(by) == 2, [d.reason for d in res.decisions]
    sem.rollback(old.id, user_id="s5")
    assert status(sem, old.id, "s5") == "active"
    assert [status(sem, b, "s5") for b in by] == ["superseded", "superseded"]
    with pytest.raises(Exception, match="nothing to roll back"):  # both supersessions were undone by that one call
        sem.rollback(old.id, user_id="s5")
