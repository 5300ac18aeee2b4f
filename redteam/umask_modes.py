"""Probe 6c: file modes under umask 022 for everything the library and CLI write (data dir not pre-created), and
outputs through planted symlinks / into missing directories.

Run: PYTHONPATH=$PWD nice -n 10 python3 redteam/umask_modes.py
"""
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, "redteam")
os.umask(0o022)
from common import open_mem  # noqa: E402

from neusym.reflection.triggers import ReflectionPolicy  # noqa: E402,F401

root = Path(tempfile.mkdtemp(prefix="rtum_"))
os.chmod(root, 0o755)
d = root / "data"  # does not exist yet
mem, _ = open_mem(d, graph_name="g")
for i in range(3):
    mem.add(f"I met Bob at the cafe on day {i}", user_id="a", session_id="s1")
mem.admin.export(root / "out" / "sub" / "a.jsonl", user_id="a")
mem.admin.export(root / "a.jsonl.gz", user_id="a")
try:
    mem.reflection.enable_auto()
    mem.add("I met Carol at the gym", user_id="a", session_id="s2")
    mem.reflection.session_end(session_id="s2", user_id="a")
except Exception as e:  # noqa: BLE001
    print("auto reflection:", type(e).__name__, e)
mem.close()
env = {**os.environ, "NEUSYM_DATA_DIR": str(d), "NEUSYM_GRAPH": "g", "NEUSYM_EMBEDDER": "hashing:256",
       "PYTHONPATH": os.getcwd()}
for args in (["graph", "--user", "a", "--html", str(root / "g.html"), "--graphml", str(root / "newdir" / "g.graphml"),
              "--mermaid", str(root / "g.mmd")],
             ["export", str(root / "cli.jsonl"), "--user", "a"]):
    r = subprocess.run([sys.executable, "-m", "neusym", *args], env=env, capture_output=True, text=True, timeout=300)
    print("cli", args[0], "rc", r.returncode, r.stderr.strip()[-200:])
bad = []
for p in [root, *root.rglob("*")]:
    m = stat.S_IMODE(os.lstat(p).st_mode)
    if p.is_symlink():
        continue
    if p == root:
        continue
    ok = (m & 0o077) == 0
    if not ok:
        bad.append(p)
    print(f"{'ok ' if ok else 'BAD'} {oct(m)} {p.relative_to(root)}")
print("world/group-readable paths:", [str(p.relative_to(root)) for p in bad])
# planted links at output paths
victim = root / "victim.txt"
victim.write_text("victim\n")
os.chmod(victim, 0o644)
for name in ("link.jsonl", "link.html"):
    (root / name).symlink_to(victim)
mem, _ = open_mem(d, graph_name="g")
try:
    mem.admin.export(root / "link.jsonl", user_id="a")
    print("export through link: written; victim now", victim.read_text()[:40])
except Exception as e:  # noqa: BLE001
    print("export through link refused:", type(e).__name__)
# a link in a parent directory of the output
(root / "linkdir").symlink_to(Path(tempfile.mkdtemp(prefix="rtelse_")))
try:
    mem.admin.export(root / "linkdir" / "x.jsonl", user_id="a")
    print("export into a symlinked parent dir: written to", os.path.realpath(root / "linkdir" / "x.jsonl"))
except Exception as e:  # noqa: BLE001
    print("export into symlinked parent refused:", type(e).__name__)
mem.close()
