"""Smoke test of the governance benchmark: a handful of *train* cases, hashing embedder.

It checks that the runner runs end to end through the public API and reports every metric (JSON + markdown), never
how good governance is: that is the benchmark's job (``python -m benchmarks.governance``), not CI's. It does not read
the held-out split.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: `benchmarks` is not installed
from benchmarks.governance import cases as case_files  # noqa: E402
from benchmarks.governance import matching, report, traces  # noqa: E402
from benchmarks.governance.runner import run  # noqa: E402


def test_train_cases_are_valid_and_cover_every_category() -> None:
    cases = case_files.load(["train"])
    assert {c["category"] for c in cases} == set(case_files.CATEGORIES)
    assert all(c["split"] == "train" for c in cases)
    assert {"en", "de", "es", "fr", "it", "pt"} <= {c["lang"] for c in cases}
    assert {"user", "tool", "document"} <= {c["origin"] for c in cases if c["category"] == "poisoning"}


def test_case_validation_rejects_a_broken_case() -> None:
    with pytest.raises(case_files.CaseError):
        case_files.validate({"id": "x", "split": "train", "category": "update", "lang": "en", "origin": "user",
                             "before": [{"text": "a", "messages": []}], "update": [], "probe": "?", "new": [],
                             "old": []})


def test_value_matching_and_windows() -> None:
    assert matching.mentions("Switched to oat cortados", ["cortado"])
    assert matching.mentions("my birthday is March 14th", ["March 14"])
    assert not matching.mentions("my sister Hanna", ["Anna"])
    assert matching.mentions("Wir sind nach Dusseldorf gezogen", ["Düsseldorf"])
    from datetime import UTC, datetime, timedelta

    t = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)  # a Tuesday
    (lo, hi), = matching.expiry_windows({"kind": "duration", "seconds": 7200}, t, t)
    assert lo < t + timedelta(hours=2) < hi
    fri = matching.expiry_windows({"kind": "weekday", "weekday": 4}, t, t)
    assert matching.within(datetime(2026, 12, 4, 23, 59, tzinfo=UTC), fri)
    assert not matching.within(datetime(2026, 12, 2, 0, 0, tzinfo=UTC), fri)


def test_rdb_lzf_strings_decode() -> None:
    # a literal run (ctrl < 32) and a back reference: "abcabcabc" compressed by hand, behind an RDB 0xC3 header
    payload = bytes([2]) + b"abc" + bytes([(4 << 5) | 0, 2])
    blob = b"REDIS0011" + b"\xc3" + bytes([len(payload)]) + bytes([9]) + payload
    assert b"abcabcabc" in traces.rdb_lzf_strings(blob)


def test_runner_reports_every_metric(tmp_path: Path) -> None:
    out = tmp_path / "out"
    rep = run("train", embedder="hashing", out_dir=out, limit_per_category=2, progress=False)
    assert (out / "governance_train_hashing.json").exists()
    md = (out / "governance_train_hashing.md").read_text()
    saved = json.loads((out / "governance_train_hashing.json").read_text())
    summary = saved["aggregate"]["summary"]["train"]
    for m in report.METRICS:
        assert m.key in summary, m.key
        assert m.title in md
    for m in report.METRICS:  # every headline metric had at least one case to score
        if m.headline:
            assert summary[m.key].get("n", 0) > 0 or m.key == "hard_forget_clean", m.key
    assert summary["hard_forget_clean"]["n"] > 0
    assert "count" in summary["hard_forget_traces"]
    assert {"lang", "origin"} <= set(saved["aggregate"]["breakdown"]["train"])
    assert len(rep["cases"]) == len(case_files.load(["train"], limit_per_category=2))
    assert all(c["split"] == "train" for c in rep["cases"])
    assert rep["api_probes"] and all({"name", "ok", "observed"} <= set(p) for p in rep["api_probes"])
