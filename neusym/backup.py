"""Backups: ``mem.export`` writes a scope's graph to a JSON Lines file, ``mem.restore`` writes it back exactly.

What a restore guarantees, and why each rule exists:

* **Scoped.** Every line is checked against the scope the caller restores into, not the scope the file claims:
  each memory's ``user_id``/``agent_id``/``session_id``, each entity's namespace (entities are per tenant, see
  :func:`~neusym.symbolic.convert.entity_namespace`), both endpoints of every fact and memory edge, the tenant and
  memory of every audit entry. A line that reaches outside refuses the whole file: a forged audit entry on another
  tenant's memory would otherwise feed that tenant's ``history`` and ``rollback``, a forged edge or fact would
  reach its graph expansion.
* **Validated before the first write.** The whole file is read and checked first: JSON, line order, counts against
  the ``end`` line, every memory's properties through the record model (``type`` a :class:`MemoryType`, times
  numbers, ``metadata_json`` a JSON object ...), every embedding through the decoder (base64, float32, one
  dimension, finite, non-zero), every reference resolved, every id an id (memory and audit ids: 1-128 of
  ``A-Z a-z 0-9 _ . : -``; scope ids and audit actors: one printable line), so no id can carry a line break or a
  delimiter into a prompt. Then the graph is asked (still read-only) which ids exist and whose they are. A bad
  line is reported with its line number and nothing is written.
* **Streamed, bounded.** Lines are read at most :data:`MAX_LINE_CHARS` at a time (a longer one is refused without
  being held whole), at most :data:`MAX_RESTORE_CHARS` in all, and a ``.gz`` file may not expand beyond
  :data:`MAX_EXPANSION` times its size; a file that is not UTF-8 (or not gzip) is refused with its line number.
* **All or nothing.** The lines are written staged, invisible to every read, and made visible by one atomic
  statement (:class:`~neusym.symbolic.transfer.StagedRestore`); any failure before it (the embedder, the
  database, a concurrent writer taking a restored id) deletes what was staged, so the store is as it was and a
  retry works.
* **Exact.** Ids, times, statuses, versions, flags, origin, review state and embeddings come back as they were
  exported: a restore is a backup, not an import. Bringing *new* data in goes through :mod:`neusym.importing`,
  where the caller's scope wins over the file and origin/trust fields are ignored.
* **Screened.** The one exception to exact: every current (active or pending) memory's text is screened as the
  write path screens an edit (``Governor.screen``). A file's statuses and flags are not evidence that anyone
  reviewed its text, so a text ``add`` would quarantine comes back quarantined (without its facts and mentions)
  and a borderline one flagged ``suspicious``, each with an audit entry; ``RestoreReport.rescreened`` lists them (a
  reviewer approves them again).

The file format is described in :mod:`neusym.symbolic.transfer`.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import gzip
import hashlib
import json
import math
import os
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from neusym.errors import InvalidInputError, ScopeError
from neusym.private_files import atomic_private
from neusym.record import (
    MAX_CONTENT_BYTES,
    MemoryStatus,
    MemoryType,
    PlanState,
    Scope,
    Triple,
    validate_id,
    validate_label,
    validate_text,
)
from neusym.symbolic.convert import encode_embedding, entity_namespace, props_to_record
from neusym.symbolic.store import RELATIONS
from neusym.symbolic.transfer import (
    FORMAT,
    LINK_TYPES,
    LOCAL_PROPS,
    RESERVED_PREFIX,
    VERSION,
    StagedRestore,
    existing_memories,
    export_lines,
)

if TYPE_CHECKING:
    from neusym.engine import Engine

__all__ = ["ExportReport", "RestoreReport", "export", "restore"]

Source = str | os.PathLike[str] | IO[str]
"""A path (``.gz`` is read/written compressed) or an open text stream."""
Progress = Callable[[int, int], None]
"""``progress(done, total)``: memories written so far out of all of them."""

MAX_LINE_CHARS = 16 * 1024 * 1024
"""Longest line a restore reads (characters, newline included). The largest valid memory line (1 MB of text,
its metadata and facts, JSON-escaped, and an embedding) stays well below it; a longer line is refused as soon as
this much of it was read, never held whole."""
MAX_RESTORE_CHARS = 64 * 1024**3
"""Most characters a restore reads from one file (after decompression): far beyond any real backup, a bound on the
time a crafted file can take."""
MAX_EXPANSION = 100
"""A ``.gz`` file may decompress to at most this many times its size (once past ``EXPANSION_FLOOR``): JSON Lines of
memories and embeddings compress 2-10x, a compression bomb thousands of times."""
EXPANSION_FLOOR = 256 * 1024 * 1024

_ORDER = {"header": 0, "memory": 1, "entity": 2, "mentions": 3, "relates": 4, "edge": 5, "audit": 6, "end": 7}
_COUNTED = ("memory", "entity", "mentions", "relates", "edge", "audit")
_MAX_LIST = 10_000
_SEP = "\x1f"  # entity uids are "<namespace>\x1f<key>" (see neusym.symbolic.convert.entity_uid)


# ---------------------------------------------------------------------------------------------------- reports
@dataclass
class ExportReport:
    """What ``mem.export`` wrote: line counts by kind (as in the file's ``end`` line)."""

    file: str | None
    scope: dict[str, str | None] | None  # None: every tenant
    counts: dict[str, int]
    embeddings: bool
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "scope": self.scope if self.scope is not None else "all tenants",
                "counts": dict(self.counts), "embeddings": self.embeddings, "seconds": self.seconds}


