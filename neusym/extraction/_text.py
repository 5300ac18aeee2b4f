"""Text plumbing and the small closed word lists the rule extractor leans on.

The lists are closed-class words (pronouns, auxiliaries), relation nouns, emotions, pet species, occupations and
demonyms: small enough to read, and the alternative (a statistical tagger) is not available and far too slow for
thousands of texts a second. Places, people and organisations are deliberately *not* listed: those are found from
capitalisation and syntax.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from neusym.language import regex as rx

__all__ = [
    "ABBREV_DOT",
    "COMMON_WORDS",
    "DEMONYMS",
    "EMOTIONS",
    "MONTHS",
    "MONTH_PATTERN",
    "NUMBER_WORDS",
    "OCCUPATIONS",
    "PETS",
    "RELATIONS",
    "UPPER",
    "WEEKDAYS",
    "is_chitchat",
    "normalise",
    "protect",
    "restore",
    "sentence_spans",
    "singular",
    "words_of",
]

ABBREV_DOT = "\u2024"
"""Stands in for the dot of an abbreviation ("Dr.", "e.g.") so sentence and clause splitting ignore it.

It is one character for one, so spans found on the protected text are spans of the original text.
"""

UPPER = "A-Z\u00c0-\u00d6\u00d8-\u00de\u0100\u0102\u0104\u0106\u010c\u010e\u0110\u0118\u011a\u0141\u0143\u0147\u0150\u0152\u0158\u015a\u015e\u0160\u0162\u0164\u016e\u0170\u0178\u0179\u017b\u017d"
"""Uppercase letters for name detection (ASCII, Latin-1 and the common Latin Extended-A capitals)."""

_ABBREVIATIONS = rx.compile(
    r"\b(?:Mr|Mrs|Ms|Mx|Dr|Prof|Sr|Jr|St|Mt|Ft|Ave|Rd|Blvd|Inc|Ltd|Co|Corp|Gov|Sen|Rep|Gen|Col|Capt|Lt|Sgt|Rev|"
    r"vs|etc|approx|dept|est|No|Vol|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|e\.g|i\.e|a\.m|p\.m|U\.S|U\.K)\."
    r"|\b[A-Z]\.(?=\s*[A-Z])",
)
_SENTENCE_END = rx.compile(r"(?<=[.!?\u2026])[\"')\]\u201d\u2019]*\s+|\s*\n\s*")


def protect(text: str) -> str:
    """Replace abbreviation dots with :data:`ABBREV_DOT` (same length)."""
    if "." not in text:
        return text
    return _ABBREVIATIONS.sub(lambda m: m.group(0)[:-1].replace(".", ABBREV_DOT) + ABBREV_DOT, text)


def restore(text: str) -> str:
    return text.replace(ABBREV_DOT, ".")


def sentence_spans(protected: str) -> list[tuple[int, int]]:
    """(start, end) of each non-blank sentence of an abbreviation-protected text."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE_END.finditer(protected):
        if m.start() > start:
            spans.append((start, m.start()))
        start = m.end()
    if start < len(protected):
        spans.append((start, len(protected)))
    return [(s, e) for s, e in spans if protected[s:e].strip()]


_QUOTE_MAP = str.maketrans(
    {
        "\u2019": "'",
        "\u2018": "'",
        "\u02bc": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\u00a0": " ",
        "\u2009": " ",
        "\u202f": " ",
        "\u2013": "-",
        "\u2014": " - ",
    }
)
_CONTRACTION = rx.compile(r"\b(\w+)'(m|re|ve|ll|d|s|t)\b", re.IGNORECASE)
_IS_CONTRACTORS = frozenset(
    {"he", "she", "it", "that", "what", "there", "here", "who", "where", "how", "name", "this", "everything"}
)
_NOT_STEMS = {"can": "cannot", "won": "will not", "shan": "shall not", "ain": "am not"}
_SUFFIX = {"m": "am", "re": "are", "ve": "have", "ll": "will", "d": "would"}
_SLANG = rx.compile(
    r"\b(?:(im)|(ive)|(dont)|(doesnt)|(didnt)|(cant)|(isnt)|(wasnt)|(gonna)|(wanna)|(gotta)|(luv))\b",
    re.IGNORECASE,
)
_SLANG_OUT = (
    "i am",
    "i have",
    "do not",
    "does not",
    "did not",
    "cannot",
    "is not",
    "was not",
    "going to",
    "want to",
    "have to",
    "love",
)
_SPACES = rx.compile(r"[ \t\r\f\v]+")


