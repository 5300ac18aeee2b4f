"""Store-level metadata in the graph: the embedder identity and the progress of a re-embed.

One ``NeuSymMeta {key: 'embedder'}`` node. It lives in the graph (not next to the FAISS file) because the graph is
the source of truth that every process sharing the store reads: a FAISS file is per machine, derived, and may be
deleted at any time. Properties:

* ``identity``: JSON of the :class:`~neusym.embeddings.identity.EmbedderIdentity` the stored vectors come from;
* ``reembed_to`` / ``reembed_after``: while a re-embed runs, the target identity and the last ``nid`` done, so an
  interrupted re-embed resumes where it stopped (each batch moves the cursor in the statement that writes it).

The statements here only read and write; the decisions are in :mod:`neusym.reembed`.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from typing import Any

from neusym.symbolic.executors.base import Executor

__all__ = ["EmbedderMeta", "MetaStore"]

_KEY = "embedder"

_READ = ("MATCH (x:NeuSymMeta {key: $key}) "
         "RETURN x.identity AS identity, x.reembed_to AS reembed_to, x.reembed_after AS reembed_after")

# ON CREATE only: two processes opening a new store at once both MERGE; the first identity wins and the second
# reads it back and is checked against it like any later open.
_RECORD = ("MERGE (x:NeuSymMeta {key: $key}) ON CREATE SET x.identity = $identity, x.recorded_at = $now "
           "RETURN x.identity AS identity, x.reembed_to AS reembed_to, x.reembed_after AS reembed_after")

# The re-embed batch: new vectors, a fresh seq per memory (so every process's derived indexes pick them up through
# the ordinary catch-up) and the resume cursor, in ONE statement: a crash leaves either the whole batch with its
# cursor, or neither.
_REEMBED_BATCH = (
    "MERGE (c:Counter {name: 'seq'}) ON CREATE SET c.value = 0 "
    "SET c.value = c.value + $n "
    "WITH c.value - $n AS base "
    "UNWIND range(0, size($rows) - 1) AS i "
    "WITH base + i + 1 AS s, $rows[i] AS r "
    "MATCH (m:Memory {nid: r.nid}) "
    "SET m.embedding = r.embedding, m.embedding_vec = r.vec, m.seq = s "
    "WITH count(m) AS written "
    "MATCH (x:NeuSymMeta {key: $key}) SET x.reembed_after = $last "
    "RETURN written"
)


@dataclass(frozen=True)
class EmbedderMeta:
    identity: str | None
    reembed_to: str | None
    reembed_after: int | None

    @classmethod
    def from_row(cls, row: dict[str, Any] | None) -> EmbedderMeta | None:
        if row is None:
            return None
        after = row.get("reembed_after")
        return cls(identity=row.get("identity"), reembed_to=row.get("reembed_to") or None,
                   reembed_after=int(after) if after is not None else None)


class MetaStore:
    """Reads and writes the ``NeuSymMeta`` node and the re-embed batches over one executor."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor

    def read(self) -> EmbedderMeta | None:
        rows = self.executor.run(_READ, {"key": _KEY}, write=False)
        return EmbedderMeta.from_row(dict(rows[0]) if rows else None)

    def record(self, identity_json: str) -> EmbedderMeta:
        """Record ``identity_json`` unless an identity is already recorded; returns what the graph holds."""
        rows = self.executor.run(_RECORD, {"key": _KEY, "identity": identity_json, "now": time.time()})
        meta = EmbedderMeta.from_row(dict(rows[0]) if rows else None)
        assert meta is not None
        return meta

    def replace(self, identity_json: str) -> None:
        """Set the identity (a finished re-embed) and clear the re-embed progress."""
        self.executor.run(
            "MERGE (x:NeuSymMeta {key: $key}) SET x.identity = $identity, x.recorded_at = $now, "
            "x.reembed_to = null, x.reembed_after = null",
            {"key": _KEY, "identity": identity_json, "now": time.time()},
        )

    def start_reembed(self, target_json: str) -> None:
        """Record the re-embed in the graph (target, cursor, when and by whom): from here every other process's
        vector writes are refused (cypher.EMBEDDER_GUARD) and its opens are told a re-embed is running."""
        self.executor.run(
            "MERGE (x:NeuSymMeta {key: $key}) SET x.reembed_to = $target, x.reembed_after = -1, "
            "x.reembed_started_at = $now, x.reembed_by = $by",
            {"key": _KEY, "target": target_json, "now": time.time(), "by": f"{socket.gethostname()}:{os.getpid()}"},
        )

    def count_other_widths(self, dimension: int) -> int:
        """How many memories hold an embedding of another width than ``dimension`` (a mixed store): read from the
        length of the stored base64, so no vector is decoded."""
        width = 4 * ((4 * int(dimension) + 2) // 3)
        rows = self.executor.run(
            "MATCH (m:Memory) WHERE m.embedding IS NOT NULL AND size(m.embedding) <> $width RETURN count(m) AS n",
            {"width": width}, write=False)
        return int(rows[0]["n"]) if rows else 0

    def sample_dimension(self) -> int | None:
        """The width of one stored embedding (stores from before identities were recorded), or None if empty."""
        from neusym.symbolic.convert import decode_embedding

        rows = self.executor.run("MATCH (m:Memory) WHERE m.embedding IS NOT NULL RETURN m.embedding AS e LIMIT 1",
                                 write=False)
        return int(decode_embedding(rows[0]["e"]).shape[0]) if rows else None

    def count_memories(self) -> int:
        rows = self.executor.run("MATCH (m:Memory) WHERE m.content IS NOT NULL RETURN count(m) AS n", write=False)
        return int(rows[0]["n"]) if rows else 0

    def count_after(self, after: int) -> int:
        rows = self.executor.run(
            "MATCH (m:Memory) WHERE m.nid > $after AND m.content IS NOT NULL RETURN count(m) AS n",
            {"after": int(after)}, write=False,
        )
        return int(rows[0]["n"]) if rows else 0

    def contents_after(self, after: int, limit: int) -> list[tuple[int, str]]:
        """(nid, content) of the next ``limit`` memories after ``after`` in ``nid`` order (the resume order)."""
        rows = self.executor.run(
            "MATCH (m:Memory) WHERE m.nid > $after AND m.content IS NOT NULL "
            "RETURN m.nid AS nid, m.content AS content ORDER BY m.nid LIMIT $limit",
            {"after": int(after), "limit": int(limit)}, write=False,
        )
        return [(int(r["nid"]), str(r["content"])) for r in rows]

    def write_batch(self, rows: list[dict[str, Any]], last: int) -> int:
        """Write one batch of ``{nid, embedding, vec}`` rows and move the cursor to ``last``; returns rows written."""
        out = self.executor.run(_REEMBED_BATCH, {"key": _KEY, "rows": rows, "n": len(rows), "last": int(last)})
        return int(out[0]["written"]) if out else 0

    def drop_vector_index(self) -> None:
        """Drop the Neo4j native vector index (its dimension is fixed at creation; re-created by the next open)."""
        self.executor.run("DROP INDEX neusym_memory_embedding IF EXISTS")
