"""The clause reader, discourse markers, corrections, aspect and the per-fact details governance reads.

Sentences here are everyday statements in shapes the rule table has no regex for; each test states what a user
would expect the graph to hold, so a regression in the general mechanism (not one phrasing) fails it.
"""

from __future__ import annotations

import json
import zlib
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from neusym.extraction import Extraction, LLMExtractor, RuleExtractor
from neusym.extraction._lexicon import lemma, map_verb
from neusym.extraction.base import FactDetail
from neusym.extraction.semantic import SemanticPredicateMapper
from neusym.extraction.vocabulary import (
    FUNCTIONAL_PREDICATES,
    PREDICATE_SPECS,
    is_functional,
    normalise_predicate,
)
from neusym.llm import ScriptedChatModel
from neusym.record import Triple

NOW = datetime(2024, 5, 1, 15, 30, tzinfo=UTC)
RX = RuleExtractor()

Spo = tuple[str, str, str, bool]


def ext(text: str, **kw: Any) -> Extraction:
    out = RX.extract(text, now=NOW, **kw)
    assert len(out) == 1, out
    return out[0]


def spo(text: str, **kw: Any) -> set[Spo]:
    return {(t.subject, t.predicate, t.object, t.polarity) for t in ext(text, **kw).triples}


def fact(e: Extraction, predicate: str, obj: str) -> FactDetail:
    for t, f in zip(e.triples, e.facts, strict=True):
        if t.predicate == predicate and t.object == obj:
            return f
    raise AssertionError(f"no {predicate} {obj} in {e.triples}")


# ---------------------------------------------------------------------------------------------------- lemmas
@pytest.mark.parametrize(
    ("form", "base"),
    [
        ("attended", "attend"),
        ("moved", "move"),
        ("studies", "study"),
        ("planning", "plan"),
        ("hoped", "hope"),
        ("hopped", "hop"),
        ("visited", "visit"),
        ("created", "create"),
        ("went", "go"),
        ("taught", "teach"),
        ("using", "use"),
        ("watches", "watch"),
        ("tried", "try"),
        ("called", "call"),
        ("danced", "dance"),
        ("relocated", "relocate"),
        ("volunteers", "volunteer"),
        ("joined", "join"),
        ("baked", "bake"),
    ],
)
def test_lemma(form: str, base: str) -> None:
    assert lemma(form) == base


def test_lexicon_prefers_the_most_specific_key() -> None:
    assert map_verb("work", "at") == ("works_at", "fact")
    assert map_verb("work", "as") == ("job_title", "fact")
    assert map_verb("give", None, "up") == ("avoids", "fact")
    assert map_verb("frobnicate") is None


# ---------------------------------------------------------------------------------------------------- clause facts
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Melanie made a plate in pottery class.", {("Melanie", "created", "plate", True)}),
        (
            "Aisha volunteers at an animal shelter on weekends.",
            {("Aisha", "volunteers_at", "animal shelter", True)},
        ),
        ("Lucy works remotely for a design agency.", {("Lucy", "works_at", "design agency", True)}),
        ("The kids go to Lincoln Elementary.", {("kids", "goes_to", "Lincoln Elementary", True)}),
        ("The office moved to the fourth floor.", {("office", "located_in", "fourth floor", True)}),
        ("We're renting an apartment in Brooklyn.", {("user", "lives_in", "Brooklyn", True)}),
        ("Jenny lost her wallet at the airport.", {("Jenny", "lost", "wallet", True)}),
        ("Gina lost her job at Door Dash.", {("Gina", "works_at", "Door Dash", False)}),
        ("She started a new job at the city library.", set()),  # no referent for "she": nothing invented
        ("Olivia is engaged to a pilot named Ben.", {("Olivia", "partner_of", "Ben", True)}),
        ("Megan and Josh got married in Ohio.", {("Megan", "married_to", "Josh", True)}),
        ("John took a trip to Chicago.", {("John", "visited", "Chicago", True)}),
        ("Ellie's cat Mochi is afraid of thunder.", {("Mochi", "fears", "thunder", True)}),
        (
            "Maria gave talks at the homeless shelter where she volunteers.",
            {("Maria", "volunteers_at", "homeless shelter", True)},
        ),
    ],
)
def test_clause_facts(text: str, expected: set[Spo]) -> None:
    found = spo(text)
    assert expected <= found, found


