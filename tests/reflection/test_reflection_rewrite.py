"""Query rewriting before retrieval (off by default) and the LLM-free entity/topic resolution."""

from __future__ import annotations

from collections.abc import Callable

from neusym import NeuSymMemory
from neusym.extraction import RuleExtractor
from neusym.llm import ScriptedChatModel
from neusym.reflection import QueryRewriter, looks_vague

CONVO = [("user", "I signed up for the Lisbon half marathon in March."), ("assistant", "Great, good luck!"),
         ("user", "Training has been hard, my knee hurts after long runs.")]


def test_vagueness_detection() -> None:
    assert looks_vague("how is that going?")
    assert looks_vague("and what about her?")
    assert not looks_vague("When is the Lisbon half marathon?")
    assert not looks_vague("it " + "word " * 20)  # long queries stand on their own


def test_llm_rewrites_a_vague_follow_up() -> None:
    model = ScriptedChatModel(['{"query": "How is the training for the Lisbon half marathon going?"}'])
    out = QueryRewriter(model).rewrite("how is that going?", CONVO)
    assert out.method == "llm" and out.query == "How is the training for the Lisbon half marathon going?"
    assert "Lisbon half marathon" in model.calls[0][1] and "Follow-up: how is that going?" in model.calls[0][1]


def test_failing_llm_falls_back_to_entities() -> None:
    model = ScriptedChatModel(["not json"], repeat_last=True)
    out = QueryRewriter(model, extractor=RuleExtractor()).rewrite("how is that going?", CONVO)
    assert out.method == "entities" and out.query.startswith("how is that going? (")
    assert any(w in out.query.lower() for w in ("knee", "training", "runs", "lisbon"))


def test_without_llm_entities_and_topics_are_appended() -> None:
    out = QueryRewriter(extractor=RuleExtractor()).rewrite("and how is it now?", CONVO)
    assert out.method == "entities" and out.original == "and how is it now?"
    assert "knee" in out.topics or "training" in out.topics
    unchanged = QueryRewriter().rewrite("When is the Lisbon half marathon?", CONVO)
    assert unchanged.method == "unchanged" and unchanged.query == "When is the Lisbon half marathon?"
    assert QueryRewriter().rewrite("how is that going?", []).method == "unchanged"


def test_search_rewrite_flag_is_off_by_default(memory: NeuSymMemory) -> None:
    for text in ("I adopted a cat named Miso.", "Miso the cat hates the vacuum cleaner."):
        memory.add([{"role": "user", "content": text, "name": "Ana"}], user_id="ana", session_id="s1")
    memory.search("how is she doing?", user_id="ana")
    assert "rewritten_query" not in memory.last_timings.extra
    hits = memory.search("how is she doing?", user_id="ana", rewrite_query=True, k=2)
    rewritten = memory.last_timings.extra["rewritten_query"]
    assert rewritten != "how is she doing?" and "Miso" in rewritten
    assert hits and "Miso" in hits[0].content


def test_rewrite_query_uses_the_memory_llm(make_memory: Callable[..., NeuSymMemory]) -> None:
    model = ScriptedChatModel(['{"query": "How is Miso the cat doing?"}'])
    mem = make_memory(llm=model, extractor=RuleExtractor())
    mem.add("I adopted a cat named Miso.", user_id="ana", infer=False)
    out = mem.rewrite_query("how is she doing?", user_id="ana")
    assert out.method == "llm" and out.query == "How is Miso the cat doing?"
    assert "I adopted a cat named Miso." in model.calls[0][1]
