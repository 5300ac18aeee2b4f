"""FalkorDB executor over the native client (RESP on a unix socket or TCP), never Bolt."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping
from typing import Any

from neusym.errors import BackendError, BackendUnavailableError, ClosedError, InvalidInputError
from neusym.symbolic.dialects import Dialect
from neusym.symbolic.executors.base import Row
from neusym.symbolic.executors.embedded import EmbeddedFalkorDB

__all__ = ["FalkorDBExecutor"]

log = logging.getLogger(__name__)


def _clean(value: Any) -> Any:
    """FalkorDB's client inlines params as a CYPHER prefix: tuples become lists, NaN/inf are refused early, and so
    are strings the prefix cannot carry (a NUL ends the query text, a lone surrogate is not UTF-8): those are the
    caller's input errors, refused before anything is sent."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        raise BackendError("NaN/inf cannot be stored in the graph")
    if isinstance(value, str):
        if "\x00" in value:
            raise InvalidInputError("a string value contains a NUL character")
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as err:
                raise InvalidInputError(f"a string value contains a lone surrogate at position {err.start}") from err
        return value
    if isinstance(value, tuple | list):
        return [_clean(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    return value


def _plain(value: Any) -> Any:
    """Turn client result objects (OrderedDicts, nodes) into plain Python values."""
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    props = getattr(value, "properties", None)
    if isinstance(props, dict):  # Node / Edge
        return dict(props)
    return value


class FalkorDBExecutor:
    """Runs Cypher on one FalkorDB graph.

    Args:
        graph: graph (key) name; one data directory can hold several graphs.
        data_dir: start/reuse the embedded server for this directory (the default mode).
        host, port, password, unix_socket_path: connect to an existing FalkorDB instead (``FALKORDB_HOST``,
            ``FALKORDB_PORT``, ``FALKORDB_PASSWORD`` are read by :meth:`from_env`).
        stop_on_close: stop an embedded server this executor started when no other client is connected.
    """

    dialect = Dialect.FALKORDB

    def __init__(
        self,
        graph: str = "neusym",
        *,
        data_dir: str | os.PathLike[str] | None = None,
        host: str | None = None,
        port: int | None = None,
        password: str | None = None,
        unix_socket_path: str | None = None,
        appendfsync: str = "always",
        stop_on_close: bool = True,
    ) -> None:
        try:
            import falkordb
        except ImportError as err:  # pragma: no cover
            raise BackendUnavailableError("FalkorDB support needs the 'falkordb' package: pip install falkordb") from err
        self.embedded: EmbeddedFalkorDB | None = None
        self.stop_on_close = stop_on_close
        if host is None and unix_socket_path is None:
            if data_dir is None:
                raise BackendUnavailableError("FalkorDBExecutor needs data_dir (embedded) or host/unix_socket_path")
            self.embedded = EmbeddedFalkorDB(data_dir, appendfsync=appendfsync)
            unix_socket_path = self.embedded.start()
        try:
            if unix_socket_path is not None:
                self._db = falkordb.FalkorDB(unix_socket_path=unix_socket_path, password=password)
            else:
                self._db = falkordb.FalkorDB(host=host or "localhost", port=port or 6379, password=password)
            self._db.connection.ping()
        except Exception as err:  # redis raises several connection error types
            if self.embedded is not None:
                self.embedded.stop(force=True)
            raise BackendUnavailableError(f"cannot connect to FalkorDB: {err}") from err
        self.graph_name = graph
        self._graph = self._db.select_graph(graph)
        self._closed = False

    def run(self, cypher: str, params: Mapping[str, Any] | None = None, *, write: bool = True) -> list[Row]:
        if self._closed:
            raise ClosedError("FalkorDB executor is closed")
        clean = _clean(dict(params or {}))
        try:
            result = self._graph.query(cypher, clean) if write else self._graph.ro_query(cypher, clean)
        except Exception as err:
            msg = str(err)
            if "Connection" in type(err).__name__ or "connect" in msg.lower() or isinstance(err, OSError):
                raise BackendUnavailableError(f"FalkorDB is unreachable: {msg}") from err
            raise BackendError(f"FalkorDB error: {msg}\nquery: {cypher[:500]}") from err
        header = [h[1] if isinstance(h, list | tuple) else h for h in (result.header or [])]
        names = [h.decode() if isinstance(h, bytes) else str(h) for h in header]
        return [dict(zip(names, (_plain(v) for v in row), strict=False)) for row in result.result_set]

    def client_count(self) -> int:
        try:
            return len(self._db.connection.client_list())
        except Exception:  # noqa: BLE001 - best effort
            return 0

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        others = self.client_count() - 1
        with contextlib.suppress(Exception):
            self._db.connection.close()
        if self.embedded is not None and self.stop_on_close and others <= 0:
            self.embedded.stop()

    def delete_graph(self) -> None:
        """Drop the whole graph (used by tests and hard tenant purges of a dedicated graph)."""
        try:
            self._graph.delete()
        except Exception as err:  # noqa: BLE001
            if "empty key" not in str(err).lower() and "invalid graph" not in str(err).lower():
                raise BackendError(str(err)) from err