def test_clause_reader_off_gives_rule_table_only() -> None:
    only_rules = RuleExtractor(clauses=False).extract("Melanie made a plate in pottery class.", now=NOW)
    assert not any(t.predicate == "created" for x in only_rules for t in x.triples)


def test_open_predicates_are_verb_lemmas_marked_as_clause_facts() -> None:
    e = ext("Ahmed repaired the roof after the storm.")
    f = fact(e, "repair", "roof")
    assert f.source == "clause" and f.verb == "repair" and not f.functional


@pytest.mark.parametrize(
    "text",
    [
        "Caroline believes conversations about identity are necessary.",  # reported content, not her doing
        "Strength training improved John's accuracy.",  # "Strength" is not a person
        "I love it.",  # a pronoun object names nothing
    ],
)
def test_no_junk_triples(text: str) -> None:
    for t in ext(text).triples:
        assert t.subject not in {"Strength", "Caroline"} and t.object.lower() not in {"it", "conversations"}


def test_concepts_become_entities_generic_nouns_do_not() -> None:
    e = ext("Caroline is busy at the shelter preparing for a fundraiser.")
    keys = {x.lower() for x in e.entities}
    assert "shelter" in keys and "caroline" in keys
    e2 = ext("Tim spends a lot of time with his friends in life.")
    assert not {"time", "life", "lot"} & {x.lower() for x in e2.entities}


# ---------------------------------------------------------------------------------------------------- discourse
@pytest.mark.parametrize(
    ("text", "triple"),
    [
        ("Btw, I'm vegetarian now.", ("user", "diet", "vegetarian", True)),
        (
            "Oh and I got promoted to senior engineer last week.",
            ("user", "job_title", "senior engineer", True),
        ),
        ("So, I work at Shopify now.", ("user", "works_at", "Shopify", True)),
        ("Actually, I live in Porto.", ("user", "lives_in", "Porto", True)),
        ("Anyway, I don't drink coffee anymore.", ("user", "avoids", "coffee", True)),
    ],
)
def test_leading_markers_do_not_stop_extraction(text: str, triple: Spo) -> None:
    assert triple in spo(text)


def test_change_and_correction_markers_are_signals() -> None:
    assert "update_marker" in ext("Btw, I'm vegetarian now.").intent_signals
    assert "correction" in ext("Actually, my birthday is on June 12.").intent_signals
    assert "update_marker" not in ext("I like green tea.").intent_signals


def test_correction_retracts_the_named_value() -> None:
    e = ext("I live in Seattle, not Portland.")
    assert ("user", "lives_in", "Seattle", True) in spo("I live in Seattle, not Portland.")
    old = fact(e, "lives_in", "Portland")
    assert old.retracts and old.negated and old.functional
    assert not fact(e, "lives_in", "Seattle").retracts


def test_correction_of_a_multi_valued_relation() -> None:
    e = ext("I speak French, not Spanish.")
    f = fact(e, "speaks", "Spanish")
    assert (
        f.retracts and f.negated and not f.functional
    )  # governance ends Spanish without touching other languages
    assert not fact(e, "speaks", "French").retracts


def test_not_x_but_y() -> None:
    e = ext("I'm not vegan, just vegetarian.")
    assert fact(e, "diet", "vegan").retracts
    assert fact(e, "diet", "vegetarian").aspect == "ongoing" and not fact(e, "diet", "vegetarian").negated


def test_switch_from_to() -> None:
    e = ext("I switched from Android to an iPhone.")
    assert fact(e, "uses", "iPhone").aspect == "ongoing"
    old = fact(e, "uses", "Android")
    assert old.retracts and old.aspect == "ended"


# ---------------------------------------------------------------------------------------------------- aspect
@pytest.mark.parametrize(
    ("text", "predicate", "obj", "aspect"),
    [
        ("John used to play drums when he was younger.", "plays", "drums", "habitual_past"),
        ("I no longer work at Deloitte.", "works_at", "Deloitte", "ended"),
        ("Caroline attended an LGBTQ support group.", "attended", "LGBTQ support group", "past_event"),
        ("Dan moved to Austin.", "lives_in", "Austin", "ongoing"),
        ("I recently joined a book club.", "member_of", "book club", "ongoing"),
        ("John plays drums.", "plays", "drums", "ongoing"),
        ("I'm going to move to Berlin.", "plans_to", "move to Berlin", "future"),
    ],
)
def test_aspect(text: str, predicate: str, obj: str, aspect: str) -> None:
    assert fact(ext(text), predicate, obj).aspect == aspect


