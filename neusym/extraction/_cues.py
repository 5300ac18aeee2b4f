"""Sentence-level cues: questions, hedges, hypotheticals, instructions, reminders, and the word gates before them.

These decide how a sentence is *taken* (asserted or not, how confidently, whether it is a standing instruction),
independently of which facts the rule table finds in it. Each expensive regex has a cheap word-set gate so most
sentences skip it.
"""

from __future__ import annotations

import re

from neusym.extraction._text import MONTHS, words_of
from neusym.language import regex as rx

__all__ = [
    "sentence_words",
    "DATE_WORDS",
    "FUTURE_HINT",
    "GENERIC_VERB",
    "HEDGE",
    "HEDGE_WORDS",
    "HYPOTHETICAL",
    "HYPOTHETICAL_WORDS",
    "INSTRUCTION",
    "LEADIN",
    "MIDCAP",
    "NEGATION",
    "PERSONAL",
    "POLITE",
    "QUESTION",
    "REMEMBER",
    "REMEMBER_WORDS",
    "REMINDER",
    "REMINDER_WORDS",
    "TEMPORARY",
]

LEADIN = (
    r"^(?:(?:ok(?:ay)?|so|also|and|but|oh|hey|btw|by\s+the\s+way|please|pls|plz|kindly|just|one\s+more\s+thing|"
    r"important|note)[,:!]?\s+)*"
)
INSTRUCTION = rx.compile(
    LEADIN + r"(?:always|never|do\s+not\s+ever|from\s+now\s+on|going\s+forward|moving\s+forward|"
    r"in\s+(?:the\s+)?future|for\s+future\s+reference|by\s+default|whenever|every\s+time|each\s+time|"
    r"make\s+sure\s+(?:to|you)|be\s+sure\s+to|no\s+more|"
    r"(?:answer|reply|respond|write|speak|talk)\s+(?:to\s+me\s+)?(?:in|using|with|like|as|more|less|only|briefly|concisely|formally)|"
    r"keep\s+(?:it|your\s+\w+|answers|responses|replies)\s+(?:short|brief|concise|simple|under)|"
    r"use\s+(?:the\s+)?\w+(?:\s+\w+)?\s+(?:units|spelling|format|formatting|notation|style|tone|language|dates|time|system)|"
    r"(?:do\s+not|never)\s+(?:use|mention|include|say|add|call|recommend|suggest|bring\s+up|ask|send|share|"
    r"talk|give(?!\s+up)|show|reply|respond|answer|write|book|schedule|contact|email)|"
    r"address\s+me|refer\s+to\s+me|be\s+(?:more\s+|less\s+)?(?:concise|brief|formal|informal|polite|direct|"
    r"detailed|verbose|terse|succinct|honest|specific|casual))\b"
    r"|\b(?:you\s+(?:should|must|need\s+to|have\s+to|shall|are\s+to)\s+(?:always|never)|"
    r"i\s+(?:want|need|would\s+like|prefer)\s+you\s+to\s+(?!remember\b|know\b)|from\s+now\s+on|going\s+forward|"
    r"by\s+default|in\s+(?:all\s+)?(?:future|your)\s+(?:answers|responses|replies|messages))\b",
    re.IGNORECASE,
)
REMEMBER = rx.compile(
    LEADIN
    + r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?)?(?:remember|memori[sz]e|note|keep\s+in\s+mind|"
    r"do\s+not\s+forget|never\s+forget|make\s+a\s+note|take\s+(?:a\s+)?note|save|store|bear\s+in\s+mind)\b(?!\s+to\b)"
    r"|\b(?:for\s+the\s+record|fyi|for\s+your\s+information|just\s+so\s+you\s+know|note\s+to\s+self|"
    r"i\s+want\s+you\s+to\s+(?:remember|know))\b",
    re.IGNORECASE,
)
REMINDER = rx.compile(
    r"(?:"
    + LEADIN
    + r"(?:(?:can|could|would|will)\s+you\s+)?|\b(?:can|could|would|will)\s+you\s+(?:please\s+)?|\bplease\s+|"
    r"\bi\s+(?:want|need|would\s+like)\s+you\s+to\s+)remind\s+me\b(?!\s+of\b)|"
    + LEADIN
    + r"(?:remember|do\s+not\s+forget|never\s+forget)\s+to\b",
    re.IGNORECASE,
)
QUESTION = rx.compile(
    r"^(?:(?:so|and|but|oh|hey|ok(?:ay)?|well|also|btw|wait|hmm)[,]?\s+)*(?:what|where|when|who|whom|whose|why|how|"
    r"which|do|does|did|is|are|was|were|can|could|would|will|should|have|has|had|am|may|shall)\b",
    re.IGNORECASE,
)
POLITE = rx.compile(
    r"^(?:(?:so|and|hey|ok(?:ay)?|also|btw)[,]?\s+)*(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:remember|remind|"
    r"note|save|store|keep|always|never|make\s+sure|call\s+me|use|answer|reply|respond|write|add|update|forget)\b",
    re.IGNORECASE,
)
HYPOTHETICAL = rx.compile(
    r"\b(?:if\s+(?:i|we)\s+(?:were|was|had|could|won|lived|moved|got|did|would)|if\s+only|i\s+wish|(?<!only\s)(?<!just\s)(?<!can\s)imagine|"
    r"suppose\s+(?:that\s+)?(?:i|we)|what\s+if|hypothetically|in\s+theory|pretend|let\s+us\s+say|"
    r"say\s+(?:i|we)\s+(?:were|had|lived)|in\s+another\s+life|"
    r"(?:i|we)\s+would\s+(?!like\b|love\b|prefer\b|rather\b|appreciate\b|say\b|never\s+forget\b)|"
    r"would\s+have|could\s+have|should\s+have|might\s+have)\b",
    re.IGNORECASE,
)
HEDGE = rx.compile(
    r"\b(?:i\s+think|i\s+believe|i\s+guess|i\s+suppose|i\s+reckon|i\s+assume|i\s+doubt|maybe|perhaps|probably|"
    r"possibly|might|may\s+be|not\s+(?:entirely\s+|completely\s+|100%\s+|really\s+)?sure|not\s+certain|"
    r"(?<!favourite\s)(?<!favorite\s)(?<!what\s)(?<!the\s)(?<!a\s)(?<!this\s)(?<!that\s)(?<!any\s)(?<!same\s)"
    r"(?:kind|sort)\s+of|kinda|sorta|apparently|i\s+feel\s+like|seems?\s+(?:like|to)|it\s+seems|likely|unlikely|"
    r"if\s+i\s+remember\s+(?:correctly|right)|iirc|afaik|as\s+far\s+as\s+i\s+know|or\s+something)\b",
    re.IGNORECASE,
)
NEGATION = rx.compile(
    r"\b(?:not|never|no\s+longer|no\s+more|nobody|nothing|neither|nor|cannot)\b", re.IGNORECASE
)
TEMPORARY = rx.compile(
    r"\b(?:for\s+now|temporar\w*|for\s+the\s+time\s+being|just\s+for\s+(?:today|tonight|now|this\s+session)|"
    r"this\s+session\s+only|until\s+further\s+notice)\b",
    re.IGNORECASE,
)
FUTURE_HINT = rx.compile(
    r"\b(?:will|shall|going\s+to|plan|planning|intend|about\s+to|remind|need\s+to|have\s+to|has\s+to|must|"
    r"hope\s+to|want\s+to|would\s+like\s+to|upcoming|coming|next|tomorrow|tonight|scheduled|later|soon|until|by|"
    r"due|deadline|(?:am|is|are)\s+\w+ing|have\s+(?:an?|my)\s+\w+|(?:flight|appointment|meeting|interview|exam|"
    r"party|wedding|surgery|concert|trip|reservation|class|game|match|show)\s+(?:is|starts|leaves|departs|begins))\b",
    re.IGNORECASE,
)
PERSONAL = rx.compile(r"\b(?:i|me|my|mine|myself|we|us|our|ours|you|your|yours)\b", re.IGNORECASE)
GENERIC_VERB = rx.compile(
    r"\b(?:is|are|was|were|has|have|contains?|means?|uses?|supports?|requires?|runs?|consists?|equals?|includes?|"
    r"causes?|became|becomes|invented|founded|discovered|wrote|released|born|died|located)\b",
    re.IGNORECASE,
)
MIDCAP = rx.compile(r"(?<=[a-z0-9,;:] )([A-Z][\w\-]+)")

