"""``python -m benchmarks.governance [--split train|test|both] [--llm scripted] [--embedder hashing] [--out DIR]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.governance.cases import CATEGORIES
from benchmarks.governance.report import markdown
from benchmarks.governance.runner import run


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.governance", description=__doc__)
    p.add_argument("--split", choices=("train", "test", "both"), default="test",
                   help="test is the headline; tune only on train (default: test)")
    p.add_argument("--llm", choices=("none", "scripted"), default="none",
                   help="scripted: a constant fake chat model drives the LLM steps (proves plumbing only)")
    p.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm",
                   help="minilm (default, the headline) or hashing (fast smoke runs only)")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/governance"))
    p.add_argument("--categories", default="", help=f"comma list of {', '.join(CATEGORIES)} (default: all)")
    p.add_argument("--limit", type=int, default=None, help="first N cases per category (smoke runs)")
    p.add_argument("--keep-data", action="store_true", help="keep the temporary data directory for inspection")
    p.add_argument("--test-details", action="store_true",
                   help="also write held-out cases' texts to the JSON (for the split's owner; never when tuning)")
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args(argv)
    cats = [c.strip() for c in a.categories.split(",") if c.strip()] or None
    report = run(a.split, llm=a.llm, out_dir=a.out, embedder=a.embedder, categories=cats,
                 limit_per_category=a.limit, keep_data=a.keep_data, progress=not a.quiet,
                 test_details=a.test_details)
    if not a.quiet:
        print(markdown(report).split("\n## ")[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
