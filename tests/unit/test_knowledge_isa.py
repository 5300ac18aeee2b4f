"""WordNet is-a lookups (neusym.knowledge.isa): the shipped table, lemmatisation, hyponymy, the polysemy and
part-of-speech guards, names, and the build script's parser on a tiny hand-made WordNet."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from neusym.knowledge.isa import (
    DATA,
    WordNet,
    categories,
    find_kinds,
    is_a,
    lexname,
    names_in,
    senses_of,
    wordnet,
)

ROOT = Path(__file__).resolve().parents[2]


def test_the_table_is_shipped_without_pickle_and_says_where_it_came_from() -> None:
    assert DATA.exists() and (DATA.parent / "WORDNET_LICENSE").exists()
    assert "Princeton University" in (DATA.parent / "WORDNET_LICENSE").read_text()
    with np.load(DATA, allow_pickle=False) as z:  # raises if any array needed pickle
        meta = json.loads(bytes(z["meta"]).decode())
    assert meta["synsets"] == 82115 and meta["lemmas"] == 117798
    script = _build_script()
    assert meta["sdist_sha256"] == script.SDIST_SHA256
    assert meta["files_sha256"] == script.SOURCE_SHA256
    assert wordnet() is wordnet()  # loaded once


@pytest.mark.parametrize(("word", "lemma"), [
    ("geese", "goose"),  # noun.exc
    ("berries", "berry"),  # -ies -> -y
    ("churches", "church"),
    ("firemen", "fireman"),
    ("root beers", "root_beer"),  # the last word of a phrase inflects
    ("ice cream", "ice_cream"),
    ("glass", "glass"),  # not the plural of "glas"
])
def test_lemmatisation(word: str, lemma: str) -> None:
    assert wordnet().lemmas(word)[0] == lemma


@pytest.mark.parametrize(("word", "kind", "files"), [
    ("sirloin", "meat.n.01", ["noun.food"]),
    ("merlot", "alcohol.n.01", ["noun.food"]),
    ("red wine", "wine.n.01", ["noun.food"]),
    ("dalmatians", "dog.n.01", ["noun.animal"]),
    ("oncologist", "doctor.n.01", ["noun.person"]),
    ("stepdaughter", "relative.n.01", []),
    ("tinnitus", "symptom.n.01", []),
    ("seaplane", "aircraft.n.01", []),
])
def test_hyponyms_are_kinds(word: str, kind: str, files: list[str]) -> None:
    r = is_a(word, [kind], lexnames=files)
    assert r is not None and r.depth >= 1 and r.target == kind, r


def test_what_is_not_a_kind_or_not_a_word() -> None:
    assert is_a("carrot", ["meat.n.01"], lexnames=["noun.food"]) is None
    assert is_a("poodle", ["cat.n.01"]) is None
    assert is_a("zorblax", ["meat.n.01"]) is None
    assert wordnet().lemmas("zorblax") == []
    assert lexname("zorblax") is None
    with pytest.raises(KeyError):
        wordnet().synset("meat.n.99")


def test_polysemy_guard() -> None:
    # "lamb" is first a young sheep: its meat sense is plausible for a diet (noun.food stands for the animal), and
    # not taken without that expectation; "chicken" is first the meat
    assert is_a("lamb", ["meat.n.01"]) is None
    food = is_a("lamb", ["meat.n.01"], lexnames=["noun.food"])
    assert food is not None and not food.dominant
    chicken = is_a("chicken", ["meat.n.01"], lexnames=["noun.food"])
    assert chicken is not None and chicken.dominant
    # "port" is first a harbour: the wine is too rare a reading; "java" the coffee is plausible, not dominant
    assert is_a("port", ["alcohol.n.01"], lexnames=["noun.food"]) is None
    java = is_a("java", ["coffee.n.01"], lexnames=["noun.food"])
    assert java is not None and not java.dominant
    # "shingles" is the illness and the plural of the roof tile: plausible only
    shingles = is_a("shingles", ["ill_health.n.01"])
    assert shingles is not None and not shingles.dominant and not shingles.unambiguous
    assert is_a("tinnitus", ["symptom.n.01"]) is not None and is_a("tinnitus", ["symptom.n.01"]).unambiguous  # type: ignore[union-attr]


def test_reading_text_names_compounds_and_verbs() -> None:
    meat = ["meat.n.01"]
    assert [k.phrase for k in find_kinds("We had turkey for Christmas.", meat, lexnames=["noun.food"])] == ["turkey"]
    assert find_kinds("Booked a villa in Turkey for August.", meat, lexnames=["noun.food"]) == []  # a place
    # a capitalised word is a name ("her puppy Coco") unless all its senses are what the caller expects
    wine = ["wine.n.01"]
    assert [k.phrase for k in find_kinds("A glass of Merlot, please.", wine, lexnames=["noun.food"])] == ["Merlot"]
    assert find_kinds("A glass of Merlot, please.", wine) == []
    assert find_kinds("She adopted a puppy named Coco.", ["plant.n.02"]) == []
    # the part-of-speech guard yields to a determiner: "a cold" is a noun, "therapeutic" mostly an adjective
    assert find_kinds("Painting is therapeutic for me.", ["medicine.n.02"]) == []
    assert [k.phrase for k in find_kinds("I caught a cold.", ["ill_health.n.01"])] == ["cold"]
    assert find_kinds("Grabbed a hot dog at the match.", ["dog.n.01"]) == []  # the compound takes the word
    assert find_kinds("We fly to Oslo on Friday.", ["insect.n.01"]) == []  # a verb here
    kinds = find_kinds("My oncologist, Dr. Varga, wants another scan.", ["doctor.n.01"])
    assert [k.why for k in kinds] == ["'oncologist' is a kind of doctor"]
    assert names_in("Two weeks in Turkey, then Python lessons.") == {"turkey", "python"}


def test_categories_lexname_and_senses() -> None:
    assert "wine.n.01" in categories("merlot", senses=2)
    assert lexname("steak") == "noun.food"
    assert senses_of("I'm allergic to penicillin") == [("penicillin", ("penicillin.n.01",))]
    assert senses_of("food", general=100) == []  # too general to mean anything


# ---------------------------------------------------------------------------------------------- the build script
def _build_script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("build_wordnet_isa", ROOT / "scripts" / "build_wordnet_isa.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_DATA_NOUN = """  1 This is a licence header line the parser must skip.
00001740 03 n 01 entity 0 000 | that which exists
00002000 13 n 02 food 0 nutrient 0 001 @ 00001740 n 0000 | any substance eaten
00003000 13 n 01 meat 0 001 @ 00002000 n 0000 | the flesh of animals
00004000 13 n 02 steak 0 beefsteak 0 001 @ 00003000 n 0000 | a slice of meat
00005000 15 n 01 Turkey 0 001 @i 00001740 n 0000 | a country
00006000 05 n 01 turkey 0 001 @ 00001740 n 0000 | a bird
00007000 13 n 01 turkey 1 001 @ 00003000 n 0000 | its flesh
"""
_INDEX_NOUN = """  1 licence header
beefsteak n 1 1 @ 1 0 00004000
entity n 1 0 1 0 00001740
food n 1 1 @ 1 0 00002000
meat n 1 1 @ 1 1 00003000
nutrient n 1 1 @ 1 0 00002000
steak n 1 1 @ 1 1 00004000
turkey n 3 2 @ @i 3 1 00006000 00005000 00007000
"""
_INDEX_SENSE = """meat%1:13:00:: 00003000 1 7
steak%1:13:00:: 00004000 1 2
turkey%1:05:00:: 00006000 1 3
fly%2:38:00:: 99999999 1 40
"""


def test_the_build_script_parses_wordnet(tmp_path: Path) -> None:
    script = _build_script()
    files = {"data.noun": _DATA_NOUN, "index.noun": _INDEX_NOUN, "index.sense": _INDEX_SENSE,
             "noun.exc": "steaks steak\n", "verb.exc": "flew fly\n", "LICENSE": "WordNet 3.0 Copyright\n",
             "lexnames": "03\tnoun.Tops\t1\n05\tnoun.animal\t1\n13\tnoun.food\t1\n15\tnoun.location\t1\n"}
    arrays = script.build({k: v.encode() for k, v in files.items()})
    np.savez_compressed(tmp_path / "wn.npz", **arrays)
    wn = WordNet(tmp_path / "wn.npz")
    assert [wn.name(s) for s, _ in wn.senses("turkey")] == ["turkey.n.01", "turkey.n.02", "turkey.n.03"]
    assert wn.lexname(wn.synset("turkey.n.02")) == "noun.location"
    steak = wn.synset("steak.n.01")
    assert wn.name(steak) == "steak.n.01" and wn.senses("beefsteak")[0][0] == steak
    assert wn.ancestors(steak) == {steak: 0, wn.synset("meat.n.01"): 1, wn.synset("food.n.01"): 2,
                                   wn.synset("entity.n.01"): 3}
    assert wn.size(wn.synset("entity.n.01")) == 6 and wn.size(steak) == 0
    assert wn.lemmas("steaks") == ["steak"]
    assert wn.senses("meat")[0][1] == 7  # tag count from index.sense
    assert wn.verb_weight("flew") == 40  # verb.exc, then the verb's tag counts
