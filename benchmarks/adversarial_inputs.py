"""Adversarial text inputs: does the cost of add / search / forget_preview grow linearly up to the 1 MB limit?

Issue #27 item 3: one ``add()`` of a statement holding a 4,000-digit number took 24-38 s (a quadratic TTL pattern),
``forget_preview`` with a 1 MB topic 67 s, ``search`` with a 1 MB query 7 s. Every pattern over memory or query text
is now compiled by :mod:`neusym.language.regex`; this benchmark feeds each public reading path inputs built to make
backtracking regexes superlinear (long digit runs, repeated punctuation, whitespace runs, repeated words, long
unbroken tokens, non-ASCII letters, CJK, emoji) at growing sizes and reports the time per KB: linear growth keeps it
flat. It also measures the two regex engines on ordinary short texts (why ``re`` stays the engine for them) and lists
the patterns ``google-re2`` cannot take.

    nice -n 10 python -m benchmarks.adversarial_inputs                       # 1 KB .. 1 MB, every kind
    nice -n 10 python -m benchmarks.adversarial_inputs --sizes 1000,10000 --kinds digits,unicode   # quick look

Writes ``benchmarks/results/adversarial_inputs.{json,md}``. Measures only; asserts nothing (the hang guard is
``tests/unit/test_regex_linear.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._common import machine_info, quiet_logs, write_json

KINDS: dict[str, str] = {
    "digits": "7",
    "digit_groups": "12,",
    "punctuation": "!?",
    "dots": ".",
    "whitespace": " \t",
    "newlines": "\n",
    "repeated_words": "the very ",
    "repeated_name": "Ana said ",
    "long_token": "a",
    "caps_token": "AB",
    "unicode": "\u00e9",
    "cjk": "\u65e5\u672c\u8a9e",
    "emoji": "\U0001f600",
    "fullwidth": "\uff53\uff59\uff53",
}
SIZES = (1_000, 10_000, 100_000, 990_000)
OPS = ("add", "search", "forget_preview")


def make_input(kind: str, size: int) -> str:
    """``size`` UTF-8 bytes at most: a short statement around a run of the kind's unit."""
    unit = KINDS[kind]
    head, tail = "I will be away for ", " hours, until Friday."
    budget = size - len((head + tail).encode("utf-8"))
    return head + unit * (budget // len(unit.encode("utf-8"))) + tail


def _engines(texts: list[str]) -> dict[str, Any]:
    """re vs google-re2 over every registered pattern on ordinary short texts, and what re2 cannot take."""
    from neusym.language import regex as rx

    patterns = rx.registry()
    out: dict[str, Any] = {"patterns": len(patterns), "texts": len(texts),
                           "mean_chars": round(statistics.mean(len(t) for t in texts), 1)}
    t = time.perf_counter()
    twins = [p.twin() for p in patterns]
    out["re2_compile_all_s"] = round(time.perf_counter() - t, 3)
    out["without_twin"] = sum(1 for x in twins if x is None)
    out["without_twin_examples"] = [p.pattern[:80] for p, x in zip(patterns, twins, strict=True) if x is None][:8]
    if not any(twins):
        out["re2"] = "not installed"
        return out
    usable = [p for p, x in zip(patterns, twins, strict=True) if x is not None]
    for name, run in (("re", lambda p, text: p.compiled.search(text)),
                      ("re2", lambda p, text: p.search_linear(text))):  # the long-text path, forced
        t = time.perf_counter()
        for text in texts:
            for p in usable:
                run(p, text)
        out[f"{name}_us_per_search"] = round((time.perf_counter() - t) / (len(texts) * len(usable)) * 1e6, 3)
    out["re2_over_re"] = round(out["re2_us_per_search"] / out["re_us_per_search"], 2)
    return out


def _short_texts() -> list[str]:
    data = Path(__file__).parent / "governance" / "data" / "train.jsonl"
    texts: list[str] = []

    def walk(o: Any) -> None:
        if isinstance(o, str) and len(o) > 15:
            texts.append(o)
        elif isinstance(o, dict):
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    for line in data.read_text(encoding="utf-8").splitlines()[:120]:
        walk(json.loads(line))
    return texts[:300]


def run(sizes: list[int], kinds: list[str], reps: int) -> dict[str, Any]:
    from neusym import NeuSymMemory
    from neusym.config import NeuSymConfig
    from neusym.embeddings import HashingEmbedder

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="neusym-adv-") as tmp:
        mem = NeuSymMemory(config=NeuSymConfig(data_dir=Path(tmp)), embedder=HashingEmbedder(256))
        try:
            mem.add("I live in Lisbon and work as a nurse.", user_id="warm")  # one-off loads out of the timings
            mem.search("where do I live", user_id="warm")
            mem.governance.forget_preview("work", user_id="warm")
            for kind in kinds:
                for size in sizes:
                    text = make_input(kind, size)
                    for op in OPS:
                        times = []
                        for rep in range(reps if size < 100_000 else 1):
                            user = f"{kind}-{size}-{rep}"
                            t = time.perf_counter()
                            if op == "add":
                                mem.add(text, user_id=user)
                            elif op == "search":
                                mem.search(text, user_id=user, k=5)
                            else:
                                mem.governance.forget_preview(text, user_id=user)
                            times.append(time.perf_counter() - t)
                        sec = statistics.median(times)
                        kb = len(text.encode("utf-8")) / 1000
                        rows.append({"kind": kind, "bytes": len(text.encode("utf-8")), "op": op,
                                     "seconds": round(sec, 4), "ms_per_kb": round(sec * 1000 / kb, 3)})
                        print(f"{kind:15s} {size:>8d} {op:15s} {sec:8.3f} s  {sec * 1000 / kb:8.3f} ms/KB",
                              flush=True)
        finally:
            mem.close()
    return {"rows": rows}