_HAD_NEXT = rx.compile(
    r"\s+(?:been|had|gone|done|seen|known|met|never|already|just|ever|always|got|gotten|told|heard|left|made|taken|"
    r"given|\w+ed)\b",
    re.IGNORECASE,
)


def _expand(m: re.Match[str]) -> str:
    word, suffix = m.group(1), m.group(2).lower()
    if suffix == "d" and _HAD_NEXT.match(m.string, m.end()):
        return f"{word} had"  # "I'd been" is "I had been", not a hypothetical "I would"
    if suffix == "t":
        low = word.lower()
        if low in _NOT_STEMS:
            return _NOT_STEMS[low]
        if low.endswith("n"):
            return f"{word[:-1]} not"
        return m.group(0)
    if suffix == "s":
        if word.lower() == "let":
            return f"{word} us"
        return f"{word} is" if word.lower() in _IS_CONTRACTORS else m.group(0)
    return f"{word} {_SUFFIX[suffix]}"


def _slang(m: re.Match[str]) -> str:
    return _SLANG_OUT[(m.lastindex or 1) - 1]


def normalise(sentence: str) -> str:
    """Straight quotes, expanded contractions and chat spellings, single spaces: what the patterns expect.

    Possessive "'s" on names is kept ("Caroline's sister"); only pronoun contractions ("she's") are expanded.
    """
    s = sentence.translate(_QUOTE_MAP)
    if "'" in s:
        s = _CONTRACTION.sub(_expand, s)
    s = _SLANG.sub(_slang, s)
    return _SPACES.sub(" ", s).strip()


def words_of(text: str) -> frozenset[str]:
    """A frozenset of the whitespace-separated words of ``text`` (keeps word lists compact in source)."""
    return frozenset(text.split())


COMMON_WORDS: frozenset[str] = words_of(
    """a an the this that these those my your our their his her its me you we they he she it him them us i
    mine yours ours theirs who whom whose what which when where why how whatever whoever
    am is are was were be been being do does did have has had having will would shall should can could may might
    must not no yes yeah yep nope ok okay sure please thanks thank hi hello hey bye goodbye dear oh ah wow hmm
    and or but so if then than because since although though while after before until unless as also too very
    really just still even only maybe perhaps probably actually honestly basically literally anyway anyways well
    today tomorrow yesterday tonight now later soon again always never sometimes often usually ever already
    nice cool awesome amazing lol omg btw fyi tbh imo imho
    asap lmao haha hahaha xd all every each some any many much more most few other another such same
    in on at to from for with by about of off over under into onto up down out around through between
    remember note let lets don't dont can't cannot here there everyone everybody someone somebody nobody
    anyone something anything nothing everything one none both either neither guess think wait look listen
    speaking talking sorry welcome congrats congratulations cheers woohoo woah whoa yay yaay aww awww ooh yikes
    gosh hooray hurray ugh phew hehe aw oops dang damn wowza geez jeez omg lmao rofl ha haha yo sup during
    throughout within without among against towards toward upon across behind beyond despite except inside
    outside via per near like unlike""".lower()
)
"""Closed-class and filler words: never an entity on their own, trimmed from the edges of capitalised runs."""

MONTHS: Mapping[str, int] = MappingProxyType(
    {
        name: i
        for i, names in enumerate(
            (
                "january jan",
                "february feb",
                "march mar",
                "april apr",
                "may",
                "june jun",
                "july jul",
                "august aug",
                "september sep sept",
                "october oct",
                "november nov",
                "december dec",
            ),
            start=1,
        )
        for name in names.split()
    }
)
MONTH_PATTERN = "|".join(sorted(MONTHS, key=len, reverse=True))
"""Every month name of :data:`MONTHS` as one regex alternative, longest first (``september|...|sep``): the one
place month names are spelled, for the extractor's date reader and retrieval's time windows alike."""

WEEKDAYS: Mapping[str, int] = MappingProxyType(
    {
        d: i
        for i, d in enumerate(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])
    }
)
NUMBER_WORDS: Mapping[str, float] = MappingProxyType(
    {
        "a": 1,
        "an": 1,
        "one": 1,
        "two": 2,
        "three": 3,
        "four": 4,
        "five": 5,
        "six": 6,
        "seven": 7,
        "eight": 8,
        "nine": 9,
        "ten": 10,
        "eleven": 11,
        "twelve": 12,
        "fifteen": 15,
        "twenty": 20,
        "thirty": 30,
        "forty": 40,
        "fifty": 50,
        "sixty": 60,
        "ninety": 90,
        "a few": 3,
        "few": 3,
        "a couple of": 2,
        "a couple": 2,
        "couple of": 2,
        "several": 3,
        "half an": 0.5,
        "half a": 0.5,
    }
)

