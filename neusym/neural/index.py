"""The dense-vector half of NeuSym: a cosine FAISS index addressed by the int64 ``nid`` of each memory.

Design choices, and why:

* **We keep the id map ourselves** (a numpy ``slot -> id`` array plus a ``dict`` for ``id -> slot``) instead of
  ``faiss.IndexIDMap2``. HNSW cannot delete, so deletions must be tombstones on *slots*; with ``IndexIDMap2`` an
  overwritten id would own two slots (old and new vector) and a tombstone keyed by id would hide both.
* **Deletion is a tombstone for both structures**, filtered at search time with an ``IDSelectorBitmap`` (one bit per
  slot, built with numpy, cached until the next write). Flat indexes compact themselves automatically once more
  than a quarter of the slots are dead (a rebuild is a cheap memcpy, so that stays amortised O(1) per delete).
  HNSW indexes never rebuild on their own, because rebuilding a large graph takes minutes: they report
  :attr:`FaissIndex.needs_compaction` and the owner calls :meth:`FaissIndex.compact` at a quiet moment.
* **Overwrites of a flat index are done in place** in faiss' vector storage (no tombstone at all); an HNSW
  overwrite tombstones the old slot, since its graph links were chosen for the old vector.
* **Allow-lists** (scope filtering) become a one-bit-per-slot ``IDSelectorBitmap`` passed to faiss (a flat scan
  with a selector only computes the dot products of allowed vectors). Tiny lists skip that O(n) pass and score the
  few vectors directly. For HNSW, a selective list (at most 5% of the index, or 4,096 vectors) is answered by an
  exact filtered scan of the HNSW's flat storage instead of the graph, because a filtered graph walk loses recall
  and returns fewer than ``k`` hits when most nodes are filtered out.
* ``kind="auto"`` starts flat (exact, no build cost, best below ~50k vectors) and becomes HNSW past
  ``hnsw_threshold``, never in the middle of a write or a search: :meth:`FaissIndex.upgrade_in_background` builds
  the HNSW graph from a snapshot in a daemon thread (single-threaded faiss, so it does not fight the searches for
  the cores) while the flat index keeps serving; writes made meanwhile are journalled by id and replayed into the
  new graph, outside the lock while many are pending, so the lock is held only for the last few and the swap.
  :class:`~neusym.retrieval.derived.DerivedIndexes` starts it when an add crosses the threshold or a loaded flat
  index is already past it. :meth:`FaissIndex.maybe_upgrade` (synchronous) and :meth:`FaissIndex.compact` remain
  for owners that prefer to pay the build at a moment of their choosing.
* **Persistence is one file**: magic, JSON header (dimension, structure, caller's watermark and metadata), the id
  array, the faiss index and a SHA-256 trailer, written to a temp file, fsynced and atomically renamed. One file
  means the ids and the vectors can never come from two different saves; the checksum means a torn or foreign file
  is reported as :class:`IndexCorruptionError` before faiss parses a byte of it.
* **Searches run faiss single-threaded** (``search_threads=1``, set per calling thread): one query gains little
  from OpenMP, and faiss' OpenMP pool contending with torch's and BLAS' on a small machine was measured to make
  both the search and the next MiniLM encode several times slower.

Vectors are L2-normalised on the way in, so inner product is cosine similarity and scores lie in [-1, 1].
All public methods take an internal re-entrant lock: faiss indexes are not safe for a search concurrent with a write.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import os
import secrets
import struct
import threading
import time
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Literal, cast

import faiss as _faiss
import numpy as np
import numpy.typing as npt

from neusym.errors import DimensionMismatchError, IndexCorruptionError, InvalidInputError, RecordNotFoundError

# faiss' partial stubs omit much of the SWIG surface used here (search parameters, callback I/O), so the module
# is handled as untyped and every value coming out of it is checked or cast at this boundary instead.
faiss: Any = _faiss

__all__ = ["FaissIndex", "IndexKind"]

log = logging.getLogger(__name__)

IndexKind = Literal["auto", "flat", "hnsw"]
_Structure = Literal["flat", "hnsw"]
IdArray = npt.NDArray[np.int64]
ScoreArray = npt.NDArray[np.float32]

_MAGIC = b"NSYMFAIS"
_FORMAT_VERSION = 1
_PREFIX = struct.Struct("<8sIQ")  # magic, format version, header length
_TRAILER = 32  # sha256 digest
_CHUNK = 1 << 20
_DIRECT_MAX = 512  # allow-lists up to this size are scored by direct lookup (no pass over the whole index)
_HNSW_EXACT_MIN = 4096  # HNSW allow-lists matching up to max(this, 5% of slots) are searched exactly
_REBUILD_BATCH = 65536  # vectors copied per step while rebuilding, to bound the transient memory
_FLAT_AUTOCOMPACT = 0.25  # dead fraction at which a flat index compacts itself
_NEEDS_COMPACTION = 0.20  # dead fraction at which an HNSW index asks to be compacted
_SWAP_REPLAY = 2048  # writes made during a background build that are replayed under the lock at the swap
_BACKGROUND_BATCH = 1024  # vectors per step of a background build (it checks for cancellation between steps)


class FaissIndex:
    """Cosine-similarity vector index keyed by non-negative int64 ids. See the module docstring for the design."""

    def __init__(
        self,
        dimension: int,
        *,
        kind: IndexKind = "auto",
        hnsw_m: int = 32,
        ef_search: int = 64,
        hnsw_threshold: int = 50_000,
        search_threads: int = 1,
    ) -> None:
        _check_positive("dimension", dimension)
        _check_positive("search_threads", search_threads)
        _check_positive("hnsw_m", hnsw_m)
        _check_positive("ef_search", ef_search)
        _check_positive("hnsw_threshold", hnsw_threshold)
        if kind not in ("auto", "flat", "hnsw"):
            raise InvalidInputError(f"kind must be 'auto', 'flat' or 'hnsw', got {kind!r}")
        self._dim = dimension
        self._kind: IndexKind = kind
        self._hnsw_m = hnsw_m
        self._ef_search = ef_search
        self._hnsw_threshold = hnsw_threshold
        self._search_threads = search_threads
        self._lock = threading.RLock()
        self._structure: _Structure = "hnsw" if kind == "hnsw" else "flat"
        self._base: Any = self._new_base(self._structure)
        self._labels: IdArray = np.empty(0, dtype=np.int64)  # slot -> id (-1 = tombstone); len >= ntotal
        self._slot: dict[int, int] = {}  # live id -> slot
        self._dead = 0
        self._live_bits: npt.NDArray[np.uint8] | None = None  # cached bitmap of live slots
        # background HNSW upgrade: ids written since its snapshot (None = no build running); the generation changes
        # when the contents are replaced wholesale (clear, a synchronous HNSW build), which voids a running build
        self._touched: set[int] | None = None
        self._generation = 0
        self._builder: threading.Thread | None = None

    # ----------------------------------------------------------------------------------------------- properties

    @property
    def dimension(self) -> int:
        return self._dim

    @property
    def kind(self) -> IndexKind:
        """The requested kind ("auto", "flat" or "hnsw")."""
        return self._kind

    @property
    def structure(self) -> _Structure:
        """What the index currently is: "flat" or "hnsw" ("auto" resolves to one of them)."""
        return self._structure

    @property
    def hnsw_m(self) -> int:
        return self._hnsw_m

    @property
    def hnsw_threshold(self) -> int:
        return self._hnsw_threshold

    @property
    def ef_search(self) -> int:
        return self._ef_search

    @ef_search.setter
    def ef_search(self, value: int) -> None:
        # Adjustable at runtime: it trades HNSW recall for latency and needs no rebuild.
        _check_positive("ef_search", value)
        with self._lock:
            self._ef_search = value
            if self._structure == "hnsw":
                self._base.hnsw.efSearch = value

    @property
    def ntotal(self) -> int:
        """Slots in the underlying faiss index, tombstones included."""
        return int(self._base.ntotal)

    @property
    def tombstones(self) -> int:
        """Dead slots still occupying memory and search time until the next :meth:`compact`."""
        return self._dead

    @property
    def needs_compaction(self) -> bool:
        """True when :meth:`compact` would pay off: many tombstones, or an "auto" index due to become HNSW."""
        with self._lock:
            if self._dead and self._dead >= _NEEDS_COMPACTION * self.ntotal:
                return True
            return self._target_structure() != self._structure

    def __len__(self) -> int:
        return len(self._slot)

    def __repr__(self) -> str:
        return (
            f"FaissIndex(dimension={self._dim}, kind={self._kind!r}, structure={self._structure!r}, "
            f"live={len(self._slot)}, tombstones={self._dead})"
        )

    def contains(self, id: int) -> bool:
        try:
            return int(id) in self._slot
        except (TypeError, ValueError):
            return False

    def __contains__(self, id: object) -> bool:
        return isinstance(id, int | np.integer) and self.contains(int(id))

    def ids(self) -> IdArray:
        """Live ids, sorted ascending."""
        with self._lock:
            labels = self._labels[: self.ntotal]
            return np.sort(labels[labels >= 0])

    # ---------------------------------------------------------------------------------------------------- writes

    def add(self, ids: Any, vectors: Any) -> None:
        """Insert or overwrite vectors. A repeated id within one call keeps its last vector (like sequential adds)."""
        id_arr = _as_ids(ids, strict=True)
        vecs = self._as_vectors(vectors, rows=id_arr.size, what="vectors")
        if id_arr.size == 0:
            return
        if np.unique(id_arr).size != id_arr.size:
            _, first_from_end = np.unique(id_arr[::-1], return_index=True)
            keep = np.sort(id_arr.size - 1 - first_from_end)
            id_arr, vecs = id_arr[keep], vecs[keep]
        with self._lock:
            if self._touched is not None:
                self._touched.update(id_arr.tolist())
            slots = self._slots_of(id_arr)
            present = slots >= 0
            if present.any():
                if self._structure == "flat":
                    self._storage()[slots[present]] = vecs[present]
                    id_arr, vecs = id_arr[~present], vecs[~present]
                else:
                    self._kill(id_arr[present], slots[present])
            if id_arr.size:
                start = self.ntotal
                self._base.add(vecs)
                self._ensure_capacity(start + id_arr.size)
                self._labels[start : start + id_arr.size] = id_arr
                self._slot.update(zip(id_arr.tolist(), range(start, start + id_arr.size), strict=True))
            self._live_bits = None

    def remove(self, ids: Any) -> int:
        """Forget ``ids``; ids that are absent (or never valid) are ignored. Returns how many were removed."""
        id_arr = np.unique(_as_ids(ids, strict=False))
        with self._lock:
            slots = self._slots_of(id_arr)
            present = slots >= 0
            removed = int(present.sum())
            if removed and self._touched is not None:
                self._touched.update(id_arr[present].tolist())
            if removed:
                self._kill(id_arr[present], slots[present])
                self._live_bits = None
                if self._structure == "flat" and self._dead > _FLAT_AUTOCOMPACT * self.ntotal:
                    self._rebuild("flat")
            return removed

    def clear(self) -> None:
        """Drop every vector, keeping the configuration (used before a full rebuild from the graph)."""
        with self._lock:
            self._generation += 1  # a background build of the old contents is void
            self._structure = "hnsw" if self._kind == "hnsw" else "flat"
            self._base = self._new_base(self._structure)
            self._labels = np.empty(0, dtype=np.int64)
            self._slot = {}
            self._dead = 0
            self._live_bits = None

    def compact(self) -> None:
        """Rebuild without tombstones, switching flat <-> HNSW when ``kind="auto"`` says so.

        O(n) for flat; for HNSW this re-inserts every vector into a new graph (minutes at a million vectors on two
        cores), which is why it is never called implicitly for HNSW. Searches wait for it (the lock is held).
        """
        with self._lock:
            self._rebuild(self._target_structure())

    def maybe_upgrade(self) -> bool:
        """Turn an "auto" flat index into HNSW once it holds ``hnsw_threshold`` vectors, now, holding the lock
        (searches wait). Returns True if it did. See :meth:`upgrade_in_background` for the non-blocking way; a
        background build already running is waited for instead of being duplicated."""
        if self._builder is not None and self.wait_upgrade() and self._structure == "hnsw":
            return True
        with self._lock:
            if self.upgrade_due:
                self._rebuild("hnsw")
                return True
            return False

    @property
    def upgrade_due(self) -> bool:
        """True for an "auto" index that is still flat and holds at least ``hnsw_threshold`` vectors."""
        return self._kind == "auto" and self._structure == "flat" and len(self._slot) >= self._hnsw_threshold

    @property
    def upgrading(self) -> bool:
        """True while a background HNSW build runs."""
        return self._builder is not None

    def upgrade_in_background(self, *, threads: int = 1) -> threading.Thread | None:
        """Start building the HNSW replacement of a due "auto" index in a daemon thread; None if not due or
        already running. Searches and writes go on against the flat index meanwhile (see the module docstring).

        ``threads``: faiss threads for the build. One by default: the build is not urgent, and on a small machine
        it would otherwise take the cores from the searches it is meant to speed up. :meth:`wait_upgrade` joins.
        """
        _check_positive("threads", threads)
        with self._lock:
            if not self.upgrade_due or self._builder is not None:
                return None
            labels = self._labels[: self.ntotal]
            ids = labels[labels >= 0].copy()  # the vectors are copied a step at a time by the build
            self._touched = set()
            builder = threading.Thread(target=self._upgrade_worker, args=(self._generation, ids, threads),
                                       name="neusym-hnsw-upgrade", daemon=True)
            self._builder = builder
        builder.start()
        return builder

    def wait_upgrade(self, timeout: float | None = None) -> bool:
        """Wait for a background upgrade to finish; True when none is running any more."""
        builder = self._builder
        if builder is not None:
            builder.join(timeout)
        return self._builder is None

    def _upgrade_worker(self, generation: int, ids: IdArray, threads: int) -> None:
        _BUILDING.add(self)
        try:
            shadow = _Shadow(self._new_base("hnsw"))
            with _faiss_threads(threads):
                # small steps: a clear() or the interpreter's exit stops the build within about a second, and only
                # one step's vectors are copied at a time (the lock is held for the copy, not for the insert); a
                # vector overwritten or removed after the snapshot is journalled and replayed below
                for start in range(0, ids.size, _BACKGROUND_BATCH):
                    with self._lock:
                        if self._generation != generation:
                            return
                        step, vecs = self._current(ids[start : start + _BACKGROUND_BATCH].tolist())
                    shadow.put(step, vecs)
                while True:
                    with self._lock:
                        if self._generation != generation or self._touched is None:
                            return  # cleared or rebuilt meanwhile: this build is out of date
                        touched, self._touched = self._touched, set()
                        live, moved = self._current(touched)
                        if len(touched) <= _SWAP_REPLAY:
                            shadow.kill(touched)
                            shadow.put(live, moved)
                            self._adopt(shadow)
                            return
                    # many writes arrived during the build: replay them without the lock, then look again
                    shadow.kill(touched)
                    shadow.put(live, moved)
        except Exception:  # noqa: BLE001 - a failed background build leaves the flat index in service
            log.exception("background HNSW upgrade failed; the index stays flat")
        finally:
            with self._lock:
                self._touched = None
                self._builder = None
            _BUILDING.discard(self)

    def cancel_upgrade(self) -> None:
        """Make a running background build stop at its next step, without waiting (the owner is dropping this
        index, e.g. to rebuild from the graph)."""
        with self._lock:
            if self._builder is not None:
                self._generation += 1

    def _abandon_upgrade(self, timeout: float) -> None:
        """Stop a background build at its next step and wait for it (used at interpreter exit)."""
        self.cancel_upgrade()
        self.wait_upgrade(timeout)

    def _current(self, ids: Iterable[int]) -> tuple[IdArray, npt.NDArray[np.float32]]:
        """The live ids among ``ids`` and a copy of their current vectors (under the lock)."""
        live = np.asarray(sorted(i for i in ids if i in self._slot), dtype=np.int64)
        if live.size == 0:
            return live, np.zeros((0, self._dim), dtype=np.float32)
        return live, np.take(self._storage(), self._slots_of(live), axis=0)

    def _adopt(self, shadow: _Shadow) -> None:
        """Swap a finished background build in (under the lock)."""
        self._base = shadow.base
        self._labels = shadow.labels
        self._slot = shadow.slot
        self._dead = shadow.dead
        self._structure = "hnsw"
        self._live_bits = None
        self._generation += 1

    # ---------------------------------------------------------------------------------------------------- reads

    def search(self, query: Any, k: int, allow_ids: Any = None) -> tuple[IdArray, ScoreArray]:
        """Top-``k`` ids by cosine similarity, best first, with their scores.

        Returns fewer than ``k`` results when fewer vectors (or fewer allowed vectors) exist; ``k=0`` returns empty
        arrays. ``allow_ids`` restricts results to those ids (unknown ids are ignored; an empty list matches
        nothing). HNSW results are approximate unless the allow-list is small enough to be scored exactly.
        """
        return self._search(self._as_vectors(query, rows=1, what="query"), k, allow_ids)[0]

    def search_many(self, queries: Any, k: int, allow_ids: Any = None) -> list[tuple[IdArray, ScoreArray]]:
        """:meth:`search` for each row of ``queries`` (shape ``(m, dimension)``), sharing one allow-list.

        Why a batch call: the allow-list becomes a bitmap in one O(n) pass and FAISS scores all rows in one call;
        a loop over :meth:`search` repeated that pass per row, which made deduplicating a 1,000-memory batch
        against a 100k store cost seconds.
        """
        shape = np.shape(queries)
        rows = shape[0] if len(shape) == 2 else 1
        return self._search(self._as_vectors(queries, rows=rows, what="queries"), k, allow_ids)

    def _search(self, q: npt.NDArray[np.float32], k: int, allow_ids: Any) -> list[tuple[IdArray, ScoreArray]]:
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
            raise InvalidInputError(f"k must be a non-negative int, got {k!r}")
        k = int(k)
        nothing = [_empty() for _ in range(q.shape[0])]
        with self._lock:
            if k == 0 or not self._slot or q.shape[0] == 0:
                return nothing
            n = self.ntotal
            labels = self._labels[:n]
            graph = self._structure == "hnsw"
            if allow_ids is not None:
                # No np.unique over the whole list: it hashes every id (~25-50 ms for a 100k-id allow-list, more
                # than the search itself), and np.isin below is indifferent to duplicates. Only the direct path,
                # which scores each listed id, needs them removed.
                allow = _as_ids(allow_ids, strict=False)
                if allow.size == 0:
                    return nothing
                if allow.size <= _DIRECT_MAX:
                    # A handful of ids: look them up and score them directly, no O(n) pass at all.
                    slots = self._slots_of(np.unique(allow))
                    slots = slots[slots >= 0]
                    return [self._exact(q[i : i + 1], slots, k) for i in range(q.shape[0])]
                mask = np.isin(labels, allow)  # tombstones are -1, never in ``allow``
                candidates = int(mask.sum())
                if candidates == 0:
                    return nothing
                bits: npt.NDArray[np.uint8] | None = np.packbits(mask, bitorder="little")
                # A filtered HNSW walk loses recall (and returns fewer than k) when few nodes pass the filter;
                # below ~5% of the index an exact filtered scan of HNSW's flat storage is both exact and cheap.
                graph = graph and candidates > max(_HNSW_EXACT_MIN, n // 20)
            elif self._dead:
                candidates = len(self._slot)
                bits = self._live_bitmap()
            else:
                candidates = len(self._slot)
                bits = None
            sel = faiss.IDSelectorBitmap(n, faiss.swig_ptr(bits)) if bits is not None else None
            if graph:
                target = self._base
                params: Any = faiss.SearchParametersHNSW(efSearch=self._ef_search)
                if sel is not None:
                    params.sel = sel
            else:
                target = self._base if self._structure == "flat" else faiss.downcast_index(self._base.storage)
                params = faiss.SearchParameters(sel=sel) if sel is not None else None
            with _faiss_threads(self._search_threads):
                scores, slots_found = target.search(q, min(k, candidates), params=params)
            out = []
            for row, srow in zip(slots_found, scores, strict=True):
                ok = row >= 0
                out.append((labels[row[ok]].astype(np.int64, copy=True), srow[ok].astype(np.float32, copy=True)))
            return out

    def reconstruct(self, ids: Any) -> npt.NDArray[np.float32]:
        """The stored (normalised) vectors of ``ids``, shape ``(len(ids), dimension)``.

        Raises :class:`RecordNotFoundError` if any id is absent, because silently returning fewer rows would
        misalign the caller's arrays.
        """
        id_arr = _as_ids(ids, strict=True)
        with self._lock:
            slots = self._slots_of(id_arr)
            if (slots < 0).any():
                missing = id_arr[slots < 0][:5].tolist()
                raise RecordNotFoundError(f"ids not in the vector index: {missing}")
            if slots.size == 0:
                return np.zeros((0, self._dim), dtype=np.float32)
            return np.take(self._storage(), slots, axis=0)

    # ----------------------------------------------------------------------------------------------- persistence

    def save(
        self, path: str | os.PathLike[str], *, watermark: int, meta: dict[str, Any] | None = None
    ) -> None:
        """Atomically write the index to ``path`` with the caller's ``watermark`` and JSON-serialisable ``meta``.

        ``watermark`` is the graph write sequence the index reflects: after :meth:`load` the owner replays only
        graph changes newer than it. ``meta`` typically carries the embedder name so that a model change forces a
        rebuild. Readers never observe a half-written file: either the old or the new one is at ``path``.
        """
        if isinstance(watermark, bool) or not isinstance(watermark, int | np.integer):
            raise InvalidInputError(f"watermark must be an int, got {watermark!r}")
        target = Path(path)
        with self._lock:
            n = self.ntotal
            header = {
                "format": _FORMAT_VERSION,
                "dimension": self._dim,
                "kind": self._kind,
                "structure": self._structure,
                "hnsw_m": self._hnsw_m,
                "ef_search": self._ef_search,
                "hnsw_threshold": self._hnsw_threshold,
                "ntotal": n,
                "live": len(self._slot),
                "watermark": int(watermark),
                "meta": dict(meta) if meta is not None else {},
                "faiss_version": getattr(faiss, "__version__", "unknown"),
                "saved_at": time.time(),
            }
            try:
                header_bytes = json.dumps(header, allow_nan=False, sort_keys=True).encode("utf-8")
            except (TypeError, ValueError) as err:
                raise InvalidInputError(f"meta must be JSON-serialisable: {err}") from err
            tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
            try:
                # 0600: the vectors are derived from users' memories (see neusym.private_files)
                with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as raw:
                    out = _HashingWriter(raw)
                    out.write(_PREFIX.pack(_MAGIC, _FORMAT_VERSION, len(header_bytes)))
                    out.write(header_bytes)
                    out.write(self._labels[:n].astype("<i8").tobytes())
                    faiss.write_index(self._base, faiss.PyCallbackIOWriter(out.write))
                    raw.write(out.digest())
                    raw.flush()
                    os.fsync(raw.fileno())
                os.replace(tmp, target)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
        _fsync_dir(target.parent)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> tuple[FaissIndex, int, dict[str, Any]]:
        """Read a file written by :meth:`save`; returns ``(index, watermark, meta)``.

        Raises :class:`IndexCorruptionError` for anything that is not an intact file of a supported format
        (truncated, garbage, checksum mismatch, inconsistent contents): the owner then rebuilds from the graph.
        A missing file raises :class:`FileNotFoundError` (first start, not corruption); other I/O errors propagate.
        """
        source = Path(path)
        size = source.stat().st_size
        with open(source, "rb") as f:
            try:
                return cls._read(f, size)
            except IndexCorruptionError:
                raise
            except (ValueError, TypeError, KeyError, RuntimeError, MemoryError, struct.error) as err:
                raise IndexCorruptionError(
                    f"{source}: unreadable vector index ({type(err).__name__}: {err})"
                ) from err

    @classmethod
    def _read(cls, f: IO[bytes], size: int) -> tuple[FaissIndex, int, dict[str, Any]]:
        if size < _PREFIX.size + _TRAILER:
            raise IndexCorruptionError(f"vector index file is truncated ({size} bytes)")
        magic, version, header_len = _PREFIX.unpack(f.read(_PREFIX.size))
        if magic != _MAGIC:
            raise IndexCorruptionError("not a NeuSym vector index file (bad magic)")
        if version != _FORMAT_VERSION:
            raise IndexCorruptionError(f"unsupported vector index format version {version}")
        # Verify the checksum over the whole body before trusting any length field or handing bytes to faiss.
        f.seek(0)
        digest = hashlib.sha256()
        remaining = size - _TRAILER
        while remaining:
            chunk = f.read(min(_CHUNK, remaining))
            if not chunk:
                raise IndexCorruptionError("vector index file shrank while being read")
            digest.update(chunk)
            remaining -= len(chunk)
        if f.read(_TRAILER) != digest.digest():
            raise IndexCorruptionError("vector index checksum mismatch (truncated or modified file)")

        f.seek(_PREFIX.size)
        header = json.loads(f.read(header_len).decode("utf-8"))
        if not isinstance(header, dict) or not isinstance(header.get("meta"), dict):
            raise IndexCorruptionError("vector index header is malformed")
        n = header["ntotal"]
        if not isinstance(n, int) or n < 0:
            raise IndexCorruptionError("vector index header has a bad count")
        labels = np.frombuffer(f.read(8 * n), dtype="<i8").astype(np.int64)
        if labels.size != n:
            raise IndexCorruptionError("vector index id table is truncated")
        blob_left = size - _TRAILER - f.tell()

        def read_blob(want: int) -> bytes:
            nonlocal blob_left
            data = f.read(min(want, blob_left))
            blob_left -= len(data)
            return data

        base = faiss.read_index(faiss.PyCallbackIOReader(read_blob))
        index = cls(
            int(header["dimension"]),
            kind=header["kind"],
            hnsw_m=int(header["hnsw_m"]),
            ef_search=int(header["ef_search"]),
            hnsw_threshold=int(header["hnsw_threshold"]),
        )
        structure = header["structure"]
        expected_type = faiss.IndexHNSWFlat if structure == "hnsw" else faiss.IndexFlatIP
        if structure not in ("flat", "hnsw") or not isinstance(base, expected_type):
            raise IndexCorruptionError(
                f"vector index structure {structure!r} does not match {type(base).__name__}"
            )
        if base.d != index.dimension or base.ntotal != n or base.metric_type != faiss.METRIC_INNER_PRODUCT:
            raise IndexCorruptionError("vector index contents disagree with its header")
        live = labels[labels >= 0]
        if (labels < -1).any() or np.unique(live).size != live.size:
            raise IndexCorruptionError("vector index id table is inconsistent")
        if structure == "hnsw":
            base.hnsw.efSearch = index.ef_search
        index._structure = structure
        index._base = base
        index._labels = labels
        index._slot = dict(zip(live.tolist(), np.flatnonzero(labels >= 0).tolist(), strict=True))
        index._dead = int(n - live.size)
        watermark = header["watermark"]
        if not isinstance(watermark, int):
            raise IndexCorruptionError("vector index watermark is not an integer")
        return index, watermark, header["meta"]

    # -------------------------------------------------------------------------------------------------- internals

    def _new_base(self, structure: _Structure) -> Any:
        if structure == "flat":
            return faiss.IndexFlatIP(self._dim)
        base = faiss.IndexHNSWFlat(self._dim, self._hnsw_m, faiss.METRIC_INNER_PRODUCT)
        base.hnsw.efConstruction = max(40, 2 * self._hnsw_m)
        base.hnsw.efSearch = self._ef_search
        return base

    def _target_structure(self) -> _Structure:
        if self._kind != "auto":
            return self._kind
        live = len(self._slot)
        if live >= self._hnsw_threshold:
            return "hnsw"
        # Hysteresis: an auto index that became HNSW stays HNSW until it shrinks well below the threshold, so a
        # store hovering around it does not flip (and pay a full rebuild) on every compaction.
        if self._structure == "hnsw" and live >= self._hnsw_threshold // 2:
            return "hnsw"
        return "flat"

    def _rebuild(self, structure: _Structure) -> None:
        if structure == "hnsw":
            self._generation += 1  # a background build of the same upgrade is now redundant
        n = self.ntotal
        live_slots = np.flatnonzero(self._labels[:n] >= 0).astype(np.int64)
        new_base = self._new_base(structure)
        for start in range(0, live_slots.size, _REBUILD_BATCH):
            new_base.add(self._storage()[live_slots[start : start + _REBUILD_BATCH]])
        new_labels = self._labels[live_slots].copy()
        # Swap only once everything is built, so a failure (e.g. MemoryError) leaves the old index usable.
        self._base = new_base
        self._labels = new_labels
        self._slot = dict(zip(new_labels.tolist(), range(new_labels.size), strict=True))
        self._structure = structure
        self._dead = 0
        self._live_bits = None

    def _kill(self, ids: IdArray, slots: IdArray) -> None:
        self._labels[slots] = -1
        for i in ids.tolist():
            del self._slot[i]
        self._dead += int(slots.size)

    def _slots_of(self, ids: IdArray) -> IdArray:
        get = self._slot.get
        return np.fromiter((get(i, -1) for i in ids.tolist()), dtype=np.int64, count=ids.size)

    def _ensure_capacity(self, size: int) -> None:
        if self._labels.size < size:
            grown = np.full(max(size, 2 * self._labels.size, 1024), -1, dtype=np.int64)
            grown[: self._labels.size] = self._labels
            self._labels = grown

    def _storage(self) -> npt.NDArray[np.float32]:
        """A numpy view of the raw vectors (slot order), valid only under the lock until the next write.

        Both structures keep vectors in one contiguous IndexFlat buffer (HNSW in its ``storage``). Reading it
        with numpy instead of ``reconstruct_batch`` avoids an OpenMP region, which on small machines thrashes
        against BLAS/torch thread pools (measured: 8 ms -> 0.4 ms for 2,000 vectors on 2 cores). It is
        re-derived on every use because faiss may reallocate the buffer on add. Writing through it is only
        done for flat indexes, where no graph depends on the old vector.
        """
        n = self.ntotal
        if n == 0:
            return np.zeros((0, self._dim), dtype=np.float32)
        flat = self._base if self._structure == "flat" else faiss.downcast_index(self._base.storage)
        view = faiss.rev_swig_ptr(flat.get_xb(), n * self._dim)
        return cast(npt.NDArray[np.float32], view.reshape(n, self._dim))

    def _live_bitmap(self) -> npt.NDArray[np.uint8]:
        if self._live_bits is None:
            self._live_bits = np.packbits(self._labels[: self.ntotal] >= 0, bitorder="little")
        return self._live_bits

    def _exact(self, q: npt.NDArray[np.float32], slots: IdArray, k: int) -> tuple[IdArray, ScoreArray]:
        if slots.size == 0:
            return _empty()
        # einsum, not ``@``: a threaded BLAS matvec stalls for milliseconds when the cores are busy (agents embed
        # and search concurrently); this single-threaded loop costs ~0.1 ms per 1,000 vectors of dimension 384.
        scores = np.einsum("ij,j->i", np.take(self._storage(), slots, axis=0), q[0]).astype(np.float32)
        if k < slots.size:
            top = np.argpartition(-scores, k - 1)[:k]
            slots, scores = slots[top], scores[top]
        ids = self._labels[slots]
        order = np.lexsort((ids, -scores))  # best first; ties broken by id so results are deterministic
        return ids[order].astype(np.int64, copy=True), scores[order]

    def _as_vectors(self, vectors: Any, *, rows: int, what: str) -> npt.NDArray[np.float32]:
        try:
            arr = np.asarray(vectors, dtype=np.float32)
        except (TypeError, ValueError) as err:
            raise InvalidInputError(f"{what} must be a numeric array: {err}") from err
        if arr.ndim == 1:
            arr = arr.reshape(1, -1)
        if arr.ndim != 2:
            raise InvalidInputError(f"{what} must be 1-D or 2-D, got shape {arr.shape}")
        if arr.shape[0] == 0 and rows == 0:
            return np.zeros((0, self._dim), dtype=np.float32)
        if arr.shape[1] != self._dim:
            raise DimensionMismatchError(
                f"{what} have dimension {arr.shape[1]}; this index stores {self._dim}"
            )
        if arr.shape[0] != rows:
            raise InvalidInputError(f"{what}: got {arr.shape[0]} rows for {rows} ids")
        if not np.isfinite(arr).all():
            raise InvalidInputError(f"{what} contain NaN or infinite values")
        norms = np.linalg.norm(arr, axis=1, keepdims=True)
        if (norms <= 1e-12).any():
            raise InvalidInputError(f"{what} contain an all-zero vector (cosine similarity is undefined)")
        return np.ascontiguousarray(arr / norms, dtype=np.float32)


_BUILDING: weakref.WeakSet[FaissIndex] = weakref.WeakSet()  # indexes with a background build running


@atexit.register
def _stop_background_builds() -> None:
    """A daemon thread still inside faiss while the interpreter tears down can crash the exiting process: stop
    every running build at its next step (the flat index was saved as it is; the next open upgrades again)."""
    for index in list(_BUILDING):
        index._abandon_upgrade(timeout=30.0)  # one step: ~1 s at 1M vectors on one core


class _Shadow:
    """The id map of an index being built in the background (slot -> id labels, id -> slot, tombstones)."""

    def __init__(self, base: Any) -> None:
        self.base = base
        self.labels: IdArray = np.empty(0, dtype=np.int64)
        self.slot: dict[int, int] = {}
        self.dead = 0

    def kill(self, ids: Iterable[int]) -> None:
        for i in ids:
            s = self.slot.pop(int(i), None)
            if s is not None:
                self.labels[s] = -1
                self.dead += 1

    def put(self, ids: IdArray, vecs: npt.NDArray[np.float32]) -> None:
        if ids.size == 0:
            return
        self.kill(ids.tolist())
        start = int(self.base.ntotal)
        self.base.add(vecs)
        if self.labels.size < start + ids.size:
            grown = np.full(max(start + ids.size, 2 * self.labels.size, 1024), -1, dtype=np.int64)
            grown[: self.labels.size] = self.labels
            self.labels = grown
        self.labels[start : start + ids.size] = ids
        self.slot.update(zip(ids.tolist(), range(start, start + ids.size), strict=True))


class _HashingWriter:
    """File writer that hashes what passes through, so the checksum costs no second pass over a large index."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self._hash = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self._hash.update(data)
        self._raw.write(data)
        return len(data)

    def digest(self) -> bytes:
        return self._hash.digest()