def _growth(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per kind and op: time at the largest size over time at the smallest, against the size ratio."""
    out = []
    keys = sorted({(r["kind"], r["op"]) for r in rows})
    for kind, op in keys:
        rs = sorted((r for r in rows if r["kind"] == kind and r["op"] == op), key=lambda r: r["bytes"])
        if len(rs) < 2:
            continue
        lo = next((r for r in rs if r["bytes"] >= 10_000), rs[0])
        hi = rs[-1]
        out.append({"kind": kind, "op": op, "seconds_at_max": hi["seconds"], "max_bytes": hi["bytes"],
                    "ms_per_kb_small": lo["ms_per_kb"], "ms_per_kb_max": hi["ms_per_kb"],
                    "time_ratio": round(hi["seconds"] / max(lo["seconds"], 1e-9), 1),
                    "size_ratio": round(hi["bytes"] / lo["bytes"], 1)})
    return out


def _markdown(result: dict[str, Any]) -> str:
    m = result["machine"]
    lines = ["# Adversarial inputs: cost against size", "",
             f"`{m['command']}` — {m['date']}, {m['cpu']} ({m['cores']} cores), commit {m['git_commit']}, "
             f"load {result['load']}", "",
             "Time per KB of input should stay flat as the input grows (linear cost). *time ratio* = seconds at the "
             "largest size / seconds at 10 KB; linear growth makes it about the *size ratio*.", "",
             "| kind | op | s at max | ms/KB at 10 KB | ms/KB at max | time ratio | size ratio |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for g in result["growth"]:
        lines.append(f"| {g['kind']} | {g['op']} | {g['seconds_at_max']:.2f} | {g['ms_per_kb_small']:.3f} | "
                     f"{g['ms_per_kb_max']:.3f} | {g['time_ratio']} | {g['size_ratio']} |")
    e = result["engines"]
    lines += ["", "## Regex engines on ordinary short texts", "",
              f"{e['patterns']} patterns registered in `neusym.language.regex`; {e.get('without_twin')} have no re2 "
              f"twin (lookarounds, backreferences, atomic groups, verbose mode: they take the windowed path on long "
              f"text). Compiling every re2 twin: {e.get('re2_compile_all_s')} s (done lazily, per pattern, on the "
              f"first long text).", ""]
    if "re_us_per_search" in e:
        lines += [f"One search over a short text ({e['texts']} texts, mean {e['mean_chars']} chars): re "
                  f"{e['re_us_per_search']} µs, re2 {e['re2_us_per_search']} µs ({e['re2_over_re']}x). So `re` reads "
                  f"texts up to {result['short']} chars and re2 (or windows) only longer ones."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default="benchmarks/results")
    args = ap.parse_args(argv)
    quiet_logs()
    from neusym.language import regex as rx

    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    result: dict[str, Any] = {"machine": machine_info("benchmarks.adversarial_inputs"), "load": load,
                              "short": rx.SHORT}
    result.update(run([int(s) for s in args.sizes.split(",")], args.kinds.split(","), args.reps))
    result["engines"] = _engines(_short_texts())
    result["growth"] = _growth(result["rows"])
    result["load_after"] = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    out = Path(args.out)
    write_json(out / "adversarial_inputs.json", result)
    (out / "adversarial_inputs.md").write_text(_markdown(result), encoding="utf-8")
    print(_markdown(result))


if __name__ == "__main__":
    main()
