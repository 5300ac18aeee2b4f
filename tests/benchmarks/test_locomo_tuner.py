"""The fold tuner's regularisation (benchmarks.locomo_offline): a move whose training gain rests on few questions
or on one conversation is refused; the nested cross-validation never lets the held-out conversation choose."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from benchmarks import locomo_offline as off
from benchmarks.locomo_data import Question
from neusym.retrieval.recipes import HYBRID_GRAPH

START = HYBRID_GRAPH.with_fact_weights(temporal=0.0)
SPACE = off.SearchSpace(weights={"temporal": (0.0, 0.5)}, lexical_weight=(0.6,), depth=(50,), sign_z=0.0)


def _question(conv: str, i: int, helped: bool) -> tuple[Question, off.CapturedQuestion, list[str]]:
    """Twelve facts, one of them the evidence. ``helped``: the evidence is 12th by cosine and the only one in the
    query's time window (a temporal weight lifts it into the top 10). Otherwise it is first, and the eleven others
    are in the window (a temporal weight pushes it out of the top 10)."""
    rows = []
    ev_dense = 0.5 if helped else 0.9
    for j in range(12):
        ev = j == 0
        dense = ev_dense if ev else 0.6 + 0.01 * j
        in_window = ev if helped else not ev
        rows.append(off.CaptureRow(
            key=f"{conv}-{i}-{j}", nid=1000 * i + j + 1, seq=1000 * i + j + 1, turn=False,
            expl={"dense": dense, "lexical": None, "dense_rank": None, "lexical_rank": None, "type_weight": 1.0,
                  "components": {"temporal": 1.0 if in_window else 0.0}}))
    for rank, r in enumerate(sorted(rows, key=lambda r: -r.expl["dense"])):
        r.expl["dense_rank"] = rank
    q = Question(conv, f"q{i}", "", 2, [f"{conv}-{i}-0"])
    return q, off.CapturedQuestion(1.0, rows), [f"{conv}-{i}-0"]


def _capture(helped: dict[str, int], hurt: dict[str, int]) -> off.Capture:
    qs, caps, units = [], [], []
    i = 0
    for conv in sorted(set(helped) | set(hurt)):
        for h, n in ((True, helped.get(conv, 0)), (False, hurt.get(conv, 0))):
            for _ in range(n):
                q, c, u = _question(conv, i, h)
                qs.append(q)
                caps.append(c)
                units.append(u)
                i += 1
    refs = {conv: {r.key: (r.key,) for c in caps for r in c.rows} for conv in {q.conv for q in qs}}
    return off.Capture.build(qs, caps, units, refs, {}, depth=1000)


def _moved(cap: off.Capture, **space: float) -> bool:
    cfg, _ = off.tune(cap, START, dataclasses.replace(SPACE, **space))
    return cfg.facts["temporal"] > 0


def test_a_gain_resting_on_few_questions_is_refused_by_the_sign_test() -> None:
    cap = _capture(helped={"a": 3, "b": 3}, hurt={"a": 2, "b": 2})  # +6 -4: a 10-point training gain
    assert _moved(cap, sign_z=0.0)
    assert not _moved(cap, sign_z=1.0)  # (6 - 4) / sqrt(10) = 0.63 standard deviations
    clear = _capture(helped={"a": 6, "b": 6}, hurt={"a": 1, "b": 1})
    assert _moved(clear, sign_z=1.0)  # (12 - 2) / sqrt(14) = 2.7


def test_a_gain_on_one_conversation_is_refused_by_the_conversation_test() -> None:
    cap = _capture(helped={"a": 10}, hurt={"b": 2, "c": 2})
    assert _moved(cap, sign_z=1.0)
    assert not _moved(cap, sign_z=1.0, conv_share=0.75)  # it loses on two of the three conversations


def test_the_held_out_conversation_never_chooses() -> None:
    # tuning without conversation "c" must not see that "c" is hurt: the move is made on a and b alone
    cap = _capture(helped={"a": 6, "b": 6}, hurt={"c": 12})
    cfg, train = off.tune(cap, START, SPACE, held_out="c")
    assert cfg.facts["temporal"] > 0 and train == pytest.approx(100.0)
    nested = off.nested_cross_validate(cap, START, {"tuned": SPACE, "untuned": dataclasses.replace(SPACE, sweeps=0)})
    by_conv = {conv: (label, inner) for conv, label, _cfg, inner in nested}
    # held out "c": the inner folds on a and b prefer tuning, and that choice then fails on "c"
    assert by_conv["c"][0] == "tuned"
    held = off.held_out_recall(cap, [(conv, cfg, 0.0) for conv, _label, cfg, _inner in nested])
    assert np.isclose(held[[q.conv == "c" for q in cap.questions]].mean(), 0.0)
