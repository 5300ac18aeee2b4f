"""Reading a forget request: its topic, categories, the people it names by role, and the languages of memories."""

from __future__ import annotations

import pytest

from neusym.governance.forgetting import forget_topic
from neusym.governance.topics import introduced_names, language_of, read_topic, role_names


@pytest.mark.parametrize(("request_", "topic"), [
    ("Forget what I said about my address", "my address"),
    ("I don't want you to remember anything about my divorce", "my divorce"),
    ("remove all memories related to my health please", "my health"),
    ("delete any info on my boss", "my boss"),
    ("Stop remembering my address", "my address"),
    ("Vergiss alles, was du über meinen Job weißt", "meinen Job"),
    ("Lösch bitte alles zu meiner Krankheit", "meiner Krankheit"),
    ("Olvida lo que sabes de mi ex", "mi ex"),
    ("Oublie tout ce qui concerne ma santé", "ma santé"),
    ("peanut allergy", "peanut allergy"),
])
def test_the_topic_is_what_the_request_is_about(request_: str, topic: str) -> None:
    assert forget_topic(request_) == topic


def test_a_topic_names_categories_people_and_holders() -> None:
    health = read_topic("my health")
    assert health.categories == ("health",) and health.descriptions
    # cue words carry a category across languages; an amount of money is a money cue in any of them
    assert health.cue_in("Mein Neurologe hat mir Triptane verschrieben.") is not None
    assert health.cue_in("J'ai de l'hypertension.") == "hypertension"  # elided article split off
    assert health.cue_in("I painted the kitchen yellow.") is None
    assert read_topic("mis deudas").cue_in("Le debo 300 euros a mi hermana.") == "300 euros"

    landlord = read_topic("meinen Vermieter")
    assert landlord.person_roles == ("landlord",) and not landlord.holder_roles
    # the person a topic is *of* is its holder, and does not make the topic about children
    son = read_topic("la santé de mon fils")
    assert son.holder_roles == ("son",) and son.categories == ("health",) and not son.person_roles
    sister = read_topic("my sister's pregnancy")
    assert sister.holder_roles == ("sister",) and "pregnancy" in sister.categories
    # ... unless the holder is a professional: "my doctor's appointments" are medical
    assert "health" in read_topic("my doctor's appointments").categories
    # a phrase names one category, not the two its words would
    assert read_topic("my job hunt").categories == ("job_search",)
    assert read_topic("my mental health").categories == ("mental_health",)
    # "my boss" is about the boss, not about every memory of work
    assert read_topic("my boss").categories == () and read_topic("my boss").person_roles == ("boss",)


@pytest.mark.parametrize(("role", "text", "names"), [
    ("landlord", "My landlord, Mr. Okafor, is raising the rent.", ["Okafor"]),
    ("landlord", "Okafor (my landlord) never answers.", ["Okafor"]),
    ("landlord", "My landlord's name is Okafor.", ["Okafor"]),
    ("boss", "My boss is Priya Raman.", ["Priya", "Raman"]),
    ("landlord", "Mein Vermieter heißt Herr Brandt.", ["Brandt"]),
    ("boss", "Mi jefa se llama Lucía Ortega.", ["Lucía", "Ortega"]),
    ("boss", "Mon chef de service s'appelle Dr Morel.", ["Morel"]),
    ("doctor", "Dr. Kim is my GP.", ["Kim"]),
    ("sister", "My sister plays the cello.", []),
])
def test_role_names(role: str, text: str, names: list[str]) -> None:
    assert role_names(role, text) == names


def test_introduced_names_are_titled_or_professional() -> None:
    assert introduced_names("Dr. Kim prescribed me statins.") == {"Kim"}
    assert introduced_names("My lawyer, Ms. Haddad, filed the appeal.") == {"Haddad"}
    assert introduced_names("My sister Ana is allergic to peanuts.") == set()  # family: the holder, not a lead


@pytest.mark.parametrize(("text", "lang"), [
    ("Ich spiele Gitarre in einer Band.", "de"), ("J'habite à Bordeaux.", "fr"), ("Mi gato se llama Tofu.", "es"),
    ("Project Falcon launches in Q3.", "en"), ("Dana runs marathons.", "en"), ("Hair appointment on Saturday.", "en"),
    # English wins a tie ("am" is German too) and a name's letters say nothing about the sentence's language
    ("Dentist at 9 am.", "en"), ("Our landlord Mr. Nuñez raised the rent.", "en"), ("Soy vegetariana.", "es"),
    ("Ich wohne in Hamburg.", "de"),
])
def test_language_of(text: str, lang: str) -> None:
    assert language_of(text) == lang


def test_short_french_is_not_english() -> None:
    # what matters is "not English": MiniLM similarity is trusted for English text only
    assert language_of("On a repeint la cuisine.") != "en"


# ---------------------------------------------------------------------------------------------- WordNet kinds
def test_a_category_reaches_kinds_its_cue_words_do_not_list() -> None:
    health = read_topic("my health")
    assert [k.phrase for k in health.kinds_in("My gout flared up again last night.")] == ["gout"]
    assert [k.why for k in health.kinds_in("My sciatica is back.")] == ["'sciatica' is a kind of pain"]
    assert health.kinds_in("Meine Gicht ist wieder schlimmer.") == []  # WordNet is English only
    # a rarer sense is found but not dominant: the caller wants similarity to support it ("river bank")
    money = read_topic("my money")
    river = money.kinds_in("The river bank flooded again.")
    assert river and not river[0].reading.dominant


def test_a_topic_noun_reaches_its_kinds_unless_the_topic_is_a_name_or_not_english() -> None:
    plants = read_topic("my plants")
    assert [k.why for k in plants.kinds_in("The bonsai lost half its leaves.")] == ["'bonsai' is a kind of plant"]
    assert read_topic("Project Falcon").kinds == ()
    assert read_topic("meine Pflanzen").kinds == ()
    # a topic naming a category keeps to the category: "battle" would reach every war
    assert "battle.n.01" not in read_topic("my custody battle").kinds


@pytest.mark.parametrize(("role", "text", "names"), [
    ("lawyer", "The prosecutor, Ms. Abara, dropped the charges.", ["Abara"]),  # a prosecutor is a lawyer
    ("doctor", "My cardiologist Helen Cho moved my appointment.", ["Helen", "Cho"]),
    ("boss", "The site foreman, Gary Lund, sent me home early.", ["Gary", "Lund"]),
    ("doctor", "My accountant Helen Cho filed my taxes.", []),  # an accountant is no doctor
])
def test_role_names_through_kinds_of_the_role(role: str, text: str, names: list[str]) -> None:
    assert role_names(role, text) == names
