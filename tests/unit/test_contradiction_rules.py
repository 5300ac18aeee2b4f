"""Contradiction by meaning, the LLM-free parts: constraint shapes, what they rule out, and the event cues.

No model and no graph: the embedding features are passed in as numbers (the write path computes them)."""

from __future__ import annotations

import pytest

from neusym.governance.constraint_vocab import CATEGORIES, fold, tokens
from neusym.governance.contradictions import (
    FEATURES,
    WEIGHTS,
    break_probability,
    constraint_of,
    event_features,
    expand,
    lexical_hits,
)


@pytest.mark.parametrize(("text", "kind", "category"), [
    ("I've been vegetarian for ten years.", "diet", "meat"),
    ("I don't eat sugar, I cut it out completely.", "abstention", "sweets"),
    ("I'm allergic to shellfish.", "allergy", "shellfish"),
    ("I'm on a gluten-free diet.", "abstention", "gluten"),
    ("Heights terrify me.", "fear", "heights"),
    ("Ich trinke keinen Alkohol.", "abstention", "alcohol"),
    ("Ich habe Höhenangst.", "fear", "heights"),
    ("Mein Sohn verträgt keine Milch.", "allergy", "dairy"),
    ("No fumo.", "abstention", "tobacco"),
    ("Me dan miedo los perros.", "fear", "dogs"),
    ("Soy celíaca.", "diet", "gluten"),
    ("Je ne conduis pas.", "abstention", "driving"),
    ("J'ai peur des serpents.", "fear", "snakes"),
    ("Je suis cœliaque.", "diet", "gluten"),
])
def test_constraints_in_four_languages(text: str, kind: str, category: str) -> None:
    c = constraint_of(text)
    assert c is not None and c.kind == kind and category in c.categories, (text, c)


@pytest.mark.parametrize("text", [
    "Don't give up on your dreams!",  # an imperative: nobody's standing constraint
    "Thanks, Gina! I won't quit - your words motivate me to keep going!",
    "I'm off to go swimming with the kids.",
    "Joanna expressed excitement to receive Nate's vegan ice cream recipe.",  # an adjective, not an identity
    "Good flooring helps avoid injuries.",
    "Star Wars never gets old.",
    "I don't have big plans anyway.",
    "Do you eat meat?",
    "I used to be vegetarian as a kid.",
])
def test_ordinary_talk_is_no_constraint(text: str) -> None:
    assert constraint_of(text) is None


def test_a_named_third_person_or_kin_is_the_subject() -> None:
    leo = constraint_of("My son Leo is allergic to nuts.")
    assert leo is not None and leo.subject == "leo"
    sohn = constraint_of("Mein Sohn verträgt keine Milch.")
    assert sohn is not None and sohn.subject == "sohn"
    assert constraint_of("Chen never flies.").subject == "chen"  # type: ignore[union-attr]
    assert constraint_of("Spiders freak me out.").subject is None  # type: ignore[union-attr]


def test_a_category_name_rules_out_its_parts_a_member_only_itself() -> None:
    meat, _ = expand("meat")
    assert {"meat", "pork", "poultry"} <= set(meat)
    pork, _ = expand("pork")
    assert pork == ["pork"]  # "I don't eat pork" does not rule out chicken
    junk, _ = expand("eat fast food", "eat")
    assert junk == ["junk_food"]  # the longest name wins: not all food
    drink, _ = expand("", "drink")
    assert drink[0] == "alcohol"  # "I don't drink"


def test_lexicon_matching_inflection_and_compounds() -> None:
    assert [t for _, t in lexical_hits("Wir haben drei Maß Bier und Haselnusstorte gegessen.",
                                       frozenset(["bier", "haselnuss"]))] == ["bier", "haselnuss"]
    assert lexical_hits("Hoy paseé al perro de mi vecino.", frozenset(["perro"]))
    assert lexical_hits("Walked two dogs and three puppies.", frozenset(["dog", "puppy"]))
    assert not lexical_hits("Had two doughnuts.", frozenset(["nut", "nuts"]))  # no compounds outside German
    assert all(t == fold(t) and t == " ".join(tokens(t)) for c in CATEGORIES.values() for t in c.members)


def _p(constraint: str, event: str, sims: tuple[float, float] = (0.4, 0.3)) -> float:
    c = constraint_of(constraint)
    assert c is not None
    return break_probability(event_features(c, event, sims))


@pytest.mark.parametrize(("constraint", "event"), [
    ("I'm vegetarian.", "The pulled pork sandwich at lunch was amazing."),
    ("I don't eat sugar.", "Had two slices of chocolate cake at the office party."),
    ("Ich trinke keinen Alkohol.", "Wir haben auf dem Fest drei Maß Bier getrunken."),
    ("My son Leo is allergic to nuts.", "Leo had a slice of walnut cake at the party."),
    ("I never eat after 8 pm.", "Ordered pizza at 11 last night."),
])
def test_breaking_events(constraint: str, event: str) -> None:
    assert _p(constraint, event) >= 0.5


@pytest.mark.parametrize(("constraint", "event"), [
    ("I don't drink alcohol.", "Tried an alcohol-free IPA, tastes like the real thing."),  # kept
    ("I'm vegetarian.", "My husband ordered the steak, I had the mushroom risotto."),  # someone else
    ("I don't smoke.", "My neighbour smokes on his balcony every evening."),
    ("I'm scared of dogs.", "Is there a dog at the party on Saturday?"),  # a question
    ("I'm allergic to cats.", "I'll skip Sarah's housewarming because of her cats."),  # avoided
    ("I don't eat pork.", "The chicken shawarma was fantastic."),  # a sibling, not the thing
    ("I never drive at night.", "Took the night train instead of driving."),
    ("I don't gamble.", "Read an article about how casinos make money."),  # talk about it
    ("My son Leo is allergic to nuts.", "Had a walnut salad for lunch."),  # not Leo
])
def test_compatible_events(constraint: str, event: str) -> None:
    assert _p(constraint, event) < 0.5


def test_weights_cover_the_features() -> None:
    assert set(WEIGHTS) == {"bias", *FEATURES}
    assert WEIGHTS["lexical"] > 0 and WEIGHTS["category_sim"] > 0
    assert all(WEIGHTS[n] < 0 for n in ("negated", "kept", "avoided", "other_person", "question"))
