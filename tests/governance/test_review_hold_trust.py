"""A review hold needs an older memory at least as confident as the new one (issue 30 item 2).

Junk kept as a 0.6 observation ("x y z") used to send a later real fact ("I play the cello on Sundays") to review
as its "possible update" (p=0.98), hiding it from default search. The rule: a hold keeps the new memory out of
default reads, so only an older memory at least as credible may cost it that; the pair stays in the audit. Equal
confidence still holds, as before. Real MiniLM (the update pair model runs on the vectors it was fitted on).
"""

from __future__ import annotations

import pytest

from neusym import NeuSymMemory

pytestmark = pytest.mark.minilm


def test_junk_never_holds_a_confident_later_fact(sem: NeuSymMemory) -> None:
    junk = sem.add("x y z", user_id="j")[0]
    assert junk.confidence < 0.9
    res = sem.add("I play the cello on Sundays", user_id="j")
    fact, decision = res[0], res.decisions[0]
    assert decision.action.value == "store" and fact.status.value == "active", decision.reason
    assert not decision.conflicts_with and "not held for review" in decision.reason
    assert "cello" in sem.search("what instrument do I play?", user_id="j", k=1)[0].content
    assert sem.review_queue(user_id="j") == []
    assert sem.get(junk.id, user_id="j").status.value == "active"  # the older memory is left as it was
    audit = sem.history(fact.id, user_id="j")
    assert any("update_not_held" in (e.get("details") or {}) for e in audit)


def test_an_equally_confident_older_memory_still_holds(sem: NeuSymMemory) -> None:
    sem.add("I'm learning Spanish", user_id="k")
    res = sem.add("I'm learning Japanese now", user_id="k")
    assert res.decisions[0].action.value == "review" and res.decisions[0].conflicts_with
