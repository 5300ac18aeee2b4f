"""Probe 3b: cost growth of add / search / forget_preview / build_context / MCP-style render on adversarial text.

Each shape is measured at 10 KB and 100 KB, and at 1 MB only when 100 KB took < 1.5 s (a 10x input taking ~100x
the time is the finding). Run: PYTHONPATH=$PWD nice -n 10 python3 redteam/stalls.py [op ...] [--shapes a,b]
ops: add search forget render (default all)
"""
import argparse
import sys
import time

sys.path.insert(0, "redteam")
from common import open_mem  # noqa: E402

from neusym.adapter_support import build_context  # noqa: E402
from neusym.prompting import render_texts  # noqa: E402
from neusym.record import Scope  # noqa: E402

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


def measure(fn, text):
    t = time.perf_counter()
    err = None
    try:
        fn(text)
    except Exception as e:  # noqa: BLE001
        err = type(e).__name__
    return time.perf_counter() - t, err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ops", nargs="*", default=["add", "search", "forget", "render"])
    ap.add_argument("--shapes", default="")
    ap.add_argument("--max", type=int, default=1_000_000)
    ap.add_argument("--cap", type=float, default=1.5)
    a = ap.parse_args()
    shapes = {k: v for k, v in SHAPES.items() if not a.shapes or k in a.shapes.split(",")}
    mem, _ = open_mem()
    mem.add("I like green tea", user_id="s")
    sc = Scope(user_id="s")
    ops = {
        "add": lambda t: mem.add(t, user_id=f"s-add-{len(t)}-{hash(t[:8])}"),
        "search": lambda t: mem.search(t, user_id="s", k=5),
        "forget": lambda t: mem.governance.forget_preview(t, user_id="s"),
        "render": lambda t: render_texts([("x", t)]),
    }
    for op in a.ops:
        for name, unit in shapes.items():
            row = []
            for size in (10_000, 100_000, 1_000_000):
                if size > a.max:
                    break
                if row and row[-1][0] > (a.cap if size == 1_000_000 else 20):
                    break
                row.append(measure(ops[op], make(unit, size)))
            first = row[0][0]
            cells = "  ".join(f"{dt:8.2f}s{('!' + e) if e else ''}" for dt, e in row)
            ratios = " ".join(f"{row[i][0] / max(row[i - 1][0], 1e-3):5.0f}x" for i in range(1, len(row)))
            flag = "  <-- SUPERLINEAR" if any(row[i][0] / max(row[i - 1][0], 1e-3) > 30 and row[i][0] > 0.5
                                              for i in range(1, len(row))) else ""
            print(f"{op:7s} {name:12s} {cells}   step ratios {ratios}{flag}", flush=True)
            del first
    # a stored big memory then read back through build_context (the renderer runs per candidate)
    mem.close()


main()
