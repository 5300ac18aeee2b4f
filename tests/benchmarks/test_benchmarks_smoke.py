"""Smoke tests: each benchmark runs end to end on a tiny input and writes a well-formed report.

No timed assertions (speed lives in the reports); the hashing embedder keeps these fast. mem0 is exercised only when
it is installed (it is an optional ``bench`` extra).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: `benchmarks` is not installed
from benchmarks import locomo, scale  # noqa: E402

LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo" / "locomo_dev.json"
HAS_MEM0 = all(importlib.util.find_spec(m) is not None for m in ("mem0", "sentence_transformers"))  # its HF embedder


def _tiny_locomo(tmp_path: Path) -> Path:
    """The first conversation of the dev half when present (CI has shared/ beside the clone), else a synthetic one."""
    if LOCOMO.exists():
        data = json.loads(LOCOMO.read_text())[:1]
        data[0]["qa"] = data[0]["qa"][:12] + [q for q in data[0]["qa"] if q["category"] == 5][:2]
    else:
        turns = [{"speaker": "Ann" if i % 2 else "Bob", "dia_id": f"D1:{i + 1}", "text": f"sentence {i} about topic {i % 5}"}
                 for i in range(30)]
        turns[3]["blip_caption"] = "a photo of a dog"
        data = [{"sample_id": "conv-x", "conversation": {"speaker_a": "Ann", "speaker_b": "Bob",
                                                          "session_1_date_time": "1:56 pm on 8 May, 2023",
                                                          "session_1": turns},
                 "observation": {"session_1_observation": {
                     "Ann": [[f"Ann talked about topic {i % 5} in sentence {i}", f"D1:{i + 1}"] for i in range(1, 30, 2)],
                     "Bob": [[f"Bob mentioned topic {i % 5}", [f"D1:{i + 1}"]] for i in range(0, 30, 2)]}},
                 "qa": [{"question": f"What about topic {i}?", "answer": "x", "evidence": [f"D1:{i + 1}"],
                         "category": 1 + i % 5} for i in range(10)]}]
    path = tmp_path / "tiny_locomo.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("store", ["turns", "observations"])
def test_locomo_smoke(tmp_path: Path, store: str) -> None:
    src = _tiny_locomo(tmp_path)
    systems = ["dense", "bm25", "rrf", "langchain", "neusym"]  # mem0 loads MiniLM itself: covered by test_scale_smoke
    out = tmp_path / "out"
    report = locomo.run(src, out_dir=out, store=store, embedder="hashing", systems=systems, limit_convs=1,
                        component_cv=False)
    for ext in ("json", "md", "png"):
        assert (out / f"locomo_{store}.{ext}").exists()
    saved = json.loads((out / f"locomo_{store}.json").read_text())
    names = [r["system"] for r in saved["results"]]
    assert {"dense (FAISS)", "BM25 (bm25s)", "RRF (dense+BM25)", "LangChain FAISS"} <= set(names)
    assert sum(n.startswith("neusym:") for n in names) == len(locomo.ABLATION)
    for r in report["results"]:
        o = r["overall"]
        assert o["n"] > 0
        for k in locomo.KS:
            assert 0.0 <= o[f"R@{k}"] <= 100.0
        recalls = [o[f"R@{k}"] for k in locomo.KS]
        assert recalls == sorted(recalls)  # recall can only grow with k
        assert 0.0 <= o["NDCG@10"] <= 100.0
        assert r["overall_all"]["R@10"] <= o["R@10"] + 1e-9  # the strict variant counts uncovered evidence
        assert r["latency_ms"]["p50"] >= 0.0
    assert report["ingest"]["neusym"]["stored"] > 0
    # the offline re-scorer reproduces the engine on every row it can express
    assert all(v["identical_top_k"] == v["questions"] for v in report["offline_check"].values())
    assert report["depth"] and report["component_effects"]
    assert "| system |" in (out / f"locomo_{store}.md").read_text()


def test_locomo_scoring() -> None:
    s = locomo.score(["D1:2", "D1:9", "D1:2", "D1:3"], ["D1:3", "D1:2"])
    assert s["R@1"] == 0.5 and s["R@5"] == 1.0
    assert 0.0 < s["NDCG@10"] < 1.0
    # observations: a memory covers the dia_ids it cites; one retrieved citation recovers that evidence id
    refs = {"O1:1": ("D1:2", "D1:3"), "O1:2": ("D1:9",)}
    obs = locomo.score(["O1:2", "O1:1"], ["D1:2", "D1:3"], refs)
    assert obs["R@1"] == 0.0 and obs["R@5"] == 1.0
    strict = locomo.score(["O1:1"], ["D1:2", "D1:3"], refs, total=4)  # two more evidence ids no memory covers
    assert strict["R@1"] == 0.5
    assert locomo.parse_when("1:56 pm on 8 May, 2023").hour == 13


def test_scale_smoke(tmp_path: Path) -> None:
    out = tmp_path / "out"
    systems = ["neusym", "langchain"] + (["mem0"] if HAS_MEM0 else [])
    report = scale.run(sizes=[300], minilm_sizes=[], out_dir=out, queries=10, batch=100, single=10, mem0_max=300,
                       systems=systems)
    assert (out / "scale.json").exists() and (out / "scale.md").exists() and (out / "scale.png").exists()
    runs = {r["system"]: r for r in report["runs"]}
    assert "neusym" in runs and "langchain_faiss" in runs, report["notes"]
    ns = runs["neusym"]
    for key in ("search_ms", "stage1_ms", "stage2_ms", "embed_ms"):
        assert set(ns[key]) == {"p50", "p95", "p99"}
    assert ns["add_batch_per_s"] > 0 and ns["disk_bytes_per_memory"] > 0
    assert ns["open_s"] >= 0 and ns["catch_up_s"] >= 0


@pytest.mark.parametrize("n", [5])
def test_scale_synthetic_texts_are_unique(n: int) -> None:
    texts = scale.synthetic_texts(n)
    assert len(set(texts)) == n