EMOTIONS: frozenset[str] = words_of(
    """happy sad stressed anxious nervous worried excited angry mad upset tired exhausted bored lonely depressed
    frustrated overwhelmed thrilled grateful thankful proud scared afraid terrified annoyed irritated glad delighted
    down miserable content relieved hopeful disappointed heartbroken ecstatic joyful calm relaxed peaceful confused
    embarrassed ashamed guilty jealous hurt sick unwell motivated inspired optimistic pessimistic blessed lucky
    awful terrible horrible cheerful furious panicked insecure confident homesick nostalgic elated pumped stoked
    sleepy drained fine great good bad okay ok meh amazing fantastic wonderful devastated crushed sore restless
    uneasy tense emotional moved touched satisfied fulfilled"""
)
"""Emotion and mood adjectives ("I feel X", "I am so X")."""

PETS: Mapping[str, str] = MappingProxyType(
    {
        **{
            w: w
            for w in [
                "dog",
                "cat",
                "puppy",
                "kitten",
                "hamster",
                "rabbit",
                "bunny",
                "parrot",
                "bird",
                "budgie",
                "fish",
                "goldfish",
                "turtle",
            ]
        },
        **{
            w: w
            for w in [
                "tortoise",
                "snake",
                "lizard",
                "gecko",
                "horse",
                "pony",
                "ferret",
                "gerbil",
                "mouse",
                "rat",
                "chicken",
                "hedgehog",
            ]
        },
        **{w: w for w in ["iguana", "pet"]},
        "dogs": "dog",
        "cats": "cat",
        "puppies": "puppy",
        "kittens": "kitten",
        "kitty": "cat",
        "hamsters": "hamster",
        "rabbits": "rabbit",
        "bunnies": "bunny",
        "parrots": "parrot",
        "birds": "bird",
        "budgies": "budgie",
        "turtles": "turtle",
        "tortoises": "tortoise",
        "snakes": "snake",
        "lizards": "lizard",
        "geckos": "gecko",
        "horses": "horse",
        "ponies": "pony",
        "ferrets": "ferret",
        "gerbils": "gerbil",
        "mice": "mouse",
        "rats": "rat",
        "chickens": "chicken",
        "hedgehogs": "hedgehog",
        "iguanas": "iguana",
        "pets": "pet",
        "guinea pig": "guinea pig",
        "guinea pigs": "guinea pig",
        **dict.fromkeys(
            words_of(
                "retriever retrievers labrador labradors lab poodle poodles terrier terriers bulldog bulldogs beagle "
                "beagles husky huskies corgi corgis dachshund dachshunds chihuahua pug pugs collie collies spaniel "
                "spaniels greyhound rottweiler labradoodle goldendoodle doodle schnauzer pomeranian shepherd"
            ),
            "dog",
        ),
        **dict.fromkeys(words_of("siamese ragdoll"), "cat"),
    }
)
"""Pet species (plural -> singular)."""

RELATIONS: Mapping[str, str] = MappingProxyType(
    {
        **dict.fromkeys(("wife", "husband", "spouse"), "married_to"),
        **dict.fromkeys(
            ("partner", "boyfriend", "girlfriend", "fiance", "fiancee", "fiancé", "fiancée", "bf", "gf"),
            "partner_of",
        ),
        **dict.fromkeys(("sister", "brother", "sibling", "sis", "bro"), "sibling_of"),
        **dict.fromkeys(
            ("mom", "mum", "mother", "dad", "father", "parent", "mommy", "daddy", "mama", "papa"), "child_of"
        ),
        **dict.fromkeys(("son", "daughter", "kid", "child", "baby"), "parent_of"),
        **dict.fromkeys(
            ("grandma", "grandmother", "grandpa", "grandfather", "granny", "nana"), "grandchild_of"
        ),
        **dict.fromkeys(
            ("cousin", "aunt", "uncle", "niece", "nephew", "grandson", "granddaughter"), "relative_of"
        ),
        **dict.fromkeys(("friend", "buddy", "pal", "bestie", "bff"), "friend_of"),
        **dict.fromkeys(("colleague", "coworker", "co-worker", "teammate"), "colleague_of"),
        **dict.fromkeys(("boss", "manager", "supervisor"), "reports_to"),
        **dict.fromkeys(("neighbour", "neighbor"), "neighbour_of"),
        **dict.fromkeys(("roommate", "flatmate", "housemate"), "roommate_of"),
    }
)
"""Relation noun after "my" -> predicate with the speaker as subject ("my mom Ann" -> child_of(user, Ann))."""

