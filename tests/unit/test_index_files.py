"""The BM25 index and the scope catalog saved as plain arrays (no pickle) behave exactly like the originals, also
after writes, context extensions and pruning on the loaded side, and a second save/load."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from neusym.errors import IndexCorruptionError
from neusym.record import Scope
from neusym.retrieval.derived import Catalog
from neusym.retrieval.lexical import LexicalIndex

WORDS = [f"w{i}" for i in range(60)] + ["tea", "green", "parcel", "desk", "ünïcode", "日本"]


def _doc(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9)))


def _roundtrip(ix: LexicalIndex) -> LexicalIndex:
    arrays, meta = ix.to_arrays()
    return LexicalIndex.from_arrays({k: np.array(v) for k, v in arrays.items()}, json.loads(json.dumps(meta)))


def _same(a: LexicalIndex, b: LexicalIndex, n: int, rng: random.Random) -> None:
    mask = np.ones(n, dtype=bool)
    mask[rng.sample(range(n), n // 4)] = False
    for _ in range(25):
        q = _doc(rng)
        sa, sb = a.score_all(q, mask), b.score_all(q, mask)
        assert (sa is None) == (sb is None), q
        if sa is not None and sb is not None:
            np.testing.assert_allclose(sa, sb, rtol=1e-6, err_msg=q)


@pytest.mark.parametrize("seed", range(6))
def test_loaded_lexical_index_matches_the_original_through_writes_and_pruning(seed: int) -> None:
    rng = random.Random(seed)
    original = LexicalIndex()
    n = 0
    for _ in range(200):
        key = ("u", None, f"s{rng.randint(0, 12)}") if rng.random() < 0.7 else None
        original.add(n, _doc(rng), context_key=key, order=n)
        n += 1
    loaded = _roundtrip(original)
    _same(original, loaded, n, rng)
    for _ in range(80):  # writes touching loaded terms (moved out of the packed arrays) and new ones
        key = ("u", None, f"s{rng.randint(0, 12)}") if rng.random() < 0.7 else None
        text = _doc(rng)
        for ix in (original, loaded):
            ix.add(n, text, context_key=key, order=n)
        if rng.random() < 0.2:
            victim = rng.randrange(n)
            original.retire(victim)
            loaded.retire(victim)
        n += 1
    _same(original, loaded, n, rng)
    loaded.to_arrays(repack=True)  # what every save does: the written lists become the packed arrays
    _same(original, loaded, n, rng)
    for _ in range(20):
        text = _doc(rng)
        for ix in (original, loaded):
            ix.add(n, text, context_key=("u", None, "s1"), order=n)
        n += 1
    _same(original, loaded, n, rng)
    alive = np.array([rng.random() < 0.7 for _ in range(n)])
    assert original.prune(alive) == loaded.prune(alive)
    _same(original, loaded, n, rng)
    again = _roundtrip(loaded)
    _same(original, again, n, rng)
    for term in WORDS:
        assert set(original.postings(term).tolist()) == set(again.postings(term).tolist()), term


def test_pruned_words_leave_the_saved_file() -> None:
    ix = LexicalIndex()
    ix.add(0, "secret address oslo")
    ix.add(1, "coffee order")
    loaded = _roundtrip(ix)
    loaded.prune(np.array([False, True]))
    arrays, meta = loaded.to_arrays()
    blob = arrays["lex_terms"].tobytes() + json.dumps(meta).encode()
    assert b"oslo" not in blob and b"secret" not in blob and b"coffee" in blob


def test_catalog_round_trip_keeps_masks_ids_and_positions() -> None:
    cat = Catalog()
    for i in range(3000):
        cat.put(i + 10, f"u{i % 7}", None if i % 3 else "agent", f"s{i % 11}", ["active", "archived"][i % 2],
                f"{i:032x}" if i % 50 else f"long-id-{i}-" + "x" * 40)
        if i % 9 == 0:
            cat.retire(i + 10)
    arrays, meta = cat.to_arrays()
    again = Catalog.from_arrays(arrays, json.loads(json.dumps(meta)))
    assert again.pos_of == cat.pos_of and again.live == cat.live and again.size == cat.size
    for scope in (Scope(user_id="u3"), Scope(user_id="u1", agent_id="agent"), Scope(user_id="u2", session_id="s4")):
        for statuses in (None, ["active"], ["archived", "active"]):
            assert np.array_equal(cat.mask(scope, statuses), again.mask(scope, statuses))
    nids = list(cat.pos_of)[:200]
    assert again.keys_of(nids) == cat.keys_of(nids)
    pos = again.put(99999, "u1", None, None, "active", "new")  # still writable past the loaded size
    assert again.pos_of[99999] == pos == cat.size


@pytest.mark.parametrize("damage", ["offsets", "pos", "terms", "doc_len", "tails"])
def test_damaged_lexical_arrays_are_refused(damage: str) -> None:
    ix = LexicalIndex()
    ix.add(0, "alpha beta", context_key=("u", None, "s"), order=0)
    ix.add(1, "beta gamma", context_key=("u", None, "s"), order=1)
    arrays, meta = ix.to_arrays()
    arrays = {k: np.array(v) for k, v in arrays.items()}
    if damage == "offsets":
        arrays["lex_offsets"] = arrays["lex_offsets"][::-1].copy()
    elif damage == "pos":
        arrays["lex_pos"] = arrays["lex_pos"] + 10**6  # past every document
    elif damage == "terms":
        arrays["lex_terms"] = np.frombuffer(b"a\0a\0a\0a", dtype=np.uint8)
    elif damage == "doc_len":
        arrays["lex_doc_len"] = np.full_like(arrays["lex_doc_len"], np.nan)
    else:
        meta = {**meta, "tails": json.dumps([[["u"], 10**6, ["x"], 1]])}
    with pytest.raises(IndexCorruptionError):
        LexicalIndex.from_arrays(arrays, meta)
