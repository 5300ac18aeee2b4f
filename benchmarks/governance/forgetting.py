"""Forget by meaning: several memories, one request about a topic ("forget what I told you about my landlord").

``forget_preview(request)`` is what the README offers to see what would go and why. A memory key counts as found when
any record stored for it is in the preview. ``maybe`` keys (reasonable either way) are ignored.

* ``forget_found_all``  every expected memory is in the preview (recall 1; for "nothing matches" cases: no memory
  that must stay is in it).
* ``forget_exact``  found all and no memory that must stay.
* micro recall/precision over all cases (``forget_tp``/``forget_fp``/``forget_fn`` counts in the report).
* ``forget_applied_ok``  ``forget(preview=..., confirm=True)`` does what the preview showed: every previewed memory
  stops coming back from ``search`` and every memory outside the preview is still active.
"""

from __future__ import annotations

from typing import Any

from benchmarks.governance.harness import Harness, status_of


def run(h: Harness, case: dict[str, Any]) -> dict[str, Any]:
    uid = h.uid(case["id"])
    keymap: dict[str, set[str]] = {}
    texts: dict[str, str] = {}
    for m in case["memories"]:
        keymap[m["key"]] = {r.id for r in h.add_text(m["text"], uid)}
        texts[m["key"]] = m["text"]
    preview = h.mem.governance.forget_preview(case["request"], user_id=uid)
    pids = {it.id for it in preview.items}
    found = {k for k, ids in keymap.items() if ids & pids}
    expected, keep = set(case["forget"]), set(case["keep"])
    tp, fp, fn = found & expected, found & keep, expected - found
    why = {k: [w for it in preview.items if it.id in keymap[k] for w in (it.why or [])] for k in sorted(found)}

    report = h.mem.forget(preview=preview, user_id=uid, confirm=True)
    untouched = [k for k in keymap if not keymap[k] & pids]
    keep_ok = all(status_of(h.get(mid, uid)) == "active" for k in untouched for mid in keymap[k])
    resurfaced = [k for k in found if keymap[k] & pids & set(h.search_ids(texts[k], uid))]
    return {
        "metrics": {
            "forget_found_all": not fn and (bool(expected) or not fp),
            "forget_exact": not fn and not fp,
            "forget_applied_ok": keep_ok and not resurfaced,
        },
        "counts": {"forget_tp": len(tp), "forget_fp": len(fp), "forget_fn": len(fn)},
        "detail": {
            "found": sorted(found), "missed": sorted(fn), "wrongly_found": sorted(fp), "why": why,
            "preview_size": len(pids), "applied": getattr(report, "applied", None),
            "forgotten_ids": len(getattr(report, "ids", []) or []), "resurfaced": sorted(resurfaced),
        },
    }
