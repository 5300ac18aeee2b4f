"""Check ``state_changes.jsonl``: schema, turn references, and answers consistent with each case's ``values``.

Run: ``python benchmarks/data/retrieval/check_states.py [FILE]``. Exit status 1 on any problem; counts per
attribute, split, number of changes and distractor kind are printed either way.

What a case promises, and what is checked here:

* ``values`` is the value sequence (the last is current); ``changes`` are exactly its consecutive pairs, in dialogue
  order, each on a user turn that names the new value (a change is *stated*, not implied).
* ``initial`` (the turn that first states ``values[0]``) comes before the first change and names it.
* ``tied`` turns talk about something tied to a value **without naming it**; at least one is tied to the current
  value after the last change, and at least one to an older value (a stale routine a system must not rank first).
* ``restatements`` point back to an earlier turn and are neither changes nor distractors: they must never supersede.
* ``distractors`` (plan, trip, landmark, other_person, hypothetical, negation) are not change turns.
* Questions: ``current`` answers ``values[-1]``; ``history`` answers an earlier value; ``tied_current`` names turns
  listed in ``tied`` for the current value.
* Splits alternate per attribute (dev, test, dev, ... in id order), so both splits hold every attribute.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from datetime import date
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_FILE = HERE / "state_changes.jsonl"

DISTRACTOR_KINDS = frozenset({"plan", "trip", "landmark", "other_person", "hypothetical", "negation"})
QUESTION_KINDS = frozenset({"current", "tied_current", "history"})
FIELDS = {"id", "user", "attribute", "values", "initial", "sessions", "changes", "restatements", "distractors", "tied",
          "questions", "split"}


def _names(text: str, value: str) -> bool:
    """Whether ``text`` names ``value`` (case-insensitive, on word boundaries)."""
    return re.search(r"(?<!\w)" + re.escape(value.lower()) + r"(?!\w)", text.lower()) is not None


def check_case(case: dict[str, Any]) -> list[str]:
    cid = case.get("id", "?")
    errs: list[str] = []

    def err(msg: str) -> None:
        errs.append(f"{cid}: {msg}")

    if set(case) != FIELDS:
        err(f"fields missing or unexpected: {sorted(set(case) ^ FIELDS)}")
        return errs
    if not re.fullmatch(r"state-\d{3}", cid):
        err("id must be state-NNN")
    values = case["values"]
    if not (isinstance(values, list) and 2 <= len(values) <= 6 and all(isinstance(v, str) and v for v in values)):
        err("values must list 2-6 non-empty strings (1-5 changes)")
        return errs
    if any(a == b for a, b in zip(values, values[1:], strict=False)):
        err("two consecutive values are equal")
    sessions = case["sessions"]
    if not 4 <= len(sessions) <= 9:
        err(f"{len(sessions)} sessions, want 4-9")
    order: dict[tuple[str, int], int] = {}
    texts: dict[tuple[str, int], tuple[str, str]] = {}
    last_day: date | None = None
    for s in sessions:
        sid = s.get("session_id")
        if set(s) != {"session_id", "date", "turns"} or not s["turns"]:
            err(f"session {sid} needs session_id, date and turns")
            continue
        try:
            day = date.fromisoformat(s["date"])
        except (TypeError, ValueError):
            err(f"session {sid}: bad date {s.get('date')!r}")
            continue
        if last_day is not None and day <= last_day:
            err(f"session {sid}: dates must increase")
        last_day = day
        for ti, t in enumerate(s["turns"]):
            if set(t) != {"speaker", "text"} or not t["text"].strip() or not t["speaker"]:
                err(f"{sid}/{ti}: a turn needs speaker and text")
                continue
            key = (sid, ti)
            if key in order:
                err(f"duplicate session id {sid}")
            order[key] = len(order)
            texts[key] = (t["speaker"], t["text"])

    def ref(r: Any, what: str) -> tuple[str, int] | None:
        key = (r.get("session_id"), r.get("turn")) if isinstance(r, dict) else None
        if key not in order:
            err(f"{what} points to a turn that does not exist: {r!r}")
            return None
        return key  # type: ignore[return-value]

    # changes: the consecutive pairs of values, in dialogue order, on user turns that name the new value
    changes = case["changes"]
    if len(changes) != len(values) - 1:
        err(f"{len(changes)} changes for {len(values)} values")
    change_keys: list[tuple[str, int]] = []
    for i, ch in enumerate(changes):
        key = ref(ch, "change")
        if key is None:
            continue
        change_keys.append(key)
        if i < len(values) - 1 and (ch.get("old"), ch.get("new")) != (values[i], values[i + 1]):
            err(f"change {i} is {ch.get('old')}->{ch.get('new')}, values say {values[i]}->{values[i + 1]}")
        spk, text = texts[key]
        if spk != "user":
            err(f"change {key} is not a user turn")
        if not _names(text, str(ch.get("new", ""))):
            err(f"change {key} does not name the new value {ch.get('new')!r}")
    if [order[k] for k in change_keys] != sorted(order[k] for k in change_keys):
        err("changes are not in dialogue order")
    init = case["initial"]
    ikey = ref(init, "initial")
    if ikey is not None:
        if not _names(texts[ikey][1], values[0]):
            err(f"initial turn {ikey} does not name {values[0]!r}")
        if change_keys and order[ikey] >= order[change_keys[0]]:
            err("initial statement comes after the first change")
    change_set = set(change_keys)

    # tied turns: never name their value; current and stale ones both present
    tied_current: set[tuple[str, int]] = set()
    stale = 0
    last_change = max((order[k] for k in change_keys), default=-1)
    for t in case["tied"]:
        key = ref(t, "tied")
        if key is None:
            continue
        if t.get("value") not in values:
            err(f"tied {key} has a value not in values: {t.get('value')!r}")
            continue
        if _names(texts[key][1], t["value"]):
            err(f"tied {key} names its value {t['value']!r} (tied turns must not)")
        if key in change_set:
            err(f"tied {key} is a change turn")
        if t["value"] == values[-1] and order[key] > last_change:
            tied_current.add(key)
        elif t["value"] != values[-1]:
            stale += 1
    if not tied_current:
        err("no tied turn for the current value after the last change")
    if not stale:
        err("no tied turn for an older value (stale routine)")

    for r in case["restatements"]:
        key = ref(r, "restatement")
        orig = ref(r.get("restates"), "restated turn")
        if key is None or orig is None:
            continue
        if order[orig] >= order[key]:
            err(f"restatement {key} does not come after the turn it restates {orig}")
        if key in change_set:
            err(f"restatement {key} is a change turn")
    if not case["restatements"]:
        err("no restatement")

    dist_keys = set()
    for d in case["distractors"]:
        key = ref(d, "distractor")
        if key is None:
            continue
        dist_keys.add(key)
        if d.get("kind") not in DISTRACTOR_KINDS:
            err(f"distractor {key}: unknown kind {d.get('kind')!r}")
        if key in change_set:
            err(f"distractor {key} is a change turn")
    if len(case["distractors"]) < 2:
        err("fewer than 2 distractors")
    for r in case["restatements"]:
        key = (r.get("session_id"), r.get("turn"))
        if key in dist_keys:
            err(f"restatement {key} is also a distractor")

    kinds = Counter()
    for q in case["questions"]:
        kind = q.get("kind")
        kinds[kind] += 1
        if kind not in QUESTION_KINDS or not str(q.get("question", "")).strip():
            err(f"bad question {q!r}")
            continue
        if kind == "current" and q.get("answer") != values[-1]:
            err(f"current answer {q.get('answer')!r} != {values[-1]!r}")
        elif kind == "history" and q.get("answer") not in values[:-1]:
            err(f"history answer {q.get('answer')!r} is not an earlier value")
        elif kind == "tied_current":
            turns = q.get("answer_turns") or []
            if not turns:
                err("tied_current question without answer_turns")
            for r in turns:
                key = ref(r, "answer turn")
                if key is not None and key not in tied_current:
                    err(f"tied_current answer {key} is not a tied turn of the current value")
    for kind in sorted(QUESTION_KINDS):
        if not kinds[kind]:
            err(f"no {kind} question")
    if case["split"] not in ("dev", "test"):
        err(f"split {case['split']!r}")
    return errs


def check(cases: list[dict[str, Any]]) -> list[str]:
    errs: list[str] = []
    seen: set[str] = set()
    per_attr: dict[str, int] = defaultdict(int)
    for c in cases:
        errs += check_case(c)
        if c.get("id") in seen:
            errs.append(f"{c.get('id')}: duplicate id")
        seen.add(str(c.get("id")))
        attr = str(c.get("attribute"))
        want = "dev" if per_attr[attr] % 2 == 0 else "test"
        per_attr[attr] += 1
        if c.get("split") != want:
            errs.append(f"{c.get('id')}: split should be {want} (alternating within attribute {attr})")
    for attr, n in per_attr.items():
        if n < 2:
            errs.append(f"attribute {attr} has one case: it cannot be in both splits")
    return errs


def report(cases: list[dict[str, Any]]) -> str:
    attrs = Counter(c["attribute"] for c in cases)
    by = Counter((c["attribute"], c["split"]) for c in cases)
    nchg = Counter(len(c["changes"]) for c in cases)
    dist = Counter(d["kind"] for c in cases for d in c["distractors"])
    lines = [f"{len(cases)} cases, {sum(len(s['turns']) for c in cases for s in c['sessions'])} turns, "
             f"{sum(len(c['sessions']) for c in cases)} sessions",
             "split: " + ", ".join(f"{k} {v}" for k, v in sorted(Counter(c['split'] for c in cases).items())),
             "changes per case: " + ", ".join(f"{k}: {v}" for k, v in sorted(nchg.items())),
             "distractors: " + ", ".join(f"{k} {v}" for k, v in sorted(dist.items())),
             f"restatements {sum(len(c['restatements']) for c in cases)}, tied turns "
             f"{sum(len(c['tied']) for c in cases)}, questions {sum(len(c['questions']) for c in cases)}",
             "attribute        dev  test"]
    for a, _ in attrs.most_common():
        lines.append(f"{a:<15} {by[(a, 'dev')]:>4} {by[(a, 'test')]:>5}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    args = ap.parse_args(argv)
    cases = [json.loads(line) for line in args.file.read_text(encoding="utf-8").splitlines() if line.strip()]
    errs = check(cases)
    print(report(cases))
    for e in errs:
        print("ERROR", e)
    print(f"{len(errs)} problem(s)")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
