"""Probe 6b: a missing AOF manifest: the store opens empty AND its old base file is overwritten (data destroyed).

Run: PYTHONPATH=$PWD nice -n 10 python3 redteam/manifest_overwrite.py
"""
import sys, os; sys.path.insert(0, "redteam")
sys.argv = ["x", "none"]
exec(open("redteam/local_state.py").read().split("pick = sys.argv[1:]")[0])
d = seed()
print("before:", sorted(p.name for p in aof(d).iterdir()), [(p.name, p.stat().st_size) for p in (d/"indexes"/G).iterdir()])
(aof(d) / "appendonly.aof.manifest").unlink()
reopen(d, "missing manifest")
print("after:", sorted((p.name, p.stat().st_size) for p in aof(d).iterdir()), [(p.name, p.stat().st_size) for p in (d/"indexes"/G).iterdir()])
