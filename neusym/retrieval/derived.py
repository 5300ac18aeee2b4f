"""Everything stage 1 needs in process, derived from the graph: FAISS, the BM25 index and a scope catalog.

The graph is the source of truth. These structures are a cache of it with a watermark (the graph's write sequence
they reflect). ``catch_up`` applies every change with ``seq > watermark`` (and tombstones); ``rebuild`` starts from
zero. They are saved together (atomic replace) so a crash between a graph write and a save only costs a catch-up.
Several processes sharing one graph stay consistent the same way.

On disk: ``vectors.faiss`` (:meth:`FaissIndex.save`) and ``lexical.npz`` (BM25 + catalog + watermark as plain
numpy arrays and a JSON header, read with ``allow_pickle=False``). Nothing is ever unpickled: a file is data, so a
planted or damaged one can only fail validation, and then the indexes are rebuilt from the graph. Both files are
0600 in a 0700 directory (:mod:`neusym.private_files`). A ``lexical.pkl`` left by an older version is deleted
unread (one rebuild from the graph).
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
import tempfile
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from neusym.errors import (
    DimensionMismatchError,
    IndexCorruptionError,
    IndexPersistenceError,
    StoreDamagedError,
)
from neusym.neural import FaissIndex
from neusym.private_files import private_dir
from neusym.record import Scope
from neusym.retrieval.graph_vectors import GraphBackedIndex, GraphVectorSearch
from neusym.retrieval.lexical import LexicalIndex
from neusym.symbolic.convert import decode_embedding
from neusym.symbolic.executors.aof import accepting_damage
from neusym.symbolic.store import SymbolicStore

__all__ = ["Catalog", "DerivedIndexes", "check_graph_not_behind", "persisted_watermark"]

log = logging.getLogger(__name__)

_SCOPE_CACHE = 16  # (scope, statuses) masks kept between writes
_INDEXED_STATUSES = ("active", "pending", "superseded", "archived", "quarantined")
_STATE_FILE = "lexical.npz"
_LEGACY_FILES = ("lexical.pkl",)  # pickles written by older versions: deleted, never read
# 2: BM25 context words have postings of their own (1 merged them); 3: the catalog knows which memories are
# conversation turns (older files: rebuilt from the graph on open)
_FORMAT = 3
_ZIP_MAGIC = b"PK\x03\x04"


class _Codes:
    """String -> small int codes, so scope masks are vectorised comparisons."""

    def __init__(self) -> None:
        self.codes: dict[str, int] = {}

    def code(self, value: str | None) -> int:
        if value is None:
            return -1
        c = self.codes.get(value)
        if c is None:
            c = len(self.codes)
            self.codes[value] = c
        return c

    def lookup(self, value: str) -> int:
        return self.codes.get(value, -2)  # -2 matches nothing


_KEY_WIDTH = 32  # a memory id (uuid4 hex) fits a fixed-width byte slot; other ids go to Catalog.key_extra


class Catalog:
    """Per-position arrays: nid, memory id, tenant/agent/session codes, status code, alive flag, and whether the
    memory is a conversation turn (it has a speaker: stage 1 reads the scope's shape off its hits to pick the
    candidate depth, see :func:`neusym.retrieval.pipeline.stage1`).

    The memory id is kept so stage 2 can find its candidates through the graph's string index on ``Memory.id``:
    FalkorDB answers an exact string lookup several times faster than a numeric one (measured at 100k memories:
    50 candidates 0.35 ms by id vs 1.3 ms by nid). Ids are fixed-width bytes (32 B each, no Python object per
    memory); an id that does not fit (longer, non-ASCII) lives in ``key_extra``.
    """

    def __init__(self) -> None:
        self.size = 0
        cap = 1024
        self.nid = np.zeros(cap, dtype=np.int64)
        self.key: np.ndarray | None = np.zeros(cap, dtype=f"S{_KEY_WIDTH}")
        self.key_extra: dict[int, str | None] = {}
        self.user = np.full(cap, -1, dtype=np.int32)
        self.agent = np.full(cap, -1, dtype=np.int32)
        self.session = np.full(cap, -1, dtype=np.int32)
        self.status = np.full(cap, -1, dtype=np.int16)
        self.alive = np.zeros(cap, dtype=bool)
        self.turn = np.zeros(cap, dtype=bool)
        self.pos_of: dict[int, int] = {}
        self.version = 0  # bumped by every change, so masks cached by DerivedIndexes.scope_view know they are stale
        self.ids = _Codes()
        self.statuses = _Codes()
        self.live = 0

    _ARRAYS = ("nid", "user", "agent", "session", "status", "alive", "turn")

    def to_arrays(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """The catalog as arrays (its first ``size`` positions) plus a JSON-able dict; see :meth:`from_arrays`."""
        n = self.size
        arrays = {f"cat_{name}": getattr(self, name)[:n] for name in self._ARRAYS}
        if self.key is not None:
            arrays["cat_key"] = self.key[:n]
        meta = {"size": n, "ids": list(self.ids.codes), "statuses": list(self.statuses.codes),
                "key_extra": [[p, k] for p, k in self.key_extra.items()], "has_key": self.key is not None}
        return arrays, meta

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> Catalog:
        """Rebuild a catalog saved by :meth:`to_arrays`. Every invariant the scope masks and stage 2 rely on is
        checked (sizes, types, codes within their tables, one live position per nid): anything else raises
        :class:`IndexCorruptionError`."""
        try:
            cat = cls()
            n = int(meta["size"])
            ids, statuses = list(meta["ids"]), list(meta["statuses"])
            if n < 0 or not all(isinstance(v, str) for v in ids + statuses):
                raise IndexCorruptionError("catalog header is malformed")
            cap = max(1024, n)
            for name in cls._ARRAYS:
                src = arrays[f"cat_{name}"]
                if src.dtype != getattr(cat, name).dtype or src.shape != (n,):
                    raise IndexCorruptionError(f"catalog array {name} has the wrong type or size")
                out = (np.zeros(cap, dtype=src.dtype) if name in ("nid", "alive", "turn")
                       else np.full(cap, -1, src.dtype))
                out[:n] = src
                setattr(cat, name, out)
            for name, table in (("user", ids), ("agent", ids), ("session", ids), ("status", statuses)):
                col = getattr(cat, name)[:n]
                if n and (int(col.min()) < -1 or int(col.max()) >= len(table)):
                    raise IndexCorruptionError(f"catalog column {name} refers to unknown codes")
            if meta["has_key"]:
                key = arrays["cat_key"]
                if key.dtype != np.dtype(f"S{_KEY_WIDTH}") or key.shape != (n,):
                    raise IndexCorruptionError("catalog ids have the wrong type or size")
                cat.key = np.zeros(cap, dtype=key.dtype)
                cat.key[:n] = key
            else:
                cat.key = None
            extra: dict[int, str | None] = {}
            for p, k in meta["key_extra"]:
                if not (isinstance(p, int) and 0 <= p < n and (k is None or isinstance(k, str))):
                    raise IndexCorruptionError("catalog id table is malformed")
                extra[p] = k
            cat.key_extra = extra
            alive_pos = np.flatnonzero(cat.alive[:n])
            nids = cat.nid[alive_pos]
            if len(nids) and (int(nids.min()) < 0 or len(np.unique(nids)) != len(nids)):
                raise IndexCorruptionError("catalog lists a memory twice")
            cat.size = n
            cat.pos_of = dict(zip(nids.tolist(), alive_pos.tolist(), strict=True))
            cat.live = len(alive_pos)
            cat.ids.codes = {v: i for i, v in enumerate(ids)}
            cat.statuses.codes = {v: i for i, v in enumerate(statuses)}
            if len(cat.ids.codes) != len(ids) or len(cat.statuses.codes) != len(statuses):
                raise IndexCorruptionError("catalog code table lists a value twice")
        except IndexCorruptionError:
            raise
        except (KeyError, TypeError, ValueError) as err:
            raise IndexCorruptionError(f"catalog is unreadable ({type(err).__name__}: {err})") from err
        return cat

    def _grow(self) -> None:
        cap = len(self.nid) * 2
        for name in ("nid", "key", "user", "agent", "session", "status", "alive", "turn"):
            old = getattr(self, name)
            if old is None:
                continue
            new = (np.zeros(cap, dtype=old.dtype) if name in ("nid", "key", "alive", "turn")
                   else np.full(cap, -1, dtype=old.dtype))
            new[: len(old)] = old
            setattr(self, name, new)

    def put(self, nid: int, user: str | None, agent: str | None, session: str | None, status: str,
            key: str | None = None, turn: bool = False) -> int:
        if self.size >= len(self.nid):
            self._grow()
        pos = self.size
        self.size += 1
        self.nid[pos] = nid
        if self.key is not None:
            if key is not None and len(key) <= _KEY_WIDTH and key.isascii() and key.isprintable():
                self.key[pos] = key.encode("ascii")
            else:
                self.key_extra[pos] = key
        self.user[pos] = self.ids.code(user)
        self.agent[pos] = self.ids.code(agent)
        self.session[pos] = self.ids.code(session)
        self.status[pos] = self.statuses.code(status)
        self.alive[pos] = True
        self.turn[pos] = turn
        self.pos_of[nid] = pos
        self.live += 1
        self.version += 1
        return pos

    def set_status(self, pos: int, status: str) -> None:
        self.status[pos] = self.statuses.code(status)
        self.version += 1

    def retire(self, nid: int) -> int | None:
        pos = self.pos_of.pop(nid, None)
        if pos is not None:
            self.alive[pos] = False
            self.live -= 1
            self.key_extra.pop(pos, None)
            self.version += 1
        return pos

    def keys_of(self, nids: list[int]) -> list[str] | None:
        """The memory ids of live ``nids``, or None when any is unknown (the caller then looks up by nid)."""
        if self.key is None:
            return None
        out: list[str] = []
        pos_of, extra, key = self.pos_of, self.key_extra, self.key
        for nid in nids:
            pos = pos_of.get(nid)
            if pos is None:
                return None
            if pos in extra:
                k = extra[pos]
                if k is None:
                    return None
                out.append(k)
            else:
                out.append(key[pos].decode("ascii"))
        return out

    def mask(self, scope: Scope, statuses: list[str] | None) -> np.ndarray:
        n = self.size
        m = self.alive[:n].copy()
        for arr, value in ((self.user, scope.user_id), (self.agent, scope.agent_id), (self.session, scope.session_id)):
            if value is not None:
                m &= arr[:n] == self.ids.lookup(value)
        if statuses is not None:
            codes = [self.statuses.codes[s] for s in dict.fromkeys(statuses) if s in self.statuses.codes]
            if not codes:
                m[:] = False
            elif len(codes) <= 3:  # the usual one or two statuses: comparisons beat isin's sort
                status = self.status[:n]
                hit = status == codes[0]
                for c in codes[1:]:
                    hit |= status == c
                m &= hit
            else:
                m &= np.isin(self.status[:n], np.asarray(codes, dtype=np.int16))
        return m


class DerivedIndexes:
    """FAISS + BM25 + catalog, with a watermark into the graph's write sequence."""

    def __init__(self, dimension: int, path: Path | None, *, model: str, faiss_kind: str = "auto",
                 graph_vectors: GraphVectorSearch | None = None, background_upgrade: bool = True) -> None:
        self.dimension = dimension
        self.path = path
        self.model = model
        self.faiss_kind = faiss_kind
        # neural_backend="neo4j_vector": the vectors stay in the graph and ``faiss`` is a stand-in that asks it
        self.graph_vectors = graph_vectors
        self.background_upgrade = background_upgrade
        self.lock = threading.RLock()
        self._dir_known = False  # the index directory existed for this object (loaded from or saved to)
        self._reset()

    @property
    def vector_home(self) -> str:
        """Where the vectors live: ``faiss`` (in this process) or ``graph`` (the native vector index)."""
        return "faiss" if self.graph_vectors is None else "graph"

    def _new_vector_index(self) -> FaissIndex:
        if self.graph_vectors is not None:
            return GraphBackedIndex(self.dimension, self.graph_vectors)
        return FaissIndex(self.dimension, kind=self.faiss_kind)  # type: ignore[arg-type]

    def _reset(self) -> None:
        old = getattr(self, "faiss", None)
        if old is not None:
            old.cancel_upgrade()  # a background HNSW build of contents being thrown away
        self.faiss = self._new_vector_index()
        self.lexical = LexicalIndex()
        self.catalog = Catalog()
        self._scope_cache: dict[tuple[Any, ...], tuple[tuple[int, int], np.ndarray, np.ndarray | None, int]] = {}
        self.watermark = 0
        self.dirty = 0
        self._verify_pending = False  # set by load(): check the loaded state against the graph once

    def _maybe_upgrade(self) -> None:
        """Past ``hnsw_threshold`` an "auto" FAISS index becomes HNSW in a background thread (see
        :meth:`FaissIndex.upgrade_in_background`): the write that crosses the threshold does not pay the build,
        and searches keep using the flat index until the graph is swapped in. The next save persists it."""
        if self.background_upgrade and self.faiss.upgrade_due:
            self.faiss.upgrade_in_background()

    # ------------------------------------------------------------------ persistence
    def _files(self) -> tuple[Path, Path]:
        assert self.path is not None
        return self.path / "vectors.faiss", self.path / _STATE_FILE

    def _sweep_temp_files(self) -> None:
        """Delete temp files of saves that died half-way (a crash leaves a whole FAISS copy behind otherwise).
        Their names carry the writer's pid: a live writer's file is left alone."""
        assert self.path is not None
        if not self.path.is_dir():
            return
        for tmp in [*self.path.glob(".lexical.*"), *self.path.glob(".vectors.faiss.*.tmp")]:
            part = tmp.name.split(".")[2] if tmp.name.startswith(".lexical.") else tmp.name.split(".")[3]
            if not part.isdigit() or int(part) == os.getpid():
                continue  # an old-style name (no pid) or this process's own: leave it
            try:
                os.kill(int(part), 0)
            except ProcessLookupError:
                tmp.unlink(missing_ok=True)
                log.info("removed %s, left by a save that did not finish", tmp.name)
            except OSError:
                continue

    def _remove_legacy_files(self) -> None:
        """Pickled state of older versions is never read (unpickling runs code): delete it; the state it held is
        rebuilt from the graph."""
        assert self.path is not None
        for name in _LEGACY_FILES:
            legacy = self.path / name
            if legacy.exists() or legacy.is_symlink():
                try:
                    legacy.unlink()
                    log.warning("deleted %s unread (pickle is no longer used); the index is rebuilt from the graph",
                                legacy)
                except OSError as err:
                    log.warning("could not delete the legacy pickle %s (%s); it is ignored", legacy, err)

    def load(self) -> bool:
        """Load the persisted state; on any corruption start empty (the caller catches up from the graph)."""
        if self.path is None:
            return False
        self._sweep_temp_files()
        self._remove_legacy_files()
        faiss_file, state_file = self._files()
        self._dir_known = self.path.is_dir()
        if not faiss_file.exists() or not state_file.exists():
            return False
        try:
            index, watermark, meta = FaissIndex.load(str(faiss_file))
            state_watermark, lexical, catalog = _read_state(state_file)
            if state_watermark != watermark:
                raise IndexCorruptionError("FAISS and lexical index watermarks differ")
            if meta.get("model") != self.model or meta.get("dimension") != self.dimension:
                log.warning("embedding model changed (%s -> %s): rebuilding the index from the graph",
                            meta.get("model"), self.model)
                return False
            if meta.get("vectors", "faiss") != self.vector_home:  # a FAISS file saved in the other mode is empty
                log.warning("neural backend changed (%s -> %s): rebuilding the index from the graph",
                            meta.get("vectors", "faiss"), self.vector_home)
                return False
            if self.graph_vectors is not None:
                index = self._new_vector_index()
        except (IndexCorruptionError, OSError) as err:
            log.warning("derived index at %s is unreadable (%s); rebuilding from the graph", self.path, err)
            self._reset()
            return False
        self.faiss = index
        self._maybe_upgrade()  # a flat "auto" index saved past the threshold (e.g. before the upgrade finished)
        self.lexical = lexical
        self.catalog = catalog
        self._scope_cache = {}
        self.watermark = int(watermark)
        self._verify_pending = True
        return True

    def save(self) -> None:
        """Persist FAISS + BM25 + catalog atomically. A full or read-only disk raises :class:`IndexPersistenceError`
        (with ``graph_committed`` when there were unsaved changes: the graph writes behind them are committed, and
        the files catch up on the next open)."""
        if self.path is None:
            return
        committed = self.dirty > 0  # changes read from (or written to) the graph that the files do not hold yet
        try:
            self._save()
        except OSError as err:
            done = ("the graph write this call made IS committed: do not repeat the call; " if committed else "")
            msg = (f"could not save the derived indexes in {self.path} ({err.strerror or err}); {done}the graph "
                   "holds every change, the indexes in memory serve it, and the next open catches the files up")
            failure = (IndexPersistenceError(err.errno, msg) if err.errno is not None
                       else IndexPersistenceError(msg))
            failure.graph_committed = committed
            raise failure from err

    def _save(self) -> None:
        assert self.path is not None
        with self.lock:
            if self._dir_known and not self.path.is_dir():
                # deleted under an open memory (a test's tmp dir, a worker's scratch space): recreating it would
                # litter a removed tree, and the next open rebuilds these caches from the graph anyway
                log.warning("index directory %s was deleted while open: not saving the derived indexes", self.path)
                self.dirty = 0
                return
            private_dir(self.path)
            self._dir_known = True
            faiss_file, state_file = self._files()
            # lexical first, FAISS last: load() refuses a pair whose watermarks differ, so a crash in between is a
            # catch-up, never a silently inconsistent pair.
            with _gc_paused():
                lex_arrays, lex_meta = self.lexical.to_arrays(repack=True)
                cat_arrays, cat_meta = self.catalog.to_arrays()
            header = {"format": _FORMAT, "watermark": self.watermark, "lexical": lex_meta, "catalog": cat_meta}
            arrays = {**lex_arrays, **cat_arrays,
                      "header": np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)}
            fd, tmp = tempfile.mkstemp(dir=self.path, prefix=f".lexical.{os.getpid()}.")  # created 0600
            try:
                with os.fdopen(fd, "wb") as fh:
                    np.savez(fh, allow_pickle=False, **arrays)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, state_file)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
            self.faiss.save(str(faiss_file), watermark=self.watermark,
                            meta={"model": self.model, "dimension": self.dimension, "vectors": self.vector_home})
            self.dirty = 0

    # ------------------------------------------------------------------ sync
    def apply(self, rows: list[dict[str, Any]]) -> None:
        """Apply changed memory rows (from the graph or from this process's own writes)."""
        with self.lock:
            vec_ids: list[int] = []
            vecs: list[np.ndarray] = []
            for r in rows:
                nid = int(r["nid"])
                status = r.get("status") or "active"
                old = self.catalog.retire(nid)
                if old is not None:
                    self.lexical.retire(old)
                if status not in _INDEXED_STATUSES:
                    self.faiss.remove(np.asarray([nid], dtype=np.int64))
                    continue
                pos = self.catalog.put(nid, r.get("user_id"), r.get("agent_id"), r.get("session_id"), status,
                                       r.get("id"), turn=r.get("speaker") is not None)
                session = r.get("session_id")
                # memories of one session are a sequence (a conversation): the lexical document of each also holds
                # its neighbours' words (see LexicalIndex); memories without a session stand alone
                self.lexical.add(pos, r.get("content") or "", order=nid,
                                 context_key=(r.get("user_id"), r.get("agent_id"), session) if session else None)
                emb = r.get("embedding")
                if emb is not None:
                    v = decode_embedding(emb) if isinstance(emb, str) else np.asarray(emb, dtype=np.float32)
                    if v.shape[0] != self.dimension:
                        raise DimensionMismatchError(
                            f"memory {r.get('id')} has a {v.shape[0]}-d embedding; the index is {self.dimension}-d: "
                            "the store holds vectors of another width (written with another embedder). Re-embed "
                            "it: NeuSymMemory(..., reembed=True) or `neusym reindex --reembed` converts every "
                            "memory's vector, whatever its width"
                        )
                    vec_ids.append(nid)
                    vecs.append(v)
            if vec_ids:
                self.faiss.add(np.asarray(vec_ids, dtype=np.int64), np.vstack(vecs).astype(np.float32))
                self._maybe_upgrade()
            self.dirty += len(rows)

    def advance(self, seqs: list[int]) -> None:
        """Move the watermark over this process's own contiguous writes; a gap means another process wrote in
        between, and only a catch-up may move past it."""
        if seqs and min(seqs) == self.watermark + 1 and max(seqs) - min(seqs) == len(seqs) - 1:
            self.watermark = max(seqs)

    def remove(self, nids: list[int], seq: int | None = None) -> None:
        with self.lock:
            for nid in nids:
                pos = self.catalog.retire(int(nid))
                if pos is not None:
                    self.lexical.retire(pos)
            if nids:
                self.faiss.remove(np.asarray(nids, dtype=np.int64))
            if seq is not None:
                self.watermark = max(self.watermark, seq)
            self.dirty += len(nids)

    def catch_up(self, store: SymbolicStore, *, batch: int = 5000) -> int:
        """Bring the indexes up to the graph's current sequence. Returns the number of changes applied."""
        with self.lock:
            upto = store.counter()
            if upto < self.watermark:
                # the sequence went backwards: the graph lost writes these indexes saw (emptied, or its files
                # damaged, under an open memory). Never serve (or save over) a shortened store: see
                # check_graph_not_behind for the open-time check and the way to accept it
                err = _behind(upto, self.watermark, self.path)
                _mark_damaged(store, err)
                raise err
            if self._verify_pending and self.watermark and not self._agrees_with(store):
                # a graph emptied and refilled up to (or past) the same sequence: the numbers match, the memories
                # do not, and this index would score other memories' vectors and words under their nids
                log.warning("the index's newest changes do not match the graph's (graph replaced?): rebuilding")
                self._reset()
            self._verify_pending = False
            if upto <= self.watermark:
                return 0
            since = self.watermark
            applied = 0
            for t in store.tombstones_since(since, upto):
                self.remove([int(t["nid"])])
                applied += 1
            cursor = since
            while True:
                rows = store.changes_since(cursor, upto, limit=batch)
                if not rows:
                    break
                self.apply(rows)
                applied += len(rows)
                cursor = int(rows[-1]["seq"])
                if len(rows) < batch:
                    break
            self.watermark = upto
            if applied:
                log.info("caught up %d change(s) from the graph (watermark %d)", applied, upto)
            return applied

    def _agrees_with(self, store: SymbolicStore, sample: int = 8) -> bool:
        """Whether the graph's memories changed last before the watermark are the ones this index recorded: each
        row found is that memory's current state, so it must be in the catalog (if its status is indexed) under
        the same id."""
        rows = store.changes_since(max(self.watermark - sample, 0), self.watermark, limit=sample)
        for r in rows:
            nid = int(r["nid"])
            indexed = (r.get("status") or "active") in _INDEXED_STATUSES
            if (nid in self.catalog.pos_of) != indexed:
                return False
            if indexed and self.catalog.key is not None:
                key = self.catalog.keys_of([nid])
                if key is not None and key != [r.get("id")]:
                    return False
        return True

    def rebuild(self, store: SymbolicStore) -> int:
        with self.lock:
            self._reset()
            return self.catch_up(store)

    # ------------------------------------------------------------------ stage 1 helpers
    def allowed(self, scope: Scope, statuses: list[str] | None) -> tuple[np.ndarray, np.ndarray | None]:
        """(position mask, FAISS allow-list of nids or None when everything alive is allowed)."""
        mask, allow, _ = self.scope_view(scope, statuses)
        return mask, allow

    def scope_view(self, scope: Scope, statuses: list[str] | None) -> tuple[np.ndarray, np.ndarray | None, int]:
        """:meth:`allowed` plus how many positions the mask allows. Both arrays are read-only.

        Cached per (scope, statuses) until the next change to the catalog or FAISS: building the mask is a few
        passes over every position (~0.5 ms at 100k memories), and a run of searches between two writes (the
        common case) would rebuild the same mask each time.
        """
        with self.lock:  # a concurrent apply() grows the catalog between the mask and the nid lookup
            key = (scope.user_id, scope.agent_id, scope.session_id, None if statuses is None else tuple(statuses))
            state = (self.catalog.version, len(self.faiss))
            hit = self._scope_cache.get(key)
            if hit is not None and hit[0] == state:
                return hit[1], hit[2], hit[3]
            mask = self.catalog.mask(scope, statuses)
            count = int(mask.sum())
            allow = (None if count == self.catalog.live and count == len(self.faiss)
                     else self.catalog.nid[: self.catalog.size][mask])
            mask.flags.writeable = False
            if allow is not None:
                allow.flags.writeable = False
            if len(self._scope_cache) >= _SCOPE_CACHE:
                self._scope_cache.pop(next(iter(self._scope_cache)))
            self._scope_cache[key] = (state, mask, allow, count)
            return mask, allow, count