def test_habitual_past_is_the_statement_aspect_and_a_signal() -> None:
    e = ext("John used to play drums when he was younger.")
    assert e.aspect == "habitual_past" and "habitual_past" in e.intent_signals


# ---------------------------------------------------------------------------------------------------- fact details
def test_facts_align_with_triples_and_spans_point_at_values() -> None:
    for text in [
        "My sister Ana works as a nurse at St. Mary's.",
        "Fatima speaks Arabic, English and Urdu.",
        "I live in Seattle, not Portland.",
        "Nate has a dog named Max.",
    ]:
        for e in RX.extract(text, now=NOW):
            assert len(e.facts) == len(e.triples)
            for t, f in zip(e.triples, e.facts, strict=True):
                assert f.predicate == t.predicate and f.negated == (not t.polarity)
                assert f.functional == is_functional(t.predicate)
                if f.value_span is not None:
                    a, b = f.value_span
                    assert e.content[a:b].lower() == t.object.lower()


def test_custom_extractions_get_default_facts() -> None:
    e = Extraction(
        content="Bob lives in Rome.", triples=[Triple(subject="Bob", predicate="lives_in", object="Rome")]
    )
    assert e.facts == [FactDetail(predicate="lives_in", functional=True, value_span=(13, 17))]
    mismatched = Extraction(
        content="x y",
        triples=[Triple(subject="a", predicate="likes", object="y")],
        facts=[FactDetail(predicate="lives_in")],
    )
    assert [f.predicate for f in mismatched.facts] == ["likes"]


def test_one_vocabulary_with_functional_flags_and_descriptions() -> None:
    assert set(FUNCTIONAL_PREDICATES) <= set(PREDICATE_SPECS)
    for name, spec in PREDICATE_SPECS.items():
        assert spec.description and spec.functional == (name in FUNCTIONAL_PREDICATES)
    assert PREDICATE_SPECS["lives_in"].functional and not PREDICATE_SPECS["speaks"].functional


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("relocated_to", "lives_in"),
        ("is_employed_by", "works_at"),
        ("took_up", "practises"),
        ("worksAt", "works_at"),
        ("favorite_color", "favourite_colour"),
        ("ceo_of", "ceo_of"),
        ("frobnicates", "frobnicates"),
    ],
)
def test_normalise_predicate(raw: str, canonical: str) -> None:
    assert normalise_predicate(raw) == canonical


# ---------------------------------------------------------------------------------------------------- semantic
class _KeywordEmbedder:
    """A deterministic stand-in for MiniLM: one dimension per keyword, so similarity is keyword overlap."""

    KEYS = ("live", "move", "relocate", "work", "employ", "paint", "create", "help", "teach")

    def __init__(self) -> None:
        self.calls = 0

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        rows = np.zeros((len(texts), len(self.KEYS) + 64), dtype=np.float32)
        for i, text in enumerate(texts):
            for j, key in enumerate(self.KEYS):
                rows[i, j] = text.lower().count(key)
            rows[i, len(self.KEYS) + zlib.crc32(text.encode()) % 64] = 0.05  # unrelated texts stay unrelated
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_semantic_mapper_maps_unknown_verbs_and_caches() -> None:
    emb = _KeywordEmbedder()
    mapper = SemanticPredicateMapper(emb, threshold=0.3)
    assert mapper.map("relocate over") == "lives_in"
    calls = emb.calls
    assert mapper.map("relocate over") == "lives_in" and emb.calls == calls  # cached
    assert mapper.map("frobnicate") is None


class _StubMapper:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def map(self, phrase: str) -> str | None:
        self.asked.append(phrase)
        return "created" if phrase == "whittle" else None


