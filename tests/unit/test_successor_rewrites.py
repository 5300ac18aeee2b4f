"""Corrected successors (neusym.governance.successors): the rewrite of a memory that lists several values when one
of them is corrected or ended, the value that replaces it, and the LLM rewrite's checks. Pure functions and a
scripted chat model (a remote LLM is the only thing faked). Sentences are not taken from the governance benchmark."""

from __future__ import annotations

import pytest

from neusym.governance.decisions import Action, Decision
from neusym.governance.successors import Successors, corrected_text, derivations, replacement
from neusym.governance.update_model import Subject, _subject, content_words, ended_values, same_subject
from neusym.llm import ScriptedChatModel
from neusym.record import MemoryRecord, Source


def _ended(old: str, new: str) -> set[str]:
    shared = content_words(new) & content_words(old)
    return ended_values(new, shared) - ended_values(old, shared)


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("My cousins are Omar, Ines and Pablo.", "Sorry, not Ines, Irene.", "My cousins are Omar, Irene and Pablo."),
    ("We grow tomatoes and courgettes.", "Correction: tomatoes and pumpkins, not courgettes.",
     "We grow tomatoes and pumpkins."),
    ("Meine Katzen heißen Felix und Tiger.", "Nicht Tiger, sondern Tigger.", "Meine Katzen heißen Felix und Tigger."),
    ("Mis hermanas son Lucía y Marta.", "Perdón, no Marta sino Marina.", "Mis hermanas son Lucía y Marina."),
    ("Je joue du violon et de la flûte.", "Pardon, pas la flûte mais la harpe.", "Je joue du violon et de la harpe."),
    ("I follow Arsenal and Celtic.", "I stopped following Celtic, it's Rangers now.", "I follow Arsenal and Rangers."),
])
def test_one_listed_value_is_replaced_and_the_others_kept(old: str, new: str, expected: str) -> None:
    out = corrected_text(old, new, _ended(old, new))
    assert out is not None and out[0] == expected


def test_an_ended_value_without_a_replacement_is_removed_with_its_list_word() -> None:
    old = "Our bikes are a Giant and a Canyon."
    assert corrected_text(old, "We sold the Canyon.", {"canyon"}, correction=False) == ("Our bikes are a Giant.", "")
    old = "My godchildren are Theo, Noor and Elif."
    assert corrected_text(old, "Noor left.", {"noor"}, correction=False) == ("My godchildren are Theo and Elif.", "")
    # a change said in passing names no lowercase replacement ("rusty" is no car)
    old = "We have two cars, a Ford and a Mazda."
    assert corrected_text(old, "We sold the Mazda because it was rusty.", {"mazda"}, correction=False) == (
        "We have two cars, a Ford.", "")


@pytest.mark.parametrize(("old", "new"), [
    ("My favourite painter is Turner.", "Not Turner, Constable."),  # one value: the correction says it all
    ("I visit Lisbon and Porto.", "Not Lisbon and not Porto, Faro."),  # two values named: not a one-item fix
])
def test_no_successor_without_a_list_or_for_several_named_values(old: str, new: str) -> None:
    assert corrected_text(old, new, _ended(old, new)) is None


def test_the_replacement_is_no_cue_frame_or_shared_word() -> None:
    old = "Hablo catalán e inglés."
    assert replacement("Perdón, no inglés sino francés.", old, {"inglé"}) == "francés"
    assert replacement("Oops, not Rex, Max.", "Our dogs are Bella and Rex.", {"rex"}) == "Max"
    assert replacement("Sorry, I meant Bella and Max, not Rex.", "Our dogs are Bella and Rex.", {"rex"}) == "Max"


def _decision(text: str, origin: str = "user") -> Decision:
    rec = MemoryRecord(content=text, source=Source(origin=origin))
    return Decision(action=Action.STORE, reason="admitted", record=rec)