def persisted_watermark(path: Path | None) -> int | None:
    """The watermark saved in ``path`` (the graph write sequence the indexes there reflect), read from the header of
    ``lexical.npz`` alone; None when there are no saved indexes or they are unreadable (they are rebuilt anyway)."""
    if path is None or not (path / "vectors.faiss").is_file():
        return None
    try:
        with np.load(path / _STATE_FILE, allow_pickle=False) as bundle:
            header = json.loads(bundle["header"].tobytes().decode("utf-8"))
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, UnicodeDecodeError):
        return None
    watermark = header.get("watermark") if isinstance(header, dict) else None
    return watermark if isinstance(watermark, int) and not isinstance(watermark, bool) and watermark >= 0 else None


def _behind(counter: int, watermark: int, path: Path | None) -> StoreDamagedError:
    where = str(path) if path is not None else "the derived indexes"
    return StoreDamagedError(
        f"the graph's write sequence {counter} is behind the {watermark} its derived indexes saw: the graph lost "
        f"{watermark - counter} write(s) it had acknowledged (its files damaged or deleted, or it was replaced by "
        "an older copy)",
        files=[where],
        recovery=("put back the graph's files (or database) from a backup, or restore an export (`neusym restore "
                  "FILE`); to accept the graph as it is now, open it once with NEUSYM_ACCEPT_DAMAGE=1 (the indexes "
                  f"are moved to {where}.stale-<time> and rebuilt from the graph)"))


