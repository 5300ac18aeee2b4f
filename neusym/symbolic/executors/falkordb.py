"""FalkorDB executor over the native client (RESP on a unix socket or TCP), never Bolt.

Why every call is watched: a FalkorDB server can stop answering altogether (twice in a few hundred fresh opens the
embedded server deadlocked on its first graph command, PING unanswered), and a client waiting on a socket with no
timeout then waits forever. So:

* the client socket has a timeout (``timeout``, :data:`~neusym.config.DEFAULT_GRAPH_TIMEOUT`), and reads carry
  FalkorDB's own ``TIMEOUT`` so the server abandons them too;
* for the embedded server, a watcher thread PINGs it on a separate connection whenever a call has been waiting
  for a couple of seconds. Redis answers PING on its main thread while FalkorDB runs queries on worker threads,
  so a long query does not delay it, and a PING unanswered for ``stall_timeout`` seconds means the server is stuck;
* a stuck or dead embedded server is restarted **once** from its AOF (acknowledged writes are in it): a read is
  retried on the new server, a write is reported as :class:`BackendUnavailableError` saying that it may or may not
  have been applied (a create replayed blindly could duplicate it). If the restart fails, or the server gets stuck
  again within a minute, the caller gets :class:`BackendUnavailableError`: never a silent hang.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import threading
import time
import weakref
from collections.abc import Mapping
from typing import Any

import numpy as np

from neusym.config import DEFAULT_GRAPH_TIMEOUT, DEFAULT_STALL_TIMEOUT
from neusym.errors import (
    BackendError,
    BackendUnavailableError,
    ClosedError,
    InvalidInputError,
    UnsafeQueryError,
)
from neusym.symbolic.dialects import Dialect
from neusym.symbolic.executors import watchdog as wd
from neusym.symbolic.executors.base import Row
from neusym.symbolic.executors.embedded import EmbeddedFalkorDB
from neusym.symbolic.guard import CheckedQuery, cap_rows
from neusym.symbolic.write_rules import check_write

__all__ = ["FalkorDBExecutor", "build_query"]

log = logging.getLogger(__name__)

_QUERY = "GRAPH.QUERY"
_RO_QUERY = "GRAPH.RO_QUERY"
_EXPLAIN = "GRAPH.EXPLAIN"
_PROBE_AFTER = 2.0  # seconds a call may wait before the watcher starts checking that the server still answers
_RESTART_COOLDOWN = 60.0  # a server stuck again this soon after a restart is reported, not restarted again
_SOCKET_MARGIN = 5.0  # the socket waits this much longer than the server-side TIMEOUT, so the server's error wins


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


class _CallWatch:
    """Tracks the graph calls in flight and, from a daemon thread, runs ``probe`` while the oldest one has been
    waiting for more than ``after`` seconds. Entering and leaving a call is a dict insert and pop under a lock."""

    def __init__(self, probe: Any, after: float) -> None:
        # a weak reference: an executor dropped without close() is still collected, and its watcher then ends
        self._probe = weakref.WeakMethod(probe)
        self._after = after
        self._lock = threading.Lock()
        self._inflight: dict[int, float] = {}
        self._ids = itertools.count()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def enter(self) -> int:
        token = next(self._ids)
        with self._lock:
            self._inflight[token] = time.monotonic()
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="neusym-graph-watch", daemon=True)
                self._thread.start()
        return token

    def leave(self, token: int) -> None:
        with self._lock:
            self._inflight.pop(token, None)

    def _oldest(self) -> float | None:
        with self._lock:
            return min(self._inflight.values(), default=None)

    def _loop(self) -> None:
        while not self._stop.wait(min(1.0, self._after / 2)):
            if self._probe() is None:  # the executor was collected
                return
            oldest = self._oldest()
            if oldest is not None and time.monotonic() - oldest >= self._after:
                probe = self._probe()
                if probe is None:
                    return
                try:
                    probe()
                except Exception:  # noqa: BLE001 - the watcher must survive; callers still have their timeout
                    log.exception("graph watcher: probe failed")
                del probe  # no strong reference to the executor while sleeping

    def close(self) -> None:
        self._stop.set()


class FalkorDBExecutor:
    """Runs Cypher on one FalkorDB graph.

    Args:
        graph: graph (key) name; one data directory can hold several graphs.
        data_dir: start/reuse the embedded server for this directory (the default mode).
        host, port, password, unix_socket_path: connect to an existing FalkorDB instead (``FALKORDB_HOST``,
            ``FALKORDB_PORT``, ``FALKORDB_PASSWORD`` are read by :meth:`from_env`).
        stop_on_close: stop the embedded server on close when no other NeuSym process or memory holds it.
        timeout: seconds one call may take (client socket timeout; server-side ``TIMEOUT`` for reads).
        stall_timeout: embedded only: seconds the server may leave a PING unanswered during a call before it is
            restarted (see the module docstring).
        idle_grace: embedded only: seconds a server nobody holds may keep running (see :class:`EmbeddedFalkorDB`).
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
        timeout: float = DEFAULT_GRAPH_TIMEOUT,
        stall_timeout: float = DEFAULT_STALL_TIMEOUT,
        idle_grace: float | None = None,
    ) -> None:
        try:
            import falkordb  # noqa: F401 - fail early and clearly when the client is missing
        except ImportError as err:  # pragma: no cover
            raise BackendUnavailableError("FalkorDB support needs the 'falkordb' package: pip install falkordb") from err
        if not timeout > 0 or not stall_timeout > 0:
            raise InvalidInputError("timeout and stall_timeout must be positive")
        self.embedded: EmbeddedFalkorDB | None = None
        self.stop_on_close = stop_on_close
        self.timeout = float(timeout)
        self.stall_timeout = float(stall_timeout)
        self.graph_name = graph
        self._password = password
        self._address: dict[str, Any]
        self._closed = False
        self._recover_lock = threading.Lock()
        self._generation = 0  # bumped by every reconnect/restart, so concurrent failures recover once
        self._last_restart: float | None = None
        self._restart_failure = ""
        self._watch: _CallWatch | None = None
        if host is None and unix_socket_path is None:
            if data_dir is None:
                raise BackendUnavailableError("FalkorDBExecutor needs data_dir (embedded) or host/unix_socket_path")
            self.embedded = EmbeddedFalkorDB(data_dir, appendfsync=appendfsync, idle_grace=idle_grace)
            unix_socket_path = self.embedded.start()
        self._address = ({"unix_socket_path": unix_socket_path} if unix_socket_path is not None
                         else {"host": host or "localhost", "port": port or 6379})
        try:
            self._connect()
            if self.embedded is None:  # the embedded server answered PING in start(); its calls are watched
                self._db.connection.ping()
        except Exception as err:  # redis raises several connection error types
            if self.embedded is not None:
                self.embedded.release(stop_if_last=False)
            raise BackendUnavailableError(f"cannot connect to FalkorDB: {err}") from err
        if self.embedded is not None:
            self._watch = _CallWatch(self._probe, min(_PROBE_AFTER, self.stall_timeout))
            # a server started by an older NeuSym may still record query telemetry (see EmbeddedFalkorDB.start)
            with contextlib.suppress(Exception):
                self._execute("GRAPH.CONFIG", "SET", "CMD_INFO", "no")

    def _connect(self) -> None:
        import falkordb
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        # No client-side retries: a write whose reply was lost must not be sent twice (see the module docstring).
        self._db = falkordb.FalkorDB(**self._address, password=self._password,
                                     socket_timeout=self.timeout + _SOCKET_MARGIN,
                                     socket_connect_timeout=min(self.timeout, 10.0), retry=Retry(NoBackoff(), 0))
        self._graph = self._db.select_graph(self.graph_name)
        self._execute = self._db.connection.execute_command

    def run(self, cypher: str, params: Mapping[str, Any] | None = None, *, write: bool = True) -> list[Row]:
        """Send the statement with its parameter header (:func:`build_query`) and decode the compact reply.

        Why not ``Graph.query``: the client walks every parameter in pure Python to build the header (after our own
        validation pass walked it once already) and decodes every returned cell through several calls; for
        stage 2 (50 candidates, ~50 columns per row) and batch creates that was a large share of the latency.
        """
        if write:
            check_write(cypher)  # never delete and create in one statement (see neusym.symbolic.write_rules)
        query = build_query(cypher, params)
        if write:
            args: tuple[Any, ...] = (_QUERY, self.graph_name, query, "--compact")
        else:
            args = (_RO_QUERY, self.graph_name, query, "--compact", "TIMEOUT", int(self.timeout * 1000))
        return self._rows(self._call(args, cypher, write=write))

    def run_read_only(self, query: CheckedQuery, params: Mapping[str, Any] | None, *, timeout: float,
                      max_rows: int) -> list[Row]:
        """Guarded raw Cypher (see :mod:`neusym.symbolic.guard`): FalkorDB's own plan is checked for ``Load CSV``
        and for procedure calls the lexical check did not approve, then the statement runs as ``GRAPH.RO_QUERY``
        with a server-side ``TIMEOUT``. The row cap is part of the statement (:func:`cap_rows`): the server stops
        after ``max_rows`` rows, so no row beyond them is sent or decoded."""
        query = cap_rows(query, max_rows, dict(params or {}))
        text = build_query(query.text, params)
        plan = self._call((_EXPLAIN, self.graph_name, text), query.text, write=False)
        ops = [str(line).strip() for line in (plan if isinstance(plan, list) else [plan])]
        if any(op.startswith("Load CSV") for op in ops):
            raise UnsafeQueryError("LOAD CSV is not allowed in read-only Cypher (found in the query plan)")
        calls = sum(op.startswith("ProcedureCall") for op in ops)
        if calls > len(query.procedures):
            raise UnsafeQueryError(f"the query plan calls {calls} procedure(s), the statement as checked "
                                   f"{len(query.procedures)}: refused")
        ms = max(1, int(min(timeout, self.timeout) * 1000))
        reply = self._call((_RO_QUERY, self.graph_name, text, "--compact", "TIMEOUT", ms), query.text, write=False)
        return self._rows(reply)[:max_rows]

    def _rows(self, reply: Any) -> list[Row]:
        if len(reply) < 3:  # statistics only (a write without RETURN)
            return []
        names = [h[1] for h in reply[0]]
        graph = self._graph
        return [{n: _scalar(c, graph) for n, c in zip(names, row, strict=False)} for row in reply[1]]

    def _call(self, args: tuple[Any, ...], cypher: str, *, write: bool) -> Any:
        """One command, watched; transport failures go through :meth:`_recover` (a read is retried once on a
        restarted server)."""
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.exceptions import TimeoutError as RedisTimeoutError

        retried = False
        while True:
            if self._closed:
                raise ClosedError("FalkorDB executor is closed")
            generation = self._generation
            token = self._watch.enter() if self._watch is not None else None
            try:
                reply = self._execute(*args)
                if isinstance(reply, list) and reply and isinstance(reply[-1], Exception):
                    raise reply[-1]  # run-time errors arrive as the reply's last element
                return reply
            # AttributeError: redis-py's socket torn down by another thread mid-read (see _probe)
            except (RedisConnectionError, RedisTimeoutError, OSError, AttributeError) as err:
                if self._closed:
                    raise ClosedError("FalkorDB executor was closed while a query ran") from err
                outcome = self._recover(generation, timed_out=isinstance(err, RedisTimeoutError))
                if outcome in ("restarted", "reconnected") and not write and not retried:
                    retried = True
                    continue
                raise self._transport_error(err, outcome, write) from err
            except Exception as err:
                raise BackendError(f"FalkorDB error: {err}\nquery: {cypher[:500]}") from err
            finally:
                if token is not None and self._watch is not None:
                    self._watch.leave(token)

    def _transport_error(self, err: Exception, outcome: str, write: bool) -> BackendError:
        where = f"FalkorDB ({self.embedded.data_dir if self.embedded else self._address})"
        if outcome == "slow":
            return BackendError(f"{where} did not finish the call within the {self.timeout:.0f}s graph timeout "
                                "(the server is alive; raise graph_timeout / NEUSYM_GRAPH_TIMEOUT for longer "
                                "operations)")
        if outcome in ("restarted", "reconnected"):
            return BackendUnavailableError(
                f"{where} was {outcome} during this {'write' if write else 'read'}: it was not confirmed and may or "
                "may not have been applied (acknowledged writes are kept); check before repeating it")
        if outcome == "gave-up":
            return BackendUnavailableError(f"{where} stopped answering again less than {_RESTART_COOLDOWN:.0f}s "
                                           f"after a restart: not restarting it again ({err})")
        if outcome == "failed":
            return BackendUnavailableError(f"{where} is unreachable and could not be restarted: "
                                           f"{self._restart_failure} ({err})")
        return BackendUnavailableError(f"{where} is unreachable: {err}")

    def _probe(self) -> None:
        """Watcher thread: a call has waited a while; if the server no longer answers PING, restart it (the calls
        waiting on the old server then fail over to :meth:`_recover`, which finds the restart done)."""
        assert self.embedded is not None
        generation = self._generation
        if self._closed or wd.responsive(self.embedded.socket_path, self.stall_timeout):
            return
        log.warning("embedded FalkorDB at %s did not answer PING for %.0fs during a call",
                    self.embedded.socket_path, self.stall_timeout)
        if self._recover(generation, timed_out=True, unresponsive=True) != "restarted":
            # not restarted (again): end the calls waiting on the stuck server instead of leaving them to the
            # socket timeout; each then reports BackendUnavailableError
            with contextlib.suppress(Exception):
                self._db.connection.connection_pool.disconnect(inuse_connections=True)

    def _recover(self, generation: int, *, timed_out: bool, unresponsive: bool = False) -> str:
        """Decide what a failed transport means and repair what can be repaired. Returns ``remote`` (nothing we can
        do), ``closed``, ``slow`` (alive, the call outlived the timeout), ``reconnected`` (alive, the connection
        had broken), ``restarted``, ``gave-up`` (stuck again right after a restart) or ``failed``."""
        if self.embedded is None:
            return "remote"
        with self._recover_lock:
            if self._closed:
                return "closed"
            if self._generation != generation:  # another thread (or the watcher) already reconnected/restarted
                return "restarted"
            sock = self.embedded.socket_path
            if not unresponsive and wd.responsive(sock, self.stall_timeout):
                if timed_out:
                    return "slow"
                self._reset_connections()
                return "reconnected"
            now = time.monotonic()
            if self._last_restart is not None and now - self._last_restart < _RESTART_COOLDOWN:
                return "gave-up"
            self._last_restart = now
            log.warning("restarting the embedded FalkorDB of %s from its AOF", self.embedded.data_dir)
            try:
                self.embedded.restart(self.embedded.server_pid)
            except BackendUnavailableError as err:
                log.error("could not restart the embedded FalkorDB: %s", err)
                self._restart_failure = str(err)
                return "failed"
            self._reset_connections()
            return "restarted"

    def _reset_connections(self) -> None:
        """Drop every pooled connection (they point at the old server); the next command opens a fresh one."""
        with contextlib.suppress(Exception):
            self._db.connection.connection_pool.disconnect()
        self._generation += 1

    def client_count(self) -> int:
        try:
            return len(self._db.connection.client_list())
        except Exception:  # noqa: BLE001 - best effort
            return 0

    def close(self) -> None:
        """Close the connection and give up this executor's hold on the embedded server, stopping it (AOF compacted
        first) when no other memory or process holds it and ``stop_on_close`` is set. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._watch is not None:
            self._watch.close()
        with contextlib.suppress(Exception):
            self._db.connection.close()
        if self.embedded is not None:
            self.embedded.release(stop_if_last=self.stop_on_close)

    def other_holders(self) -> list[str] | None:
        """Other processes holding the embedded server (see :meth:`EmbeddedFalkorDB.other_holders`); None for a
        remote server, whose clients cannot be seen from here."""
        return self.embedded.other_holders() if self.embedded is not None else None

    def mark_damaged(self, reason: str, files: list[str]) -> None:
        """The store was found damaged above the executor (its graph behind its indexes): keep the embedded
        server's files as they are (no compaction until the damage is accepted). A no-op for a remote server."""
        if self.embedded is not None:
            self.embedded.mark_damaged(reason, files)

    def forget_persisted(self, timeout: float | None = None) -> bool:
        """After a hard delete: make the deleted strings leave the server's files too. Drops the graph's query
        telemetry stream (recent query texts with their parameters) and rewrites the append-only log into a fresh
        snapshot, so neither the old base RDB nor the incremental log that replayed the ``CREATE`` keeps them.
        Embedded: waits for the rewrite (``timeout``, default scaled to the log's size); remote: best effort, not
        waited for. Returns whether the rewrite is known to have finished."""
        with contextlib.suppress(Exception):
            self._execute("DEL", f"telemetry{{{self.graph_name}}}")
        if self.embedded is not None:
            return self.embedded.compact(timeout)
        try:
            self._execute("BGREWRITEAOF")
        except Exception:  # noqa: BLE001 - e.g. persistence off or a rewrite already running
            return False
        return False

    def delete_graph(self) -> None:
        """Drop the whole graph (used by tests and hard tenant purges of a dedicated graph)."""
        try:
            self._graph.delete()
        except Exception as err:  # noqa: BLE001
            if "empty key" not in str(err).lower() and "invalid graph" not in str(err).lower():
                raise BackendError(str(err)) from err
