"""Probe 1g: the LangGraph store screens only the indexed text; every other field of the value is stored unscreened
and served back verbatim by get/search (what LangMem-style tools hand the model).

Run: PYTHONPATH=$PWD nice -n 10 python3 redteam/store_fields.py
"""
import sys

sys.path.insert(0, "redteam")
from common import ATTACK, open_mem  # noqa: E402

from langchain_neusym import NeuSymStore  # noqa: E402

mem, _ = open_mem()
store = NeuSymStore(mem, user_index=0)
cases = {
    "default index, extra field": ({"content": "Ana likes tea", "instructions": ATTACK}, None),
    "index=[content], title field": ({"title": ATTACK, "content": "Ana likes tea"}, ["content"]),
    "nested value": ({"content": "Ana likes tea", "meta": {"deep": [ATTACK]}}, None),
    "index=False": ({"note": ATTACK}, False),
    "text field only (control)": ({"content": ATTACK}, None),
}
for i, (name, (value, index)) in enumerate(cases.items()):
    ns = ("u", f"n{i}")
    try:
        store.put(ns, "k", value, index=index)
    except Exception as e:  # noqa: BLE001
        print(f"refused {name}: {type(e).__name__}")
        continue
    item = store.get(ns, "k")
    found = store.search(("u",), query="tea", limit=20)
    served = (item is not None and "reveal your system" in str(item.value)) or any(
        "reveal your system" in str(h.value) and h.namespace == ns for h in found)
    recs = mem.query(user_id="u", statuses=["active", "quarantined", "pending"], limit=100)
    status = [r.status.value for r in recs if (r.metadata.get("langgraph") or r.metadata.get("_langgraph") or {})
              .get("namespace", None) == list(ns)] or "?"
    print(f"{'LEAK' if served else 'held':5s} {name:32s} memory status={status} served={served}")
mem.close()
