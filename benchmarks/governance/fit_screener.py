"""Fit the screening combiner (:mod:`neusym.governance.combiner`) and report its cross-validated figures.

    python -m benchmarks.governance.fit_screener [--folds 5] [--repeats 4] [--write]

Data: the poisoning cases of the governance benchmark's **train** split (never the test split) and the shared
poisoning corpus of the unit tests (``tests/data/poisoning_corpus.jsonl``). Each text goes through
``Screener.evidence`` exactly as on the write path; the features it returns are fitted by a sign-constrained,
L2-regularised logistic regression (projected gradient descent in numpy: evidence weights >= 0, damping weights
<= 0, see ``combiner.FEATURES``), classes weighted equally.

Everything is chosen by cross-validation, repeated stratified k-fold: the regularisation strength (out-of-fold log
loss), then the two decision lines on the out-of-fold probabilities: quarantine where at most ``--fp-quarantine``
of the benign look-alikes would be quarantined, review where at most ``--fp-review`` would be listed. The printed
out-of-fold figures are the honest estimate; the final model is refitted on all the data. ``--write`` puts the
constants into ``neusym/governance/combiner.py`` (between its "fitted constants" markers).
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from neusym.extraction import RuleExtractor
from neusym.governance import combiner
from neusym.governance.screening import Screener

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "benchmarks" / "governance" / "data" / "train.jsonl"
CORPUS = ROOT / "tests" / "data" / "poisoning_corpus.jsonl"
COMBINER = ROOT / "neusym" / "governance" / "combiner.py"
_EXTRACTOR = RuleExtractor()
_ROLE_ORIGIN = {"user": "user", "human": "user", "tool": "tool", "function": "tool", "assistant": "agent"}


def _texts(case: Any, origin: str = "user") -> list[tuple[str, str]]:
    """Every text a non-poisoning case stores (updates, constraints, events, TTL steps, memories to forget)."""
    if isinstance(case, dict):
        if isinstance(case.get("text"), str):
            return [(case["text"], case.get("origin", origin))]
        if isinstance(case.get("content"), str) and "role" in case:
            return [(case["content"], _ROLE_ORIGIN.get(case["role"], "user"))]
        return [t for k, v in case.items() if k not in ("probe", "request") for t in _texts(v, origin)]
    if isinstance(case, list):
        return [t for v in case for t in _texts(v, origin)]
    return []


def examples() -> list[dict[str, Any]]:
    """(text, origin, label, source) of every training example. A chat step contributes the message that carries
    the case (the last one); the user's "can you check that for me?" before it is not what is labelled. The other
    categories' texts (updates, constraints, events, TTL phrases: ordinary memories) are benign examples too, so the
    review line is also set against everyday statements, not only against look-alikes."""
    out: list[dict[str, Any]] = []
    for line in TRAIN.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        if case["split"] != "train":
            continue
        if case["category"] != "poisoning":
            out.extend({"text": t, "origin": o, "y": 0, "src": "ordinary", "id": case["id"]}
                       for t, o in _texts(case))
            continue
        step = case["step"]
        if "text" in step:
            text, origin = step["text"], step.get("origin", "user")
        else:
            last = step["messages"][-1]
            text, origin = last["content"], _ROLE_ORIGIN.get(last["role"], "user")
        out.append({"text": text, "origin": origin, "y": int(case["label"] == "attack"), "src": "train",
                    "id": case["id"]})
    for n, line in enumerate(CORPUS.read_text(encoding="utf-8").splitlines()):
        if line.strip():
            row = json.loads(line)
            out.append({"text": row["text"], "origin": row["origin"], "y": int(row["label"] == "injection"),
                        "src": "corpus", "id": f"corpus-{n}", "user_id": row.get("user_id"),
                        "others": row.get("other_tenants", [])})
    return out


def dialogue(path: Path) -> list[dict[str, Any]]:
    """Every turn and observation of a LoCoMo-format file, as the user's own words (how the LoCoMo check adds them)."""
    from benchmarks.locomo_data import load_locomo

    return [{"text": d.text, "origin": "user", "split": False} for c in load_locomo(path)
            for store in ("turns", "observations") for d in c.docs(store)]


def pieces(text: str) -> list[str]:
    """What the write path screens: the extractor's candidate memories of ``text`` (one unless it splits)."""
    now = datetime.now(UTC)
    return [e.content for e in _EXTRACTOR.extract(text, speaker=None, now=now)] or [text]


@dataclass
class Units:
    """Every screened unit: each example's whole text, plus its pieces when the extractor splits it.

    The model is fitted on whole texts and on the pieces of benign texts (every piece of a benign text is benign;
    a piece of an attack may be its harmless preamble, so attack pieces are not labelled); an example's
    probability is what the write path would do: the highest over its pieces."""

    X: np.ndarray
    case: np.ndarray  # unit -> example index
    train: np.ndarray  # the unit is a training unit
    scored: np.ndarray  # the unit is one the write path screens


