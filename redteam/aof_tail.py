"""Probe 6e: damage to the incremental AOF of a store whose server was killed (no compaction): truncated tail,
a flipped byte in the middle, a deleted incr file. Expected: a typed error or every acknowledged write.

Run: PYTHONPATH=$PWD nice -n 10 python3 redteam/aof_tail.py
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, "redteam")
from common import open_mem  # noqa: E402

from neusym.errors import NeuSymError  # noqa: E402


def killed_store(n_first=5, n_more=5) -> Path:
    d = Path(tempfile.mkdtemp(prefix="rtaof_")) / "data"
    mem, _ = open_mem(d, graph_name="g")
    for i in range(n_first):
        mem.add(f"Compacted fact {i}: my locker code is {1000 + i}", user_id="a")
    mem.close()
    code = textwrap.dedent(f"""
        import os, sys; sys.path.insert(0, "redteam")
        from common import open_mem
        mem, _ = open_mem({str(d)!r}, graph_name="g")
        for i in range({n_more}):
            mem.add(f"Acknowledged fact {{i}}: my bike code is {{2000 + i}}", user_id="a")
        print("acked", flush=True)
        os._exit(0)
    """)
    subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": os.getcwd()}, check=True,
                   capture_output=True, text=True)
    lock = json.loads((d / "falkordb.lock").read_text())
    try:
        os.kill(int(lock["pid"]), signal.SIGKILL)  # the server dies too: nothing compacts the incr file
    except (ProcessLookupError, KeyError, ValueError):
        pass
    time.sleep(1.0)
    return d


def reopen(d, label):
    try:
        mem, _ = open_mem(d, graph_name="g")
    except NeuSymError as e:
        print(f"TYPED       {label:40s} {type(e).__name__}: {str(e)[:160]!r}")
        return
    n = mem.admin.stats(user_id="a")["memories"]
    print(f"{'OK' if n == 10 else 'SILENT-LOSS':11s} {label:40s} memories={n} (10 acknowledged)")
    mem.close()


def incr(d):
    return sorted((d / "appendonlydir").glob("*.incr.aof"))[-1]


for label, damage in [
    ("control (no damage)", lambda p: None),
    ("incr truncated by 40 bytes", lambda p: p.write_bytes(p.read_bytes()[:-40])),
    ("incr truncated to half", lambda p: p.write_bytes(p.read_bytes()[:len(p.read_bytes()) // 2])),
    ("incr: one byte flipped mid-file", lambda p: p.write_bytes(
        (lambda b: b[:len(b) // 2] + bytes([b[len(b) // 2] ^ 0x20]) + b[len(b) // 2 + 1:])(p.read_bytes()))),
    ("incr file deleted", lambda p: p.unlink()),
    ("incr emptied", lambda p: p.write_bytes(b"")),
]:
    d = killed_store()
    p = incr(d)
    size = p.stat().st_size
    damage(p)
    print(f"   incr file was {size} bytes")
    reopen(d, label)
