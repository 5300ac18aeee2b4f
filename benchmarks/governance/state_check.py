"""Governance on multi-session dialogue where one value changes and later sessions restate things (issue #29).

    python -m benchmarks.governance.state_check [FILE] [--split dev|test|both] [--infer|--verbatim]

The dev set (``benchmarks/data/retrieval/state_changes.jsonl``, written by someone who had not read the rules) has
48 dialogues: a user's city, employer, partner, pet, diet ... changes 1-5 times over 4-9 dated sessions, and the
dialogue also restates unchanged facts, mentions plans, trips, landmarks, other people, hypotheticals and negations.
Every turn is added through the public API, one at a time, as a chat application would (speaker = the user's name
or the assistant/friend, ``valid_from`` = the session's date, one session id per session). What must hold:

* **restatements never supersede** — a memory made from a restatement turn supersedes nothing;
* **no distractor supersedes** — a plan, a trip, a landmark, another person, a hypothetical or a negation replaces
  nothing;
* **the current value is in force** — after the dialogue some active memory names the last value;
* **history is complete** — every earlier value is still held (active or superseded, never lost);

and, for reading: supersessions by turns that are not changes (false alarms), and changes that superseded an older
memory naming the old value (the change was seen). Tune on ``dev`` only; ``test`` is the held-out column.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks._common import build_embedder, machine_info, quiet_logs, write_json

DEFAULT = Path(__file__).resolve().parents[1] / "data" / "retrieval" / "state_changes.jsonl"


def _names(text: str, value: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(value.lower()) + r"(?!\w)", text.lower()) is not None


def _ref(x: dict[str, Any]) -> tuple[str, int]:
    return x["session_id"], int(x["turn"])


def run_case(mem: Any, case: dict[str, Any], *, infer: bool) -> dict[str, Any]:
    user = case["id"]
    by_turn: dict[tuple[str, int], list[str]] = {}
    text_of: dict[str, str] = {}
    turn_of: dict[str, tuple[str, int]] = {}
    supersedes: list[tuple[str, str]] = []  # (new id, old id)
    reason_of: dict[str, str] = {}
    for session in case["sessions"]:
        day = datetime.fromisoformat(session["date"]).replace(hour=9, tzinfo=UTC)
        for i, turn in enumerate(session["turns"]):
            speaker = case["user"] if turn["speaker"] == "user" else turn["speaker"]
            res = mem.add(turn["text"], user_id=user, session_id=f"{user}/{session['session_id']}",
                          speaker=speaker, valid_from=day + timedelta(minutes=i), infer=infer)
            for dec in res.decisions:
                rid = dec.record.id
                by_turn.setdefault((session["session_id"], i), []).append(rid)
                text_of[rid] = dec.record.content
                turn_of[rid] = (session["session_id"], i)
                supersedes.extend((rid, old) for old in dec.supersedes)
                reason_of[rid] = dec.reason
    values = case["values"]
    restating = {_ref(r) for r in case["restatements"]}
    distracting = {_ref(d): d["kind"] for d in case["distractors"]}
    changing = {_ref(c) for c in case["changes"]}
    status = {}
    for rid in text_of:
        rec = mem.get(rid, user_id=user)
        status[rid] = rec.status.value if rec is not None else "missing"
    in_force = [r for r, s in status.items() if s == "active" and _names(text_of[r], values[-1])]
    lost = [v for v in values[:-1] if not any(_names(text_of[r], v) and status[r] in ("active", "superseded")
                                               for r in text_of)]
    bad_restate = [(n, o) for n, o in supersedes if turn_of.get(n) in restating]
    bad_distract = [(n, o, distracting[turn_of[n]]) for n, o in supersedes if turn_of.get(n) in distracting]
    false_alarms = [(n, o) for n, o in supersedes if turn_of.get(n) not in changing]
    seen = sum(1 for c in case["changes"] for n, o in supersedes
               if turn_of.get(n) == _ref(c) and _names(text_of.get(o, ""), c["old"]))
    return {
        "id": case["id"], "split": case["split"], "attribute": case["attribute"], "changes": len(case["changes"]),
        "restatement_supersessions": len(bad_restate), "distractor_supersessions": len(bad_distract),
        "distractor_kinds": [k for _n, _o, k in bad_distract], "current_in_force": bool(in_force),
        "history_complete": not lost, "lost_values": lost, "false_alarms": len(false_alarms),
        "changes_seen": min(seen, len(case["changes"])),
        "events": [{"new": text_of.get(n, "?")[:160], "old": text_of.get(o, "?")[:160],
                    "new_turn": list(turn_of.get(n, ("?", -1))), "reason": reason_of.get(n, "")[-200:],
                    "kind": ("restatement" if turn_of.get(n) in restating else
                             distracting.get(turn_of.get(n, ("", -1)), "change" if turn_of.get(n) in changing
                                             else "other"))}
                   for n, o in supersedes],
    }


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    kinds = Counter(k for r in rows for k in r["distractor_kinds"])
    return {
        "cases": n,
        "restatement_supersessions": sum(r["restatement_supersessions"] for r in rows),
        "distractor_supersessions": sum(r["distractor_supersessions"] for r in rows),
        "distractor_supersessions_by_kind": dict(kinds),
        "current_in_force": sum(r["current_in_force"] for r in rows),
        "history_complete": sum(r["history_complete"] for r in rows),
        "false_alarm_supersessions": sum(r["false_alarms"] for r in rows),
        "changes": sum(r["changes"] for r in rows),
        "changes_seen": sum(r["changes_seen"] for r in rows),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.governance.state_check", description=__doc__)
    p.add_argument("file", type=Path, nargs="?", default=DEFAULT)
    p.add_argument("--split", choices=("dev", "test", "both"), default="dev")
    p.add_argument("--verbatim", action="store_true", help="infer=False: one memory per turn, as locomo_check")
    p.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/governance"))
    a = p.parse_args(argv)
    quiet_logs()
    from neusym import NeuSymConfig, NeuSymMemory

    cases = [json.loads(line) for line in a.file.read_text(encoding="utf-8").splitlines() if line.strip()]
    cases = [c for c in cases if a.split == "both" or c["split"] == a.split][: a.limit]
    work = Path(tempfile.mkdtemp(prefix="neusym-state-check-"))
    t0 = time.perf_counter()
    try:
        mem = NeuSymMemory(config=NeuSymConfig(data_dir=work / "neusym", graph_name="state_check",
                                               appendfsync="everysec"), embedder=build_embedder(a.embedder))
        try:
            rows = [run_case(mem, c, infer=not a.verbatim) for c in cases]
        finally:
            mem.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    splits = sorted({r["split"] for r in rows})
    report = {"machine": machine_info("benchmarks.governance.state_check"), "seconds": round(time.perf_counter() - t0),
              "infer": not a.verbatim, "summary": {s: summarise([r for r in rows if r["split"] == s]) for s in splits},
              "cases": rows}
    tag = f"state_check_{a.split}{'_verbatim' if a.verbatim else ''}"
    write_json(a.out / f"{tag}.json", report)
    lines = [f"# State-change dialogues ({a.split}, {'verbatim turns' if a.verbatim else 'extracted memories'})", "",
             f"`{report['machine']['command']}` — {report['machine']['date']}, commit {report['machine']['git_commit']}",
             "", "| split | cases | restatements superseding | distractors superseding | current in force | "
             "history complete | false-alarm supersessions | changes seen |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for s, m in report["summary"].items():
        lines.append(f"| {s} | {m['cases']} | {m['restatement_supersessions']} | {m['distractor_supersessions']} "
                     f"{m['distractor_supersessions_by_kind'] or ''} | {m['current_in_force']}/{m['cases']} | "
                     f"{m['history_complete']}/{m['cases']} | {m['false_alarm_supersessions']} | "
                     f"{m['changes_seen']}/{m['changes']} |")
    (a.out / f"{tag}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    for r in rows:
        if r["split"] != "dev":
            continue  # held-out cases: numbers only, never their texts (tune on dev)
        for e in r["events"]:
            if e["kind"] != "change":
                print(f"  [{r['id']} {e['kind']}] {e['old'][:80]!r}\n      -> {e['new'][:80]!r}\n"
                      f"      ({e['reason'][-120:]})")
        if not r["current_in_force"] or not r["history_complete"]:
            print(f"  [{r['id']}] current in force: {r['current_in_force']}, lost: {r['lost_values']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
