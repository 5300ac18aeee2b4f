"""Issue 17's "also found" items on the write path: a memory is valid from its event time or, failing that, from
when it was stored (never "always valid"), so a point-in-time read before a change returns only the old value; and
every input gets a decision with a reason, a system message included."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from neusym import Decision, NeuSymMemory
from neusym.governance.decisions import Action

T0 = datetime(2025, 3, 1, tzinfo=UTC)


def test_validity_starts_at_the_event_or_the_ingestion(memory: NeuSymMemory) -> None:
    before = time.time()
    plain = memory.add("I like green tea.", user_id="u", infer=False)[0]
    assert plain.valid_from is not None and before - 1 <= plain.valid_from.timestamp() <= time.time() + 1
    assert plain.valid_from == plain.created_at
    dated = memory.add("I started at Acme in 2021.", user_id="u")[0]
    assert dated.valid_from is not None and dated.valid_from.year == 2021  # the stated event time
    given = memory.add("I live in Porto.", user_id="u", valid_from=T0)[0]
    assert given.valid_from == T0
    assert all(r.valid_from is not None for r in memory.query(user_id="u", limit=100))


def test_point_in_time_before_a_supersession_sees_only_the_old_value(memory: NeuSymMemory) -> None:
    """The newer value used to have valid_from=None ("always valid"): before the change both values came back."""
    porto = memory.add("I live in Porto.", user_id="u", valid_from=T0)[0]
    time.sleep(0.05)
    between = time.time()
    time.sleep(0.05)
    lisbon = memory.add("I live in Lisbon.", user_id="u")[0]  # no event time: valid from now
    assert memory.get(porto.id, user_id="u").status.value == "superseded"
    assert [r.id for r in memory.facts_at(between, predicate="lives_in", user_id="u")] == [porto.id]
    hits = memory.search("where do I live", user_id="u", valid_at=between, k=5)
    assert [h.id for h in hits] == [porto.id]
    assert [r.id for r in memory.facts_at(time.time() + 1, predicate="lives_in", user_id="u")] == [lisbon.id]


def test_a_system_message_gets_a_decision_with_a_reason(memory: NeuSymMemory) -> None:
    res = memory.add([{"role": "system", "content": "You are a helpful assistant."},
                      {"role": "user", "content": "I live in Porto."}], user_id="u")
    assert [r.content for r in res] == ["I live in Porto."]
    refused = [d for d in res.decisions if d.action is Action.REJECT]
    assert len(refused) == 1 and isinstance(refused[0], Decision)
    assert "system message" in refused[0].reason and refused[0].record.source.origin == "system"
    alone = memory.add([{"role": "system", "content": "Always answer in French."}], user_id="u")
    assert list(alone) == [] and [d.action for d in alone.decisions] == [Action.REJECT]
    assert any(e["action"] == "reject" and "system message" in e["reason"] for e in memory.audit_log(user_id="u"))


def test_origin_system_is_the_applications_trusted_fact(memory: NeuSymMemory) -> None:
    res = memory.add("The user's plan is Pro until 2026-01-01.", user_id="u", origin="system", infer=False)
    assert len(res) == 1 and res[0].source.origin == "system"
    assert res.decisions[0].action is Action.STORE and res.decisions[0].reason
