"""benchmarks/extraction.py on tiny inputs: the numbers in RESULTS come from code that runs (no timing asserted)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import extraction as bench


def test_benchmark_runs_and_scores_a_judged_sample(tmp_path: Path) -> None:
    conv = {
        "conversation": {"speaker_a": "Ana", "speaker_b": "Bo"},
        "observation": {"session_1_observation": {"Ana": [["Ana adopted a beagle named Pepper.", "D1:1"]],
                                                  "Bo": [["Bo volunteers at an animal shelter.", "D1:2"]]}},
    }
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([conv]))
    out = tmp_path / "out"
    assert bench.main([str(data), "--rounds", "1", "--sample", "2", "--out", str(out)]) == 0
    runs = json.loads((out / "extraction.json").read_text())["runs"]
    locomo = runs["rules/locomo"]
    assert locomo["sentences"] == 2 and locomo["facts_per_sentence"] >= 1.0
    assert locomo["pct_with_non_speaker_entity"] == 100.0  # Pepper, animal shelter: not the speakers
    sample = out / "sample_locomo_rules.jsonl"
    rows = [json.loads(x) for x in sample.read_text().splitlines()]
    for row in rows:
        row["ok"] = [True] * len(row["triples"])
    judged = tmp_path / "judged.jsonl"
    judged.write_text("".join(json.dumps(r) + "\n" for r in rows))
    score = bench.score_judged(judged)
    assert score["precision"] == 1.0 and score["sentences_judged"] == 2
