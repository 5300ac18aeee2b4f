"""Updates that arrive through other channels than the user's own statement, and attributes asked for in words.

An assistant turn that restates the user's turn of the same call carries the user's trust; a trusted tool's record
of the user's data updates it (audited as such), and so does the agent writing through its memory tools; a document
is held for review (and an agent's too under ``update_min_trust=0.75``); and
``fact_history``/``facts_at`` accept "where do I live". Real MiniLM (the update model reads meaning), real stores.
Sentences are not taken from the governance benchmark.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from gov_helpers import JAN, status

from neusym import NeuSymMemory

pytestmark = pytest.mark.minilm


def test_assistant_restating_the_user_carries_the_users_trust(sem: NeuSymMemory) -> None:
    old = sem.add("I work at Unilever.", user_id="a1", valid_from=JAN)[0]
    res = sem.add([{"role": "user", "content": "Today I signed my contract with Danone."},
                   {"role": "assistant", "content": "Congratulations! So you've left Unilever and work at Danone "
                                                    "now, noted."}], user_id="a1")
    agent = next(d for d in res.decisions if d.record.source.origin == "agent")
    assert agent.details.get("restates_user") and agent.action.value == "store"
    assert agent.record.source.origin == "agent"  # provenance is kept
    assert "restates the user's message" in agent.reason
    assert status(sem, old.id, "a1") == "superseded"
    assert any(old.id in d.supersedes for d in res.decisions)


def test_assistant_turn_that_restates_nothing_keeps_the_agent_trust(sem: NeuSymMemory) -> None:
    res = sem.add([{"role": "user", "content": "What a week."},
                   {"role": "assistant", "content": "Try restarting the router before calling support."}],
                  user_id="a2")
    agent = next(d for d in res.decisions if d.record.source.origin == "agent")
    assert not agent.details.get("restates_user")


def test_a_trusted_tool_record_of_the_users_data_updates_it(sem: NeuSymMemory) -> None:
    old = sem.add("My delivery address is Rosenweg 3, Ulm.", user_id="t1", valid_from=JAN)[0]
    res = sem.add("Address book sync: delivery address for this customer changed to Marktplatz 9, Augsburg.",
                  user_id="t1", origin="tool")
    d = res.decisions[0]
    assert old.id in d.supersedes, d.reason
    assert "trusted tool record" in d.reason
    audit = [h for h in sem.history(old.id, user_id="t1") if h["action"] == "supersede"]
    assert audit and "tool" in str(audit[-1]["details"].get("why"))


def test_an_agent_write_updates_unless_the_policy_asks_for_review(sem: NeuSymMemory) -> None:
    """The agent is the user's delegate at the default ``update_min_trust`` (0.7); a stricter policy holds its
    changes for review and replaces nothing."""
    old = sem.add("The user lives in Graz.", user_id="g1", valid_from=JAN)[0]
    res = sem.add("The user moved to Linz last month.", user_id="g1", origin="agent")
    assert old.id in res.decisions[0].supersedes, res.decisions[0].reason
    sem.configure_governance(update_min_trust=0.75)
    try:
        old2 = sem.add("The user works at Voestalpine.", user_id="g2", valid_from=JAN)[0]
        res2 = sem.add("The user left Voestalpine and joined Andritz.", user_id="g2", origin="agent")
        assert old2.id not in res2.decisions[0].supersedes
        assert status(sem, old2.id, "g2") == "active"
    finally:
        sem.configure_governance(update_min_trust=0.7)


def test_a_document_does_not_replace_a_value_on_its_own(sem: NeuSymMemory) -> None:
    old = sem.add("My delivery address is Rosenweg 3, Ulm.", user_id="t2", valid_from=JAN)[0]
    res = sem.add("Address book sync: delivery address for this customer changed to Marktplatz 9, Augsburg.",
                  user_id="t2", origin="document")
    assert old.id not in res.decisions[0].supersedes
    assert status(sem, old.id, "t2") == "active"


def test_fact_history_and_facts_at_take_the_attribute_in_words(sem: NeuSymMemory) -> None:
    sem.add("I live in Porto.", user_id="h1", valid_from=JAN)
    sem.add("I moved to Lisbon.", user_id="h1", valid_from=datetime(2024, 6, 10, tzinfo=UTC))
    by_name = [r.content for r in sem.fact_history("lives_in", user_id="h1")]
    assert by_name == ["I live in Porto.", "I moved to Lisbon."]
    assert [r.content for r in sem.fact_history("where do I live?", user_id="h1")] == by_name
    assert [r.content for r in sem.fact_history("wo wohne ich", user_id="h1")] == by_name
    march = datetime(2024, 3, 1, tzinfo=UTC)
    assert [r.content for r in sem.facts_at(march, predicate="where do I live", user_id="h1")] == ["I live in Porto."]
    assert sem.governance.predicate_for("who is my manager") == "reports_to"
