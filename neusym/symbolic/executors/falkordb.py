"""FalkorDB executor over the native client (RESP on a unix socket or TCP), never Bolt."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from neusym.errors import BackendError, BackendUnavailableError, ClosedError, InvalidInputError
from neusym.symbolic.dialects import Dialect
from neusym.symbolic.executors.base import Row
from neusym.symbolic.executors.embedded import EmbeddedFalkorDB

__all__ = ["FalkorDBExecutor", "build_query"]

log = logging.getLogger(__name__)

_QUERY = "GRAPH.QUERY"
_RO_QUERY = "GRAPH.RO_QUERY"


_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
_KEY_CACHE: dict[str, str] = {}  # validated map keys / parameter names -> their backticked form
_KEY_CACHE_MAX = 4096


def _key(key: Any) -> str:
    """A map key or parameter name as a backticked identifier. FalkorDB's header parser has no escape for a
    backtick inside one, and an empty name is not an identifier: both are refused."""
    cached = _KEY_CACHE.get(key) if type(key) is str else None
    if cached is not None:
        return cached
    name = key if type(key) is str else str(key)
    if not name or "`" in name:
        raise InvalidInputError(f"parameter/map key {name!r} cannot be sent to FalkorDB (empty or has a backtick)")
    quoted = f"`{name}`"
    if len(_KEY_CACHE) < _KEY_CACHE_MAX:
        _KEY_CACHE[name] = quoted
    return quoted


def _literal(value: Any) -> str:
    """One parameter value as a Cypher literal of the ``CYPHER name=value ...`` header, in one pass.

    FalkorDB takes parameters only as that text prefix. Inside a double-quoted literal a backslash starts an escape
    and a double quote ends the string; every other character (raw newlines, control characters, any Unicode) is
    taken as is. So a string is quoted by doubling its backslashes and escaping its double quotes, nothing else.
    Numbers are checked rather than spliced: an int outside 64 bits would be clamped silently by the server, and
    NaN/inf have no literal. Anything else (sets, arbitrary objects) is refused instead of being sent as its
    ``str()``, so no value can ever become Cypher syntax.
    """
    t = type(value)
    if t is str:
        text: str = value
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if t is float:
        if value - value == 0.0:  # false for NaN and +-inf
            return repr(value)
        raise BackendError("NaN/inf cannot be stored in the graph")
    if t is int:
        if _INT64_MIN <= value <= _INT64_MAX:
            return repr(value)
        raise InvalidInputError(f"integer {value} does not fit in the graph's 64-bit integers")
    if value is None:
        return "null"
    if t is bool:
        return "true" if value else "false"
    if t is list or t is tuple:
        return "[" + ",".join([_literal(v) for v in value]) + "]"
    if t is dict:
        return _map(value)
    return _literal_other(value)


def _map(value: dict[Any, Any]) -> str:
    """A map literal. The common values (strings, finite floats, None) are written inline: a batch create sends
    tens of thousands of them, and a call per value was most of the serializer's time."""
    parts: list[str] = []
    append = parts.append
    cache = _KEY_CACHE
    for k, v in value.items():
        key = cache.get(k) if type(k) is str else None
        if key is None:
            key = _key(k)
        t = type(v)
        if t is str:
            append(key + ':"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"')
        elif v is None:
            append(key + ":null")
        elif t is float and v - v == 0.0:
            append(key + ":" + repr(v))
        else:
            append(key + ":" + _literal(v))
    return "{" + ",".join(parts) + "}"


def _literal_other(value: Any) -> str:
    """Subclasses of the plain types (StrEnum, IntEnum, numpy float64), numpy scalars/arrays, other mappings."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _literal(str.__str__(value))  # the string's characters, not a subclass' __str__
    if isinstance(value, int):
        return _literal(int(value))
    if isinstance(value, float):
        return _literal(float(value))
    if isinstance(value, np.generic):
        return _literal(value.item())
    if isinstance(value, np.ndarray):
        return _literal(value.tolist())
    if isinstance(value, bytes):
        try:
            return _literal(value.decode("utf-8"))
        except UnicodeDecodeError as err:
            raise InvalidInputError("a bytes value is not valid UTF-8") from err
    if isinstance(value, Mapping):
        return _literal(dict(value))
    if isinstance(value, list | tuple):
        return _literal(list(value))
    raise InvalidInputError(f"a {type(value).__name__} cannot be passed to the graph as a parameter")


def build_query(cypher: str, params: Mapping[str, Any] | None) -> bytes:
    """The exact bytes sent as FalkorDB's query argument: the parameter header, then the statement.

    Refused before anything is sent (the caller's input errors): a NUL (the server reads the query as a C
    string, so it would cut the statement short) and a lone surrogate (not UTF-8).
    """
    if params:
        text = "CYPHER " + " ".join([_key(k) + "=" + _literal(v) for k, v in params.items()]) + " " + cypher
    else:
        text = cypher
    if "\x00" in text:
        raise InvalidInputError("a string value contains a NUL character")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise InvalidInputError("a string value contains a lone surrogate (invalid Unicode)") from err


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


# compact result-set scalar types (FalkorDB's ResultSetScalarTypes)
_NULL, _STRING, _INTEGER, _BOOLEAN, _DOUBLE, _ARRAY, _MAP, _VECTORF32 = 1, 2, 3, 4, 5, 6, 10, 12


def _scalar(cell: list[Any], graph: Any) -> Any:
    """One ``[type, value]`` cell of a compact result. The common scalar types are decoded here; nodes, edges,
    paths, points and temporal values go through the client's own parser (it resolves label/property ids)."""
    t, v = cell[0], cell[1]
    if t in (_STRING, _INTEGER, _NULL):
        return v
    if t == _DOUBLE:
        return float(v)
    if t == _BOOLEAN:
        return v == "true" or v is True
    if t == _ARRAY:
        return [_scalar(c, graph) for c in v]
    if t == _MAP:
        return {v[i]: _scalar(v[i + 1], graph) for i in range(0, len(v), 2)}
    if t == _VECTORF32:
        return [float(x) for x in v]
    from falkordb.query_result import parse_scalar

    return _plain(parse_scalar(cell, graph))


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
        self._execute = self._db.connection.execute_command
        self._closed = False

    def run(self, cypher: str, params: Mapping[str, Any] | None = None, *, write: bool = True) -> list[Row]:
        """Send the statement with its parameter header (:func:`build_query`) and decode the compact reply.

        Why not ``Graph.query``: the client walks every parameter in pure Python to build the header (after our own
        validation pass walked it once already) and decodes every returned cell through several calls; for
        stage 2 (50 candidates, ~50 columns per row) and batch creates that was a large share of the latency.
        """
        if self._closed:
            raise ClosedError("FalkorDB executor is closed")
        query = build_query(cypher, params)
        try:
            reply = self._execute(_QUERY if write else _RO_QUERY, self.graph_name, query, "--compact")
            if isinstance(reply[-1], Exception):  # run-time errors arrive as the reply's last element
                raise reply[-1]
        except Exception as err:
            msg = str(err)
            if "Connection" in type(err).__name__ or "connect" in msg.lower() or isinstance(err, OSError):
                raise BackendUnavailableError(f"FalkorDB is unreachable: {msg}") from err
            raise BackendError(f"FalkorDB error: {msg}\nquery: {cypher[:500]}") from err
        if len(reply) < 3:  # statistics only (a write without RETURN)
            return []
        names = [h[1] for h in reply[0]]
        graph = self._graph
        return [{n: _scalar(c, graph) for n, c in zip(names, row, strict=False)} for row in reply[1]]

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
