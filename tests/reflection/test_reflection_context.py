"""The context builder: never over budget (tiktoken-counted), careful-use marks, window and reflections."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from reflection_helpers import thirty_turns, write_session

from neusym import NeuSymMemory
from neusym.errors import InvalidInputError
from neusym.reflection import ContextBuilder, get_token_counter


@pytest.fixture
def loaded(memory: NeuSymMemory) -> NeuSymMemory:
    write_session(memory, "ana", "s1", thirty_turns())
    memory.session_end(user_id="ana", session_id="s1")
    for i in range(40):
        memory.add(f"Travel log {i}: took train {i} from Porto to Lisbon, it cost {i + 20} euros", user_id="ana",
                   infer=False)
    return memory


MESSAGES = [("user", "We talked about my trip plans yesterday. " * 3), ("assistant", "Yes, Porto to Lisbon."),
            ("user", "What about the cost? " + "Please be detailed. " * 20), ("assistant", "Around 30 euros."),
            ("user", "And how is that going?")]


@pytest.mark.parametrize("budget", [0, 5, 30, 80, 150, 400, 1000, 4000])
def test_context_never_exceeds_its_budget(loaded: NeuSymMemory, budget: int) -> None:
    counter = get_token_counter()
    ctx = loaded.build_context("train from Porto to Lisbon cost", user_id="ana", budget_tokens=budget,
                               recent_messages=MESSAGES)
    assert ctx.tokens == counter.count(ctx.text) <= budget
    if budget >= 400:
        kinds = {i.kind for i in ctx.items}
        assert kinds == {"reflection", "memory", "message"}
        assert "## Reflections" in ctx.text and "## Recent conversation" in ctx.text
        assert ctx.text.rstrip().endswith("user: And how is that going?") or "Marks:" in ctx.text
    if budget == 4000:
        assert ctx.omitted == 0 or ctx.tokens > 1000


def test_window_is_the_latest_contiguous_turns(loaded: NeuSymMemory) -> None:
    ctx = loaded.build_context("cost", user_id="ana", budget_tokens=140, recent_messages=MESSAGES,
                               builder=ContextBuilder(reflection_share=0, memory_share=0, window_share=1,
                                                      k_reflections=0, k_memories=0))
    msgs = [i.order for i in ctx.items if i.kind == "message"]
    assert msgs and msgs == list(range(min(msgs), len(MESSAGES)))  # newest kept, no gaps
    assert 0 not in msgs  # the oldest, long turn did not fit


def test_conflicting_low_confidence_superseded_and_unreviewed_are_marked(memory: NeuSymMemory) -> None:
    low = memory.add("Ana might be allergic to peanuts", user_id="ana", confidence=0.3, infer=False)[0]
    a = memory.add("Ana's dentist appointment is on the 3rd", user_id="ana", infer=False)[0]
    b = memory.add("Ana's dentist appointment is on the 5th", user_id="ana", infer=False)[0]
    memory.store.link("CONFLICTS_WITH", [(b.id, a.id)])
    old = memory.add("Ana's dentist is Dr Costa", user_id="ana", infer=False)[0]
    memory.update(old.id, user_id="ana", status="superseded", valid_to=datetime(2025, 1, 31, tzinfo=UTC))
    pend = memory.add("Ana's dentist is Dr Silva", user_id="ana", infer=False)[0]
    memory.update(pend.id, user_id="ana", status="pending")
    default = memory.build_context("Ana dentist appointment peanuts", user_id="ana", budget_tokens=1500)
    assert pend.id not in default.memory_ids and default.withheld == 1  # unreviewed: withheld unless asked for
    assert "1 more record withheld until reviewed" in default.text and "Dr Silva" not in default.text
    ctx = memory.build_context("Ana dentist appointment peanuts", user_id="ana", budget_tokens=1500,
                               builder=ContextBuilder(include_unreviewed=True))
    marks = {i.memory_id: i.marks for i in ctx.items if i.kind == "memory"}
    assert "low confidence" in marks[low.id]
    assert "conflicting" in marks[a.id] and "conflicting" in marks[b.id]
    assert "superseded until 2025-01-31" in marks[old.id]
    assert "unreviewed" in marks[pend.id]
    assert "[low confidence]" in ctx.text and "Marks:" in ctx.text
    assert {i.memory_id for i in ctx.marked("conflicting")} >= {a.id, b.id}
    hist = memory.build_context("Ana dentist", user_id="ana", budget_tokens=1500,
                                builder=ContextBuilder(include_history=False))
    assert old.id not in hist.memory_ids


def test_context_respects_scope(memory: NeuSymMemory) -> None:
    memory.add("Alice keeps her passport in the blue drawer", user_id="alice", infer=False)
    memory.add("Bob keeps his passport in the red box", user_id="bob", infer=False)
    ctx = memory.build_context("where is the passport", user_id="bob", budget_tokens=500)
    assert "red box" in ctx.text and "blue drawer" not in ctx.text


def test_bad_budget_is_refused(memory: NeuSymMemory) -> None:
    with pytest.raises(InvalidInputError):
        memory.build_context("x", user_id="ana", budget_tokens=-1)


async def test_async_build_context(loaded: NeuSymMemory) -> None:
    ctx = await loaded.abuild_context("train cost", user_id="ana", budget_tokens=300)
    assert 0 < ctx.tokens <= 300
