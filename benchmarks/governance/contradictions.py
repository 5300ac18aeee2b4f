"""Contradictions that are not updates: a standing constraint, later an event that breaks it.

The README's surface for them: a decision that names the memories it contradicts/conflicts with
(``AddResult.decisions[i].contradicts`` / ``.conflicts_with``, i.e. a ``CONFLICTS_WITH`` edge), a review item of kind
``contradiction``/``conflict``, a ``contradiction``/``conflict_pending`` flag on either memory, or a warning about a
conflict/contradiction on it in ``search`` results (``explanation.warnings``; a "low confidence" warning does not
count). Any of these counts as *surfaced*; which ones fired is kept per case.

* ``contradiction_surfaced``  (label contradiction) surfaced by any of the above.
* ``contradiction_false_alarm``  (label control: a compatible or unrelated event) surfaced anyway.
* ``contradiction_constraint_kept``  the constraint memory is still active afterwards: a contradiction is not an
  update, and the standing constraint must not be silently superseded by the event.
"""

from __future__ import annotations

import re
from typing import Any

from benchmarks.governance.harness import (
    CONFLICT_FLAGS,
    REVIEW_CONFLICT_KINDS,
    Harness,
    action_of,
    status_of,
    step_query_text,
)

_CONFLICT_WORDS = re.compile(r"contradict|conflict", re.IGNORECASE)  # not e.g. a "low confidence" warning


def run(h: Harness, case: dict[str, Any]) -> dict[str, Any]:
    uid = h.uid(case["id"])
    for text in case.get("context", []):
        h.add_text(text, uid)
    cons: list[Any] = []
    for step in case["constraint"]:
        cons.extend(h.add(step, uid))
    for text in case.get("filler", []):
        h.add_text(text, uid)
    event_records: list[Any] = []
    decisions: list[Any] = []
    for step in case["event"]:
        res = h.add(step, uid)
        event_records.extend(res)
        decisions.extend(res.decisions)
    cids = {r.id for r in cons}
    eids = {r.id for r in event_records}
    both = cids | eids

    via: set[str] = set()
    for d in decisions:
        if getattr(d, "contradicts", None) or getattr(d, "conflicts_with", None):
            via.add("decision")
        if action_of(d) == "review":
            via.add("decision_review")
    if h.suspect_ids(uid, REVIEW_CONFLICT_KINDS) & both:
        via.add("review_queue")
    states = {mid: h.get(mid, uid) for mid in both}
    if any(g is not None and set(g.flags) & CONFLICT_FLAGS for g in states.values()):
        via.add("flag")
    queries = [step_query_text(s) for s in case["constraint"]] + [step_query_text(s) for s in case["event"]]
    for q in queries:
        for hit in h.mem.search(q, user_id=uid, k=10, touch=False):
            if hit.memory.id in both and any(_CONFLICT_WORDS.search(w) for w in hit.explanation.warnings):
                via.add("search_warning")
    surfaced = bool(via)
    kept = bool(cids) and all(status_of(states.get(c)) == "active" for c in cids)
    is_contra = case["label"] == "contradiction"
    return {
        "metrics": {
            "contradiction_surfaced": surfaced if is_contra else None,
            "contradiction_false_alarm": None if is_contra else surfaced,
            "contradiction_constraint_kept": kept,
        },
        "detail": {
            "surfaced_via": sorted(via),
            "constraint": [(r.content, status_of(states.get(r.id))) for r in cons],
            "event": [(r.content, status_of(states.get(r.id))) for r in event_records],
            "event_decisions": [f"{action_of(d)}: {d.reason}" for d in decisions],
        },
    }
