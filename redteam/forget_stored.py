"""Probe 3e: forget_preview's cost in the size of what is STORED (one big memory per tenant, a short topic).

Run: PYTHONPATH=$PWD nice -n 10 python3 redteam/forget_stored.py [shape ...]
"""
import faulthandler
import sys
import time

sys.path.insert(0, "redteam")
from common import open_mem  # noqa: E402
from stalls_shapes import SHAPES, make  # noqa: E402

faulthandler.dump_traceback_later(600, exit=True)
mem, _ = open_mem()
pick = sys.argv[1:] or list(SHAPES)
for name in pick:
    row = []
    for size in (10_000, 100_000, 1_000_000):
        if row and row[-1] > 3:
            break
        user = f"f-{name}-{size}"
        try:
            mem.add(make(SHAPES[name], size), user_id=user, infer=False)
        except Exception as e:  # noqa: BLE001
            row.append(float("nan"))
            break
        t = time.perf_counter()
        mem.governance.forget_preview("everything about my health", user_id=user)
        row.append(time.perf_counter() - t)
    ratios = " ".join(f"{row[i] / max(row[i - 1], 1e-3):5.0f}x" for i in range(1, len(row)))
    print(f"forget_preview over stored {name:12s} " + "  ".join(f"{x:7.2f}s" for x in row) + f"   {ratios}",
          flush=True)
mem.close()