@dataclass
class RestoreReport:
    """What ``mem.restore`` wrote (or, with ``dry_run``, would write): nothing unless every line was valid."""

    file: str | None
    dry_run: bool
    scope: dict[str, str | None] | None  # None: every tenant
    memories: int = 0
    skipped: int = 0  # memories whose id already existed (``skip_existing``)
    entities: int = 0  # new entities (ones the graph had are kept as they are)
    mentions: int = 0
    relates: int = 0
    edges: int = 0
    audit: int = 0
    reembedded: int = 0
    source: dict[str, Any] = field(default_factory=dict)  # the file's header: where and when it was exported
    unknown_fields: list[str] = field(default_factory=list)  # memory properties this version does not know (kept)
    rescreened: list[str] = field(default_factory=list)  # current memories screening quarantined or flagged
    seconds: float = 0.0

    @property
    def counts(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in ("memories", "skipped", "entities", "mentions", "relates", "edges",
                                              "audit", "reembedded")}

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "dry_run": self.dry_run,
                "scope": self.scope if self.scope is not None else "all tenants", "restored": self.counts,
                "source": dict(self.source), "unknown_fields": list(self.unknown_fields),
                "rescreened": list(self.rescreened), "seconds": self.seconds}


# ---------------------------------------------------------------------------------------------------- files
def _name(source: Source) -> str:
    if isinstance(source, str | os.PathLike):
        return str(source)
    return str(getattr(source, "name", None) or "<stream>")


@contextmanager
def _open_text(path: Path) -> Iterator[IO[str]]:
    if not path.is_file():
        raise InvalidInputError(f"no such file: {path}")
    fh: IO[str] = (gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz"  # noqa: SIM115
                   else open(path, encoding="utf-8"))  # noqa: SIM115
    with fh:
        yield fh


def _atomic_writer(target: Path) -> AbstractContextManager[IO[str]]:
    """Write ``target`` through a private temporary file renamed into place (:func:`neusym.private_files.
    atomic_private`): a failed export never leaves half a backup under the real name, the file is 0600 in a 0700
    directory if it had to create one (it holds every memory of the scope), and a symbolic link at ``target`` is
    refused, never written through."""
    return atomic_private(target, compress=target.suffix == ".gz")


class _Lines:
    """The lines of a restore source, read twice (validation, then writing) and checked to be the same both times.

    A path is reopened; a seekable stream is rewound; any other stream (a pipe, stdin) is copied to a private
    temporary file on the first pass. The second pass hashes what it reads and refuses a file that changed.
    """

    def __init__(self, source: Source) -> None:
        self.name = _name(source)
        self.path = Path(source).expanduser() if isinstance(source, str | os.PathLike) else None
        self.stream = None if isinstance(source, str | os.PathLike) else source
        self.digest: str | None = None
        self._start: int | None = None
        self._spool: IO[str] | None = None
        if self.stream is not None:
            with contextlib.suppress(OSError, ValueError):
                if self.stream.seekable():
                    self._start = self.stream.tell()
            if self._start is None:
                self._spool = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def read(self) -> Iterator[tuple[int, str]]:
        """``(line number, text)`` for every line, streamed: no line longer than :data:`MAX_LINE_CHARS` is held
        whole, and no more than :data:`MAX_RESTORE_CHARS` (a ``.gz`` file: :data:`MAX_EXPANSION` times its size)
        is read; either is an :class:`InvalidInputError` naming the limit, raised while validating (before the
        first write) or, for a file that grew since, before the commit."""
        first = self.digest is None
        sha = hashlib.sha256()
        packed = (self.path.stat().st_size if self.path is not None and self.path.suffix == ".gz" else None)
        total = 0
        with self._open(first) as fh:
            n = 0
            while True:
                raw = self._line(fh, n + 1)
                if not raw:
                    break
                n += 1
                total += len(raw)
                if total > MAX_RESTORE_CHARS:
                    raise InvalidInputError(f"{self.name}: more than {MAX_RESTORE_CHARS:,} characters (the restore "
                                            "limit); nothing was restored")
                if packed is not None and total > max(EXPANSION_FLOOR, MAX_EXPANSION * packed):
                    raise InvalidInputError(
                        f"{self.name}: decompresses to more than {MAX_EXPANSION} times its size ({packed:,} bytes; "
                        "a compression bomb?); nothing was restored")
                sha.update(raw.encode("utf-8", "surrogatepass"))
                if first and self._spool is not None:
                    self._spool.write(raw)
                yield n, raw
        if first:
            self.digest = sha.hexdigest()
        elif sha.hexdigest() != self.digest:
            raise InvalidInputError(f"{self.name} changed while it was being restored; nothing was restored")

    def _line(self, fh: IO[str], n: int) -> str:
        """The next line, at most :data:`MAX_LINE_CHARS` read of it; a file that is not UTF-8 text (or not gzip
        data, or a truncated one) is a typed error with the line number."""
        try:
            raw = fh.readline(MAX_LINE_CHARS + 1)
        except (UnicodeDecodeError, EOFError, gzip.BadGzipFile, zlib.error) as err:
            raise InvalidInputError(f"{self.name}:{n}: cannot be read ({type(err).__name__}: {str(err)[:160]}); "
                                    "nothing was restored") from err
        if len(raw) > MAX_LINE_CHARS:
            raise InvalidInputError(f"{self.name}:{n}: a line longer than {MAX_LINE_CHARS:,} characters (the "
                                    "restore's line limit); nothing was restored")
        return raw

    @contextmanager
    def _open(self, first: bool) -> Iterator[IO[str]]:
        if self.path is not None:
            with _open_text(self.path) as fh:
                yield fh
            return
        assert self.stream is not None
        if not first and self._spool is not None:
            self._spool.seek(0)
            yield self._spool
            return
        if self._start is not None:
            self.stream.seek(self._start)
        yield self.stream

    def close(self) -> None:
        if self._spool is not None:
            self._spool.close()