def test_llm_rewrite_is_used_when_it_keeps_every_other_value() -> None:
    old = MemoryRecord(content="My nieces are Ada, Bea and Cleo.")
    llm = ScriptedChatModel(['{"text": "My nieces are Ada, Bea and Chloe."}'])
    plan = Successors(llm=llm).plan(_decision("Not Cleo, Chloe!"), old)
    assert plan is not None and plan.method == "llm" and plan.text == "My nieces are Ada, Bea and Chloe."
    assert plan.correction


@pytest.mark.parametrize("reply", [
    "sure, here you go",  # malformed (and the retry too)
    '{"text": "My nieces are Ada and Chloe."}',  # drops Bea
    '{"text": "My nieces are Ada, Bea, Cleo and Chloe."}',  # keeps the corrected value
])
def test_a_bad_llm_rewrite_falls_back_to_the_rules(reply: str) -> None:
    old = MemoryRecord(content="My nieces are Ada, Bea and Cleo.")
    plan = Successors(llm=ScriptedChatModel([reply], repeat_last=True)).plan(_decision("Not Cleo, Chloe!"), old)
    assert plan is not None and plan.method == "rules" and plan.text == "My nieces are Ada, Bea and Chloe."


def test_successor_decision_is_audited_as_engine_made_and_linked_to_both() -> None:
    old = MemoryRecord(content="We have a Vespa and a Yamaha.")
    d = _decision("We sold the Yamaha and bought a Honda.")
    d.add_detail("supersede", {"id": old.id})
    decisions = [d]
    Successors(facts=lambda text: ([], [])).apply(decisions, lambda ids: [old] if old.id in ids else [], 0.0)
    assert len(decisions) == 2
    made = decisions[1]
    assert made.record.content == "We have a Vespa and a Honda."
    assert f"engine-made change of memory {old.id} by memory {d.record.id}" in made.reason
    assert "Vespa" not in made.reason  # reasons never quote memory text
    assert d.details["supersede"][0]["successor"] == made.record.id  # type: ignore[index]
    links = {(x["dst"], x["props"]["role"]) for x in derivations(decisions)}  # type: ignore[index]
    assert links == {(old.id, "corrected"), (d.record.id, "correction")}
    assert made.record.valid_from == d.record.created_at  # a change starts when it was said


def test_one_successor_per_old_memory_even_when_two_turns_supersede_it() -> None:
    old = MemoryRecord(content="My teammates are Jo and Sam.")
    user, agent = _decision("Not Sam, Sid."), _decision("Noted: Jo and Sid, not Sam.", origin="agent")
    for x in (agent, user):
        x.add_detail("supersede", {"id": old.id})
    decisions = [agent, user]
    Successors().apply(decisions, lambda ids: [old], 0.0)
    made = [x for x in decisions if x.details.get("derived")]
    assert len(made) == 1 and made[0].details["derived"]["correction"] == user.record.id  # type: ignore[index]


@pytest.mark.parametrize("text", ["Oops, not Maya, Mia.", "Perdón, no Marta sino Marina.",
                                  "Pardon, pas Louis mais Lucas.", "Nicht Tiger, sondern Tigger."])
def test_a_leading_interjection_or_negation_is_no_person(text: str) -> None:
    assert _subject(text, None, ()) == Subject(None, frozenset(), frozenset())


def test_a_capitalised_opening_word_is_weighed_as_a_third_person_not_gated() -> None:
    old = MemoryRecord(content="I live in Austin.")
    new = MemoryRecord(content="Denver is home now.")
    s_new = _subject(new.content, None, ())
    assert s_new.lead_only
    assert same_subject(new, old, s_new, _subject(old.content, None, ())) == (True, True, False)
    # a thing the old memory names as its value stays someone else
    named = MemoryRecord(content="Austin is booming.")
    assert not same_subject(named, old, _subject(named.content, None, ()), _subject(old.content, None, ()))[0]