HYPOTHETICAL_WORDS = words_of(
    "if wish imagine suppose what hypothetically theory pretend say another would could should might"
)
HEDGE_WORDS = words_of(
    "think believe guess suppose reckon assume doubt maybe perhaps probably possibly might may sure "
    "certain kind sort kinda sorta apparently feel seem seems likely unlikely remember iirc afaik know "
    "something"
)
REMEMBER_WORDS = words_of(
    "remember memorise memorize note keep forget save store bear record fyi information know self"
)
REMINDER_WORDS = words_of("remind remember forget")
DATE_WORDS = words_of(
    "#digit today tonight tomorrow yesterday morning afternoon evening night monday tuesday wednesday "
    "thursday friday saturday sunday week weekend month year summer winter spring fall autumn ago noon "
    "midnight minute minutes hour hours day days weeks months years fortnight " + " ".join(MONTHS)
)

WORD_RX = rx.compile(r"[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?")
OCC_SUFFIX = rx.compile(r"\w(?:ist|ician|ologist|eer|grapher|ator)\b")


def sentence_words(lower: str) -> frozenset[str]:
    """The words of a lowercased sentence plus the ``#digit``/``#occ`` markers the rule gates use."""
    words = set(WORD_RX.findall(lower))
    if any(map(str.isdigit, lower)):
        words.add("#digit")
    if OCC_SUFFIX.search(lower):
        words.add("#occ")
    return frozenset(words)
