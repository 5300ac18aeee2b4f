"""The lexical channel of stage 1: an in-process BM25 index, derived from the graph like FAISS.

Why not the graph's fulltext index: RediSearch and Lucene score differently (FalkorDB's default TF-IDF gave equal
scores to short memories), so recall would depend on the backend. One BM25 here keeps stage 1 identical on every
backend, filters by tenant with the same vectorised masks as FAISS, and is rebuilt or caught up from the graph.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter, OrderedDict
from collections.abc import Hashable
from typing import Any

import numpy as np

from neusym.errors import IndexCorruptionError

__all__ = ["STOPWORDS", "LexicalIndex", "tokenize"]

STOPWORDS = frozenset(
    ["a", "an", "the", "and", "or", "but", "if", "then", "else", "of", "to", "in", "on", "at", "by", "for", "with", "from", "into", "onto", "about", "as", "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "doing", "have", "has", "had", "having", "i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "you", "your", "yours", "he", "him", "his", "she", "her", "hers", "it", "its", "they", "them", "their", "theirs", "this", "that", "these", "those", "there", "here", "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "all", "any", "both", "each", "few", "more", "most", "other", "some", "such", "no", "nor", "not", "only", "own", "same", "so", "than", "too", "very", "s", "t", "can", "will", "just", "don", "should", "now", "would", "could", "shall", "may", "might", "must", "also", "ever", "yet", "up", "down", "out", "over", "under", "again", "further", "once", "get", "got", "let", "lets", "oh", "ok", "okay", "yeah", "yes", "hey", "hi", "hello", "really", "just", "like", "well"]
)

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def _stem(tok: str) -> str:
    """A deliberately tiny suffix stripper: plural/gerund/past forms match their stems, nothing clever."""
    if len(tok) <= 4 or tok.isdigit():
        return tok
    for suf, rep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("edly", ""), ("ed", ""), ("ly", ""), ("es", ""),
                     ("s", "")):
        if tok.endswith(suf) and len(tok) - len(suf) >= 3:
            return tok[: -len(suf)] + rep
    return tok


def tokenize(text: str) -> list[str]:
    return [_stem(t) for t in (m.group(0).lower() for m in _TOKEN.finditer(text)) if t not in STOPWORDS]


_MAX_TAILS = 10_000  # sessions whose last memory is remembered for context chaining (LRU)
_TAIL_SCAN = 16  # how far back a posting list is searched for the previous memory's entry


class LexicalIndex:
    """BM25 (k1=1.2, b=0.75) over positions of a :class:`Catalog`; postings are append-only numpy-cached lists.

    Session context: memories added with the same ``context_key`` (the facade's session: user, agent, session id)
    form a sequence, and each one's document also holds the words of its neighbours in that sequence (the previous
    memory's words at add time, the next one's when it arrives). In a conversation the turn that answers ("Yes, in
    May!") rarely repeats the words of the question it answers, and the turn that asks rarely holds the answer; with
    the neighbours' words both match a query about the exchange. On the LoCoMo dev half this lifts BM25 R@10 from
    59.7 to 68.6. Only the lexical channel does this: the dense vector stays the memory's own meaning.
    """

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        # Postings live in one of two places. Terms written since the last load: Python lists, cheap to append to.
        # Terms as loaded from disk: one packed array pair (``_packed_pos``/``_packed_tf``, rows delimited by
        # ``_packed_offsets``, ``_packed_row`` maps a term to its row). Loading is then a few array reads and one
        # dict, not a list per term (a million memories' postings as lists cost ~1 GB and seconds to build); a
        # packed term moves to the lists when a write touches it.
        self._post_pos: dict[str, list[int]] = {}
        self._post_tf: dict[str, list[int]] = {}
        self._packed_row: dict[str, int] = {}
        self._packed_terms: list[str] = []
        self._packed_offsets = np.zeros(1, dtype=np.int64)
        self._packed_pos = np.zeros(0, dtype=np.int64)
        self._packed_tf = np.zeros(0, dtype=np.int32)
        self._cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._doc_len = np.zeros(0, dtype=np.float32)
        self._live_docs = 0
        self._live_len = 0.0
        # context_key -> (position, own tokens, order) of the newest memory of that sequence
        self._tails: OrderedDict[Hashable, tuple[int, list[str], int]] = OrderedDict()
        self._tail_key: dict[int, Hashable] = {}

    def _lists(self, term: str) -> tuple[list[int], list[int]]:
        """The term's postings as writable lists (moving a loaded term out of the packed arrays)."""
        pos = self._post_pos.get(term)
        if pos is not None:
            return pos, self._post_tf[term]
        row = self._packed_row.pop(term, None)
        if row is None:
            pos_l: list[int] = []
            tf_l: list[int] = []
        else:
            lo, hi = int(self._packed_offsets[row]), int(self._packed_offsets[row + 1])
            pos_l, tf_l = self._packed_pos[lo:hi].tolist(), self._packed_tf[lo:hi].tolist()
        self._post_pos[term] = pos_l
        self._post_tf[term] = tf_l
        return pos_l, tf_l

    def _compact_packed(self) -> None:
        """Drop the packed rows no longer in use (their terms moved to the lists, or emptied by :meth:`prune`)."""
        lengths = np.diff(self._packed_offsets)
        live_rows = np.zeros(len(lengths), dtype=bool)
        if self._packed_row:
            live_rows[np.fromiter(self._packed_row.values(), dtype=np.int64, count=len(self._packed_row))] = True
        live_rows &= lengths > 0
        if live_rows.all():
            return
        in_row = np.repeat(live_rows, lengths)
        self._packed_terms = [self._packed_terms[r] for r in np.flatnonzero(live_rows).tolist()]
        self._packed_pos, self._packed_tf = self._packed_pos[in_row], self._packed_tf[in_row]
        self._packed_offsets = np.concatenate([[0], np.cumsum(lengths[live_rows])]).astype(np.int64)
        self._packed_row = dict(zip(self._packed_terms, range(len(self._packed_terms)), strict=True))

    def postings(self, term: str) -> np.ndarray:
        """Positions whose document holds ``term`` (alive or not): the raw index contents, e.g. to audit that
        forgotten words are gone."""
        found = self._postings(term)
        return found[0].copy() if found is not None else np.zeros(0, dtype=np.int64)

    def add(self, position: int, text: str, *, context_key: Hashable | None = None, order: int | None = None) -> None:
        """Index ``text`` at ``position``. With ``context_key``, chain it to the previous memory of that sequence
        when ``order`` (the memory's nid) is newer than the sequence's tail: re-indexed old memories (an edit, a
        status change) and rebuilds in write order never link out of order."""
        toks = tokenize(text)
        ctx: list[str] = []
        if context_key is not None:
            rank = order if order is not None else position
            tail = self._tails.get(context_key)
            if tail is None or rank > tail[2]:
                if tail is not None:
                    ctx = tail[1]
                    self._extend(tail[0], toks)
                    self._tail_key.pop(tail[0], None)
                self._tails[context_key] = (position, toks, rank)
                self._tails.move_to_end(context_key)
                self._tail_key[position] = context_key
                while len(self._tails) > _MAX_TAILS:
                    _, (old_pos, _, _) = self._tails.popitem(last=False)
                    self._tail_key.pop(old_pos, None)
        doc = toks + ctx
        if position >= len(self._doc_len):
            grown = np.zeros(max(position + 1, 2 * len(self._doc_len), 1024), dtype=np.float32)
            grown[: len(self._doc_len)] = self._doc_len
            self._doc_len = grown
        self._doc_len[position] = len(doc)
        self._live_docs += 1
        self._live_len += len(doc)
        post_pos, post_tf, cache, packed = self._post_pos, self._post_tf, self._cache, self._packed_row
        for term, tf in Counter(doc).items():
            pos = post_pos.get(term)
            if pos is not None:
                pos.append(position)
                post_tf[term].append(tf)
            elif term in packed:
                pos_l, tf_l = self._lists(term)
                pos_l.append(position)
                tf_l.append(tf)
            else:
                post_pos[term] = [position]
                post_tf[term] = [tf]
            cache.pop(term, None)

    def _extend(self, position: int, toks: list[str]) -> None:
        """Add context words to an already indexed (live) document."""
        if not toks or position >= len(self._doc_len):
            return
        self._doc_len[position] += len(toks)
        self._live_len += len(toks)
        for term, tf in Counter(toks).items():
            pos, tfs = self._lists(term)
            for j in range(len(pos) - 1, max(-1, len(pos) - 1 - _TAIL_SCAN), -1):
                if pos[j] == position:
                    tfs[j] += tf
                    break
            else:
                pos.append(position)
                tfs.append(tf)
            self._cache.pop(term, None)

    def retire(self, position: int) -> None:
        """Positions are never reused; a retired position just stops counting in the length statistics."""
        if position < len(self._doc_len):
            self._live_docs = max(0, self._live_docs - 1)
            self._live_len = max(0.0, self._live_len - float(self._doc_len[position]))
        key = self._tail_key.pop(position, None)
        if key is not None:
            self._tails.pop(key, None)

    def _postings(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        cached = self._cache.get(term)
        if cached is not None:
            return cached
        pos = self._post_pos.get(term)
        if pos is not None:
            if not pos:
                return None
            arrays = (np.asarray(pos, dtype=np.int64), np.asarray(self._post_tf[term], dtype=np.float32))
        else:
            row = self._packed_row.get(term)
            if row is None:
                return None
            lo, hi = int(self._packed_offsets[row]), int(self._packed_offsets[row + 1])
            if hi == lo:
                return None
            arrays = (self._packed_pos[lo:hi].astype(np.int64), self._packed_tf[lo:hi].astype(np.float32))
        self._cache[term] = arrays
        return arrays

    def prune(self, alive: np.ndarray) -> int:
        """Drop the postings of positions that are not ``alive`` (deleted memories, superseded versions) and zero
        their lengths, so the words of forgotten text leave the index and its file. Returns postings removed."""
        n = len(alive)

        def keep_of(pos: np.ndarray) -> np.ndarray:
            keep = np.zeros(len(pos), dtype=bool)
            inside = pos < n
            keep[inside] = alive[pos[inside]]
            return keep

        removed = 0
        for term in list(self._post_pos):
            pos = np.asarray(self._post_pos[term], dtype=np.int64)
            keep = keep_of(pos)
            if keep.all():
                continue
            removed += int(len(pos) - keep.sum())
            if keep.any():
                self._post_pos[term] = pos[keep].tolist()
                self._post_tf[term] = np.asarray(self._post_tf[term])[keep].tolist()
            else:
                del self._post_pos[term], self._post_tf[term]
            self._cache.pop(term, None)
        self._compact_packed()
        if len(self._packed_pos):
            keep = keep_of(self._packed_pos)
            if not keep.all():
                removed += int(len(keep) - keep.sum())
                rows = np.repeat(np.arange(len(self._packed_offsets) - 1), np.diff(self._packed_offsets))
                kept_per_row = np.bincount(rows[keep], minlength=len(self._packed_offsets) - 1)
                self._packed_pos, self._packed_tf = self._packed_pos[keep], self._packed_tf[keep]
                self._packed_offsets = np.concatenate([[0], np.cumsum(kept_per_row)]).astype(np.int64)
                for row in np.flatnonzero(kept_per_row == 0).tolist():  # no posting left: the word is gone
                    self._packed_row.pop(self._packed_terms[row], None)
                self._cache.clear()
        dead = np.flatnonzero(~alive[: len(self._doc_len)]) if len(self._doc_len) else np.zeros(0, dtype=np.int64)
        self._doc_len[dead] = 0.0
        return removed

    # ------------------------------------------------------------------ persistence (no pickle: plain arrays)
    def to_arrays(self, *, repack: bool = False) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """The index as numpy arrays plus a JSON-able dict (see :meth:`from_arrays`): every term's postings
        concatenated (``offsets`` delimit them) and the terms as one NUL-separated UTF-8 blob (tokens are runs of
        word characters, so they hold no NUL). Terms without postings are left out.

        ``repack``: afterwards the index itself uses these arrays as its packed postings (the lists are dropped),
        so the next call only has to serialise what was written since, and the lists' memory is returned."""
        written = list(self._post_pos)
        written_len = np.fromiter(map(len, self._post_pos.values()), dtype=np.int64, count=len(written))
        n_written = int(written_len.sum())
        written_pos = np.fromiter(itertools.chain.from_iterable(self._post_pos.values()), dtype=np.int64,
                                  count=n_written)
        written_tf = np.fromiter(itertools.chain.from_iterable(map(self._post_tf.__getitem__, written)),
                                 dtype=np.int64, count=n_written)
        if not written_len.all():  # emptied by prune(): the word is gone, its term too
            written = [t for t, n in zip(written, written_len.tolist(), strict=True) if n]
            written_len = written_len[written_len > 0]
        self._compact_packed()
        terms = written + self._packed_terms
        offsets = np.zeros(len(terms) + 1, dtype=np.int64)
        np.cumsum(np.concatenate([written_len, np.diff(self._packed_offsets)]), out=offsets[1:])
        pos = np.concatenate([written_pos, self._packed_pos.astype(np.int64)])
        tf = np.concatenate([written_tf, self._packed_tf.astype(np.int64)])
        narrow = np.int32 if (not len(pos) or int(pos.max()) < 2**31) else np.int64
        pos, tf = pos.astype(narrow), tf.astype(np.int32)
        if repack:
            self._packed_terms, self._packed_offsets, self._packed_pos, self._packed_tf = terms, offsets, pos, tf
            self._packed_row = dict(zip(terms, range(len(terms)), strict=True))
            self._post_pos, self._post_tf = {}, {}
        tails = [[list(key) if isinstance(key, tuple) else key, p, toks, rank]
                 for key, (p, toks, rank) in self._tails.items()]
        out: dict[str, np.ndarray] = {
            "lex_terms": np.frombuffer("\0".join(terms).encode("utf-8"), dtype=np.uint8),
            "lex_offsets": offsets,
            "lex_pos": pos,
            "lex_tf": tf,
            "lex_doc_len": np.ascontiguousarray(self._doc_len, dtype=np.float32),
        }
        meta: dict[str, Any] = {"k1": self.k1, "b": self.b, "live_docs": self._live_docs,
                                "live_len": self._live_len, "tails": json.dumps(tails)}
        return out, meta

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> LexicalIndex:
        """Rebuild an index saved by :meth:`to_arrays`, checking every structural invariant a search relies on:
        a damaged or hand-made file raises :class:`IndexCorruptionError` instead of failing a search later."""
        try:
            ix = cls(float(meta["k1"]), float(meta["b"]))
            blob, offsets, pos, tf, doc_len = (arrays["lex_terms"], arrays["lex_offsets"], arrays["lex_pos"],
                                               arrays["lex_tf"], arrays["lex_doc_len"])
            terms = blob.tobytes().decode("utf-8").split("\0") if blob.size else []
            if (blob.dtype != np.uint8 or offsets.dtype != np.int64 or pos.dtype.kind != "i" or tf.dtype.kind != "i"
                    or doc_len.dtype != np.float32 or offsets.ndim != 1 or len(offsets) != len(terms) + 1
                    or pos.ndim != 1 or tf.ndim != 1 or doc_len.ndim != 1):
                raise IndexCorruptionError("lexical index arrays have the wrong types or sizes")
            if (offsets[0] != 0 or (len(offsets) > 1 and bool((np.diff(offsets) < 0).any()))
                    or int(offsets[-1]) != len(pos) or len(pos) != len(tf)):
                raise IndexCorruptionError("lexical index postings are inconsistent")
            if len(pos) and (int(pos.min()) < 0 or int(pos.max()) >= len(doc_len)):
                raise IndexCorruptionError("lexical index postings point outside the index")
            if not bool(np.isfinite(doc_len).all()) or (len(doc_len) and float(doc_len.min()) < 0):
                raise IndexCorruptionError("lexical index document lengths are invalid")
            ix._packed_row = dict(zip(terms, range(len(terms)), strict=True))
            if len(ix._packed_row) != len(terms):
                raise IndexCorruptionError("lexical index lists a term twice")
            ix._packed_terms, ix._packed_offsets, ix._packed_pos, ix._packed_tf = terms, offsets, pos, tf
            ix._doc_len = doc_len.copy()  # written to in place by later adds
            ix._live_docs = int(meta["live_docs"])
            ix._live_len = float(meta["live_len"])
            for key, p, toks, rank in json.loads(meta["tails"]):
                if not (isinstance(p, int) and 0 <= p < len(doc_len) and isinstance(rank, int)
                        and isinstance(toks, list) and all(isinstance(t, str) for t in toks)):
                    raise IndexCorruptionError("lexical index session chain is malformed")
                ctx = tuple(key) if isinstance(key, list) else key
                hash(ctx)
                ix._tails[ctx] = (p, toks, rank)
                ix._tail_key[p] = ctx
        except IndexCorruptionError:
            raise
        except (KeyError, TypeError, ValueError, UnicodeDecodeError) as err:
            raise IndexCorruptionError(f"lexical index is unreadable ({type(err).__name__}: {err})") from err
        return ix

    def score_all(self, query: str, mask: np.ndarray) -> np.ndarray | None:
        """BM25 of every position allowed by ``mask`` (0 elsewhere), or None when no query term is indexed."""
        terms = list(dict.fromkeys(tokenize(query)))
        if not terms or self._live_docs == 0:
            return None
        n = len(mask)
        scores = np.zeros(n, dtype=np.float32)
        avgdl = max(self._live_len / max(self._live_docs, 1), 1.0)
        touched = False
        for term in terms:
            post = self._postings(term)
            if post is None:
                continue
            pos, tf = post
            if int(pos.max()) >= n:  # positions the caller's mask does not cover yet (it predates an add)
                keep = pos < n
                pos, tf = pos[keep], tf[keep]
            live = mask[pos]
            df = int(np.count_nonzero(live))
            if df == 0:
                continue
            if df != len(pos):  # score only the allowed postings (all of them for a single-tenant store)
                pos, tf = pos[live], tf[live]
            idf = math.log(1.0 + (self._live_docs - df + 0.5) / (df + 0.5))
            dl = self._doc_len[pos]
            contrib = idf * tf * (self.k1 + 1.0) / (tf + self.k1 * (1.0 - self.b + self.b * dl / avgdl))
            np.add.at(scores, pos, contrib)  # not ``+=``: a context extension can list a position twice
            touched = True
        return scores if touched else None

    @staticmethod
    def top(scores: np.ndarray | None, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best positions of a :meth:`score_all` array, best first, with their scores."""
        if scores is None or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        hits = np.flatnonzero(scores > 0)
        top = hits[np.argpartition(-scores[hits], k - 1)[:k]] if len(hits) > k else hits
        order = top[np.argsort(-scores[top], kind="stable")]
        return order.astype(np.int64), scores[order]

    def search(self, query: str, mask: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` positions allowed by ``mask`` (a boolean array over positions) with their BM25 scores."""
        if k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        return self.top(self.score_all(query, mask), k)
