"""The store's embedder identity: checked on every open, and re-embedding when the model changes.

On open (:func:`ensure_embedder`), the identity recorded in the graph is compared with this process's embedder
(rules in :mod:`neusym.embeddings.identity`): the same embedder opens; the same model on another runtime opens with a
warning; another model is refused with :class:`~neusym.errors.EmbedderMismatchError`, whose message says how to
re-embed. A store written before identities were recorded adopts the current embedder if the widths agree.

Re-embedding (:func:`reembed_store`) reads every memory's stored content in ``nid`` order, embeds it in batches and
writes the new vector with a fresh write sequence number, batch by batch, with the resume cursor in the same
statement. So it is

* lossless: only ``embedding`` (and the graph-side vector) change; content, facts, history and audit stay;
* visible to everyone through the normal catch-up: FAISS and BM25 in every process pick the memories up from the
  graph's write sequence, exactly like any other change;
* resumable: an interruption leaves the target and cursor in the graph, and the next run continues from there
  (opening normally meanwhile is refused, so nobody searches a half-converted store by accident);
* alone: it refuses to start (:class:`~neusym.errors.StoreInUseError`, naming them) while other processes hold the
  embedded server, and it is recorded in the graph while it runs, where every write that carries a vector checks
  it (:data:`neusym.symbolic.cypher.EMBEDDER_GUARD`): a process still open with the old embedder (any backend,
  including a remote one whose clients cannot be seen from here) gets :class:`~neusym.errors.EmbedderMismatchError`
  and writes nothing, instead of leaving the store with two vector widths;
* a repair: with ``reembed=True`` a store whose recorded embedder is the current one but whose memories hold vectors
  of another width (written by such a process before these checks) is re-embedded too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from neusym.embeddings.identity import EmbedderIdentity, identity_of
from neusym.errors import EmbedderMismatchError, InvalidInputError, StoreInUseError
from neusym.symbolic.convert import encode_embedding
from neusym.symbolic.meta import MetaStore
from neusym.symbolic.store import SymbolicStore

__all__ = ["REEMBED_HINT", "ReembedReport", "ensure_embedder", "reembed_store"]

log = logging.getLogger(__name__)

REEMBED_HINT = ("open it with the embedder it was written with, or re-embed every memory with the new one: "
                "`neusym reindex --reembed` (add the same --embedder/--data-dir/--backend options) or "
                "NeuSymMemory(..., reembed=True); batched and resumable, nothing is lost")
_UNKNOWN_LEGACY = "unknown (store created before NeuSym recorded embedder identities)"

Progress = Callable[[int, int], None]
Holders = Callable[[], "list[str] | None"]


@dataclass(frozen=True)
class ReembedReport:
    """What :func:`reembed_store` did: memories re-embedded, of how many, from which identity to which."""

    reembedded: int
    total: int
    source: EmbedderIdentity | None
    target: EmbedderIdentity
    resumed: bool


def _parse(raw: str | None) -> EmbedderIdentity | None:
    if not raw:
        return None
    try:
        return EmbedderIdentity.from_json(raw)
    except (ValueError, KeyError, TypeError):
        log.warning("unreadable embedder identity in the graph (%r): treating it as unknown", raw[:200])
        return EmbedderIdentity(name="unknown", model="unknown", dimension=0)


def ensure_embedder(store: SymbolicStore, embedder: Any, *, reembed: bool | Progress = False,
                    batch_size: int = 256, holders: Holders | None = None) -> tuple[EmbedderIdentity,
                                                                                  ReembedReport | None]:
    """Check (or first record) the store's embedder identity; returns the identity now recorded, and the report
    of the re-embed this call ran (if any). The store's writes check that identity from here on
    (``store.embedder_identity``).

    With ``reembed`` true (or a ``progress(done, total)`` callback) a store of another model, of the same model on
    another runtime, from before identities, with an interrupted re-embed, or holding vectors of another width
    than the recorded embedder's is re-embedded with ``embedder`` before returning instead of refused; the caller
    then loads its derived indexes as usual. ``holders`` (see :func:`reembed_store`) must name nobody for that.
    """
    identity, report = _ensure(store, embedder, reembed=reembed, batch_size=batch_size, holders=holders)
    store.embedder_identity = identity.to_json()
    return identity, report


def _ensure(store: SymbolicStore, embedder: Any, *, reembed: bool | Progress, batch_size: int,
            holders: Holders | None) -> tuple[EmbedderIdentity, ReembedReport | None]:
    progress = reembed if callable(reembed) else None

    def convert() -> tuple[EmbedderIdentity, ReembedReport]:
        report = reembed_store(store, embedder, batch_size=batch_size, progress=progress, holders=holders)
        return report.target, report

    meta = MetaStore(store.executor)
    current = identity_of(embedder)
    state = meta.read()
    if state is not None and state.reembed_to:
        target = _parse(state.reembed_to)
        if not reembed:
            done = "" if state.reembed_after is None else f" (stopped after memory nid {state.reembed_after})"
            raise EmbedderMismatchError(
                f"a re-embed of this store to {target.describe() if target else state.reembed_to} is running or "
                f"did not finish{done}; if no process is running it, resume it with `neusym reindex --reembed` or NeuSymMemory(..., reembed=True) "
                "using that embedder", stored=_parse(state.identity), current=current)
        return convert()
    if state is None or not state.identity:
        stored_dim = meta.sample_dimension()
        if reembed and stored_dim is not None:  # whatever wrote it, asked to re-embed: do it
            return convert()
        if stored_dim is not None and stored_dim != current.dimension:
            legacy = EmbedderIdentity(name="unknown", model="unknown", dimension=stored_dim)
            raise EmbedderMismatchError(
                f"this store's memories are {stored_dim}-d vectors from an embedder it did not record "
                f"({_UNKNOWN_LEGACY}); this process embeds with {current.describe()}: {REEMBED_HINT}",
                stored=legacy, current=current)
        state = meta.record(current.to_json())
        if stored_dim is not None:
            log.warning("this store predates embedder identities; recorded %s as its embedder (the vector width "
                        "matches). If it was written by another model, re-embed it: neusym reindex --reembed",
                        current.describe())
    stored = _parse(state.identity)
    assert stored is not None
    verdict = stored.compare(current)
    if reembed and verdict != "different" and meta.count_other_widths(stored.dimension):
        # a mixed store (vectors of two widths, written by a process that had another embedder): repair it
        log.warning("this store holds vectors of another width than its %d-d embedder's: re-embedding every memory",
                    stored.dimension)
        return convert()
    if verdict == "same":
        return stored, None
    if verdict == "compatible":
        if reembed:
            return convert()
        log.warning("this store was embedded with %s; this process uses %s: the same model on another runtime "
                    "(vectors agree to ~0.999 cosine), so it opens, and new memories get this runtime's vectors. "
                    "To make the store uniform: neusym reindex --reembed", stored.describe(), current.describe())
        return stored, None
    if reembed:
        return convert()
    raise EmbedderMismatchError(
        f"this store was embedded with {stored.describe()}, but this process embeds with {current.describe()}: "
        f"{REEMBED_HINT}", stored=stored, current=current)


def reembed_store(store: SymbolicStore, embedder: Any, *, batch_size: int = 256,
                  progress: Progress | None = None, holders: Holders | None = None) -> ReembedReport:
    """Re-embed every memory of the graph from its stored content with ``embedder`` (resumes an interrupted run).

    ``progress(done, total)`` is called after each batch. Works on a store of any identity (that is its purpose);
    the derived indexes of every process catch up through the graph's write sequence. ``holders()`` names the other
    processes holding the store (the embedded server's leases; None where they cannot be seen): if it names any,
    nothing is done and :class:`StoreInUseError` says who.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InvalidInputError(f"batch_size must be a positive int, got {batch_size!r}")
    busy = holders() if holders is not None else None
    if busy:
        raise StoreInUseError(
            f"cannot re-embed: {len(busy)} other process(es) hold this store ({'; '.join(busy)}); a process still "
            "writing with the old embedder would leave vectors of two widths. Close them (or wait for them to "
            "close) and run the re-embed again", holders=busy)
    meta = MetaStore(store.executor)
    target = identity_of(embedder)
    state = meta.read()
    source = _parse(state.identity) if state is not None else None
    resumed = bool(state is not None and state.reembed_to and _parse(state.reembed_to) == target)
    after = int(state.reembed_after) if resumed and state is not None and state.reembed_after is not None else -1
    if not resumed:
        meta.start_reembed(target.to_json())
    # The graph's native vector index (Neo4j) has a fixed width: keep writing it when the width is unchanged, else
    # drop it and clear the old vectors (the next open with neural_backend="neo4j_vector" re-creates and backfills).
    index_dim = store.vector_index_dimension()
    write_vec = index_dim is not None and index_dim == target.dimension
    if index_dim is not None and not write_vec:
        meta.drop_vector_index()
        store.vectors = False
    total = meta.count_memories()
    done = total - meta.count_after(after)
    written = 0
    log.info("re-embedding %d memories with %s%s", total, target.describe(),
             f" (resuming after nid {after})" if resumed else "")
    while True:
        batch = meta.contents_after(after, batch_size)
        if not batch:
            break
        vectors = embedder.embed_documents([content for _, content in batch])
        rows = [{"nid": nid, "embedding": encode_embedding(vectors[i]),
                 "vec": [float(x) for x in vectors[i]] if write_vec else None}
                for i, (nid, _) in enumerate(batch)]
        after = batch[-1][0]
        written += meta.write_batch(rows, after)
        done += len(batch)
        if progress is not None:
            progress(min(done, total), total)
    meta.replace(target.to_json())
    store.embedder_identity = target.to_json()
    log.info("re-embedded %d memories with %s", written, target.describe())
    return ReembedReport(reembedded=written, total=total, source=source, target=target, resumed=resumed)