def _as_ids(ids: Any, *, strict: bool) -> IdArray:
    """Coerce ids to a 1-D int64 array. ``strict`` refuses negative ids; lenient mode just drops them."""
    if isinstance(ids, Iterable) and not isinstance(ids, np.ndarray | list | tuple | str | bytes):
        ids = list(ids)  # sets, dict views, generators: numpy would make a 0-d object array of them
    arr = np.asarray(ids)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise InvalidInputError(f"ids must be 1-D, got shape {arr.shape}")
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype.kind not in "iu":
        raise InvalidInputError(f"ids must be integers, got dtype {arr.dtype}")
    if arr.dtype.kind == "u" and arr.max() > np.iinfo(np.int64).max:
        raise InvalidInputError("ids must fit in int64")
    out = arr.astype(np.int64)
    if (out < 0).any():
        if strict:
            raise InvalidInputError("ids must be non-negative (faiss reserves -1 for 'no result')")
        out = out[out >= 0]
    return out


@contextmanager
def _faiss_threads(n: int) -> Iterator[None]:
    """Run faiss with ``n`` OpenMP threads *in the calling thread only* (the OpenMP setting is per thread).

    A single-query search gains little from parallelism, but faiss' bundled OpenMP runtime spinning next to
    torch's and OpenBLAS' pools on a 2-core box made a 100k flat search 6x slower (54 ms vs 9 ms) and the
    MiniLM query encode ~10x slower in the same process. Bulk adds and rebuilds keep faiss' default.
    """
    prev = int(faiss.omp_get_max_threads())
    if prev == n:
        yield
        return
    faiss.omp_set_num_threads(n)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(prev)


def _empty() -> tuple[IdArray, ScoreArray]:
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)


def _check_positive(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"{name} must be a positive int, got {value!r}")


def _fsync_dir(directory: Path) -> None:
    # Makes the rename itself durable on POSIX; directories cannot be opened (nor need this) on Windows.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