def test_unknown_verbs_go_to_the_mapper_known_ones_do_not() -> None:
    stub = _StubMapper()
    rx = RuleExtractor(predicate_mapper=stub)
    (e,) = rx.extract("Grandpa whittles spoons and teaches kids.", now=NOW)
    assert fact(e, "created", "spoons").source == "semantic"
    assert fact(e, "teaches", "kids").source == "clause"  # the lexicon answered: the mapper was not asked
    assert stub.asked == ["whittle"]


@pytest.mark.minilm
def test_semantic_mapper_with_minilm() -> None:
    mapper = SemanticPredicateMapper()
    assert mapper.map("relocate to") == "lives_in"
    assert mapper.map("be employed by") == "works_at"


# ---------------------------------------------------------------------------------------------------- LLM shape
def shape(e: Extraction) -> set[tuple[str, str, bool, bool]]:
    return {(t.predicate, t.object, t.polarity, f.retracts) for t, f in zip(e.triples, e.facts, strict=True)}


def test_llm_extraction_has_the_rules_graph_shape() -> None:
    text = "I live in Seattle, not Portland."
    reply = json.dumps(
        {
            "memories": [
                {
                    "content": "Ana lives in Seattle, not Portland.",
                    "type": "fact",
                    "entities": ["Seattle", "Portland"],
                    "triples": [
                        {"subject": "I", "predicate": "resides_in", "object": "Seattle", "aspect": "ongoing"},
                        {
                            "subject": "I",
                            "predicate": "lived in",
                            "object": "Portland",
                            "polarity": True,
                            "retracts": "yes",
                            "aspect": "Ended",
                        },
                    ],
                }
            ]
        }
    )
    (llm,) = LLMExtractor(ScriptedChatModel([reply])).extract(text, speaker="Ana", now=NOW)
    (rules,) = RX.extract(text, speaker="Ana", now=NOW)
    assert (
        shape(llm)
        == shape(rules)
        == {("lives_in", "Seattle", True, False), ("lives_in", "Portland", False, True)}
    )
    assert {f.aspect for f in llm.facts} == {"ongoing", "ended"} and all(f.source == "llm" for f in llm.facts)
    assert {x.lower() for x in rules.entities} <= {x.lower() for x in llm.entities}


@pytest.mark.parametrize(
    "triple",
    [
        {"subject": "I", "predicate": "likes", "object": "tea", "aspect": "someday-maybe", "retracts": None},
        {"subject": "I", "predicate": "likes", "object": "tea", "aspect": 7, "retracts": "nope"},
        ["I", "likes", "tea"],
    ],
)
def test_llm_malformed_fact_fields_are_lenient(triple: Any) -> None:
    reply = json.dumps({"memories": [{"content": "Ana likes tea.", "triples": [triple]}]})
    (e,) = LLMExtractor(ScriptedChatModel([reply])).extract("I like tea.", speaker="Ana", now=NOW)
    assert [(t.predicate, t.polarity) for t in e.triples] == [("likes", True)]
    assert e.facts[0].aspect == "ongoing" and not e.facts[0].retracts and e.facts[0].source == "llm"


def test_llm_garbage_falls_back_to_rules_with_facts() -> None:
    model = ScriptedChatModel(["not json", '{"memories": 3}', "[[["])
    (e,) = LLMExtractor(model, retries=2).extract("Btw, I'm vegetarian now.", now=NOW)
    assert e.extractor == "rules-fallback"
    assert fact(e, "diet", "vegetarian").source == "rules"


# ---------------------------------------------------------------------------------------------------- parser (extra)
def test_parser_extractor_same_shape() -> None:
    pytest.importorskip("spacy", reason="optional extra neusym[parser] not installed")
    from neusym.extraction.parser import MODEL_PACKAGES, ParserExtractor

    try:
        px = ParserExtractor()
    except Exception as err:  # the model package is the extra's other half
        pytest.skip(f"no spaCy English model ({', '.join(MODEL_PACKAGES)}): {err}")
    (e,) = px.extract("Melanie made a plate in pottery class and adopted a dog named Luna.", now=NOW)
    assert ("Melanie", "created", "plate", True) in {
        (t.subject, t.predicate, t.object, t.polarity) for t in e.triples
    }
    assert len(e.facts) == len(e.triples) and e.extractor == "parser"
    (c,) = px.extract("I live in Seattle, not Portland.", now=NOW)
    assert fact(c, "lives_in", "Portland").retracts