# ---------------------------------------------------------------------------------------------------- export
def _check_tenant(scope: Scope | None, what: str) -> None:
    """``None`` is every tenant (the caller said ``all_tenants``); a scope must name its tenant."""
    if scope is not None and scope.user_id is None:
        raise ScopeError(f"{what} needs a user_id (an agent or session alone spans tenants), or all_tenants=True")


def export(mem: Engine, target: Source, *, scope: Scope | None, embeddings: bool = True,
           progress: Progress | None = None) -> ExportReport:
    """Write ``scope`` (``None``: every tenant, an operator backup) to ``target`` as an export file.

    A path is written atomically (a temporary file renamed into place, mode 0600; ``.gz`` compresses); a stream is
    written as it goes and left open.
    """
    from neusym._version import __version__

    started = time.perf_counter()
    _check_tenant(scope, "export")
    sc = scope if scope is not None else Scope()
    total = int(mem.store.stats(sc)["memories"])
    header = {"exported_at": time.time(), "neusym": __version__, "backend": mem.executor.dialect.value,
              "embedder": mem.embedder.name, "dimension": mem.embedder.dimension, "graph": mem.config.graph_name}
    counts: dict[str, int] = {}
    writer: AbstractContextManager[IO[str]] = (
        _atomic_writer(Path(target)) if isinstance(target, str | os.PathLike) else nullcontext(target))
    done = 0
    with writer as fh:
        for line in export_lines(mem.store, sc, all_tenants=scope is None, embeddings=embeddings, header=header):
            fh.write(json.dumps(line, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n")
            if line["kind"] == "memory":
                done += 1
                if progress is not None:
                    progress(done, total)
            elif line["kind"] == "end":
                counts = dict(line["counts"])
        fh.flush()
    return ExportReport(file=_name(target), scope=scope.as_params() if scope is not None else None, counts=counts,
                        embeddings=embeddings, seconds=round(time.perf_counter() - started, 3))


# ---------------------------------------------------------------------------------------------------- validation
def _fail(where: str, what: str) -> InvalidInputError:
    return InvalidInputError(f"{where}: {what}")


def _text(value: Any, where: str, what: str, *, max_bytes: int = MAX_CONTENT_BYTES) -> str:
    """A string the graph drivers can carry: valid Unicode (JSON may hold lone surrogates), no NUL, bounded."""
    if not isinstance(value, str):
        raise _fail(where, f"{what} must be a string, got {type(value).__name__}")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as err:
        raise _fail(where, f"{what} is not valid Unicode (lone surrogate)") from err
    if "\x00" in value:
        raise _fail(where, f"{what} contains a NUL character")
    if size > max_bytes:
        raise _fail(where, f"{what} is {size} bytes (limit {max_bytes})")
    return value


def _checked(check: Callable[[Any, str], str], value: Any, where: str, what: str) -> str:
    """``check(value, what)`` (an id or label rule of :mod:`neusym.record`) with the line's place in the error."""
    try:
        return check(value, what)
    except InvalidInputError as err:
        raise _fail(where, str(err)) from err


def _number(value: Any, where: str, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _fail(where, f"{what} must be a finite number, got {value!r}"[:300])
    return float(value)


def _scalar(value: Any, where: str, what: str) -> None:
    """A graph property value: a scalar or a flat list of scalars (what both backends store)."""
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int | float):
        _number(value, where, what)
    elif isinstance(value, str):
        _text(value, where, what)
    elif isinstance(value, list):
        if len(value) > _MAX_LIST:
            raise _fail(where, f"{what} has {len(value)} items (limit {_MAX_LIST})")
        for v in value:
            if isinstance(v, list | dict):
                raise _fail(where, f"{what} must be a flat list of scalars")
            _scalar(v, where, what)
    else:
        raise _fail(where, f"{what} must be a scalar or a list of scalars, got {type(value).__name__}")


def _str_list(value: Any, where: str, what: str) -> list[str]:
    if not isinstance(value, list) or len(value) > _MAX_LIST:
        raise _fail(where, f"{what} must be a list of strings")
    return [_text(v, where, f"{what} item") for v in value]


def _json_field(value: Any, where: str, what: str, kind: type) -> Any:
    text = _text(value, where, what)
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError) as err:
        raise _fail(where, f"{what} is not valid JSON ({str(err)[:120]})") from err
    if not isinstance(parsed, kind):
        raise _fail(where, f"{what} must hold a JSON {'object' if kind is dict else 'list'}")
    return parsed


def _uid_namespace(uid: str, where: str, what: str) -> str:
    ns, sep, key = uid.partition(_SEP)
    if not sep or not key:
        raise _fail(where, f"{what} {uid!r} is not an entity uid (namespace, unit separator, key)")
    return ns


_MEMORY_STR = ("content_hash", "source_origin", "source_session", "speaker", "source_ref")
_MEMORY_TIME = ("created_at", "updated_at", "valid_from", "valid_to", "last_accessed_at", "expires_at", "plan_due",
                "archived_at", "decayed_at")
_MEMORY_INT = {"version": 1, "access_count": 0, "source_turn": 0}
_MEMORY_LISTS = ("tags", "flags", "intent", "entity_names", "predicates")
_MEMORY_UIDS = ("entity_uids", "object_uids")
_MEMORY_ENUMS: dict[str, type[MemoryType] | type[MemoryStatus] | type[PlanState]] = {
    "type": MemoryType, "status": MemoryStatus, "plan_state": PlanState}
_ENUM_VALUES = {key: frozenset(m.value for m in enum) for key, enum in _MEMORY_ENUMS.items()}


def check_memory_props(props: Any, where: str) -> tuple[dict[str, Any], Scope, list[str]]:
    """A memory line's properties, checked field by field and through the record model.

    Returns the properties to write (store-local ones dropped), the memory's scope and the names of properties
    this version does not know (kept if they are plain graph values: a newer NeuSym may read them).
    """
    if not isinstance(props, dict):
        raise _fail(where, "memory without props")
    out: dict[str, Any] = {}
    unknown: list[str] = []
    for key, value in props.items():
        if key in LOCAL_PROPS or value is None:
            continue
        if key.startswith(RESERVED_PREFIX):
            raise _fail(where, f"property {key!r} is reserved")
        if key in ("id", "content") and (not isinstance(value, str) or not value):
            raise _fail(where, f"memory {key} must be a non-empty string")
        if key == "id":
            _checked(validate_id, value, where, "memory id")
        elif key == "content":
            try:
                value = validate_text(value, field="content")
            except InvalidInputError as err:
                raise _fail(where, str(err)) from err
        elif key in _MEMORY_STR:
            _text(value, where, key, max_bytes=64_000)
        elif key in _MEMORY_TIME:
            _number(value, where, key)
        elif key in _MEMORY_INT:
            if isinstance(value, bool) or not isinstance(value, int) or value < _MEMORY_INT[key]:
                raise _fail(where, f"{key} must be an integer >= {_MEMORY_INT[key]}, got {value!r}"[:300])
        elif key in ("importance", "confidence"):
            if not 0.0 <= _number(value, where, key) <= 1.0:
                raise _fail(where, f"{key} must be between 0 and 1, got {value!r}")
        elif key == "strength":
            if _number(value, where, key) < 0:
                raise _fail(where, f"strength must be >= 0, got {value!r}")
        elif key in _MEMORY_ENUMS:
            if value not in _ENUM_VALUES[key]:
                raise _fail(where, f"{key} {value!r} is not one of {sorted(_ENUM_VALUES[key])}"[:300])
        elif key in (*_MEMORY_LISTS, *_MEMORY_UIDS, "po_keys"):
            _str_list(value, where, key)
        elif key == "metadata_json":
            _json_field(value, where, key, dict)
        elif key == "triples_json":
            for t in _json_field(value, where, key, list):
                if not isinstance(t, dict):
                    raise _fail(where, "triples_json must hold a list of objects")
                try:
                    Triple(**t)
                except (TypeError, ValueError) as err:
                    raise _fail(where, f"triples_json holds an invalid triple ({str(err).splitlines()[0]})") from err
        elif key not in ("user_id", "agent_id", "session_id"):
            _scalar(value, where, key)
            unknown.append(key)
        out[key] = value
    for key in ("id", "content", "created_at"):
        if key not in out:
            raise _fail(where, f"memory without {key}")
    for key in ("user_id", "agent_id", "session_id"):
        if out.get(key) is not None:
            _checked(validate_label, out[key], where, key)
    try:
        scope = Scope(user_id=out.get("user_id"), agent_id=out.get("agent_id"), session_id=out.get("session_id"))
    except ValueError as err:
        raise _fail(where, f"invalid scope ids ({str(err).splitlines()[0]})") from err
    if scope.is_empty:
        raise _fail(where, "memory without user_id, agent_id or session_id")
    ns = entity_namespace(scope)
    for key in _MEMORY_UIDS:
        for uid in out.get(key, ()):
            if _uid_namespace(uid, where, key) != ns:
                raise _fail(where, f"{key} names an entity of another tenant ({uid.partition(_SEP)[0]!r})")
    for pk in out.get("po_keys", ()):
        _, _, uid = pk.partition(_SEP)
        if _uid_namespace(uid, where, "po_keys") != ns:
            raise _fail(where, f"po_keys names an entity of another tenant ({uid.partition(_SEP)[0]!r})")
    try:  # the record model has the last word: what it cannot read would break every search of the tenant
        props_to_record(out)
    except (ValueError, TypeError, OverflowError, OSError) as err:
        raise _fail(where, f"not a valid memory ({str(err).splitlines()[0][:200]})") from err
    return out, scope, unknown


def decode_embedding_strict(data: Any, where: str) -> np.ndarray:
    """A line's embedding: strict base64 of little-endian float32, finite and non-zero."""
    if not isinstance(data, str):
        raise _fail(where, "embedding must be a base64 string")
    try:
        raw = base64.b64decode(data.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError) as err:
        raise _fail(where, f"embedding is not valid base64 ({err})") from err
    if not raw or len(raw) % 4:
        raise _fail(where, f"embedding is {len(raw)} bytes, not a whole number of float32 values")
    vec = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    if not np.isfinite(vec).all():
        raise _fail(where, "embedding holds NaN or infinite values")
    if float(np.linalg.norm(vec)) <= 1e-12:
        raise _fail(where, "embedding is all zeros")
    return vec


@dataclass
class _Checked:
    """What validation learned about a file (enough to check the graph and to write it)."""

    header: dict[str, Any] = field(default_factory=dict)
    memories: dict[str, str] = field(default_factory=dict)  # id -> entity namespace (user_id or "")
    namespaces: set[str] = field(default_factory=set)  # the entity namespaces of those memories
    users: dict[str, str | None] = field(default_factory=dict)  # id -> user_id
    entities: dict[str, str] = field(default_factory=dict)  # uid -> namespace
    audit_ids: set[str] = field(default_factory=set)
    foreign_audit: dict[str, str | None] = field(default_factory=dict)  # memory id not in the file -> audit user_id
    kinds: dict[str, int] = field(default_factory=dict)
    need_embedding: set[str] = field(default_factory=set)  # memories that come without an embedding
    dimension: int | None = None
    unknown: set[str] = field(default_factory=set)
    rescreened: dict[str, Rescreen] = field(default_factory=dict)  # id -> what screening changes on restore


class _Validator:
    """Checks lines in order; everything a line refers to must have been seen (the export writes memories, then
    entities, then what links them, then the audit trail, and a file in any other order is refused)."""

    def __init__(self, name: str, target: Scope | None, screen: Screen | None = None) -> None:
        self.name = name
        self.target = target
        self.screen = screen
        self.seen = _Checked()
        self.rank = -1
        self.ended = False
        # the whole tenant (or every tenant) is restored: audit entries of memories purged before the export are
        # part of its trail; a narrower restore (one agent or session) only takes the trail of its memories
        self.whole_tenant = target is None or (target.agent_id is None and target.session_id is None)

    # ------------------------------------------------------------------ per line
    def line(self, n: int, raw: str) -> dict[str, Any] | None:
        where = f"{self.name}:{n}"
        if not raw.strip():
            return None
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError) as err:
            raise _fail(where, f"not valid JSON ({str(err)[:120]})") from err
        if not isinstance(obj, dict):
            raise _fail(where, "not a JSON object")
        kind = obj.get("kind")
        if kind not in _ORDER:
            raise _fail(where, f"unknown kind {kind!r}"[:200])
        if self.ended:
            raise _fail(where, "data after the end line")
        if self.rank < 0 and kind != "header":
            raise _fail(where, "the file does not start with an export header")
        if kind == "header" and self.rank >= 0:
            raise _fail(where, "a second header (concatenated exports?)")
        if _ORDER[kind] < self.rank:
            raise _fail(where, f"a {kind} line after {self._kind_name()} lines (lines are out of export order)")
        self.rank = _ORDER[kind]
        getattr(self, f"_{kind}")(obj, where)
        if kind in _COUNTED:
            self.seen.kinds[kind] = self.seen.kinds.get(kind, 0) + 1
        return obj

    def _kind_name(self) -> str:
        return next(k for k, v in _ORDER.items() if v == self.rank)

    def _inside(self, scope: Scope) -> bool:
        return self.target is None or self.target.contains(scope)

    def _header(self, obj: dict[str, Any], where: str) -> None:
        if obj.get("format") != FORMAT:
            raise _fail(where, f"not a NeuSym export (format {obj.get('format')!r})"[:200])
        version = obj.get("version")
        if isinstance(version, bool) or not isinstance(version, int) or version > VERSION:
            raise _fail(where, f"export version {version!r} is newer than this NeuSym understands ({VERSION})")
        dim = obj.get("dimension")
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int) or dim <= 0):
            raise _fail(where, f"header dimension must be a positive integer, got {dim!r}")
        self.seen.header = obj

    def _memory(self, obj: dict[str, Any], where: str) -> None:
        props, scope, unknown = check_memory_props(obj.get("props"), where)
        mid = str(props["id"])
        if obj.get("id") not in (None, mid):
            raise _fail(where, "memory id and props.id differ")
        if mid in self.seen.memories:
            raise _fail(where, f"memory {mid} appears twice")
        if not self._inside(scope):
            raise _fail(where, f"memory {mid} belongs to {_ids(scope)}, outside the restore scope "
                               f"{_ids(self.target)}; pass the matching scope (or all_tenants for an operator "
                               "restore)")
        emb = obj.get("embedding")
        if emb is None:
            self.seen.need_embedding.add(mid)
        else:
            dim = int(decode_embedding_strict(emb, where).shape[0])
            expected = self.seen.dimension or self.seen.header.get("dimension")
            if expected is not None and dim != expected:
                raise _fail(where, f"a {dim}-d embedding in a file of {expected}-d embeddings")
            self.seen.dimension = dim
        self.seen.memories[mid] = entity_namespace(scope)
        self.seen.namespaces.add(self.seen.memories[mid])
        self.seen.users[mid] = scope.user_id
        self.seen.unknown.update(unknown)
        change = self.screen(props, scope) if self.screen is not None else None
        if change is not None:
            self.seen.rescreened[mid] = change
        obj["props"] = props

    def _namespace_ok(self, ns: str) -> bool:
        """Entities may only live in the namespaces of the restored memories (all in scope)."""
        return ns in self.seen.namespaces

    def _entity(self, obj: dict[str, Any], where: str) -> None:
        uid = _text(obj.get("uid"), where, "entity uid", max_bytes=4096)
        props = obj.get("props")
        if not isinstance(props, dict):
            raise _fail(where, "entity without props")
        ns = _uid_namespace(uid, where, "entity uid")
        if not self._namespace_ok(ns):
            raise _fail(where, f"entity {uid!r} is in namespace {ns!r}, outside the restored tenant(s)")
        if uid in self.seen.entities:
            raise _fail(where, f"entity {uid!r} appears twice")
        if props.get("uid", uid) != uid:
            raise _fail(where, "entity uid and props.uid differ")
        if (props.get("user_id") or "") != ns:
            raise _fail(where, f"entity {uid!r} names user_id {props.get('user_id')!r}, not its namespace")
        for key in ("key", "name"):
            _text(props.get(key), where, f"entity {key}", max_bytes=64_000)
        if "mentions" in props and (isinstance(props["mentions"], bool) or not isinstance(props["mentions"], int)):
            raise _fail(where, "entity mentions must be an integer")
        for key, value in props.items():
            if key.startswith(RESERVED_PREFIX):
                raise _fail(where, f"property {key!r} is reserved")
            _scalar(value, where, f"entity {key}")
        obj["props"] = {k: v for k, v in props.items() if v is not None}
        self.seen.entities[uid] = ns

    def _memory_ref(self, mid: Any, where: str, what: str) -> str:
        if not isinstance(mid, str) or mid not in self.seen.memories:
            raise _fail(where, f"{what} {mid!r} is not a memory of this file"[:300])
        return self.seen.memories[mid]

    def _entity_ref(self, uid: Any, where: str, what: str) -> str:
        if not isinstance(uid, str) or uid not in self.seen.entities:
            raise _fail(where, f"{what} {uid!r} is not an entity of this file"[:300])
        return self.seen.entities[uid]

    def _props(self, obj: dict[str, Any], where: str, what: str) -> dict[str, Any]:
        props = obj.get("props") or {}
        if not isinstance(props, dict):
            raise _fail(where, f"{what} props must be an object")
        for key, value in props.items():
            if key.startswith(RESERVED_PREFIX):
                raise _fail(where, f"property {key!r} is reserved")
            _scalar(value, where, f"{what} {key}")
        return {k: v for k, v in props.items() if v is not None}

    def _mentions(self, obj: dict[str, Any], where: str) -> None:
        ns = self._memory_ref(obj.get("memory_id"), where, "mentions memory_id")
        if self._entity_ref(obj.get("uid"), where, "mentions uid") != ns:
            raise _fail(where, "a memory mentions an entity of another tenant")
        obj["props"] = self._props(obj, where, "mentions")

    def _relates(self, obj: dict[str, Any], where: str) -> None:
        props = self._props(obj, where, "relates")
        ns = self._memory_ref(props.get("memory_id"), where, "relates memory_id")
        for end in ("src", "dst"):
            if self._entity_ref(obj.get(end), where, f"relates {end}") != ns:
                raise _fail(where, f"relates {end} is an entity of another tenant than its memory")
        _text(props.get("predicate"), where, "relates predicate", max_bytes=4096)
        if "polarity" in props and not isinstance(props["polarity"], bool):
            raise _fail(where, "relates polarity must be true or false")
        obj["props"] = props

    def _edge(self, obj: dict[str, Any], where: str) -> None:
        rel = obj.get("rel")
        if rel not in RELATIONS:
            raise _fail(where, f"unknown relation {rel!r}; use one of {sorted(RELATIONS)}"[:300])
        src, dst = obj.get("src"), obj.get("dst")
        self._memory_ref(src, where, "edge src")
        self._memory_ref(dst, where, "edge dst")
        if self.seen.users[str(src)] != self.seen.users[str(dst)]:
            raise _fail(where, f"a {rel} edge between two tenants")
        obj["props"] = self._props(obj, where, "edge")

    def _audit(self, obj: dict[str, Any], where: str) -> None:
        props = self._props(obj, where, "audit")
        aid = _checked(validate_id, props.get("id"), where, "audit id")
        if aid in self.seen.audit_ids:
            raise _fail(where, f"audit entry {aid} appears twice")
        _checked(validate_id, props.get("action"), where, "audit action")
        _number(props.get("at"), where, "audit at")
        for key in ("actor", "user_id", "agent_id", "session_id"):  # shown by history and its tools
            if props.get(key) is not None:
                _checked(validate_label, props[key], where, f"audit {key}")
        if "details_json" in props:
            _json_field(props["details_json"], where, "audit details_json", dict)
        user = props.get("user_id")
        mid = props.get("memory_id")
        if mid is not None:
            mid = _checked(validate_id, mid, where, "audit memory_id")
        if mid is not None and mid in self.seen.memories:
            if user != self.seen.users[mid]:
                raise _fail(where, f"audit entry {aid} names tenant {user!r}, not the tenant of its memory")
        else:  # the trail of a memory purged before the export: the whole tenant's (or an operator's) restore only
            if not self.whole_tenant:
                raise _fail(where, f"audit entry {aid} is about a memory outside this file; a restore into one agent "
                                   "or session only takes the trail of its own memories")
            if self.target is not None and user != self.target.user_id:
                raise _fail(where, f"audit entry {aid} belongs to tenant {user!r}, outside the restore scope "
                                   f"{_ids(self.target)}")
            if mid is not None:
                self.seen.foreign_audit[mid] = user
        self.seen.audit_ids.add(aid)
        obj["props"] = props

    def _end(self, obj: dict[str, Any], where: str) -> None:
        counts = obj.get("counts")
        if not isinstance(counts, dict) or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in counts.values()):
            raise _fail(where, "end line without counts")
        self.ended = True
        expected = {k: v for k, v in counts.items() if v}
        if expected != self.seen.kinds:
            raise _fail(self.name, f"counts do not match the end line (file {self.seen.kinds}, end line {expected})")

    def finish(self) -> _Checked:
        if self.rank < 0:
            raise InvalidInputError(f"{self.name}: empty file")
        if not self.ended:
            raise InvalidInputError(f"{self.name}: truncated export (no end line)")
        return self.seen


