"""Probe 1f: can an edit release a quarantined/suspicious memory (status/flags fields, type, same text, metadata)?

Run: PYTHONPATH=$PWD nice -n 10 python3 redteam/update_release.py
"""
import sys

sys.path.insert(0, "redteam")
from common import ATTACK, open_mem  # noqa: E402

mem, _ = open_mem()
tries = {
    "status=active": {"status": "active"},
    "flags=[]": {"flags": []},
    "status+flags": {"status": "active", "flags": []},
    "type=reflection": {"type": "reflection"},
    "importance": {"importance": 1.0},
    "same text": {"content": ATTACK},
    "text + status": {"content": ATTACK + " ", "status": "active"},
    "benign text": {"content": "I like green tea"},
}
for name, fields in tries.items():
    q = mem.add(ATTACK, user_id="u", origin="tool")[0]
    content = fields.pop("content", None)
    try:
        rec = mem.update(q.id, content, user_id="u", **fields)
        verdict = "RELEASED" if rec.status.value == "active" and not set(rec.flags) & {"injection", "suspicious"} else "held"
        print(f"{verdict:8s} update {name:16s} -> {rec.status.value} {rec.flags} {rec.content[:40]!r}")
    except Exception as e:  # noqa: BLE001
        print(f"held     update {name:16s} -> {type(e).__name__}: {str(e)[:100]}")
mem.close()
