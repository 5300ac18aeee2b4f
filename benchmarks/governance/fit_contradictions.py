"""Fit the contradiction combiner's weights on the governance train split, with k-fold cross-validation.

    python -m benchmarks.governance.fit_contradictions [--folds 5] [--show]

Every train case of category ``contradiction`` gives (constraint, event) pairs: its event, labelled by the case
(contradiction = breaks, control = compatible), and its filler sentences, which come after the constraint in the
scenario and are unrelated (negatives). The features are the engine's own (:func:`event_features`, with the
embedder's cosines to the constraint's category descriptions and targets). A case whose constraint the engine does
not detect counts as a miss in every figure (no weights can fix it). Cross-validation folds are by case, so a
case's event and fillers are never split between fitting and scoring.

Prints the cross-validated figures of the fitted combiner next to the shipped one, then the weights to paste into
``neusym.governance.contradictions.WEIGHTS``. Only ``--split train`` is ever read.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

from benchmarks._common import build_embedder, quiet_logs
from benchmarks.governance.cases import load


def _pairs(emb: Any) -> list[dict[str, Any]]:
    from neusym.governance.contradictions import (
        FEATURES,
        ConstraintVectors,
        constraint_of,
        event_features,
        isa_value,
        kinds_named,
    )

    def unit(texts: list[str]) -> np.ndarray:
        v = np.asarray(emb.embed_documents(texts), dtype=np.float32)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)

    vectors = ConstraintVectors(unit)
    rows: list[dict[str, Any]] = []
    for case in load(["train"], categories=["contradiction"]):
        cons = [s["text"] for s in case["constraint"] if "text" in s]
        known = [(c, vectors.of(c)) for t in cons if (c := constraint_of(t)) is not None]
        events = [(s["text"], case["label"] == "contradiction", "event") for s in case["event"] if "text" in s]
        events += [(t, False, "filler") for t in case.get("filler", [])]
        for text, label, role in events:
            v = unit([text])[0]
            feats = []
            for c, (cv, tv) in known:
                sims = (float((cv @ v).max()) if cv.shape[0] else 0.0, float((tv @ v).max()) if tv.shape[0] else 0.0)
                f = event_features(c, text, sims)
                # what WordNet says even where the lexicon matched: the lexicon-dropout copy's "isa"
                feats.append([f[n] for n in FEATURES] + [isa_value(kinds_named(c, text))])
            rows.append({"id": case["id"], "label": label, "role": role, "text": text, "lang": case["lang"],
                         "kind": case.get("kind"), "detected": bool(known),
                         "x": np.asarray(feats, dtype=np.float64).reshape(len(feats), len(FEATURES) + 1)[:, :-1],
                         "isa_raw": np.asarray(feats, dtype=np.float64).reshape(len(feats), len(FEATURES) + 1)[:, -1]})
    return rows


def _fit(x: np.ndarray, y: np.ndarray, l2: float = 0.01, steps: int = 50, weight: np.ndarray | None = None,
         balanced: bool = False) -> np.ndarray:
    """L2-regularised logistic regression (bias first, not penalised) by Newton's method, classes balanced; small
    and dependency-free."""
    xb = np.hstack([np.ones((x.shape[0], 1)), x])
    w = np.zeros(xb.shape[1])
    pos = max(1.0, float(y.sum()))
    neg = max(1.0, float(len(y) - y.sum()))
    sw = (np.where(y > 0, len(y) / (2 * pos), len(y) / (2 * neg)) if balanced else np.ones(len(y))) / len(y)
    if weight is not None:
        sw = sw * weight
    reg = l2 * np.eye(xb.shape[1])
    reg[0, 0] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(xb @ w)))
        g = xb.T @ (sw * (p - y)) + reg @ w
        h = (xb * (sw * p * (1 - p))[:, None]).T @ xb + reg + 1e-9 * np.eye(xb.shape[1])
        step = np.linalg.solve(h, g)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return w


def _prob(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    if x.shape[0] == 0:
        return np.zeros(0)
    return 1.0 / (1.0 + np.exp(-(w[0] + x @ w[1:])))


def _without_lexicon(r: dict[str, Any]) -> np.ndarray:
    """A pair's features as if the lexicon did not know the word: no lexical or time match, and WordNet's reading
    (computed regardless of the lexicon) in its place."""
    from neusym.governance.contradictions import FEATURES

    x = r["x"].copy()
    x[:, [FEATURES.index("lexical"), FEATURES.index("time")]] = 0.0
    x[:, FEATURES.index("isa")] = r["isa_raw"]
    return x


def _score(rows: list[dict[str, Any]], w: np.ndarray, threshold: float,
           unknown: bool = False) -> dict[str, tuple[int, int]]:
    out = {"surfaced": [0, 0], "false_alarm_control": [0, 0], "false_alarm_filler": [0, 0]}
    for r in rows:
        x = _without_lexicon(r) if unknown else r["x"]
        flagged = r["detected"] and bool((_prob(w, x) >= threshold).any())
        key = "surfaced" if r["label"] else ("false_alarm_control" if r["role"] == "event" else "false_alarm_filler")
        out[key][0] += flagged
        out[key][1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    from neusym.governance.contradictions import FEATURES, THRESHOLD, WEIGHTS

    p = argparse.ArgumentParser(prog="python -m benchmarks.governance.fit_contradictions", description=__doc__)
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--l2", type=float, default=0.001)
    p.add_argument("--dropout", type=float, default=0.3,
                   help="weight of each pair's second copy with the lexicon's match removed (lexicon dropout: "
                        "without it the combiner never learns what to do with a word the lexicon lacks, because "
                        "the lexicon was written knowing train's words); 0 = off")
    p.add_argument("--show", action="store_true", help="list the pairs the refitted weights get wrong")
    a = p.parse_args(argv)
    quiet_logs()
    rows = _pairs(build_embedder("minilm"))

    lexical = FEATURES.index("lexical")

    def training(rs: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        xs, ys, ws = [], [], []
        for r in rs:
            if r["detected"]:  # the best-matching constraint stands for the pair (as in the engine)
                x = r["x"].max(axis=0)
                xs.append(x)
                ys.append(1.0 if r["label"] else 0.0)
                ws.append(1.0)
                # the same pair as if the lexicon did not know the word; English only, as MiniLM's similarities
                # say little in other languages (a German pair without its word has nothing left to learn from)
                if a.dropout and x[lexical] and r["lang"] == "en":
                    xs.append(_without_lexicon(r).max(axis=0))
                    ys.append(1.0 if r["label"] else 0.0)
                    ws.append(a.dropout)
        return np.asarray(xs), np.asarray(ys), np.asarray(ws)

    ids = sorted({r["id"] for r in rows})
    rng = np.random.default_rng(17)
    order = list(rng.permutation(len(ids)))
    folds = [{ids[i] for i in order[f::a.folds]} for f in range(a.folds)]
    cv = {"surfaced": [0, 0], "false_alarm_control": [0, 0], "false_alarm_filler": [0, 0]}
    cv_unknown = {"surfaced": [0, 0], "false_alarm_control": [0, 0], "false_alarm_filler": [0, 0]}
    for held in folds:
        x, y, sw = training([r for r in rows if r["id"] not in held])
        w = _fit(x, y, a.l2, weight=sw)
        for acc, unknown in ((cv, False), (cv_unknown, True)):
            for k, (hit, n) in _score([r for r in rows if r["id"] in held], w, 0.5, unknown).items():
                acc[k][0] += hit
                acc[k][1] += n
    shipped = np.asarray([WEIGHTS.get("bias", 0.0), *[WEIGHTS.get(n, 0.0) for n in FEATURES]])
    x, y, sw = training(rows)
    w = _fit(x, y, a.l2, weight=sw)
    print(f"{len(ids)} train cases, {len(rows)} (constraint, event) pairs, "
          f"{sum(not r['detected'] for r in rows if r['role'] == 'event')} events whose constraint is not detected")
    print(f"{a.folds}-fold cross-validated (fitted on the other folds): "
          + ", ".join(f"{k} {h}/{n}" for k, (h, n) in cv.items()))
    print("  ... the held-out folds with no lexicon match (WordNet and embedding only): "
          + ", ".join(f"{k} {h}/{n}" for k, (h, n) in cv_unknown.items()))
    print("shipped weights on all of train: "
          + ", ".join(f"{k} {h}/{n}" for k, (h, n) in _score(rows, shipped, THRESHOLD).items()))
    print("refitted on all of train:        "
          + ", ".join(f"{k} {h}/{n}" for k, (h, n) in _score(rows, w, 0.5).items()))
    print("WEIGHTS = {" + ", ".join(f'"{n}": {v:.2f}' for n, v in zip(("bias", *FEATURES), w, strict=True)) + "}")
    if a.show:
        for r in rows:
            if not r["detected"] and r["role"] == "event":
                print(f"  UNDETECTED constraint of {r['id']} [{r['lang']}/{r['kind']}]")
            pr = _prob(w, r["x"])
            flagged = r["detected"] and bool((pr >= 0.5).any())
            if flagged != r["label"]:
                i = int(np.argmax(pr)) if len(pr) else -1
                f = {n: round(float(v), 2) for n, v in zip(FEATURES, r["x"][i], strict=True) if v} if i >= 0 else {}
                print(f"  {'MISS' if r['label'] else 'FALSE'} {r['id']} {r['role']} [{r['lang']}/{r['kind']}] "
                      f"{r['text'][:70]!r} p={pr.max() if len(pr) else 0:.2f} {f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
