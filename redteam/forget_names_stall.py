"""Probe 3g: forget by meaning over a stored memory that matches the topic and holds many capitalised words:
forgetting._names slices `text[:m.start()]` and searches it per name (quadratic), and every distinct name is then
looked up in every pool memory.

Run: PYTHONPATH=$PWD nice -n 10 python3 redteam/forget_names_stall.py
"""
import itertools
import string
import sys
import time

sys.path.insert(0, "redteam")
from common import open_mem  # noqa: E402

mem, _ = open_mem()


def distinct_names(n):
    out = []
    for a, b, c in itertools.product(string.ascii_lowercase, repeat=3):
        out.append("x Q" + a + b + c)
        if len(out) * 6 > n:
            break
    return " ".join(out)


for shape, make in [("same name", lambda n: ("x Bob " * (n // 6))[:n]), ("distinct names", distinct_names)]:
    prev = None
    for size in [int(x) for x in (sys.argv[1].split(",") if len(sys.argv) > 1 else ["10000", "30000", "100000"])]:
        user = f"n-{shape}-{size}"
        mem.add("My doctor says my blood pressure is high. " + make(size), user_id=user, infer=False)
        mem.add("My doctor is Dr. Quinn and I see her monthly", user_id=user)
        t = time.perf_counter()
        p = mem.governance.forget_preview("everything about my health", user_id=user)
        dt = time.perf_counter() - t
        print(f"{shape:15s} stored {size:7d} chars: forget_preview {dt:7.2f}s"
              f"{f' ({dt / prev:.1f}x for 3.3x)' if prev else ''} items={len(p.items)}", flush=True)
        prev = dt
mem.close()
