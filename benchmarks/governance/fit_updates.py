"""Fit the update pair model (:mod:`neusym.governance.update_model`) and write its weights.

    python -m benchmarks.governance.fit_updates /work/shared/data/locomo/locomo_dev.json [--write] [--folds 5]

Pairs are built the way the write path sees them, without a database: each memory of a tenant (a benchmark case,
or a LoCoMo conversation) is extracted by the rule extractor and embedded with MiniLM, and compared with its six
nearest earlier memories of the same tenant (cosine >= the detector's floor) and its two earlier memories nearest to
its attribute slot's description (the write path's second search), after the detector's hard rules
(subject, question, past framing). Labels:

* **positive**: a train ``update`` case's update memory (one that mentions a new or the old value) against the
  earlier memory that states the old value;
* **negative**: everything else of those cases (unrelated context), every pair of the train ``contradiction``
  cases (a constraint and the event that breaks it are not an update) and ``forget`` cases (several memories about
  one topic), a list of multi-valued additions and different subjects written here (:data:`ADDITIONS`), and every
  pair of the LoCoMo dev conversations (turns and observations: friends talking over months, which must not
  supersede).

Reports k-fold cross-validated accuracy on the benchmark pairs (folds by case, so a case's pairs are never split)
and the LoCoMo false-positive count at the chosen threshold, which is the lowest one that keeps LoCoMo pairs at or
below ``--locomo-budget`` false positives in every fold. ``--write`` regenerates
``neusym/governance/_update_weights.py``. Only the train split is read.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.governance.cases import load
from benchmarks.governance.matching import mentions

ROOT = Path(__file__).resolve().parents[2]
WEIGHTS_PY = ROOT / "neusym" / "governance" / "_update_weights.py"
CACHE = Path("/tmp/neusym-fit-updates-vectors.npz")  # MiniLM vectors by text (a rerun embeds only new texts)

ADDITIONS: tuple[tuple[str, str], ...] = (
    ("I have a dog called Rex.", "We also adopted a cat named Tom."),
    ("I play the guitar.", "I started learning the drums too."),
    ("My sister lives in Rome.", "My brother lives in Madrid."),
    ("I work at Google.", "My wife works at Amazon."),
    ("My favourite colour is blue.", "My favourite food is pasta."),
    ("I speak French.", "I'm also learning Japanese now."),
    ("My son goes to Oakfield School.", "My daughter started at Riverside School."),
    ("I live in Leeds.", "My parents live in York."),
    ("My manager is Helen.", "Helen's manager is Raj."),
    ("I drive a Golf.", "My wife drives a Tesla."),
    ("I have two kids, Noah and Ella.", "Noah started swimming lessons this week."),
    ("I support Arsenal.", "My dad supports Chelsea."),
    ("I go to the gym on Mondays.", "I also swim on Thursdays."),
    ("My phone number is 555-0142.", "My office number is 555-0199."),
    ("I work at Spotify.", "Spotify just opened a new office in Berlin."),
    ("My favourite band is Muse.", "I saw Muse live last night, amazing."),
    ("I live in Austin.", "Austin has great tacos."),
    ("I'm vegetarian.", "I made a new lentil curry recipe tonight."),
    ("Ich wohne in Hamburg.", "Meine Schwester wohnt in München."),
    ("Ich arbeite bei SAP.", "Mein Mann arbeitet bei Siemens."),
    ("Ich spiele Gitarre.", "Jetzt lerne ich auch Klavier."),
    ("Vivo en Madrid.", "Mi hermano vive en Sevilla."),
    ("Trabajo en Telefónica.", "Mi mujer trabaja en un hospital."),
    ("Tengo un perro.", "Ahora también tenemos un gato."),
    ("J'habite à Lyon.", "Mes parents habitent à Nice."),
    ("Je travaille chez Renault.", "Mon frère travaille chez Airbus."),
    ("Je joue du piano.", "J'ai aussi commencé le violon."),
    ("My best friend is called Omar.", "Omar got a new job at a bank."),
    ("I'm reading Dune at the moment.", "I started a new book, Project Hail Mary, as well."),
    ("I have a golden retriever named Bruno.", "Bruno learned a new trick today."),
)
"""Pairs that must not supersede: a second value of a multi-valued attribute, another person's attribute, talk about
a value that stays."""


@dataclass
class Item:
    rec: Any
    vec: np.ndarray
    group: str  # a case or a conversation: folds never split one
    step: str  # before / update / context / other
    source: str  # bench / locomo / additions


class Embeddings:
    """MiniLM document vectors, cached by text on disk (a rerun embeds only new texts)."""

    def __init__(self) -> None:
        from benchmarks._common import build_embedder

        self.emb = build_embedder("minilm")
        self.cache: dict[str, np.ndarray] = {}
        self.path = CACHE
        if self.path.exists():
            with np.load(self.path, allow_pickle=False) as z:
                self.cache = dict(zip(z["texts"].tolist(), z["vecs"], strict=True))

    def save(self) -> None:
        texts = list(self.cache)
        np.savez(self.path, texts=np.asarray(texts), vecs=np.vstack([self.cache[t] for t in texts]))

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        for i in range(0, len(todo), 256):
            chunk = todo[i:i + 256]
            for t, v in zip(chunk, np.asarray(self.emb.embed_documents(chunk), dtype=np.float32), strict=True):
                self.cache[t] = v / max(float(np.linalg.norm(v)), 1e-9)
        return np.vstack([self.cache[t] for t in texts]) if texts else np.zeros((0, 384), np.float32)


def _records(text_or_messages: Any, origin: str, *, speaker: str | None = None, infer: bool = True,
             valid_from: datetime | None = None) -> list[Any]:
    from neusym.engine import candidates as cand
    from neusym.extraction import RuleExtractor
    from neusym.record import Scope

    if "ex" not in _records.__dict__:
        _records.__dict__["ex"] = RuleExtractor()
    ex = _records.__dict__["ex"]
    now = datetime.now(UTC)
    sc = Scope(user_id="fit")
    message = not isinstance(text_or_messages, str)
    out = []
    for turn in cand.turns_of(text_or_messages, origin, speaker):
        o = cand.origin_of(turn, origin, message=message)
        if o is None:
            continue
        who = turn.speaker or speaker or ("assistant" if turn.role == "assistant" else None)
        for ext in cand.extract(ex, turn.content, who, now, infer):
            out.append(cand.record_from(ext, sc, now=now, mtype=None, metadata=None, importance=None,
                                        confidence=None, origin=o, ttl=None, valid_from=valid_from, tags=None,
                                        turn=turn, ref=None))
    return out


def _step_records(step: dict[str, Any]) -> list[Any]:
    if "messages" in step:
        return _records(list(step["messages"]), "user")
    return _records(step["text"], step.get("origin", "user"))


def bench_sequences(cases: Iterable[dict[str, Any]]) -> list[tuple[str, list[tuple[Any, str]], dict[str, Any]]]:
    """(group, [(record, step)], case) in ingestion order, as the benchmark adds them."""
    out = []
    for c in cases:
        seq: list[tuple[Any, str]] = []
        if c["category"] == "update":
            ctx = c.get("context", [])
            for t in ctx[:1]:
                seq += [(r, "context") for r in _records(t, "user")]
            for s in c["before"]:
                seq += [(r, "before") for r in _step_records(s)]
            for t in ctx[1:]:
                seq += [(r, "context") for r in _records(t, "user")]
            for s in c["update"]:
                seq += [(r, "update") for r in _step_records(s)]
        elif c["category"] == "contradiction":
            for t in c.get("context", []):
                seq += [(r, "other") for r in _records(t, "user")]
            for s in c["constraint"]:
                seq += [(r, "other") for r in _step_records(s)]
            for t in c.get("filler", []):
                seq += [(r, "other") for r in _records(t, "user")]
            for s in c["event"]:
                seq += [(r, "other") for r in _step_records(s)]
        elif c["category"] == "forget":
            for m in c["memories"]:
                seq += [(r, "other") for r in _records(m["text"], "user")]
        out.append((c["id"], seq, c))
    return out


def build(locomo: Path | None, *, pair_floor: float = 0.15, neighbours: int = 6,
          slot_neighbours: int = 0, slot_clear: float | None = None) -> dict[str, Any]:
    from neusym.governance import update_model as um
    from neusym.governance.updates import UpdateDetector

    emb = Embeddings()
    det = UpdateDetector.__new__(UpdateDetector)  # only its pure helpers: no stores
    det.embed = emb
    det._slots = None
    det._owner = None
    if slot_clear is not None:
        det.slot_clear = slot_clear
    slot_m = det.slot_matrix()
    assert slot_m is not None

    seqs = bench_sequences(load(["train"], categories=["update", "contradiction", "forget"]))
    seqs += [(f"add-{i}", [(r, "other") for t in pair for r in _records(t, "user")], {"category": "addition"})
             for i, pair in enumerate(ADDITIONS)]
    if locomo is not None:
        from benchmarks.locomo_data import load_locomo

        for conv in load_locomo(locomo):
            for store in ("turns", "observations"):
                seq = [(r, "other") for d in conv.docs(store)
                       for r in _records(d.text, "user", speaker=d.speaker, infer=False, valid_from=d.when)]
                seqs.append((f"locomo-{conv.sample_id}-{store}", seq, {"category": "locomo"}))
    rows: list[np.ndarray] = []
    labels: list[int] = []
    groups: list[str] = []
    sources: list[str] = []
    texts: list[tuple[str, str]] = []
    for group, seq, case in seqs:
        if not seq:
            continue
        recs = [r for r, _ in seq]
        vecs = emb([r.content for r in recs])
        scores = det.scores(vecs)
        sims = vecs @ vecs.T
        q_rows, queries = det.slot_queries(vecs, scores)
        query_of = dict(zip(q_rows, queries, strict=True))
        for j in range(1, len(recs)):
            row = sims[j, :j]
            close = np.flatnonzero(row >= pair_floor)
            near = close[np.argsort(-row[close])][:neighbours].tolist()
            by_slot: list[int] = []
            if j in query_of:  # the write path's second search: older memories nearest to the new one's slot
                to_slot = vecs[:j] @ query_of[j]
                by_slot = [i for i in np.argsort(-to_slot)[:slot_neighbours].tolist() if i not in near]
            for i in near + by_slot:
                new, old = recs[j], recs[i]
                gate = det.pair_gate(new, old)
                if gate is None:
                    continue
                third, via_role = gate
                label = 0
                if case.get("category") == "update" and seq[j][1] == "update" and seq[i][1] == "before":
                    label = int(mentions(old.content, case["old"])
                                and (mentions(new.content, case["new"]) or mentions(new.content, case["old"])))
                x = um.pair_features(new, old, float(row[i]), scores[j], scores[i],
                                     third=third, via_role=via_role,
                                     others=[float(row[k]) for k in near if k != i])
                rows.append(x)
                labels.append(label)
                groups.append(group)
                sources.append("locomo" if group.startswith("locomo") else
                               ("additions" if group.startswith("add-") else "bench"))
                texts.append((new.content, old.content))
    emb.save()
    missing = []
    for group, _seq, case in seqs:
        if case.get("category") != "update":
            continue
        if not any(g == group and y for g, y in zip(groups, labels, strict=True)):
            missing.append(group)
    return {"X": np.vstack(rows), "y": np.asarray(labels), "groups": groups, "sources": sources, "texts": texts,
            "missing": missing, "slot_matrix_rows": int(slot_m.shape[0])}


def fit_lr(X: np.ndarray, y: np.ndarray, w_pos: float, l2: float = 1.0, iters: int = 3000,
           lr: float = 0.5) -> tuple[np.ndarray, float]:
    """Weighted, L2-regularised logistic regression by gradient descent (numpy only; X standardised)."""
    n, d = X.shape
    w = np.zeros(d)
    b = 0.0
    sw = np.where(y == 1, w_pos, 1.0)
    sw = sw / sw.sum()
    for _ in range(iters):
        z = X @ w + b
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
        g = (p - y) * sw
        w -= lr * (X.T @ g + l2 * w / n)
        b -= lr * g.sum()
    return w, b


def standardise(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    return mean, np.where(scale > 1e-6, scale, 1.0)


def _prob(X: np.ndarray, mean: np.ndarray, scale: np.ndarray, w: np.ndarray, b: float) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(((X - mean) / scale) @ w + b, -30, 30)))


def choose_threshold(p: np.ndarray, y: np.ndarray, src: np.ndarray, budget: int) -> float:
    """The lowest threshold with at most ``budget`` LoCoMo/addition false positives (bench negatives count too)."""
    neg = (y == 0) & (src != "bench")
    cands = np.unique(np.concatenate([p, [0.5]]))
    for t in np.sort(cands):
        if t < 0.2:
            continue
        if int(((p >= t) & neg).sum()) <= budget:
            return float(t)
    return 0.99


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.governance.fit_updates", description=__doc__)
    ap.add_argument("locomo", type=Path, nargs="?")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--pos-weight", type=float, default=20.0)
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--locomo-budget", type=int, default=1)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--slot-neighbours", type=int, default=0, help="as the detector's slot_neighbours (0: off)")
    ap.add_argument("--pair-floor", type=float, default=0.15, help="as the detector's pair_floor")
    ap.add_argument("--slot-clear", type=float, default=None, help="as the detector's slot_clear")
    ap.add_argument("--dump", type=Path, default=None, help="write every pair with its score here (JSON)")
    a = ap.parse_args(argv)
    from neusym.governance.update_model import FEATURES

    data = build(a.locomo, pair_floor=a.pair_floor, slot_neighbours=a.slot_neighbours, slot_clear=a.slot_clear)
    X, y, groups = data["X"], data["y"], data["groups"]
    src = np.asarray(data["sources"])
    print(f"pairs: {len(y)} ({int(y.sum())} positive); bench {int((src == 'bench').sum())}, locomo "
          f"{int((src == 'locomo').sum())}, additions {int((src == 'additions').sum())}; update cases with no "
          f"positive pair after the gates: {len(data['missing'])} {data['missing'][:20]}")
    # k-fold by group (a case or a conversation is never split)
    uniq = sorted(set(groups))
    rng = np.random.default_rng(17)
    fold_of = {g: int(k) for g, k in zip(uniq, rng.permutation(len(uniq)) % a.folds, strict=True)}
    folds = np.asarray([fold_of[g] for g in groups])
    oof = np.zeros(len(y))
    thresholds = []
    for k in range(a.folds):
        tr, te = folds != k, folds == k
        mean, scale = standardise(X[tr])
        w, b = fit_lr((X[tr] - mean) / scale, y[tr], a.pos_weight, a.l2)
        p_tr = _prob(X[tr], mean, scale, w, b)
        thresholds.append(choose_threshold(p_tr, y[tr], src[tr], a.locomo_budget))
        oof[te] = _prob(X[te], mean, scale, w, b) >= thresholds[-1]
    bench = src == "bench"
    pos_hit = int((oof[bench] * y[bench]).sum())
    print(f"cross-validated ({a.folds} folds by case/conversation), per-fold thresholds {np.round(thresholds, 3)}:")
    print(f"  bench positives found {pos_hit}/{int(y[bench].sum())}; bench negatives accepted "
          f"{int((oof[bench] * (1 - y[bench])).sum())}/{int((1 - y[bench]).sum())}; locomo pairs accepted "
          f"{int(oof[src == 'locomo'].sum())}/{int((src == 'locomo').sum())}; additions accepted "
          f"{int(oof[src == 'additions'].sum())}/{int((src == 'additions').sum())}")
    acc = float((oof[bench] == y[bench]).mean())
    print(f"  bench pair accuracy {acc:.3f}")
    mean, scale = standardise(X)
    w, b = fit_lr((X - mean) / scale, y, a.pos_weight, a.l2)
    p = _prob(X, mean, scale, w, b)
    t = choose_threshold(p, y, src, a.locomo_budget)
    print(f"full fit: threshold {t:.3f}; in-sample bench positives {int(((p >= t) & (y == 1)).sum())}/"
          f"{int(y.sum())}, locomo accepted {int(((p >= t) & (src == 'locomo')).sum())}, bench negatives accepted "
          f"{int(((p >= t) & (y == 0) & bench).sum())}")
    for name, wi in sorted(zip(FEATURES, w, strict=True), key=lambda x: -abs(x[1])):
        print(f"  {name:14s} {wi:+.3f}")
    fp = [(float(p[i]), *data["texts"][i]) for i in np.flatnonzero((p >= t) & (y == 0))]
    for s, n, o in sorted(fp, reverse=True)[:15]:
        print(f"  FP {s:.2f} NEW {n[:90]!r} OLD {o[:90]!r}")
    fn = [(float(p[i]), *data["texts"][i]) for i in np.flatnonzero((p < t) & (y == 1))]
    for s, n, o in sorted(fn)[:40]:
        print(f"  FN {s:.2f} NEW {n[:90]!r} OLD {o[:90]!r}")
    if a.dump:
        a.dump.write_text(json.dumps([{"p": float(p[i]), "y": int(y[i]), "src": src[i], "new": data["texts"][i][0],
                                       "old": data["texts"][i][1], "x": X[i].round(4).tolist()}
                                      for i in range(len(y))], ensure_ascii=False))
    if a.write:
        WEIGHTS_PY.write_text(
            '"""Weights of the update pair model (:mod:`neusym.governance.update_model`). Generated by\n'
            '``python -m benchmarks.governance.fit_updates``; do not edit by hand.\n\n'
            f"Fitted on {int(y.sum())} positive and {int((y == 0).sum())} negative pairs; {a.folds}-fold "
            f"cross-validated bench pair accuracy {acc:.3f}, positives found {pos_hit}/{int(y[bench].sum())}.\n"
            '"""\n\n'
            f"WEIGHTS = {[round(float(v), 5) for v in w]}\n"
            f"BIAS = {round(float(b), 5)}\n"
            f"THRESHOLD = {round(t, 4)}\n"
            f"MEAN = {[round(float(v), 5) for v in mean]}\n"
            f"SCALE = {[round(float(v), 5) for v in scale]}\n")
        print(f"wrote {WEIGHTS_PY}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
