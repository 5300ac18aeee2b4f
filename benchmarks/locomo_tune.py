"""One default recipe for both store shapes: joint tuning and its leave-one-conversation-out estimate.

    python -m benchmarks.locomo FILE --store turns --dump /tmp/turns.pkl
    python -m benchmarks.locomo FILE --store observations --dump /tmp/obs.pkl
    python -m benchmarks.locomo_tune /tmp/turns.pkl /tmp/obs.pkl --out benchmarks/results

The engine ships ONE default recipe, and it must serve conversation turns and standalone facts alike (components
that only make sense for one shape switch themselves off on the other: a fact has no speaker and no conversation
neighbours). So the defaults are tuned on both shapes at once: the objective is the mean of the two shapes' R@10
(categories 1-4), coordinate ascent from the current defaults (:func:`benchmarks.locomo_offline.tune`). The honest
estimate of that procedure is leave-one-conversation-out: tune on the other four conversations of BOTH shapes,
measure the held-out conversation on each shape. Reported: the current defaults (in-sample: they were chosen on
this data), the jointly tuned recipe in-sample, and the cross-validated figure per shape and category.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import locomo_offline as off
from benchmarks._common import machine_info, write_json
from neusym.retrieval.recipes import get_recipe

__all__ = ["main", "run"]


def _load(path: Path, max_depth: int) -> tuple[str, off.Capture]:
    with open(path, "rb") as fh:
        d = pickle.load(fh)  # noqa: S301 - our own dump, written by benchmarks.locomo --dump
    cap = off.Capture.build(d["questions"], d["captured"], d["units"], d["refs_of"], d["next_of"],
                            int(d.get("capture_depth", 1000)), max_depth=max_depth, vectors=d.get("vectors"),
                            query_vectors=d.get("query_vectors"))
    return str(d.get("store", path.stem)), cap


def _by_category(cap: off.Capture, r10: np.ndarray) -> dict[str, float]:
    main = (cap.category >= 1) & (cap.category <= 4) & (cap.units > 0)
    out = {"all": round(100.0 * float(r10[main].mean()), 2)}
    for k in (1, 2, 3, 4):
        sel = main & (cap.category == k)
        out[str(k)] = round(100.0 * float(r10[sel].mean()), 2) if sel.any() else float("nan")
    return out


def run(dumps: Sequence[Path], *, max_depth: int = 150) -> dict[str, Any]:
    caps = dict(_load(p, max_depth) for p in dumps)
    default = get_recipe("hybrid_graph")
    tuned, train = off.tune(list(caps.values()), default)
    folds = off.cross_validate(list(caps.values()), default)
    report: dict[str, Any] = {"machine": machine_info("benchmarks.locomo_tune"), "stores": list(caps),
                              "tuned": {"objective": round(train, 2), "config": _config(tuned)},
                              "folds": [{"held_out": c, "train": round(t, 2), "config": _config(cfg)}
                                        for c, cfg, t in folds], "per_store": {}}
    for name, cap in caps.items():
        report["per_store"][name] = {
            "default_in_sample": _by_category(cap, off.recall_at(cap, off.rank(cap, default, 10))),
            "tuned_in_sample": _by_category(cap, off.recall_at(cap, off.rank(cap, tuned, 10))),
            "cv": _by_category(cap, off.held_out_recall(cap, folds)),
        }
    return report


def nested(dumps: Sequence[Path], *, max_depth: int = 150, spaces: Sequence[str] | None = None) -> dict[str, Any]:
    """Each dump on its own (one store shape): leave-one-conversation-out with the tuner's regularisation chosen
    inside each fold (:func:`benchmarks.locomo_offline.nested_cross_validate`), against the plain cross-validation
    of each regularisation. ``spaces``: names of :data:`benchmarks.locomo_offline.NESTED_SPACES` (default all)."""
    default = get_recipe("hybrid_graph")
    chosen_spaces = {k: v for k, v in off.NESTED_SPACES.items() if spaces is None or k in spaces}
    report: dict[str, Any] = {"machine": machine_info("benchmarks.locomo_tune"), "nested": {}}
    for p in dumps:
        name, cap = _load(p, max_depth)
        folds = off.nested_cross_validate(cap, default, chosen_spaces)
        picked = [(conv, cfg, 0.0) for conv, _label, cfg, _inner in folds]
        plain = {label: _by_category(cap, off.held_out_recall(cap, off.cross_validate(cap, default, space)))
                 for label, space in chosen_spaces.items()}
        report["nested"][name] = {
            "nested_cv": _by_category(cap, off.held_out_recall(cap, picked)),
            "chosen": {conv: label for conv, label, _cfg, _inner in folds},
            "inner": {conv: {k: round(v, 2) for k, v in inner.items()} for conv, _l, _c, inner in folds},
            "plain_cv": plain,
        }
        print(name, report["nested"][name]["nested_cv"], file=sys.stderr)
    return report


def nested_markdown(report: dict[str, Any]) -> str:
    lines = ["| store | procedure | R@10 | cat1 | cat2 | cat3 | cat4 |", "|---|---|---:|---:|---:|---:|---:|"]
    for store, r in report["nested"].items():
        rows = [(f"CV, {label}", x) for label, x in r["plain_cv"].items()]
        rows.append(("**nested: regularisation chosen inside each fold**", r["nested_cv"]))
        for label, x in rows:
            lines.append(f"| {store} | {label} | {x['all']:.1f} | " + " | ".join(f"{x[str(k)]:.1f}" for k in range(1, 5))
                         + " |")
        lines.append(f"| {store} | chosen per fold | " + ", ".join(f"{c}: {v}" for c, v in r["chosen"].items())
                     + " | | | | |")
    return "\n".join(lines) + "\n"


def _config(cfg: Any) -> dict[str, Any]:
    return {"candidates": cfg.candidates, "fact_candidates": cfg.fact_candidates, "lexical_weight": cfg.lexical_weight,
            "weights": cfg.weights.as_dict(), "fact_weights": cfg.facts.as_dict()}


def markdown(report: dict[str, Any]) -> str:
    lines = ["| store | recipe | R@10 | cat1 | cat2 | cat3 | cat4 |", "|---|---|---:|---:|---:|---:|---:|"]
    for store, r in report["per_store"].items():
        for label, key in (("shipped default (in-sample)", "default_in_sample"),
                           ("jointly tuned (in-sample)", "tuned_in_sample"),
                           ("**joint tuning, LOCO-CV**", "cv")):
            x = r[key]
            lines.append(f"| {store} | {label} | {x['all']:.1f} | " + " | ".join(f"{x[str(k)]:.1f}" for k in range(1, 5))
                         + " |")
    t = report["tuned"]["config"]
    lines += ["", f"Jointly tuned on all five conversations of both shapes: depth {t['candidates']}, BM25 share "
              f"{t['lexical_weight']}, weights {t['weights']}."]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.locomo_tune", description=(__doc__ or "").split("\n")[0])
    ap.add_argument("dumps", type=Path, nargs="+", help="pickles written by benchmarks.locomo --dump")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--max-depth", type=int, default=150)
    ap.add_argument("--nested", action="store_true",
                    help="per dump: nested leave-one-conversation-out choosing the tuner's regularisation inside "
                         "each fold, beside the plain cross-validation of each regularisation")
    ap.add_argument("--spaces", default=None,
                    help="with --nested: comma list of regularisations to choose among (names in "
                         "locomo_offline.NESTED_SPACES; default all)")
    a = ap.parse_args(argv)
    spaces = [x.strip() for x in a.spaces.split(",")] if a.spaces else None
    report = (nested(a.dumps, max_depth=a.max_depth, spaces=spaces) if a.nested
              else run(a.dumps, max_depth=a.max_depth))
    text = nested_markdown(report) if a.nested else markdown(report)
    if a.out is not None:
        name = "locomo_nested" if a.nested else "locomo_tune"
        write_json(a.out / f"{name}.json", report)
        (a.out / f"{name}.md").write_text(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