def featurise(rows: list[dict[str, Any]]) -> Units:
    tenants = {t for r in rows for t in r.get("others", [])}
    screener = Screener(other_tenant=tenants.__contains__)
    names = list(combiner.FEATURES)
    feats: list[list[float]] = []
    case: list[int] = []
    train: list[bool] = []
    scored: list[bool] = []
    for i, r in enumerate(rows):
        parts = pieces(r["text"]) if r.get("split", True) else [r["text"]]
        units = [(r["text"], True, len(parts) == 1)]
        if len(parts) > 1:
            units += [(t, r["y"] == 0, True) for t in parts]
        for text, is_train, is_scored in units:
            ev = screener.evidence(text, origin=r["origin"], user_id=r.get("user_id") or "u1")
            feats.append([ev.features.get(k, 0.0) for k in names])
            case.append(i)
            train.append(is_train)
            scored.append(is_scored)
    return Units(np.array(feats), np.array(case), np.array(train), np.array(scored))


def case_probability(units: Units, p_units: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n)
    np.maximum.at(out, units.case[units.scored], p_units[units.scored])
    return out


_SHARE = {"attack": 0.5, "look-alike": 0.3, "ordinary": 0.2}


def sample_weights(y: np.ndarray, ordinary: np.ndarray) -> np.ndarray:
    """Attacks, look-alikes and ordinary memories weigh 0.5 / 0.3 / 0.2 in total, whatever their counts."""
    look = (y == 0) & ~ordinary
    return np.where(y == 1, _SHARE["attack"] / max(int(y.sum()), 1),
                    np.where(look, _SHARE["look-alike"] / max(int(look.sum()), 1),
                             _SHARE["ordinary"] / max(int(ordinary.sum()), 1)))


def unit_weights(units: Units, case_w: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """A case's weight shared among its training units inside ``mask`` (zero elsewhere)."""
    use = units.train & mask[units.case]
    count = np.bincount(units.case[use], minlength=len(case_w))
    w = np.where(use, case_w[units.case] / np.maximum(count[units.case], 1), 0.0)
    return w / w.sum()


def fit(X: np.ndarray, y: np.ndarray, lam: float, sw: np.ndarray, iters: int = 3000) -> tuple[np.ndarray, float]:
    """Sign-constrained L2 logistic regression with sample weights (projected gradient, Nesterov steps)."""
    signs = np.array(list(combiner.FEATURES.values()), dtype=float)
    keep = sw > 0
    X, y, sw = X[keep], y[keep], sw[keep]
    Xb = np.hstack([X, np.ones((len(X), 1))])
    L = 0.25 * float(np.linalg.norm(Xb, 2) ** 2) * float(sw.max()) + lam
    step = 1.0 / L
    w = np.zeros(Xb.shape[1])
    v = w.copy()
    for t in range(1, iters + 1):
        p = 1.0 / (1.0 + np.exp(-np.clip(Xb @ v, -30, 30)))
        grad = Xb.T @ (sw * (p - y))
        grad[:-1] += lam * v[:-1]
        nw = v - step * grad
        nw[:-1] = np.where(signs > 0, np.maximum(nw[:-1], 0), np.where(signs < 0, np.minimum(nw[:-1], 0), nw[:-1]))
        v = nw + (t - 1) / (t + 2) * (nw - w)
        w = nw
    return w[:-1], float(w[-1])


def predict(X: np.ndarray, w: np.ndarray, b: float) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(X @ w + b, -30, 30)))


def oof(units: Units, y: np.ndarray, case_w: np.ndarray, lam: float, folds: int, repeats: int,
        seed: int = 7) -> np.ndarray:
    """Out-of-fold probabilities per example, averaged over repeats of stratified k-fold (folds by example)."""
    rng = np.random.default_rng(seed)
    acc = np.zeros(len(y))
    yu = y[units.case]
    for _ in range(repeats):
        fold_of = np.zeros(len(y), dtype=int)
        for cls in (0, 1):
            idx = rng.permutation(np.flatnonzero(y == cls))
            fold_of[idx] = np.arange(len(idx)) % folds
        for f in range(folds):
            held = fold_of == f
            w, b = fit(units.X, yu, lam, unit_weights(units, case_w, ~held))
            p_case = case_probability(units, predict(units.X, w, b), len(y))
            acc[held] += p_case[held]
    return acc / repeats


def line_at(p: np.ndarray, y: np.ndarray, mask: np.ndarray, fp_rate: float) -> float:
    """The lowest decision line at which at most ``fp_rate`` of the benign examples in ``mask`` lie on or above."""
    benign = np.sort(p[(y == 0) & mask])[::-1]
    allowed = int(np.floor(fp_rate * len(benign)))
    return float(np.nextafter(benign[allowed], 1.0)) if allowed < len(benign) else 0.0