def _ids(scope: Scope | None) -> str:
    if scope is None:
        return "every tenant"
    return "{" + ", ".join(f"{k}={v!r}" for k, v in scope.as_params().items() if v is not None) + "}"


# ---------------------------------------------------------------------------------------------------- screening
@dataclass
class Rescreen:
    """What governance changes on one restored memory: its new properties and the audit entry saying why."""

    props: dict[str, Any]
    audit: dict[str, Any]


Screen = Callable[[dict[str, Any], Scope], Rescreen | None]
_CURRENT = (MemoryStatus.ACTIVE.value, MemoryStatus.PENDING.value)
# a quarantined memory carries no graph facts (see governance.admission): its lookup keys go with them
_NO_FACTS: dict[str, Any] = {"entity_names": [], "entity_uids": [], "predicates": [], "object_uids": [],
                             "po_keys": [], "triples_json": "[]"}


def _screening(mem: Engine) -> Screen:
    """Every current memory a restore brings back is screened as an edit of it would be (``Governor.screen``, the
    first step of the write path's ``admit``): a file's statuses and flags are not evidence that anyone reviewed
    its text, so a text ``add`` would quarantine comes back quarantined (its facts and mentions left out) and a
    borderline one flagged ``suspicious``, each with an audit entry. Everything else is restored exactly."""

    def check(props: dict[str, Any], scope: Scope) -> Rescreen | None:
        if props.get("status", MemoryStatus.ACTIVE.value) not in _CURRENT:
            return None
        rec = props_to_record(props)
        d = mem.governor.screen(rec, scope)
        after = d.record
        if after.status is rec.status and set(after.flags) == set(rec.flags):
            return None
        new: dict[str, Any] = {"status": after.status.value, "flags": list(after.flags),
                               "metadata_json": json.dumps(after.metadata, ensure_ascii=False, default=str)}
        if after.status is MemoryStatus.QUARANTINED:
            new.update(_NO_FACTS)
        entry = mem.governor.decision_audits([d], scope, actor="restore")[0]
        entry["reason"] = f"screened on restore: {d.reason}"
        return Rescreen(props=new, audit=entry)

    return check


