"""LLMExtractor: validation, bounded retries and the rule fallback, driven by scripted and LangChain fake models."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from datetime import UTC, datetime
from typing import Any

import pytest

from neusym.errors import ExtractionError, InvalidInputError
from neusym.extraction import Extractor, LLMExtractor, RuleExtractor
from neusym.extraction.prompts import PROMPT_VERSION, SYSTEM_PROMPT, LLMResponse, build_user_prompt
from neusym.llm import ScriptedChatModel
from neusym.record import MemoryType

NOW = datetime(2024, 5, 1, 15, 30, tzinfo=UTC)


def reply(*memories: dict[str, Any], **top: Any) -> str:
    return json.dumps({"memories": list(memories), **top})


GOOD = reply(
    {
        "content": "Caroline lives in Berlin.",
        "type": "fact",
        "entities": ["Caroline", "Berlin", "  "],
        "triples": [
            {"subject": "I", "predicate": "livesIn", "object": "Berlin", "polarity": True, "confidence": 0.95}
        ],
        "tags": ["Location"],
        "confidence": 0.9,
        "importance": 0.7,
        "valid_from": "2024-04-01",
        "intent_signals": ["explicit_remember"],
    }
)


def extractor(*replies: str | BaseException, **kw: Any) -> tuple[LLMExtractor, ScriptedChatModel]:
    model = ScriptedChatModel(list(replies))
    return LLMExtractor(model, **kw), model


def test_valid_json() -> None:
    ext, model = extractor(GOOD)
    (out,) = ext.extract("I live in Berlin now.", speaker="Caroline", now=NOW)
    assert out.extractor == "llm"
    assert out.content == "Caroline lives in Berlin."
    assert out.type == MemoryType.FACT
    assert out.entities == ["Caroline", "Berlin"]
    assert [(t.subject, t.predicate, t.object, t.polarity, t.confidence) for t in out.triples] == [
        ("Caroline", "lives_in", "Berlin", True, 0.95)
    ]
    assert out.valid_from == datetime(2024, 4, 1, tzinfo=UTC)
    assert out.speaker == "Caroline"
    assert "location" in out.tags and PROMPT_VERSION in out.tags
    assert out.intent_signals == ["explicit_remember"]
    assert len(model.calls) == 1 and ext.last_error is None


def test_prompt_contents() -> None:
    ext, model = extractor(reply())
    ext.extract("I moved to Lisbon.", speaker="Ana", now=NOW, context=["Earlier: I lived in Porto.", "Hi!"])
    system, user = model.calls[0]
    assert system == SYSTEM_PROMPT
    assert '"memories"' in system and "lives_in" in system and "favourite_*" in system
    assert NOW.isoformat() in user and "SPEAKER: Ana" in user
    assert "Earlier: I lived in Porto." in user and "do not extract from them" in user
    assert "<message>\nI moved to Lisbon.\n</message>" in user


def test_user_prompt_caps_context() -> None:
    text = build_user_prompt(
        "x", speaker=None, now=NOW, context=[f"line {i}" for i in range(20)], max_context=3
    )
    assert "line 16" not in text and "line 17" in text and "line 19" in text
    assert "user (name unknown)" in text


def test_malformed_then_valid_retries_with_the_error() -> None:
    ext, model = extractor("Sure! Here are the memories: {memories: [oops", GOOD)
    out = ext.extract("I live in Berlin.", now=NOW)
    assert len(model.calls) == 2
    assert out[0].extractor == "llm"
    first, second = model.calls[0][1], model.calls[1][1]
    assert "previous reply was not valid JSON" not in first
    assert "previous reply was not valid JSON" in second and second.startswith(first)


def test_wrong_shape_is_retried() -> None:
    ext, model = extractor(json.dumps({"facts": ["lives in Berlin"]}), GOOD)
    assert ext.extract("I live in Berlin.", now=NOW)[0].extractor == "llm"
    assert len(model.calls) == 2
    assert "memories" in model.calls[1][1]


def test_always_malformed_falls_back_to_rules(caplog: pytest.LogCaptureFixture) -> None:
    ext, model = extractor("not json", "still not json", "{broken", retries=2)
    with caplog.at_level(logging.WARNING, logger="neusym.extraction.llm"):
        out = ext.extract("I live in Berlin.", speaker="Caroline", now=NOW)
    assert len(model.calls) == 3
    assert [x.extractor for x in out] == ["rules-fallback"]
    assert ("Caroline", "lives_in", "Berlin") in {(t.subject, t.predicate, t.object) for t in out[0].triples}
    assert ext.last_error and "ExtractionError" in ext.last_error
    assert any("falling back" in r.message for r in caplog.records)


def test_retries_zero_means_one_call() -> None:
    ext, model = extractor("nope", GOOD, retries=0)
    assert ext.extract("I live in Berlin.", now=NOW)[0].extractor == "rules-fallback"
    assert len(model.calls) == 1


def test_model_that_raises_falls_back() -> None:
    ext, model = extractor(RuntimeError("503"), TimeoutError("slow"), ConnectionError("down"))
    out = ext.extract("Always answer in French.", now=NOW)
    assert len(model.calls) == 3
    assert out[0].extractor == "rules-fallback" and out[0].type == MemoryType.INSTRUCTION
    assert ext.last_error is not None and "ConnectionError: down" in ext.last_error


def test_transient_error_then_success() -> None:
    ext, model = extractor(RuntimeError("rate limited"), GOOD)
    assert ext.extract("I live in Berlin.", now=NOW)[0].extractor == "llm"
    assert model.calls[1] == model.calls[0]  # a provider error is retried with the same prompt


def test_model_running_out_of_replies_falls_back() -> None:
    ext, model = extractor()  # ScriptedChatModel raises ExtractionError, which complete_json does not retry
    assert ext.extract("I'm allergic to peanuts.", now=NOW)[0].extractor == "rules-fallback"
    assert len(model.calls) == 1


def test_no_fallback_raises() -> None:
    ext, _ = extractor("x", "y", "z", fallback=None)
    with pytest.raises(ExtractionError):
        ext.extract("I live in Berlin.", now=NOW)


def test_custom_fallback_is_used() -> None:
    class Nothing:
        def extract(self, text: str, **kw: Any) -> list[Any]:
            return []

    ext, _ = extractor("x", fallback=Nothing(), retries=0)
    assert ext.extract("I live in Berlin.", now=NOW) == []


def test_json_in_fences_with_prose() -> None:
    ext, _ = extractor(f"Here you go:\n```json\n{GOOD}\n```\nLet me know if you need more!")
    assert ext.extract("I live in Berlin.", now=NOW)[0].extractor == "llm"


def test_extra_fields_are_ignored() -> None:
    payload = json.loads(GOOD)
    payload["model_notes"] = "thinking..."
    payload["memories"][0]["sentiment"] = "positive"
    payload["memories"][0]["triples"][0]["source_span"] = [0, 5]
    ext, _ = extractor(json.dumps(payload))
    (out,) = ext.extract("I live in Berlin.", now=NOW)
    assert out.content == "Caroline lives in Berlin." and len(out.triples) == 1


def test_top_level_list_and_single_memory_are_accepted() -> None:
    memory = {"content": "User likes tea.", "type": "preference"}
    for text in (json.dumps([memory]), json.dumps(memory)):
        ext, model = extractor(text)
        assert [x.content for x in ext.extract("I like tea.", now=NOW)] == ["User likes tea."]
        assert len(model.calls) == 1


def test_empty_memories_is_a_valid_answer() -> None:
    ext, model = extractor(reply())
    assert ext.extract("thanks!", now=NOW) == []
    ext, model = extractor(json.dumps({"memories": None}))
    assert ext.extract("lol", now=NOW) == [] and len(model.calls) == 1


def test_normalisation_and_clamping() -> None:
    text = reply(
        {"content": "   ", "type": "fact"},
        {
            "content": "Bob works for Acme and likes tea.",
            "type": "Personal Fact",
            "confidence": 7,
            "importance": "90%",
            "expires_in": -5,
            "plan_due": "next tuesday",
            "triples": [
                {"subject": "me", "predicate": "worksFor", "object": "Acme"},
                {"subject": "Bob", "predicate": "favorite color", "object": "blue", "confidence": -1},
                {"subject": "Bob", "predicate": "2fast", "object": "x"},
                {"subject": "", "predicate": "likes", "object": "tea"},
                ["Bob", "likes", "tea"],
                ["Bob", "likes", "tea"],
                "garbage",
            ],
            "entities": "Acme",
            "tags": None,
            "intent_signals": ["Third Party"],
        },
        {"content": "Plan: dentist.", "type": "goal", "plan_due": "2024-05-03T09:00:00"},
        {"content": "Some thing.", "type": "mystery"},
    )
    ext, _ = extractor(text)
    out = ext.extract("...", speaker="Bob", now=NOW)
    assert [x.content for x in out] == ["Bob works for Acme and likes tea.", "Plan: dentist.", "Some thing."]
    bob = out[0]
    assert bob.type == MemoryType.FACT
    assert bob.confidence == 1.0 and bob.importance == pytest.approx(0.9)
    assert bob.expires_in is None and bob.plan_due is None
    assert [(t.subject, t.predicate, t.object, t.confidence) for t in bob.triples] == [
        ("Bob", "works_at", "Acme", 1.0),
        ("Bob", "favourite_colour", "blue", 0.0),
        ("Bob", "likes", "tea", 1.0),
    ]
    # the rules' entity shape: named things, the subjects and the short objects the facts link
    assert bob.entities == ["Acme", "Bob", "blue", "tea"] and bob.intent_signals == ["third_party"]
    assert out[1].type == MemoryType.PLAN and out[1].plan_due == datetime(2024, 5, 3, 9, tzinfo=UTC)
    assert out[2].type == MemoryType.OBSERVATION


def test_nan_confidence_falls_back_to_default() -> None:
    ext, _ = extractor('{"memories": [{"content": "x is y", "confidence": NaN, "importance": Infinity}]}')
    (out,) = ext.extract("x is y", now=NOW)
    assert out.confidence == 0.8 and out.importance == 0.5


def test_response_model_is_lenient_per_field() -> None:
    parsed = LLMResponse.model_validate(
        {"memories": [{"content": 42, "valid_from": "yesterday", "expires_in": "600"}]}
    )
    assert parsed.memories[0].content == "42"
    assert parsed.memories[0].valid_from is None
    assert parsed.memories[0].expires_in == 600.0


def test_empty_text_does_not_call_the_model() -> None:
    ext, model = extractor(GOOD)
    assert ext.extract("   ", now=NOW) == [] and model.calls == []
    with pytest.raises(InvalidInputError):
        ext.extract(None)  # type: ignore[arg-type]


def test_constructor_validation() -> None:
    with pytest.raises(InvalidInputError):
        LLMExtractor(None)
    with pytest.raises(InvalidInputError):
        LLMExtractor(ScriptedChatModel([]), retries=-1)
    assert isinstance(LLMExtractor(ScriptedChatModel([])), Extractor)


def test_plain_callable_model() -> None:
    prompts: list[str] = []

    def fake(prompt: str) -> str:
        prompts.append(prompt)
        return GOOD

    out = LLMExtractor(fake).extract("I live in Berlin.", now=NOW)
    assert out[0].extractor == "llm" and SYSTEM_PROMPT in prompts[0]


def test_langchain_fake_chat_model() -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    model = FakeListChatModel(responses=["I cannot comply, here is prose instead.", f"```json\n{GOOD}\n```"])
    out = LLMExtractor(model, retries=1).extract("I live in Berlin.", speaker="Caroline", now=NOW)
    assert out[0].extractor == "llm" and out[0].triples[0].subject == "Caroline"


def test_langchain_fake_chat_model_failure_falls_back() -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    model = FakeListChatModel(responses=["no json here"])
    out = LLMExtractor(model, retries=1).extract("Remind me to call Ana tomorrow.", now=NOW)
    assert out[0].extractor == "rules-fallback" and out[0].type == MemoryType.PLAN
    assert out[0].plan_due == datetime(2024, 5, 2, tzinfo=UTC)


def test_fallback_receives_speaker_now_and_context() -> None:
    seen: dict[str, Any] = {}

    class Spy(RuleExtractor):
        def extract(self, text: str, **kw: Any) -> list[Any]:  # type: ignore[override]
            seen.update(kw)
            return super().extract(text, **kw)

    ext, _ = extractor("x", fallback=Spy(), retries=0)
    ext.extract("I live in Oslo.", speaker="Ola", now=NOW, context=["hello"])
    assert seen == {"speaker": "Ola", "now": NOW, "context": ["hello"]}


def test_engine_does_not_import_frameworks() -> None:
    code = (
        "import sys, neusym.extraction, neusym.extraction.llm; "
        "bad = [m for m in sys.modules if m.startswith(('langchain', 'llama_index'))]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_prompt_asks_for_every_graph_shape_the_rules_emit() -> None:
    """The LLM extractor must give the same shape of graph as the LLM-free one (issue 18): the relation families
    the clause reader emits are named in the prompt, each with an example."""
    from neusym.extraction import RuleExtractor

    rx = RuleExtractor()
    got = {
        t.predicate
        for text in (
            "Ines is reading 'Dune' by Frank Herbert, a novel about ecology.",
            "Mina went hiking with her brother in the Dolomites.",
            "Kemal enjoys water sports such as surfing and sailing.",
            "Aiko expressed gratitude for Ben's advice.",
        )
        for x in rx.extract(text)
        for t in x.triples
    }
    assert {"author_of", "is_a", "hike_with", "grateful_for", "likes"} <= got
    for shape in ("author_of", "is_a", "<verb>_with", "such as", "grateful_for", "aspect future"):
        assert shape in SYSTEM_PROMPT, shape
