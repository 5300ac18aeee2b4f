"""Save/load cost of the derived-index state file (BM25 + scope catalog): ``lexical.npz`` vs the pickle it replaced.

Same process, same in-memory index, so the ratios are the format's alone::

    PYTHONPATH=. python benchmarks/index_files.py --sizes 100000 1000000 --repeats 3

The index is built from ``benchmarks/scale.py``'s synthetic memories (several per session, so the session-context
chains are there too). Reported (medians): save (write + fsync) and load seconds and file sizes; for the npz also
the first save of a freshly built index and the steady-state save after 500 more memories (the write path saves
every ``save_every`` = 500 changes; after a save the index keeps its postings packed in the saved arrays, so a
resave serialises only what was written since). The pickle had no steady state: every save wrote everything.
Loading the npz leaves postings packed (a term becomes a Python list only when a write touches it), so "load" is
also the time until the first search can run.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale import synthetic_texts  # noqa: E402

from neusym.retrieval.derived import Catalog, DerivedIndexes, _read_state  # noqa: E402
from neusym.retrieval.lexical import LexicalIndex  # noqa: E402


def build(n: int) -> tuple[LexicalIndex, Catalog]:
    lex, cat = LexicalIndex(), Catalog()
    for i, text in enumerate(synthetic_texts(n)):
        user, session = f"u{i % 50}", f"s{i // 8}"
        pos = cat.put(i + 1, user, None, session, "active", f"{i:032x}")
        lex.add(pos, text, order=i + 1, context_key=(user, None, session))
    return lex, cat


def _timed(fn: object, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(n: int, repeats: int) -> dict[str, float]:
    lex, cat = build(n)
    with tempfile.TemporaryDirectory() as tmp:
        d = DerivedIndexes(8, Path(tmp), model="bench")
        d.lexical, d.catalog, d.watermark = lex, cat, n
        d.faiss.save = lambda *a, **k: None  # type: ignore[method-assign]  # the FAISS file is not compared
        state = Path(tmp) / "lexical.npz"
        legacy = Path(tmp) / "legacy.pkl"

        def save_pickle() -> None:
            with open(legacy, "wb") as fh:
                pickle.dump({"watermark": n, "lexical": lex, "catalog": cat}, fh, protocol=pickle.HIGHEST_PROTOCOL)
                fh.flush()
                os.fsync(fh.fileno())

        def load_pickle() -> None:
            with open(legacy, "rb") as fh:
                pickle.load(fh)  # noqa: S301 - our own file, for the comparison only

        out: dict[str, float] = {"memories": n}
        # the old format first, while the index still has the all-lists layout the pickle held
        out["pickle_save_s"] = _timed(save_pickle, repeats)
        out["pickle_load_s"] = _timed(load_pickle, repeats)
        out["pickle_mb"] = legacy.stat().st_size / 1e6
        out["npz_first_save_s"] = _timed(d._save, 1)  # everything still in lists (a freshly built index)
        out["npz_load_s"] = _timed(lambda: _read_state(state), repeats)
        out["npz_mb"] = state.stat().st_size / 1e6
        extra = synthetic_texts(n + 500 * repeats)[n:]
        rounds = iter(range(repeats))

        def resave() -> None:  # what the write path pays every save_every=500 changes
            r = next(rounds)
            for j, text in enumerate(extra[500 * r : 500 * (r + 1)]):
                i = n + 500 * r + j
                pos = cat.put(i + 1, f"u{i % 50}", None, f"s{i // 8}", "active", f"{i:032x}")
                lex.add(pos, text, order=i + 1, context_key=(f"u{i % 50}", None, f"s{i // 8}"))
            d._save()

        out["npz_resave_after_500_s"] = _timed(resave, repeats)
        loaded = _read_state(state)[1]  # sanity: the loaded index scores like the in-memory one
        mask = np.ones(cat.size, dtype=bool)
        for q in ("parcel desk", "garden keys", "note 17"):
            assert np.array_equal(lex.search(q, mask, 10)[0], loaded.search(q, mask, 10)[0]), q
    out["load_ratio_npz_vs_pickle"] = out["npz_load_s"] / out["pickle_load_s"]
    out["resave_ratio_npz_vs_pickle"] = out["npz_resave_after_500_s"] / out["pickle_save_s"]
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    for n in args.sizes:
        print(json.dumps(measure(n, args.repeats)), flush=True)


if __name__ == "__main__":
    main()