# ---------------------------------------------------------------------------------------------------- restore
def restore(mem: Engine, source: Source, *, scope: Scope | None, skip_existing: bool = False,
            reembed: bool = False, dry_run: bool = False, batch: int = 200,
            progress: Progress | None = None) -> RestoreReport:
    """Validate ``source`` completely, then write it all or nothing into ``scope`` (``None``: every tenant).

    Raises :class:`InvalidInputError` (with the file name and line number) for any line that is malformed or
    reaches outside ``scope``, for ids that already exist (unless ``skip_existing``) or belong to another tenant,
    and for embeddings of another size than the target's (unless ``reembed``); nothing is written then.
    """
    started = time.perf_counter()
    _check_tenant(scope, "restore")
    lines = _Lines(source)
    try:
        checker = _Validator(lines.name, scope, _screening(mem))
        for n, raw in lines.read():
            checker.line(n, raw)
        seen = checker.finish()
        report = RestoreReport(file=lines.name, dry_run=dry_run, scope=scope.as_params() if scope else None,
                               unknown_fields=sorted(seen.unknown),
                               source={k: seen.header.get(k) for k in ("scope", "all_tenants", "embedder",
                                                                       "dimension", "exported_at", "neusym",
                                                                       "backend")})
        existing = _check_graph(mem, seen, skip_existing=skip_existing, reembed=reembed, name=lines.name)
        report.skipped = len(existing)
        report.rescreened = sorted(set(seen.rescreened) - existing)
        if dry_run:
            report.memories = len(seen.memories) - len(existing)
            report.entities = seen.kinds.get("entity", 0)
            report.mentions = seen.kinds.get("mentions", 0)
            report.relates = seen.kinds.get("relates", 0)
            report.edges = seen.kinds.get("edge", 0)
            report.audit = seen.kinds.get("audit", 0)
            report.reembedded = len((set(seen.memories) if reembed else seen.need_embedding) - existing)
        else:
            _write(mem, lines, existing, report, reembed=reembed, batch=max(1, int(batch)), progress=progress,
                   total=len(seen.memories) - len(existing),
                   rescreened={k: v for k, v in seen.rescreened.items() if k not in existing})
    finally:
        lines.close()
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _check_graph(mem: Engine, seen: _Checked, *, skip_existing: bool, reembed: bool, name: str) -> set[str]:
    """Read-only checks against the target graph; returns the ids of memories it already has."""
    dim = mem.embedder.dimension
    if not reembed and seen.dimension is not None and seen.dimension != dim:
        raise InvalidInputError(
            f"{name} holds {seen.dimension}-d embeddings ({seen.header.get('embedder')}); this memory uses {dim}-d "
            f"({mem.embedder.name}): use the embedder the export was made with, or re-embed")
    there = existing_memories(mem.store, list(seen.memories))
    foreign = sorted(i for i, user in there.items() if user != seen.users[i])
    if foreign:
        raise InvalidInputError(f"{name}: memory id {foreign[0]} already exists in another tenant "
                                f"({len(foreign)} such ids); nothing was restored")
    if there and not skip_existing:
        raise InvalidInputError(f"{len(there)} of the {len(seen.memories)} memories already exist here (e.g. "
                                f"{sorted(there)[0]}); restore into an empty graph, or keep the existing ones and "
                                "restore the rest with skip_existing=True (neusym restore --skip-existing)")
    purged = existing_memories(mem.store, sorted(seen.foreign_audit))
    clash = sorted(i for i, user in purged.items() if user != seen.foreign_audit[i])
    if clash:
        raise InvalidInputError(f"{name}: an audit entry names memory {clash[0]}, which belongs to another tenant; "
                                "nothing was restored")
    return set(there)


