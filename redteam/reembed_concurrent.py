"""Probe 4b (issue 27 item 4 regression): a re-embed while another process has the store open.

Run: PYTHONPATH=$PWD nice -n 10 python3 redteam/reembed_concurrent.py
"""
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

d = Path(tempfile.mkdtemp(prefix="rtre_"))
env = {**os.environ, "PYTHONPATH": os.getcwd()}
holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
    import sys, time; sys.path.insert(0, "redteam")
    from common import open_mem
    mem, _ = open_mem({str(d)!r}, graph_name="g")
    for i in range(20): mem.add(f"fact {{i}} about my garden", user_id="a")
    print("ready", flush=True)
    sys.stdin.readline()
    try:
        mem.add("written by the holder after the re-embed", user_id="a"); print("holder add: OK (old width)", flush=True)
    except Exception as e:
        print("holder add:", type(e).__name__, str(e)[:150], flush=True)
    mem.close()
""")], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
print(holder.stdout.readline().strip())
sys.path.insert(0, "redteam")
from common import open_mem  # noqa: E402

from neusym.embeddings import HashingEmbedder  # noqa: E402

t = time.perf_counter()
try:
    mem, _ = open_mem(d, graph_name="g", embedder=HashingEmbedder(128), reembed=True)
    print("re-embed while held: ALLOWED", f"{time.perf_counter() - t:.1f}s")
    mem.close()
except Exception as e:  # noqa: BLE001
    print("re-embed while held:", type(e).__name__, str(e)[:200])
holder.stdin.write("\n")
holder.stdin.flush()
print(holder.stdout.read().strip())
holder.wait(60)
for emb, label in ((HashingEmbedder(256), "256"), (HashingEmbedder(128), "128")):
    try:
        mem, _ = open_mem(d, graph_name="g", embedder=emb)
        print(f"reopen with {label}: memories={mem.admin.stats(user_id='a')['memories']} hits={len(mem.search('garden', user_id='a', k=50))}")
        mem.close()
    except Exception as e:  # noqa: BLE001
        print(f"reopen with {label}:", type(e).__name__, str(e)[:150])
try:
    mem, _ = open_mem(d, graph_name="g", embedder=HashingEmbedder(128), reembed=True)
    print(f"reopen with 128 + reembed=True: memories={mem.admin.stats(user_id='a')['memories']} "
          f"hits={len(mem.search('garden', user_id='a', k=50))}")
    mem.close()
except Exception as e:  # noqa: BLE001
    print("reopen with 128 + reembed=True:", type(e).__name__, str(e)[:150])
