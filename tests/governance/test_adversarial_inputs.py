"""Adversarial text through the public reading paths (issue #27 item 3): add, search and forget_preview finish on
long runs of digits, punctuation, whitespace, repeated words, unbroken tokens and non-ASCII text, and what add stored
is there. A hang guard only (generous timeout, no timing assertion): the growth curve is
``benchmarks/adversarial_inputs.py``."""

from __future__ import annotations

import pytest

from benchmarks.adversarial_inputs import KINDS, make_input
from neusym import NeuSymMemory


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_adversarial_inputs_finish(mem: NeuSymMemory) -> None:
    for kind in KINDS:
        text = make_input(kind, 60_000)
        user = f"adv-{kind}"
        added = mem.add(text, user_id=user)
        assert added, kind
        assert all(mem.get(r.id, user_id=user) is not None for r in added), kind
        assert isinstance(mem.search(text, user_id=user, k=3), list), kind
        assert mem.forget_preview(text, user_id=user) is not None, kind


def test_a_long_digit_run_still_reads_its_ttl(mem: NeuSymMemory) -> None:
    """The statement that took 24-38 s: a 4,000-digit number beside a stated duration, TTL still read."""
    text = "My backup code is " + "7" * 4000 + " and it is valid for 2 hours"
    added = mem.add(text, user_id="digits")
    assert added and added[0].expires_at is not None