OCCUPATIONS: frozenset[str] = words_of(
    """engineer developer programmer designer manager teacher nurse doctor physician surgeon lawyer attorney
    accountant chef cook writer author journalist artist musician scientist researcher professor lecturer student
    consultant analyst architect pharmacist dentist therapist counselor counsellor psychologist psychiatrist
    firefighter officer pilot driver mechanic electrician plumber carpenter farmer baker barista waiter waitress
    cashier salesperson entrepreneur founder ceo cto cfo coo director intern librarian photographer editor
    translator veterinarian vet paramedic soldier tutor coach actor actress dancer singer economist mathematician
    physicist chemist biologist technician administrator secretary receptionist clerk banker trader investor
    realtor freelancer contractor worker volunteer painter sculptor illustrator animator producer composer
    programmer scientist specialist strategist marketer recruiter officer supervisor caregiver nanny midwife
    optometrist radiologist engineer detective policeman policewoman judge paralegal economist pastor priest rabbi
    imam teacher principal housekeeper janitor cleaner tailor hairdresser barber stylist model streamer youtuber
    blogger influencer podcaster lifeguard gardener electrician welder machinist fisherman miner astronaut"""
)
"""Occupation head nouns, for "I am a nurse" (no employer given) and "Bob is a doctor"."""

DEMONYMS: frozenset[str] = words_of(
    """american british english scottish welsh irish canadian australian german french italian spanish portuguese
    dutch belgian swiss austrian swedish norwegian danish finnish icelandic polish czech slovak russian ukrainian
    greek turkish indian pakistani bangladeshi chinese japanese korean vietnamese thai filipino indonesian
    malaysian singaporean mexican brazilian argentinian argentine colombian chilean peruvian venezuelan cuban
    jamaican nigerian kenyan ghanaian ethiopian egyptian moroccan algerian tunisian israeli iranian iraqi
    lebanese syrian saudi emirati hungarian romanian bulgarian serbian croatian slovenian lithuanian latvian
    estonian georgian armenian nepali sri lankan"""
)
"""Nationalities, so "I'm Canadian" is a nationality and not a person called Canadian."""

_CHAT_PHRASES = (
    r"hi|hello|hey|yo|hiya|howdy|thanks|thank you|thx|ty|ok|okay|k|kk|cool|great|nice|awesome|sure|yes|no|"
    r"yeah|yep|yup|nope|nah|lol|lmao|rofl|haha+|hehe+|wow|oh|ah|hmm+|um+|uh+|bye|goodbye|good night|good morning|"
    r"good evening|good afternoon|see you|see ya|later|sounds good|got it|gotcha|i see|right|indeed|exactly|"
    r"absolutely|of course|no problem|no worries|np|you too|same here|me too|same|welcome|you are welcome|"
    r"cheers|congrats|congratulations|amazing|perfect|fine|alright|all right|sorry|my bad|"
    r"how are you(?: doing)?(?: today)?|how is it going|what is up|sup|how about you|and you|hbu|wyd|"
    r"that is (?:great|cool|nice|awesome|amazing|good|funny|too bad|so cool|wonderful|awesome news|great news)|"
    r"glad to hear(?: that)?|nice to (?:meet|see) you|good to (?:hear|know)|love it|love that|take care|"
    r"there|man|dude|buddy|friend|guys|all|so much|a lot|again|too|then|everyone|mate|so|really|very"
)
_CHITCHAT = rx.compile(rf"^(?:{_CHAT_PHRASES})(?:[\s,.!?~]+(?:{_CHAT_PHRASES}))*$", re.IGNORECASE)
_EDGE_JUNK = rx.compile(r"^[\W_]+|(?<![\W_])[\W_]+$")  # a trailing run matched from its start only


def is_chitchat(sentence: str) -> bool:
    """True for greetings, thanks and back-channel replies that carry nothing worth remembering."""
    core = _EDGE_JUNK.sub("", sentence)
    if not core:
        return True  # emoji or punctuation only
    return _CHITCHAT.match(core) is not None


def singular(word: str) -> str:
    """Cheap singular for pet species and category nouns; good enough for the closed lists used here."""
    low = word.lower()
    if low in PETS:
        return PETS[low]
    if low.endswith("ies") and len(low) > 4:
        return low[:-3] + "y"
    if low.endswith("s") and not low.endswith("ss") and len(low) > 3:
        return low[:-1]
    return low
