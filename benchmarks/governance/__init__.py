"""Governance benchmark: functional updates, contradictions, TTL phrases, forget-by-meaning, hard-forget traces and
poisoning, on cases written from the README alone (never from the rules), through the public API only.

``python -m benchmarks.governance --split test`` is the headline; ``train`` is the split tuners may look at.
See ``benchmarks/governance/README.md`` for what each metric observes and why.
"""

from __future__ import annotations

from benchmarks.governance.runner import run

__all__ = ["run"]