def _mark_damaged(store: SymbolicStore, err: StoreDamagedError) -> None:
    mark = getattr(store.executor, "mark_damaged", None)
    if callable(mark):
        mark(str(err).splitlines()[0], err.files)


def check_graph_not_behind(store: SymbolicStore, path: Path | None) -> None:
    """Refuse (:class:`StoreDamagedError`) to open a graph whose write sequence is behind the watermark its saved
    indexes reflect: the graph lost acknowledged writes, and opening it would rebuild the indexes over a shortened
    store and save over the evidence. Run before anything writes to the graph. With ``NEUSYM_ACCEPT_DAMAGE=1`` the
    indexes are moved aside instead (``<path>.stale-<time>``) and the open rebuilds them from the graph."""
    watermark = persisted_watermark(path)
    if watermark is None or path is None:
        return
    counter = store.counter()
    if counter >= watermark:
        return
    err = _behind(counter, watermark, path)
    if not accepting_damage():
        _mark_damaged(store, err)
        raise err
    stale = path.with_name(f"{path.name}.stale-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    os.replace(path, stale)
    log.warning("%s; accepted (NEUSYM_ACCEPT_DAMAGE): the indexes were moved to %s and are rebuilt from the graph",
                str(err).splitlines()[0], stale)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Converting between arrays and the index's dicts creates hundreds of thousands of small objects; with a
    large index already in memory each automatic full collection walks all of it (measured: over half of a
    100k-memory save/load). The objects made here form no cycles, so collection can wait until the end."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _read_state(path: Path) -> tuple[int, LexicalIndex, Catalog]:
    """Read ``lexical.npz``: a zip of plain ``.npy`` arrays, loaded with ``allow_pickle=False`` (numpy then refuses
    object arrays and pickles outright). Anything unexpected raises :class:`IndexCorruptionError`."""
    with open(path, "rb") as fh:
        if fh.read(len(_ZIP_MAGIC)) != _ZIP_MAGIC:
            raise IndexCorruptionError(f"{path.name} is not a NeuSym index file")
    try:
        with np.load(path, allow_pickle=False) as bundle:
            arrays = {name: bundle[name] for name in bundle.files}
        header = json.loads(arrays.pop("header").tobytes().decode("utf-8"))
        if isinstance(header, dict) and header.get("format") == 1:
            raise IndexCorruptionError(f"{path.name} was written by an older version (BM25 context merged into the "
                                       "postings)")
        if isinstance(header, dict) and header.get("format") == 2:
            raise IndexCorruptionError(f"{path.name} was written by an older version (no conversation-turn flags)")
        if not isinstance(header, dict) or header.get("format") != _FORMAT:
            raise IndexCorruptionError(f"{path.name} has an unknown format")
        watermark = header["watermark"]
        if isinstance(watermark, bool) or not isinstance(watermark, int) or watermark < 0:
            raise IndexCorruptionError(f"{path.name} has a bad watermark")
        with _gc_paused():
            lexical = LexicalIndex.from_arrays(arrays, header["lexical"])
            catalog = Catalog.from_arrays(arrays, header["catalog"])
    except IndexCorruptionError:
        raise
    except (ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile, UnicodeDecodeError) as err:
        raise IndexCorruptionError(f"{path.name} is unreadable ({type(err).__name__}: {err})") from err
    return watermark, lexical, catalog
