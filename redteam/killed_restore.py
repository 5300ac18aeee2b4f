"""Probe 4c (issue 27 item 8 regression): a restore SIGKILLed while staging, then forget_tenant: are the staged
copies (content + vectors) gone? Then a hard forget of one id the staged copy holds.

Run: PYTHONPATH=$PWD nice -n 10 python3 redteam/killed_restore.py
"""
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

d = Path(tempfile.mkdtemp(prefix="rtkr_"))
mem, _ = open_mem(d, graph_name="g")
emb = mem.admin.embedder
texts = [f"Secret diary entry {i}: my blood test number {i * 7}" for i in range(6000)]
for s in range(0, len(texts), 1000):
    mem.add_batch(texts[s:s + 1000], vectors=emb.embed_documents(texts[s:s + 1000]), user_id="v", infer=False)
mem.admin.export(d / "v.jsonl", user_id="v")
mem.governance.forget_tenant("v")
mem.close()
env = {**os.environ, "PYTHONPATH": os.getcwd()}
p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
    import sys; sys.path.insert(0, "redteam")
    from common import open_mem
    mem, _ = open_mem({str(d)!r}, graph_name="g")
    print("restoring", flush=True)
    mem.admin.restore({str(d / 'v.jsonl')!r}, user_id="v", progress=lambda *a: print("p", *a, flush=True))
    print("restored", flush=True)
""")], env=env, stdout=subprocess.PIPE, text=True)
staged_seen = 0
mem2 = None
for line in p.stdout:
    if line.startswith("p") and "restoring" not in line:
        staged_seen += 1
        if staged_seen >= 3:
            break
    if line.startswith("restored"):
        break
p.send_signal(signal.SIGKILL)
p.wait()
print("killed restore after", staged_seen, "progress reports")
mem, _ = open_mem(d, graph_name="g")
q = ("MATCH (n) WHERE any(l IN labels(n) WHERE l STARTS WITH 'Restore') "
     "RETURN count(n) AS n, sum(CASE WHEN n.content CONTAINS 'blood test' THEN 1 ELSE 0 END) AS txt")
print("staged nodes after reopen:", mem.admin.cypher(q, all_tenants=True))
print("memories of v:", mem.admin.stats(user_id="v")["memories"])
mem.governance.forget_tenant("v")
print("staged nodes after forget_tenant(v):", mem.admin.cypher(q, all_tenants=True))
mem.close()
time.sleep(1)
hits = subprocess.run(["grep", "-rlc", "blood test", str(d / "appendonlydir")], capture_output=True, text=True)
print("AOF files still holding the text after forget_tenant + close:", hits.stdout.strip() or "none")
