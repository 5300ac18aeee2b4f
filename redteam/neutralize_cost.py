"""Probe 3a: neutralize (every renderer) on adversarial text: growth from 10 KB to 1 MB.

Run: PYTHONPATH=$PWD nice -n 10 python3 redteam/neutralize_cost.py
"""
import sys
import time

from neusym.prompting import neutralize

SHAPES = {
    "role labels 'user: '": "user: ",  # 1 MB measured once: 857.7 s
    "role labels 'a user:'": "x system:",
    "headings '# '": "# ",
    "angle '<'": "<",
    "tag name": "neusym_memories ",
    "fullwidth": "\uff41",
    "cyrillic-mix word": "p\u0430",
    "words": "hello ",
}
for name, unit in SHAPES.items():
    row = []
    for size in (10_000, 100_000, 1_000_000):
        if row and row[-1] > 2:  # 10x more input: stop before a stall (quadratic: 100x the time)
            row.append(float('nan'))
            break
        text = (unit * (size // len(unit) + 1))[:size]
        t = time.perf_counter()
        neutralize(text)
        dt = time.perf_counter() - t
        row.append(dt)
    ok = [x for x in row if x == x]
    ratio = ok[-1] / max(ok[0], 1e-6)
    print(f"{name:24s} " + "  ".join(f"{x:8.3f}s" for x in row) + f"   last/10KB ratio {ratio:7.0f}x", flush=True)