def _clean(props: Any) -> dict[str, Any]:
    return {k: v for k, v in (props or {}).items() if v is not None and k not in LOCAL_PROPS}


def _write(mem: Engine, lines: _Lines, existing: set[str], report: RestoreReport, *, reembed: bool,
           batch: int, progress: Progress | None, total: int, rescreened: dict[str, Rescreen]) -> None:
    """Second pass: stage every line, commit in one statement, then let the derived indexes catch up.

    The lines were validated in the first pass; this one reads the same bytes (checked by their hash before the
    commit, so a file changed in between is never committed) and only shapes them for the graph, with what
    screening changed (``rescreened``: new properties, no mentions or facts for a quarantined memory, and the
    audit entries).
    """
    quarantined = {k for k, v in rescreened.items() if v.props["status"] == MemoryStatus.QUARANTINED.value}
    pending: dict[str, list[dict[str, Any]]] = {"memory": [], "entity": [], "audit": [],
                                                **{rel: [] for rel in LINK_TYPES}}
    staged_memories = 0
    with StagedRestore(mem.store) as staged:

        def flush(kind: str, *, force: bool = False) -> None:
            nonlocal staged_memories
            rows = pending[kind]
            if not rows or (len(rows) < batch and not force):
                return
            pending[kind] = []
            if kind == "memory":
                _stage_memories(mem, staged, rows, reembed=reembed, report=report)
                staged_memories += len(rows)
                if progress is not None:
                    progress(staged_memories, total)
            elif kind == "entity":
                staged.entities(rows)
            elif kind == "audit":
                staged.audit(rows)
            else:
                staged.links(kind, rows)

        for _, raw in lines.read():
            if not raw.strip():
                continue
            obj = json.loads(raw)
            kind = obj["kind"]
            if kind == "memory":
                mid = str(obj["props"]["id"])
                if mid in existing:
                    continue
                change = rescreened.get(mid)
                props = {**_clean(obj["props"]), **(change.props if change else {})}
                pending["memory"].append({"props": props, "embedding": obj.get("embedding")})
            elif kind == "entity":
                pending["entity"].append({"uid": obj["uid"], "props": _clean(obj["props"])})
            elif kind == "mentions":
                if obj["memory_id"] in existing or obj["memory_id"] in quarantined:  # kept ones keep their own
                    continue
                kind = "MENTIONS"
                pending[kind].append({"src": obj["memory_id"], "dst": obj["uid"], "props": _clean(obj.get("props"))})
            elif kind == "relates":
                if obj["props"].get("memory_id") in existing or obj["props"].get("memory_id") in quarantined:
                    continue
                kind = "RELATES"
                pending[kind].append({"src": obj["src"], "dst": obj["dst"], "props": _clean(obj["props"])})
            elif kind == "edge":
                kind = str(obj["rel"])
                pending[kind].append({"src": obj["src"], "dst": obj["dst"], "props": _clean(obj.get("props"))})
            elif kind == "audit":
                pending["audit"].append(_clean(obj["props"]))
            else:
                continue
            flush(kind)
        pending["audit"] += mem.store.audit_rows([v.audit for v in rescreened.values()])
        for kind in pending:
            flush(kind, force=True)
        with mem.mutation(None, persist=True):  # FAISS/BM25 follow the graph, as after any write
            done = staged.commit(live_ids=sorted(existing))
            report.memories, report.entities, report.audit = done["memories"], done["entities"], done["audit"]
            report.mentions, report.relates, report.edges = done["mentions"], done["relates"], done["edges"]


def _stage_memories(mem: Engine, staged: StagedRestore, rows: list[dict[str, Any]], *, reembed: bool,
                    report: RestoreReport) -> None:
    need = [r for r in rows if reembed or not r.get("embedding")]
    if need:
        vecs = mem.embedder.embed_documents([str(r["props"]["content"]) for r in need])
        for r, v in zip(need, vecs, strict=True):
            r["embedding"] = encode_embedding(np.asarray(v, dtype=np.float32))
        report.reembedded += len(need)
    staged.memories(rows)


