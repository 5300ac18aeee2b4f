"""Reflectors without a database: schema validation, retries, clear failure, budgets and hierarchical batching."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from reflection_helpers import CitingModel, reply

from neusym import MemoryRecord, Scope, Triple
from neusym.errors import InvalidInputError
from neusym.llm import ScriptedChatModel
from neusym.reflection import (
    ExtractiveReflector,
    LLMReflector,
    ReflectionBudget,
    ReflectionError,
    get_token_counter,
    reflect_records,
)
from neusym.reflection.prompts import REFLECT_SYSTEM

SCOPE = Scope(user_id="ana", session_id="s1")
T0 = datetime(2025, 1, 1, tzinfo=UTC)


def rec(text: str, i: int = 0, **kw: Any) -> MemoryRecord:
    kw.setdefault("entities", [])
    return MemoryRecord(content=text, scope=SCOPE, created_at=T0 + timedelta(minutes=i), seq=i + 1, **kw)


def test_token_counter_is_tiktoken() -> None:
    counter = get_token_counter()
    assert counter.exact and counter.name == "tiktoken:cl100k_base"
    assert counter.count("hello world") == 2
    long = "word " * 500
    assert counter.count(counter.truncate(long, 37)) <= 37


def test_llm_reflection_maps_aliases_to_ids() -> None:
    records = [rec("I live in Porto.", 0), rec("I moved to Lisbon.", 1), rec("I like tea.", 2)]
    model = ScriptedChatModel([reply("Ana moved from Porto to Lisbon; likes tea.", cited=["m1", "m2", "m3", "m99"],
                                     covered=["m3"], conflicts=[{"ids": ["m1", "m2"], "description": "city"}])])
    draft = reflect_records(records, LLMReflector(model), goal="where does Ana live?")
    assert draft.method == "llm" and draft.calls == 1 and draft.levels == 1
    assert draft.cited_ids == [r.id for r in records]  # the invented alias m99 maps to nothing
    assert draft.covered_ids == [records[2].id]
    assert draft.conflicts[0].ids == [records[0].id, records[1].id]
    assert draft.source_ids == [r.id for r in records]
    system, user = model.calls[0]
    assert system == REFLECT_SYSTEM and "Goal: where does Ana live?" in user and "m1 (2025-01-01" in user


def test_malformed_then_valid_output_is_retried() -> None:
    records = [rec("I live in Porto.")]
    model = ScriptedChatModel(["Sure! Here is a summary: Ana lives in Porto.", '{"summary": ""}',
                               reply("Ana lives in Porto.", cited=["m1"])])
    draft = reflect_records(records, LLMReflector(model, retries=2))
    assert draft.summary == "Ana lives in Porto." and len(model.calls) == 3
    assert "not valid JSON for the schema" in model.calls[1][1]


def test_model_that_always_fails_raises_a_clear_error() -> None:
    records = [rec("I live in Porto.")]
    model = ScriptedChatModel(["no json here"], repeat_last=True)
    with pytest.raises(ReflectionError, match="nothing was changed"):
        reflect_records(records, LLMReflector(model, retries=2))
    assert len(model.calls) == 3  # bounded: one try plus two retries


def test_structured_output_is_used_when_the_model_offers_it() -> None:
    class StructuredFake:  # the LangChain ``with_structured_output`` shape
        def __init__(self) -> None:
            self.schemas: list[Any] = []

        def with_structured_output(self, schema: Any) -> Any:
            self.schemas.append(schema)
            outer = self

            class Bound:
                def invoke(self, messages: Any) -> dict[str, Any]:
                    return {"summary": "structured summary", "cited": ["m1"], "importance": 0.9}

            _ = outer
            return Bound()

        def invoke(self, messages: Any) -> str:  # pragma: no cover - must not be reached
            raise AssertionError("JSON path used although structured output works")

    fake = StructuredFake()
    draft = reflect_records([rec("I live in Porto.")], LLMReflector(fake))
    assert draft.summary == "structured summary" and draft.importance == 0.9 and fake.schemas


def test_langchain_fake_without_structured_output_falls_back_to_json() -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    fake = FakeListChatModel(responses=["oops", reply("Ana lives in Porto.", cited=["m1"])])
    draft = reflect_records([rec("I live in Porto.")], LLMReflector(fake))
    assert draft.summary == "Ana lives in Porto." and draft.cited_ids


def test_input_budget_is_respected_with_hierarchical_batching() -> None:
    counter = get_token_counter()
    records = [rec(f"Memory number {i}: on day {i} I walked {i * 7} steps around the lake with Rui.", i)
               for i in range(80)]
    budget = ReflectionBudget(input_tokens=700, output_tokens=120)
    model = CitingModel()
    draft = reflect_records(records, LLMReflector(model), budget=budget, counter=counter)
    assert draft.calls == len(model.calls) > 2 and draft.levels >= 2
    for system, user in model.calls:  # every prompt, counted with tiktoken, fits the input budget
        assert counter.count(system) + counter.count(user) <= budget.input_tokens
    assert draft.max_prompt_tokens <= budget.input_tokens
    assert draft.summary_tokens <= budget.output_tokens
    assert draft.source_ids == [r.id for r in records]  # nothing silently dropped
    assert set(draft.cited_ids) == {r.id for r in records}  # citations flow up the summary tree
    # level 2 summarises the level-1 summaries, not raw memories
    assert "Summary 1 of" in model.calls[-1][1] or "Summary" in model.calls[-1][1]


def test_oversized_single_memory_is_truncated_not_dropped() -> None:
    counter = get_token_counter()
    big = rec("lorem ipsum " * 2000, 0)
    records = [big, rec("I live in Porto.", 1)]
    budget = ReflectionBudget(input_tokens=800, output_tokens=100)
    model = CitingModel()
    draft = reflect_records(records, LLMReflector(model), budget=budget, counter=counter)
    assert big.id in draft.truncated_ids and big.id in draft.source_ids
    assert all(counter.count(s) + counter.count(u) <= 800 for s, u in model.calls)


def test_budget_too_small_to_converge_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="two summaries"):
        reflect_records([rec("x")], LLMReflector(CitingModel()),
                        budget=ReflectionBudget(input_tokens=400, output_tokens=200))


def test_extractive_dedupes_keeps_dates_numbers_and_notes_conflicts() -> None:
    porto = rec("Ana: I live in Porto.", 0, entities=["Ana", "Porto"],
                triples=[Triple(subject="Ana", predicate="lives_in", object="Porto")])
    porto.source.speaker = "Ana"
    lisbon = rec("Ana: I moved to Lisbon.", 5, entities=["Ana", "Lisbon"],
                 triples=[Triple(subject="Ana", predicate="lives_in", object="Lisbon")])
    lisbon.source.speaker = "Ana"
    coffee1 = rec("I love specialty coffee and flat whites", 1, entities=["coffee"])
    coffee2 = rec("I love specialty coffee and flat whites!", 3, entities=["coffee"])
    budget_rec = rec("My laptop budget is 1800 euros", 2, entities=["laptop"],
                     valid_from=datetime(2025, 3, 14, tzinfo=UTC))
    records = [porto, coffee1, budget_rec, coffee2, lisbon]
    draft = reflect_records(records, ExtractiveReflector(), goal="laptop budget")
    s = draft.summary
    assert s.count("specialty coffee") == 1  # near-duplicates collapse onto the newest wording
    assert "1800" in s and "2025-03-14" in s
    assert s.startswith("Conflicts:") and 'newest: "Ana: I moved to Lisbon."' in s
    assert draft.conflicts and set(draft.conflicts[0].ids) == {porto.id, lisbon.id}
    assert {coffee1.id, coffee2.id} <= set(draft.covered_ids)
    assert "1800" in draft.goal_relevance
    assert draft.method == "extractive" and draft.calls == 1


def test_extractive_respects_output_budget_and_batches_hierarchically() -> None:
    counter = get_token_counter()
    records = [rec(f"Fact {i} about topic {i % 7}: the value was {i * 13} on 2024-05-{(i % 28) + 1:02d}", i,
                   entities=[f"topic {i % 7}"]) for i in range(300)]
    budget = ReflectionBudget(input_tokens=1200, output_tokens=150)
    draft = reflect_records(records, ExtractiveReflector(), budget=budget, counter=counter)
    assert draft.levels >= 2 and draft.calls > 2
    assert counter.count(draft.summary) <= budget.output_tokens
    assert len(draft.source_ids) == 300
    # what did not fit is neither cited nor covered, so it stays hot rather than being cooled unseen
    assert 0 < len(draft.covered_ids) < 300


def test_extractive_with_tiny_output_budget_still_returns_text() -> None:
    draft = reflect_records([rec("word " * 400, 0)], ExtractiveReflector(),
                            budget=ReflectionBudget(input_tokens=2000, output_tokens=16))
    assert draft.summary and get_token_counter().count(draft.summary) <= 16
