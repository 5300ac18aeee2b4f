"""Session context in the BM25 channel: a memory's document also holds its session neighbours' words."""

from __future__ import annotations

import json

import numpy as np

from neusym.retrieval.lexical import LexicalIndex


def _top(ix: LexicalIndex, query: str, n: int) -> list[int]:
    pos, _ = ix.search(query, np.ones(n, dtype=bool), n)
    return pos.tolist()


def test_neighbours_words_join_the_document() -> None:
    ix = LexicalIndex()
    ix.add(0, "Did you go to the pottery class?", context_key=("u", None, "s1"), order=1)
    ix.add(1, "Yes, last Friday!", context_key=("u", None, "s1"), order=2)
    ix.add(2, "Unrelated remark about weather", context_key=("u", None, "s2"), order=3)
    ix.add(3, "Standalone pottery fact")  # no session: stands alone
    hits = _top(ix, "pottery class friday", 4)
    assert hits[0] in (0, 1) and set(hits[:2]) == {0, 1}  # the answer turn matches through its question
    assert 2 not in hits  # another session never shares words
    assert 1 in _top(ix, "pottery", 4) and 0 in _top(ix, "friday", 4)


def test_out_of_order_and_retired_memories_do_not_link() -> None:
    ix = LexicalIndex()
    ix.add(0, "alpha", context_key="s", order=5)
    ix.add(1, "beta", context_key="s", order=3)  # older memory re-indexed later: no link
    assert _top(ix, "beta", 2) == [1]
    ix.retire(0)
    ix.add(2, "gamma", context_key="s", order=6)  # the retired tail is forgotten
    assert _top(ix, "alpha", 3) == [0] and _top(ix, "gamma", 3) == [2]


def test_saved_arrays_keep_context_state() -> None:
    ix = LexicalIndex()
    ix.add(0, "first words", context_key=("u", None, "s"), order=1)
    arrays, meta = ix.to_arrays()
    ix2 = LexicalIndex.from_arrays(arrays, json.loads(json.dumps(meta)))
    ix2.add(1, "second", context_key=("u", None, "s"), order=2)  # chains to the loaded tail
    assert set(_top(ix2, "first", 2)) == {0, 1}
    assert set(_top(ix2, "second", 2)) == {0, 1}  # the loaded tail was extended with its successor's words
