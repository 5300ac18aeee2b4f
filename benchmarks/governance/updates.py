"""Functional updates: an attribute said once, then changed in another wording.

Observables (README: conflicts keep history with ``valid_to`` + ``SUPERSEDES``; ``search`` excludes superseded
memories by default; ``search(valid_at=...)`` includes them):

* ``update_new_first``  the top hit of ``search(probe)`` mentions a new value.
* ``update_history``  every earlier memory stating the old value is still readable with ``get`` and is
  ``superseded`` with ``valid_to`` set (history, not an overwrite or a delete).
* ``update_keep_other_values``  (multi-valued corrections) the values the correction did not touch are still current:
  each appears in an active hit of ``search(probe)``.
* ``update_point_in_time``  on a second tenant whose earlier statement carries ``valid_from`` (about three years
  ago), ``search(probe, valid_at=two years ago)`` ranks an old-value memory first and returns no memory of the update.
  Scored only where that tenant's old memory was superseded (the check is about what a supersession leaves behind);
  skipped for corrections (the old value was never true).
* ``update_rollback_one_current``  on that tenant, after ``rollback(old_id)`` exactly one of the old and new values is
  current (active and not flagged as conflicting), with a rollback entry in ``history(old_id)``. Only where a
  supersession happened.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from benchmarks.governance.harness import CONFLICT_FLAGS, Harness, action_of, now, status_of
from benchmarks.governance.matching import mentions

_BEFORE_AGE = timedelta(days=1100)
_PROBE_AGE = timedelta(days=730)


def _ingest(h: Harness, case: dict[str, Any], uid: str, before_kwargs: dict[str, Any]) -> tuple[list[Any], Any]:
    ctx = case.get("context", [])
    for text in ctx[:1]:
        h.add_text(text, uid)
    before: list[Any] = []
    for step in case["before"]:
        before.extend(h.add(step, uid, **before_kwargs))
    for text in ctx[1:]:
        h.add_text(text, uid)
    result = None
    for step in case["update"]:
        result = h.add(step, uid)
    return before, result


def run(h: Harness, case: dict[str, Any]) -> dict[str, Any]:
    new, old, keep = case["new"], case["old"], case.get("keep", [])
    uid = h.uid(case["id"])
    before, upd = _ingest(h, case, uid, {})
    hits = h.mem.search(case["probe"], user_id=uid, k=10, touch=False)
    contents = [x.memory.content for x in hits]
    rank_new = next((i + 1 for i, c in enumerate(contents) if mentions(c, new)), None)
    rank_old = next((i + 1 for i, c in enumerate(contents) if mentions(c, old) and not mentions(c, new)), None)

    old_records = [r for r in before if mentions(r.content, old)]
    history: list[dict[str, Any]] = []
    for r in old_records:
        g = h.get(r.id, uid)
        history.append({"id": r.id, "status": status_of(g), "valid_to": None if g is None else g.valid_to,
                        "flags": None if g is None else list(g.flags)})
    history_ok = bool(history) and all(x["status"] == "superseded" and x["valid_to"] is not None for x in history)

    metrics: dict[str, bool | None] = {
        "update_new_first": rank_new == 1,
        "update_history": history_ok,
        "update_keep_other_values": None,
        "update_point_in_time": None,
        "update_rollback_one_current": None,
    }
    if keep:
        active = [x.memory.content for x in hits if status_of(x.memory) == "active"]
        metrics["update_keep_other_values"] = all(any(mentions(c, [v]) for c in active) for v in keep)

    detail: dict[str, Any] = {
        "top": contents[:3], "rank_new": rank_new, "rank_old_only": rank_old, "old_memories": history,
        "update_decisions": [f"{action_of(d)}: {d.reason}" for d in (upd.decisions if upd is not None else [])],
        "update_stored": [r.content for r in (upd or [])],
    }
    if case.get("point_in_time", True):
        metrics["update_point_in_time"], metrics["update_rollback_one_current"], detail["point_in_time"] = (
            _point_in_time(h, case))
    return {"metrics": metrics, "detail": detail}


def _point_in_time(h: Harness, case: dict[str, Any]) -> tuple[bool | None, bool | None, dict[str, Any]]:
    new, old = case["new"], case["old"]
    uid = h.uid(case["id"], "-pit")
    t = now()
    before, upd = _ingest(h, case, uid, {"valid_from": t - _BEFORE_AGE})
    upd_ids = {r.id for r in (upd or [])}
    old_records = [r for r in before if mentions(r.content, old)]
    superseded = [r for r in old_records if status_of(h.get(r.id, uid)) == "superseded"]
    detail: dict[str, Any] = {"superseded": len(superseded)}
    if not superseded:  # both checks are about what a supersession leaves behind
        return None, None, detail
    hits = h.mem.search(case["probe"], user_id=uid, k=10, touch=False, valid_at=t - _PROBE_AGE)
    contents = [x.memory.content for x in hits]
    pit_ok = bool(hits) and mentions(contents[0], old) and not any(x.memory.id in upd_ids for x in hits)
    detail.update({"top": contents[:3], "update_ids_returned": sorted(upd_ids & {x.memory.id for x in hits})})

    target = superseded[0]
    try:
        h.mem.governance.rollback(target.id, user_id=uid)
    except Exception as exc:  # noqa: BLE001 - a crash is a finding, recorded in the detail
        detail["rollback_error"] = f"{type(exc).__name__}: {exc}"
        return pit_ok, False, detail
    old_now = [h.get(r.id, uid) for r in old_records]
    new_now = [h.get(r.id, uid) for r in (upd or []) if mentions(r.content, new)]
    old_current = any(status_of(g) == "active" and not (set(g.flags) & CONFLICT_FLAGS) for g in old_now if g)
    new_current = any(status_of(g) == "active" and not (set(g.flags) & CONFLICT_FLAGS) for g in new_now if g)
    audited = any(str(e.get("action")) == "rollback" for e in h.mem.history(target.id, user_id=uid))
    detail["after_rollback"] = {"old_current": old_current, "new_current": new_current, "audited": audited,
                                "old": [status_of(g) for g in old_now], "new": [status_of(g) for g in new_now]}
    return pit_ok, (old_current != new_current) and audited, detail
