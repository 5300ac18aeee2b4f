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


def test_context_words_can_be_left_out_per_query() -> None:
    ix = LexicalIndex()
    ix.add(0, "Did you go to the pottery class?", context_key="s", order=1)
    ix.add(1, "Yes, last Friday!", context_key="s", order=2)
    ix.add(2, "I bought new pottery glaze", context_key="t", order=3)
    mask = np.ones(3, dtype=bool)
    with_ctx, _ = ix.search("pottery", mask, 3)
    plain, plain_scores = ix.search("pottery", mask, 3, context=False)
    assert set(with_ctx.tolist()) == {0, 1, 2}  # the reply matches through its question
    assert set(plain.tolist()) == {0, 2} and len(plain_scores) == 2  # own words only
    solo = LexicalIndex()  # plain BM25 equals an index that never had context
    solo.add(0, "Did you go to the pottery class?")
    solo.add(1, "Yes, last Friday!")
    solo.add(2, "I bought new pottery glaze")
    expect = solo.score_all("pottery glaze", mask)
    got = ix.score_all("pottery glaze", mask, context=False)
    assert expect is not None and got is not None
    assert np.allclose(expect, got)
    arrays, meta = ix.to_arrays(repack=True)  # the split survives a save and a reload
    back = LexicalIndex.from_arrays(arrays, json.loads(json.dumps(meta)))
    assert np.allclose(back.score_all("pottery glaze", mask, context=False), got)  # type: ignore[arg-type]
    assert np.allclose(back.score_all("pottery friday", mask), ix.score_all("pottery friday", mask))  # type: ignore[arg-type]


def test_ties_are_cut_by_position_so_a_top_k_is_a_prefix_of_a_deeper_one() -> None:
    scores = np.array([0, 1, 1, 1, 2, 0, 1, 3], dtype=np.float32)
    deep, _ = LexicalIndex.top(scores, 6)
    assert deep.tolist() == [7, 4, 1, 2, 3, 6]
    for k in range(1, 7):
        assert LexicalIndex.top(scores, k)[0].tolist() == deep[:k].tolist()


def test_prune_forgets_a_dead_memory_in_its_neighbours_context() -> None:
    ix = LexicalIndex()
    ix.add(0, "We adopted a beagle named Pixel", context_key="s", order=1)
    ix.add(1, "Congratulations!", context_key="s", order=2)
    ix.add(2, "Lunch was nice", context_key="s", order=3)
    mask = np.array([True, True, True])
    assert set(ix.search("beagle", mask, 3)[0].tolist()) == {0, 1}
    arrays, meta = ix.to_arrays(repack=True)  # loaded postings and context sources are pruned as well
    ix = LexicalIndex.from_arrays(arrays, json.loads(json.dumps(meta)))
    alive = np.array([False, True, True])  # memory 0 forgotten
    ix.retire(0)
    assert ix.prune(alive) > 0
    assert ix.search("beagle", alive, 3)[0].tolist() == []  # not even through the reply's context
    assert ix.postings("beagle").tolist() == [] and ix.postings("pixel").tolist() == []
    assert set(ix.search("lunch", alive, 3)[0].tolist()) == {1, 2}  # own words, and the live neighbour
    assert set(ix.search("congratulations", alive, 3)[0].tolist()) == {1, 2}  # live context stays