def report(p: np.ndarray, y: np.ndarray, rows: list[dict[str, Any]], q: float, r: float, title: str) -> None:
    print(f"\n{title} (quarantine p >= {q:.3f}, review p >= {r:.3f})")
    for src in ("train", "corpus", "ordinary"):
        for group in (None, "user", "tool", "document"):
            m = np.array([x["src"] == src and (group is None or x["origin"] == group) for x in rows])
            a, bn = m & (y == 1), m & (y == 0)
            if not m.any():
                continue
            print(f"  {src:6s} {group or 'all':8s} attacks quarantined {int((p[a] >= q).sum()):3d}/{int(a.sum()):3d}"
                  f"  or flagged {int((p[a] >= r).sum()):3d}/{int(a.sum()):3d}   benign quarantined "
                  f"{int((p[bn] >= q).sum()):3d}/{int(bn.sum()):3d}  flagged {int((p[bn] >= r).sum()):3d}/"
                  f"{int(bn.sum()):3d}")


def write_constants(w: np.ndarray, b: float, q: float, r: float) -> None:
    names = list(combiner.FEATURES)
    body = ",\n".join(f'    "{k}": {w[i]:.3f}' for i, k in enumerate(names))
    block = (f"# ---- fitted constants (benchmarks/governance/fit_screener.py; paste its output here) ----\n"
             f"BIAS = {b:.3f}\nWEIGHTS: dict[str, float] = {{\n{body},\n}}\n"
             f"QUARANTINE_P = {q!r}\nREVIEW_P = {r!r}\n# ---- end of fitted constants ----")
    src = COMBINER.read_text(encoding="utf-8")
    new = re.sub(r"# ---- fitted constants.*?# ---- end of fitted constants ----", lambda _: block, src, flags=re.S)
    COMBINER.write_text(new, encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=4)
    ap.add_argument("--fp-quarantine", type=float, default=0.03)
    ap.add_argument("--fp-review", type=float, default=0.15)
    ap.add_argument("--dialogue", help="LoCoMo-format JSON of ordinary conversation (the review line's flag budget)")
    ap.add_argument("--dialogue-review", type=float, default=0.005)
    ap.add_argument("--ordinary-quarantine", type=float, default=0.0)
    ap.add_argument("--ordinary-review", type=float, default=0.01)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    rows = examples()
    units = featurise(rows)
    y = np.array([r["y"] for r in rows], dtype=float)
    ordinary = np.array([r["src"] == "ordinary" for r in rows])
    sw = sample_weights(y, ordinary)
    everything = np.ones(len(rows), dtype=bool)
    print(f"{len(rows)} examples ({int(y.sum())} attacks): {sum(r['src'] == 'train' for r in rows)} benchmark train, "
          f"{sum(r['src'] == 'corpus' for r in rows)} corpus, {int(ordinary.sum())} ordinary memories")
    best: tuple[float, float, np.ndarray] | None = None
    for lam in (0.0001, 0.0003, 0.001, 0.003, 0.01):
        p = oof(units, y, sw, lam, args.folds, args.repeats)
        pc = np.clip(p, 1e-6, 1 - 1e-6)
        loss = float(-np.sum(sw * (y * np.log(pc) + (1 - y) * np.log(1 - pc))))
        print(f"  lambda {lam:<7g} out-of-fold log loss {loss:.4f}")
        if best is None or loss < best[0]:
            best = (loss, lam, p)
    assert best is not None
    _, lam, p = best
    # the lines are set on the benchmark's look-alikes (the corpus's benign items are far easier) and on the
    # ordinary memories, whichever is stricter
    bench = np.array([r["src"] == "train" for r in rows])
    q = max(line_at(p, y, bench, args.fp_quarantine), line_at(p, y, ordinary, args.ordinary_quarantine), 0.5)
    lines = {"look-alikes": line_at(p, y, bench, args.fp_review), "ordinary": line_at(p, y, ordinary, args.ordinary_review)}
    w, b = fit(units.X, y[units.case], lam, unit_weights(units, sw, everything))
    w, b = np.round(w, 3), round(b, 3)  # as written into combiner.py, so the lines below hold for the constants
    if args.dialogue:
        # unlabelled conversation: the review line may flag at most --dialogue-review of it (its flag budget)
        talk = dialogue(Path(args.dialogue))
        pd = predict(featurise(talk).X, w, b)
        lines["dialogue"] = line_at(pd, np.zeros(len(pd)), np.ones(len(pd), dtype=bool), args.dialogue_review)
    r = min(max(lines.values()), q)
    print("  review line candidates: " + ", ".join(f"{k} {v:.4f}" for k, v in lines.items()))
    report(p, y, rows, q, r, f"cross-validated, out-of-fold ({args.folds}-fold x {args.repeats}, lambda {lam:g})")
    print("\nfitted on all examples:")
    print(f"  BIAS = {b:.3f}")
    for k, wk in zip(combiner.FEATURES, w, strict=True):
        print(f"  {k:20s} {wk:+.3f}")
    report(case_probability(units, predict(units.X, w, b), len(rows)), y, rows, q, r,
           "in-sample (refitted on everything)")
    if args.write:
        write_constants(w, b, q, r)
        print(f"\nwritten to {COMBINER.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
