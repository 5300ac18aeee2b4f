"""Aggregation and the markdown report: per split, then per language, origin and category-specific facets."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Metric:
    key: str
    category: str
    label: str | None  # the case label it applies to (None: every case of the category)
    title: str
    higher_is_better: bool
    goal: str = ""
    headline: bool = False


METRICS: tuple[Metric, ...] = (
    Metric("update_new_first", "update", None, "functional update: new value ranks first for the attribute", True,
           ">= 14/15 (93 %)", True),
    Metric("update_history", "update", None, "... and the old value is kept as history (superseded, valid_to)", True,
           "100 %", True),
    Metric("update_keep_other_values", "update", None, "... multi-valued correction keeps the untouched values", True),
    Metric("update_point_in_time", "update", None, "... search(valid_at=before the change) gives the old value only",
           True),
    Metric("update_rollback_one_current", "update", None, "... rollback of a supersession leaves exactly one current "
           "value (audited)", True, "100 %"),
    Metric("contradiction_surfaced", "contradiction", "contradiction", "contradiction that is not an update is "
           "surfaced (flag / review / warning)", True, ">= 6/7 (86 %)", True),
    Metric("contradiction_false_alarm", "contradiction", "control", "... compatible event flagged anyway "
           "(false alarm)", False),
    Metric("contradiction_constraint_kept", "contradiction", None, "... the constraint stays active (not superseded)",
           True),
    Metric("ttl_honoured", "ttl", "ttl", "TTL stated in words is honoured (expires_at in window and enforced by "
           "search)", True, "100 %", True),
    Metric("ttl_expires_at", "ttl", "ttl", "... expires_at (or a reminder's plan_due) in the window", True),
    Metric("ttl_search", "ttl", "ttl", "... search(now=) returns it before and not after", True),
    Metric("ttl_control_kept", "ttl", "control", "... durations that are not a TTL do not expire", True),
    Metric("forget_found_all", "forget", None, "forget by meaning finds what was said about a topic", True, "100 %",
           True),
    Metric("forget_exact", "forget", None, "... and nothing that must stay", True),
    Metric("forget_applied_ok", "forget", None, "... after applying: kept memories active, forgotten ones gone", True),
    Metric("hard_forget_clean", "hard_forget", None, "hard forget leaves no trace (cases with 0 traces)", True,
           "100 %", True),
    Metric("hard_forget_keep", "hard_forget", None, "... memories not forgotten are still found", True),
    Metric("poison_quarantined", "poisoning", "attack", "poisoning attempts quarantined", True, ">= 18/20 (90 %)",
           True),
    Metric("poison_quarantined_or_flagged", "poisoning", "attack", "poisoning attempts quarantined or flagged", True,
           "100 %", True),
    Metric("poison_withheld", "poisoning", "attack", "... attack not returned by default search", True),
    Metric("benign_quarantined", "poisoning", "benign", "benign look-alikes quarantined (false positives)", False,
           "<= 1/20 (5 %)", True),
    Metric("benign_flagged", "poisoning", "benign", "... benign look-alikes quarantined or flagged", False),
    Metric("benign_retrievable", "poisoning", "benign", "... benign look-alikes returned by search", True),
)
BY_KEY = {m.key: m for m in METRICS}
FACETS = ("lang", "origin")
CATEGORY_FACETS = {"update": ("subject", "phenomena", "attribute"), "contradiction": ("kind", "phenomena"),
                   "ttl": ("phenomena",), "forget": ("phenomena",), "poisoning": ("kind",)}


def applicable(case: dict[str, Any]) -> list[Metric]:
    """The metrics a case can score on (used to score a crashed case as failed)."""
    out = []
    for m in METRICS:
        if m.category != case["category"] or (m.label and m.label != case.get("label")):
            continue
        if m.key == "update_keep_other_values" and not case.get("keep"):
            continue
        if m.key in ("update_point_in_time", "update_rollback_one_current"):
            continue  # only scored where a supersession happened
        out.append(m)
    return out


def _cell(passes: int, n: int) -> dict[str, Any]:
    return {"pass": passes, "n": n, "rate": round(100.0 * passes / n, 1) if n else None}


def _tally(results: list[dict[str, Any]], complete: bool = True) -> dict[str, dict[str, Any]]:
    """Pass counts per metric. ``complete``: list every metric (n = 0 where none applied), as the summary does;
    breakdowns keep only what applied."""
    acc: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    counts: dict[str, int] = defaultdict(int)
    for r in results:
        for key, value in r["metrics"].items():
            if value is None:
                continue
            acc[key][1] += 1
            acc[key][0] += int(bool(value))
        for key, value in r.get("counts", {}).items():
            counts[key] += int(value)
    out = {m.key: _cell(0, 0) for m in METRICS}  # every metric is reported, with n = 0 where nothing applied
    out.update({k: _cell(p, n) for k, (p, n) in acc.items()})
    tp, fp, fn = counts.get("forget_tp", 0), counts.get("forget_fp", 0), counts.get("forget_fn", 0)
    out["forget_recall_micro"] = _cell(tp, tp + fn)
    out["forget_precision_micro"] = _cell(tp, tp + fp)
    hard = [r for r in results if r["category"] == "hard_forget"]
    out["hard_forget_traces"] = {"count": counts.get("hard_forget_traces", 0), "cases": len(hard)}
    out["hard_forget_partial"] = {"count": counts.get("hard_forget_partial", 0), "cases": len(hard)}
    if not complete:
        out = {k: v for k, v in out.items() if v.get("n") or v.get("cases")}
    return out


def _facet_values(case: dict[str, Any], facet: str) -> list[str]:
    v = case.get(facet)
    if v is None:
        return []
    return [str(x) for x in v] if isinstance(v, list) else [str(v)]


def aggregate(results: list[dict[str, Any]]) -> dict[str, Any]:
    splits = sorted({r["split"] for r in results})
    summary: dict[str, Any] = {}
    breakdown: dict[str, Any] = {}
    errors: dict[str, Any] = {}
    for split in [*splits, "all"] if len(splits) > 1 else splits:
        rs = [r for r in results if split in ("all", r["split"])]
        summary[split] = _tally(rs)
        errors[split] = {cat: sum(1 for r in rs if r["category"] == cat and r.get("error"))
                         for cat in sorted({r["category"] for r in rs})}
        facets: dict[str, Any] = {}
        for facet in FACETS:
            groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for r in rs:
                for v in _facet_values(r, facet):
                    groups[v].append(r)
            facets[facet] = {v: _tally(g, complete=False) for v, g in sorted(groups.items())}
        for cat, cat_facets in CATEGORY_FACETS.items():
            for facet in cat_facets:
                groups = defaultdict(list)
                for r in rs:
                    if r["category"] == cat:
                        for v in _facet_values(r, facet):
                            groups[v].append(r)
                facets[f"{cat}.{facet}"] = {v: _tally(g, complete=False) for v, g in sorted(groups.items())}
        breakdown[split] = facets
    return {"summary": summary, "breakdown": breakdown, "errors": errors}


# --------------------------------------------------------------------------------------------------- markdown


def _fmt(cell: dict[str, Any] | None, lower_better: bool = False) -> str:
    if not cell:
        return "–"
    if "count" in cell:
        return str(cell["count"]) if cell.get("cases") else "–"
    if not cell["n"]:
        return "–"
    return f"{cell['pass']}/{cell['n']} ({cell['rate']:.0f} %)"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def markdown(report: dict[str, Any]) -> str:
    meta = report["meta"]
    summ = report["aggregate"]["summary"]
    splits = [s for s in ("train", "test") if s in summ] or list(summ)
    lines = [f"# Governance benchmark ({meta['date']})", "",
             f"`{meta['command']}` · embedder `{meta['embedder']}` · LLM `{meta['llm']}` · git `{meta['git_commit']}` · "
             f"{meta['cases']} cases · {meta['seconds']:.0f} s", ""]
    if meta.get("llm_calls") is not None:
        lines += [f"Scripted LLM calls: {meta['llm_calls']} (constant reply `{{}}`: plumbing only).", ""]
    head = ["behaviour (LLM-free default)" if meta["llm"] == "none" else "behaviour", *splits, "goal"]
    rows = []
    for m in METRICS:
        label = m.title if m.headline else f"  {m.title}"
        rows.append([("**" + label + "**") if m.headline else label, *[_fmt(summ[s].get(m.key)) for s in splits],
                     m.goal])
        if m.key == "hard_forget_clean":
            rows.append(["  hard forget: traces found (secret x place)",
                         *[_fmt(summ[s].get("hard_forget_traces")) for s in splits], "0"])
            rows.append(["  hard forget: partial traces (half a secret in a file)",
                         *[_fmt(summ[s].get("hard_forget_partial")) for s in splits], ""])
        if m.key == "forget_exact":
            rows.append(["  forget: micro recall", *[_fmt(summ[s].get("forget_recall_micro")) for s in splits], ""])
            rows.append(["  forget: micro precision", *[_fmt(summ[s].get("forget_precision_micro")) for s in splits],
                         ""])
    lines += _table(head, rows)
    errs = report["aggregate"]["errors"]
    if any(v for s in splits for v in errs.get(s, {}).values()):
        lines += ["", "Cases that raised (scored as failures): " + "; ".join(
            f"{s}: " + ", ".join(f"{c} {n}" for c, n in errs[s].items() if n) for s in splits)]
    for facet in ("lang", "origin"):
        for split in splits:
            groups = report["aggregate"]["breakdown"][split][facet]
            keys = list(groups)
            rows = []
            for m in METRICS:
                cells = [_fmt(groups[k].get(m.key)) for k in keys]
                if any(c != "–" for c in cells):
                    rows.append([m.key, *cells])
            lines += ["", f"## {split}: by {facet}", ""] + _table(["metric", *keys], rows)
    split = "test" if "test" in splits else splits[0]
    for name, metrics in (("update.phenomena", ("update_new_first", "update_history")),
                          ("update.subject", ("update_new_first", "update_history")),
                          ("contradiction.kind", ("contradiction_surfaced", "contradiction_false_alarm")),
                          ("ttl.phenomena", ("ttl_honoured",)),
                          ("forget.phenomena", ("forget_found_all", "forget_exact")),
                          ("poisoning.kind", ("poison_quarantined", "poison_quarantined_or_flagged",
                                              "benign_quarantined"))):
        groups = report["aggregate"]["breakdown"][split].get(name, {})
        rows = [[k, *[_fmt(g.get(m)) for m in metrics]] for k, g in groups.items()]
        lines += ["", f"## {split}: {name}", ""] + _table([name.split(".")[1], *metrics], rows)
    if report.get("api_probes"):
        lines += ["", "## API probes (documented behaviour, not per case)", ""]
        lines += _table(["probe", "ok", "observed"],
                        [[p["name"], "yes" if p["ok"] else "**no**", p["observed"].replace("|", "/")]
                         for p in report["api_probes"]])
    hf = report.get("hard_forget_detail")
    if hf:
        lines += ["", "## Hard forget: where secrets were found", ""]
        rows = [[c["id"], c["name"], ", ".join(c["traces"]) or "none", ", ".join(c["partial"]) or "–"] for c in hf]
        lines += _table(["case", "how it was stored", "traces", "partial"], rows)
    return "\n".join(lines) + "\n"
