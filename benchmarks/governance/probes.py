"""Documented-behaviour probes that are not per-case metrics: API gaps the issue names, checked on every run.

Each probe says what it observed; ``ok`` is what a user reading the README would expect.
"""

from __future__ import annotations

from typing import Any

import neusym
from benchmarks.governance.harness import Harness, action_of


def _probe(name: str, ok: bool, observed: str) -> dict[str, Any]:
    return {"name": name, "ok": ok, "observed": observed}


def run(h: Harness) -> list[dict[str, Any]]:
    mem = h.mem
    out: list[dict[str, Any]] = []
    missing = [n for n in ("Decision", "ReviewItem", "ForgetPreview", "ForgetReport") if not hasattr(neusym, n)]
    out.append(_probe("result types exported from neusym", not missing,
                      f"missing: {', '.join(missing)}" if missing else "all exported"))

    uid = h.uid("probe-system-origin")
    try:
        res = mem.add("Keep every answer under 100 words.", user_id=uid, origin="system")
        out.append(_probe("add(origin='system') returns a decision", bool(res.decisions),
                          f"{len(res.decisions)} decisions, {len(res)} stored"))
    except Exception as exc:  # noqa: BLE001
        out.append(_probe("add(origin='system') returns a decision", True, f"raised {type(exc).__name__}: {exc}"))
    uid = h.uid("probe-system-role")
    try:
        res = mem.add([{"role": "system", "content": "You are a concise assistant."},
                       {"role": "user", "content": "I live in Tallinn."}], user_id=uid)
        roles = [d.record.source.speaker if d.record else None for d in res.decisions]
        out.append(_probe("every chat message (incl. role 'system') gets a decision", len(res.decisions) >= 2,
                          f"{len(res.decisions)} decisions for 2 messages (speakers {roles})"))
    except Exception as exc:  # noqa: BLE001
        out.append(_probe("every chat message (incl. role 'system') gets a decision", False,
                          f"raised {type(exc).__name__}"))

    uid = h.uid("probe-forget-nothing")
    mem.add("I like espresso.", user_id=uid)
    rep = mem.forget(query="my boat", user_id=uid, confirm=True)
    ids = list(getattr(rep, "ids", []) or [])
    fields = {k: v for k, v in vars(rep).items() if k not in ("preview",)} if hasattr(rep, "__dict__") else {}
    says = any(isinstance(v, str) and "nothing" in v.lower() for v in fields.values()) or getattr(rep, "applied", True) is False
    out.append(_probe("forget by meaning that matches nothing says so", not ids and says,
                      f"applied={getattr(rep, 'applied', None)} ids={len(ids)} fields={sorted(fields)}"))

    uid = h.uid("probe-fact-history")
    mem.add("I live in Oslo.", user_id=uid)
    internal = len(mem.governance.fact_history("lives_in", user_id=uid))
    try:
        natural = len(mem.governance.fact_history("where do I live", user_id=uid))
    except Exception as exc:  # noqa: BLE001
        natural = -1
        out.append(_probe("fact_history accepts a natural-language attribute", False, f"raised {type(exc).__name__}"))
    else:
        out.append(_probe("fact_history accepts a natural-language attribute", natural > 0,
                          f"'lives_in' -> {internal} records, 'where do I live' -> {natural}"))

    trust = dict(getattr(mem.governance.policy, "source_trust", {}) or {})
    out.append(_probe("origin 'document' has a documented trust level", "document" in trust,
                      f"source_trust keys: {sorted(trust)}"))
    out.append(_probe("export available from the Python API", hasattr(mem, "export"),
                      "NeuSymMemory.export exists" if hasattr(mem, "export") else "only the CLI (`neusym export`)"))

    uid = h.uid("probe-assistant-summary")
    res = mem.add([{"role": "user", "content": "I finally got the job!"},
                   {"role": "assistant", "content": "Congratulations, so you now work at Vestas."}], user_id=uid)
    conf = [(action_of(d), round(d.record.confidence, 2)) for d in res.decisions if d.record is not None]
    out.append(_probe("an assistant summary of the user's words keeps full weight", all(a == "store" for a, _ in conf),
                      f"decisions (action, confidence): {conf}"))
    return out
