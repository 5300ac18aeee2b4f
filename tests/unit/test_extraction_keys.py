"""Entity mentions, entity_key and the predicate vocabulary: the keys the graph and governance match on."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from neusym.extraction import (
    FUNCTIONAL_PREDICATES,
    Extraction,
    RuleExtractor,
    canonical_predicate,
    entity_key,
    is_functional,
)
from neusym.extraction.vocabulary import predicate_tag

NOW = datetime(2024, 5, 1, 15, 30, tzinfo=UTC)
RX = RuleExtractor()


def one(text: str) -> Extraction:
    out = RX.extract(text, now=NOW)
    assert len(out) == 1, out
    return out[0]


# ---------------------------------------------------------------------------------------------------- entities
def test_entities_capitalised_names_not_sentence_start_words() -> None:
    ext = one("Yesterday I had lunch with Maria Lopez at Cafe Central in Vienna.")
    assert ext.entities == ["Maria Lopez", "Cafe Central", "Vienna"]


def test_entities_machine_tokens() -> None:
    ext = one(
        "Ping @alice_dev or mail bob.smith@example.com, see https://example.com/docs or call +44 20 7946 0958."
    )
    assert ext.entities == [
        "@alice_dev",
        "bob.smith@example.com",
        "https://example.com/docs",
        "+44 20 7946 0958",
    ]


def test_entities_dates_amounts_titles() -> None:
    ext = one('We watched "The Matrix" on March 3, 2024 and it cost $12.50 for 2 km of taxi.')
    assert {"The Matrix", "March 3, 2024", "$12.50", "2 km"} <= set(ext.entities)


def test_known_name_at_sentence_start_is_an_entity() -> None:
    ext = one("Caroline went to the park. Later I met Caroline again.")
    assert ext.entities[0] == "Caroline"


def test_entities_method_for_queries() -> None:
    assert RX.entities("Where does Caroline live now?") == ["Caroline"]
    assert RX.entities("what did Melanie paint in New York?") == ["Melanie", "New York"]
    assert RX.entities("") == []


# ---------------------------------------------------------------------------------------------------- entity_key
@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The Beatles", "beatles"),
        ("Caroline's", "Caroline"),
        ("José", "Jose"),
        ("U.S.A.", "USA"),
        ("New-York", "new york"),
        ("  Bob   Smith ", "bob smith"),
        ("O'Brien", "OBrien"),
        ("ＡＢＣ", "abc"),
        ("Zoë", "zoe"),
        ("Café Central", "cafe central"),
    ],
)
def test_entity_key_equal(a: str, b: str) -> None:
    assert entity_key(a) == entity_key(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("C++", "C"),
        ("C#", "C"),
        ("Bob.Smith@Example.com", "bob smith example com"),
        ("3.5", "35"),
        ("A", "An"),
    ],
)
def test_entity_key_distinct(a: str, b: str) -> None:
    assert entity_key(a) != entity_key(b)


def test_entity_key_details() -> None:
    assert entity_key("Bob.Smith@Example.com") == "bob.smith@example.com"
    assert entity_key("https://Example.com/Path.") == "https://example.com/path"
    assert entity_key("The") == "the"
    assert entity_key("!!!") == "" and entity_key("") == "" and entity_key(None) == ""  # type: ignore[arg-type]
    assert entity_key("北京") == "北京"
    assert entity_key("が") == "が"


# ---------------------------------------------------------------------------------------------------- vocabulary
def test_functional_predicates() -> None:
    assert {
        "lives_in",
        "phone",
        "email",
        "works_at",
        "job_title",
        "married_to",
        "name",
        "birthday",
        "prefers",
    } <= (FUNCTIONAL_PREDICATES)
    assert is_functional("favourite_colour") and is_functional("favorite_color") and is_functional("moved_to")
    assert not is_functional("likes") and not is_functional("allergic_to") and not is_functional("")


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("worksFor", "works_at"),
        ("Works For", "works_at"),
        ("moved_to", "lives_in"),
        ("favorite_color", "favourite_colour"),
        ("fav food", "favourite_food"),
        ("lives-in", "lives_in"),
        ("LIKES", "likes"),
        ("Ça_marche", "ca_marche"),
        ("capital_of", "capital_of"),
        ("2fast", None),
        ("", None),
        ("住在", None),
    ],
)
def test_canonical_predicate(raw: str, canonical: str | None) -> None:
    assert canonical_predicate(raw) == canonical


def test_predicate_tags() -> None:
    assert predicate_tag("allergic_to") == "health"
    assert predicate_tag("favourite_food") == "preference"
    assert predicate_tag("github_handle") == "contact"
    assert predicate_tag("capital_of") is None
