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
from neusym.knowledge.isa import synset_ids


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


# ---------------------------------------------------------------------------------------------- WordNet kinds
@pytest.mark.parametrize(("constraint", "event"), [
    ("I'm vegetarian.", "We shared a chateaubriand for two at the bistro."),
    ("I don't drink alcohol.", "We ordered a bottle of zinfandel with the pasta."),
    ("I'm allergic to shellfish.", "Ate a paper cone of cockles on the pier."),
    ("I'm scared of dogs.", "My cousin's whippet jumped on my lap and I cuddled it."),
    ("I'm afraid of flying.", "I took a biplane over the bay for my birthday."),
    ("I'm allergic to penicillin.", "The GP gave me amoxicillin and I took it for a week."),  # the target's own noun
])
def test_an_event_naming_a_kind_the_lexicon_lacks_breaks_the_constraint(constraint: str, event: str) -> None:
    c = constraint_of(constraint)
    assert c is not None and c.kinds
    f = event_features(c, event, (0.3, 0.2))
    assert f["lexical"] == 0.0 and f["isa"] > 0, f
    assert break_probability(f) >= 0.5


@pytest.mark.parametrize(("constraint", "event"), [
    ("I don't eat meat.", "Booked a villa in Turkey for August."),  # a place, not the bird
    ("I'm scared of dogs.", "Grabbed a hot dog at the match."),  # a hot dog is no dog
    ("I don't drink alcohol.", "I had a root beer with my burger."),  # nor a root beer a beer
    ("I'm lactose intolerant.", "Had peanut butter on toast."),
    ("I'm vegetarian.", "Partridges nest in the hedge behind our house."),  # the animal, not eaten
    ("I don't drink alcohol.", "Gave my neighbour a bottle of zinfandel as a gift."),
])
def test_names_compounds_and_kinds_not_had_keep_the_constraint(constraint: str, event: str) -> None:
    assert _p(constraint, event, (0.3, 0.2)) < 0.5


def test_a_compound_that_is_a_kind_or_a_word_that_also_stands_alone_still_counts() -> None:
    dairy = constraint_of("I'm lactose intolerant.")
    assert dairy is not None
    assert event_features(dairy, "Had a glass of chocolate milk.")["lexical"] == 1.0  # chocolate milk is milk
    dogs = constraint_of("I'm scared of dogs.")
    assert dogs is not None
    assert event_features(dogs, "Had a hot dog, then a dog jumped at me.")["lexical"] == 1.0


def test_constraint_kinds() -> None:
    veg = constraint_of("I'm vegetarian.")
    assert veg is not None and {"meat.n.01", "seafood.n.01"} <= set(veg.kinds) and veg.kind_files == ("noun.food",)
    # a target naming no category rules out the kinds of its own noun; a German one gets no English senses
    rodents = constraint_of("I'm scared of rodents.")
    assert rodents is not None and rodents.kinds == ("rodent.n.01",)
    assert constraint_of("Ich habe Angst vor Ratten.") is None or not constraint_of("Ich habe Angst vor Ratten.").kinds  # type: ignore[union-attr]
    # every category's synsets exist (a typo would be a KeyError here, not a silent miss)
    from neusym.governance.constraint_vocab import KINDS
    for syn, _ in KINDS.values():
        assert synset_ids(syn)


@pytest.mark.parametrize(("text", "category"), [
    ("I quit smoking two years ago.", "tobacco"),  # past-framed, yet it has held since
    ("I gave up meat five years ago.", "meat"),
])
def test_a_thing_given_up_long_ago_is_still_ruled_out(text: str, category: str) -> None:
    c = constraint_of(text)
    assert c is not None and category in c.categories


@pytest.mark.parametrize("text", ["I quit my job two years ago.", "I stopped by the bakery two days ago."])
def test_past_events_are_still_no_constraint(text: str) -> None:
    assert constraint_of(text) is None
