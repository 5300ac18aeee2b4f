"""TTL phrases: a memory that says how long it holds ("for the next two hours", "until Friday").

* ``ttl_expires_at``  a stored record has ``expires_at`` inside the phrase's window (``matching.expiry_windows``);
  for reminders ("remind me in 3 days") ``plan_due`` in the window counts too: a reminder must not vanish before
  it is due, so either reading is accepted.
* ``ttl_search``  ``search(probe, now=before expiry)`` returns the memory and ``search(probe, now=after the window)``
  does not (README: ``now`` replaces the clock for recency and expiry). Not applied to reminders.
* ``ttl_honoured``  both of the above (the expiry is right *and* it is enforced where users read).
* ``ttl_control_kept``  (controls: durations that describe the past or a habit) no record gets an ``expires_at``,
  and the memory is still returned by ``search(probe, now=+90 days)``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from benchmarks.governance.harness import Harness, action_of, now
from benchmarks.governance.matching import expiry_windows, within

_AFTER = timedelta(hours=1)
_CONTROL_LATER = timedelta(days=90)


def run(h: Harness, case: dict[str, Any]) -> dict[str, Any]:
    uid = h.uid(case["id"])
    for text in case.get("context", []):
        h.add_text(text, uid)
    t0 = now()
    res = h.add(case["step"], uid)
    t1 = now()
    records = list(res)
    ids = {r.id for r in records}
    detail: dict[str, Any] = {
        "stored": [(r.content, r.expires_at, r.plan_due) for r in records],
        "decisions": [f"{action_of(d)}: {d.reason}" for d in res.decisions],
    }
    if case["label"] == "control":
        later = h.search_ids(case["probe"], uid, now=t1 + _CONTROL_LATER)
        ok = bool(records) and all(r.expires_at is None for r in records) and bool(ids & set(later))
        return {"metrics": {"ttl_control_kept": ok}, "detail": detail}

    windows = expiry_windows(case["expect"], t0, t1)
    detail["window"] = [(lo, hi) for lo, hi in windows]
    exp_ok = any(within(r.expires_at, windows) for r in records)
    if case.get("reminder"):
        exp_ok = exp_ok or any(within(r.plan_due, windows) for r in records)
    search_ok: bool | None = None
    if not case.get("reminder"):
        lo = min(w[0] for w in windows)
        hi = max(w[1] for w in windows)
        before = t0 + max(timedelta(seconds=30), (lo - t0) / 2)
        seen_before = bool(ids & set(h.search_ids(case["probe"], uid, now=before)))
        seen_after = bool(ids & set(h.search_ids(case["probe"], uid, now=hi + _AFTER)))
        search_ok = bool(records) and seen_before and not seen_after
        detail["search"] = {"before": seen_before, "after": seen_after}
    honoured = exp_ok and (search_ok is not False)
    return {"metrics": {"ttl_expires_at": exp_ok, "ttl_search": search_ok, "ttl_honoured": honoured},
            "detail": detail}
