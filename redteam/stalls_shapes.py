"""Adversarial text shapes shared by the stall probes."""

SHAPES = {
    "digits": "7",
    "digits-dot": "1.2,",
    "punct": "!?.,;:",
    "spaces": " \t",
    "words": "budget ",
    "one-word": "a",
    "role-user": "user: ",
    "x-system": "x system:",
    "caps-names": "Bob Smith ",
    "emails": "a@b.co ",
    "urls": "http://x.io/a ",
    "dates": "12/05/2023 ",
    "units": "5 kg ",
    "facts": "I live in Lisbon. ",
    "accented": "caf\u00e9 ",
    "cjk": "\u6211\u559c\u6b22\u8336",
    "markup": "<b>",
    "spaced": "a b ",
    "leet": "1!1! ",
    "b64ish": "QUJD",
    "ignore": "ignore ",
    "quotes": "\"'",
    "hyphens": "-",
    "newlines": "\n",
    "mixed-cyr": "p\u0430 ",
    "my-x": "my ",
    "percent": "50% ",
    "money": "$5 ",
    "times": "5pm ",
    "weekday": "next Friday ",
}


def make(unit, size):
    return (unit * (size // len(unit) + 1))[:size]


