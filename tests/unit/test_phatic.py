"""The small-talk reader (issue 30 item 2): greetings, thanks, acknowledgements and filler are small talk; a turn
with anything else in it is not, however short."""

from __future__ import annotations

import pytest

from neusym.language.phatic import DATA, LANGUAGES, is_small_talk, small_talk

SMALL_TALK = [
    ("hi", "greeting"), ("Hello Ana!", "greeting"), ("ok thanks", "acknowledgement"), ("lol", "laughter"),
    ("sounds good", "acknowledgement"), ("Thank you so much!!", "thanks"), ("heyyy", "greeting"),
    ("hahahaha", "laughter"), ("Bye Bob, see you tomorrow", "farewell"), ("hmm ok", "acknowledgement"),
    ("Hello Ana! How can I help you today?", "greeting"), ("You're welcome, Ana!", "thanks"), ("👍", "filler"),
    ("Hi there :)", "greeting"), ("coool", "acknowledgement"), ("Thanks guys", "thanks"),
    # German, Spanish, French
    ("Hallo Ana, wie geht's?", "greeting"), ("Danke schön!", "thanks"), ("alles klar", "acknowledgement"),
    ("¡Hola! ¿Qué tal?", "greeting"), ("muchas gracias", "thanks"), ("vale, perfecto", "acknowledgement"),
    ("jajaja", "laughter"), ("Bonjour !", "greeting"), ("merci beaucoup", "thanks"), ("d’accord", "acknowledgement"),
    ("À bientôt", "farewell"),
]

NOT_SMALL_TALK = [
    "I'm vegan", "Ana is my sister", "ok I'm vegan", "Thanks! By the way, I moved to Lisbon.",
    "Hi there, I moved to Lisbon", "yes, my sister lives in Porto", "I play the cello on Sundays", "x y z",
    "Lisbon", "My favourite band is Queen", "OK ANA", "Ich bin Veganerin", "Mi hermana vive en Oporto",
    "Je suis allergique aux arachides", "42", "Ana Lisbon",
]


@pytest.mark.parametrize(("text", "kind"), SMALL_TALK)
def test_small_talk_is_recognised(text: str, kind: str) -> None:
    found = small_talk(text)
    assert found is not None, text
    assert found.kind == kind


@pytest.mark.parametrize("text", NOT_SMALL_TALK)
def test_anything_else_is_not_small_talk(text: str) -> None:
    assert not is_small_talk(text), small_talk(text)


def test_names_alone_or_in_numbers_do_not_make_small_talk() -> None:
    assert not is_small_talk("Ana")  # a name needs a greeting or thanks to be an address
    assert not is_small_talk("hi Ana Marta Rui")  # at most two addressed names
    assert not is_small_talk("there guys")  # address words never make small talk alone
    assert not is_small_talk(" ".join(["thanks"] * 20))  # long turns say something


def test_languages_can_be_restricted() -> None:
    assert is_small_talk("danke", ["de"]) and not is_small_talk("danke", ["en"])


def test_every_language_has_its_word_list() -> None:
    for lang in LANGUAGES:
        text = (DATA / lang / "phatic.txt").read_text(encoding="utf-8")
        for section in ("[greeting]", "[thanks]", "[acknowledgement]", "[farewell]"):
            assert section in text, (lang, section)
