"""False supersessions on real dialogue: ingest the LoCoMo dev conversations and count what governance replaced.

    python -m benchmarks.governance.locomo_check /work/shared/data/locomo/locomo_dev.json [--store turns|observations|both]

LoCoMo conversations are two friends talking over months: they mention homes, jobs, pets and hobbies many times,
and almost never *change* one (a handful of real updates in five conversations). Every supersession, update
flag or contradiction flag governance plans while ingesting them is therefore a candidate false alarm, and each
one is listed with both texts so a reader can judge it. A superseded memory drops out of default search, so the
report also counts superseded memories that are evidence for a question (evidence hidden from default search).
Memories are added one at a time, exactly as ``benchmarks.locomo`` adds them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._common import build_embedder, quiet_logs
from benchmarks.locomo_data import load_locomo


def check(path: Path, store: str, limit_convs: int | None = None) -> dict[str, Any]:
    from neusym import NeuSymConfig, NeuSymMemory

    convs = load_locomo(path, limit_convs=limit_convs)
    emb = build_embedder("minilm")
    work = Path(tempfile.mkdtemp(prefix="neusym-locomo-check-"))
    try:
        mem = NeuSymMemory(config=NeuSymConfig(data_dir=work / "neusym", graph_name="locomo_check",
                                               appendfsync="everysec"), embedder=emb)
        text_of: dict[str, str] = {}
        ref_of: dict[str, str] = {}
        events: dict[str, list[dict[str, Any]]] = {"supersede": [], "review": [], "contradiction": []}
        evidence = {e for c in convs for q in c.questions for e in q.evidence}
        n = 0
        t0 = time.perf_counter()
        for c in convs:
            for d in c.docs(store):
                res = mem.add(d.text, speaker=d.speaker, valid_from=d.when, ref=d.key, user_id=c.sample_id,
                              session_id=f"{c.sample_id}/S{d.session}", infer=False)
                n += 1
                for dec in res.decisions:
                    rid = dec.record.id
                    text_of[rid] = d.text
                    ref_of[rid] = d.key
                    for old in dec.supersedes:
                        events["supersede"].append({"conv": c.sample_id, "new": rid, "old": old,
                                                    "reason": dec.reason})
                    for old in dec.conflicts_with:
                        events["review"].append({"conv": c.sample_id, "new": rid, "old": old, "reason": dec.reason})
                    for old in dec.contradicts:
                        events["contradiction"].append({"conv": c.sample_id, "new": rid, "old": old,
                                                        "reason": dec.reason})
        dt = time.perf_counter() - t0
        for rows in events.values():
            for r in rows:
                r["new_text"], r["old_text"] = text_of.get(r["new"], "?"), text_of.get(r["old"], "?")
                r["old_ref"] = ref_of.get(r["old"])
        hidden = sum(1 for r in events["supersede"] if r["old_ref"] in evidence)
        mem.close()
        return {"store": store, "memories": n, "add_s": round(dt, 1), "supersessions": len(events["supersede"]),
                "update_reviews": len(events["review"]), "contradiction_flags": len(events["contradiction"]),
                "superseded_evidence": hidden, "events": events}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.governance.locomo_check", description=__doc__)
    p.add_argument("file", type=Path)
    p.add_argument("--store", choices=("turns", "observations", "both"), default="both")
    p.add_argument("--limit-convs", type=int, default=None)
    p.add_argument("--out", type=Path, default=None, help="write the JSON report here")
    a = p.parse_args(argv)
    quiet_logs()
    reports = [check(a.file, s, a.limit_convs) for s in (("turns", "observations") if a.store == "both"
                                                         else (a.store,))]
    for r in reports:
        print(f"## {r['store']}: {r['memories']} memories in {r['add_s']} s — supersessions {r['supersessions']} "
              f"(of evidence memories: {r['superseded_evidence']}), update reviews {r['update_reviews']}, "
              f"contradiction flags {r['contradiction_flags']}")
        for kind, rows in r["events"].items():
            for x in rows:
                print(f"  [{kind}] {x['conv']}: {x['old_text'][:90]!r}\n      -> {x['new_text'][:90]!r}\n"
                      f"      ({x['reason'][-110:]})")
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(reports, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
