"""Neo4j executor over the official ``neo4j`` driver (Bolt), for users who already run Neo4j 5.x.

Why managed transactions (``execute_write`` / ``execute_read``) for every statement: they are the driver's unit of
retry. Leader switches, deadlocks and other transient errors are retried by the driver with back-off, so the store
above sees only errors that retrying cannot fix. A retry after a failed transaction is harmless (nothing was
committed); only a connection lost between commit and acknowledgement replays a committed statement, and the unique
constraints on ``Memory.id``/``nid`` turn a replayed create into a constraint error instead of a duplicate. Statements
Neo4j refuses inside an explicit transaction (``CALL { ... } IN TRANSACTIONS``, ``USE``) are not supported here.

Timeouts: every transaction carries a server-enforced timeout (``timeout``, :data:`~neusym.config.DEFAULT_GRAPH_TIMEOUT`),
connecting and acquiring a pooled connection are bounded, and so is the driver's retrying of transient errors. The
driver has no client-side read timeout of its own: it applies the one the server announces
(``connection.recv_timeout_seconds``: Aura does; a self-hosted server does with
``server.bolt.connection_keep_alive_for_requests=ALL``), which is what bounds a server that stops answering
altogether.

Why a bookmark manager of our own: each ``run`` opens its own session, so without shared bookmarks a read routed to a
cluster follower could miss the write made by the previous call. On a single server it costs nothing.

The ``neo4j`` package is imported lazily so NeuSym imports without it when FalkorDB is the backend.
"""

from __future__ import annotations

import datetime as _dt
import functools
import math
import os
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from neusym.config import DEFAULT_GRAPH_TIMEOUT
from neusym.errors import (
    BackendError,
    BackendUnavailableError,
    ClosedError,
    InvalidInputError,
    NeuSymError,
    UnsafeQueryError,
)
from neusym.symbolic.dialects import Dialect
from neusym.symbolic.executors.base import Row
from neusym.symbolic.guard import ALLOWED_PROCEDURES, CheckedQuery, cap_rows, procedure_name
from neusym.symbolic.write_rules import check_write

if TYPE_CHECKING:
    from neo4j import BookmarkManager, Driver, ManagedTransaction

__all__ = ["Neo4jExecutor"]

_DEFAULT_DATABASE = "neo4j"
_DATABASE_MISSING = "Neo.ClientError.Database.DatabaseNotFound"
_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")
# Server notifications the driver would log as warnings on nearly every statement, none of them actionable:
# UNRECOGNIZED ("property key does not exist": optional properties are the norm in a schemaless memory graph),
# PERFORMANCE (cartesian products the stage-2 statement builds on purpose) and SCHEMA ("index already exists" from
# the idempotent DDL). Deprecations and the rest stay visible.
_QUIET_NOTIFICATIONS: tuple[Literal["UNRECOGNIZED", "PERFORMANCE", "SCHEMA"], ...] = ("UNRECOGNIZED", "PERFORMANCE", "SCHEMA")


def _clean(value: Any) -> Any:
    """Parameters as the FalkorDB executor accepts them, so data stays portable between the two backends.

    NaN/inf are refused (FalkorDB cannot store them), tuples become lists and map keys strings.
    """
    if isinstance(value, float) and not math.isfinite(value):
        raise BackendError("NaN/inf cannot be stored in the graph")
    if isinstance(value, tuple | list):
        return [_clean(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    return value


@functools.cache
def _driver_types() -> dict[str, Any]:
    """The driver's value classes, imported once on first use (the module itself must not import ``neo4j``)."""
    from neo4j.graph import Node, Path, Relationship
    from neo4j.spatial import Point
    from neo4j.time import Date, DateTime, Duration, Time

    return {
        "entity": (Node, Relationship),
        "path": Path,
        "temporal": (DateTime, Date, Time),
        "duration": Duration,
        "point": Point,
    }


def _plain(value: Any) -> Any:
    """Turn driver values into plain Python: nodes/relationships become their property dicts (as on FalkorDB),
    Neo4j temporals become ``datetime`` objects, points and vectors become lists."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list):
        return [_plain(v) for v in value]
    types = _driver_types()
    if isinstance(value, types["entity"]):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, types["path"]):
        return {"nodes": [_plain(n) for n in value.nodes], "relationships": [_plain(r) for r in value.relationships]}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, types["temporal"]):
        return _stdlib_tz(value.to_native())  # nanoseconds are truncated to microseconds
    if isinstance(value, types["duration"]):
        return _duration(value)
    if isinstance(value, types["point"]):
        return [float(c) for c in value]
    if isinstance(value, bytearray):
        return bytes(value)
    to_native = getattr(value, "to_native", None)  # neo4j.vector.Vector (Neo4j 2025+ VECTOR values)
    if callable(to_native):
        return _plain(list(to_native()))
    return value


def _stdlib_tz(value: Any) -> Any:
    """Swap the driver's pytz zones for ``zoneinfo`` / fixed ``timezone`` objects.

    pytz zones give wrong results with ordinary datetime arithmetic and compare oddly, so callers should never see
    them; the wall time and the offset stay the same.
    """
    tz = getattr(value, "tzinfo", None)
    if tz is None or isinstance(tz, _dt.timezone | ZoneInfo):
        return value
    zone = getattr(tz, "zone", None)
    if zone == "UTC":
        return value.replace(tzinfo=_dt.UTC)
    if isinstance(zone, str) and isinstance(value, _dt.datetime):
        try:
            return value.replace(tzinfo=ZoneInfo(zone))
        except (ZoneInfoNotFoundError, ValueError):
            pass
    offset = value.utcoffset()
    return value if offset is None else value.replace(tzinfo=_dt.timezone(offset))


def _duration(value: Any) -> _dt.timedelta | str:
    """A month-free duration is an exact ``timedelta``; one with months has no fixed length, so it stays ISO 8601."""
    if value.months:
        return str(value.iso_format())
    return _dt.timedelta(days=value.days, seconds=value.seconds, microseconds=value.nanoseconds // 1000)


def _check_plan(query_type: str | None, plan: Any) -> None:
    """Layer 2 of :mod:`neusym.symbolic.guard` on Neo4j: the plan the server would run, not the text we read."""
    if query_type != "r":
        raise UnsafeQueryError(f"only read-only Cypher is allowed here (Neo4j classifies it as {query_type!r})")
    stack = [plan] if isinstance(plan, Mapping) else []
    while stack:
        op = stack.pop()
        kind = str(op.get("operatorType", "")).split("@", 1)[0]
        if kind == "LoadCSV":
            raise UnsafeQueryError("LOAD CSV is not allowed in read-only Cypher (found in the query plan)")
        if kind == "ProcedureCall":
            args = op.get("args") or {}
            name = procedure_name(str(args.get("Details") or args.get("Signature") or ""))
            if name not in ALLOWED_PROCEDURES:
                raise UnsafeQueryError(f"procedure {name or '?'} is not allowed in read-only Cypher")
        stack.extend(c for c in op.get("children") or [] if isinstance(c, Mapping))


def _env(*names: str) -> str | None:
    for name in names:
        found = os.environ.get(name)
        if found:
            return found
    return None


def _unavailable(err: Exception, url: str, database: str) -> BackendError:
    """Map connection-level driver errors to distinct messages; anything else stays a generic BackendError."""
    from neo4j.exceptions import (
        AuthError,
        ClientError,
        DatabaseUnavailable,
        ServiceUnavailable,
        SessionExpired,
    )

    if isinstance(err, AuthError):
        return BackendUnavailableError(f"Neo4j at {url} rejected the credentials (authentication failed): {err.message}")
    if isinstance(err, ClientError) and err.code == _DATABASE_MISSING:
        return BackendUnavailableError(f"Neo4j database {database!r} does not exist at {url}: {err.message}")
    if isinstance(err, DatabaseUnavailable):
        return BackendUnavailableError(f"Neo4j database {database!r} at {url} is unavailable: {err.message}")
    if isinstance(err, ServiceUnavailable | SessionExpired):
        return BackendUnavailableError(f"Neo4j at {url} is unreachable: {err}")
    return BackendError(f"Neo4j at {url}: {err}")


class Neo4jExecutor:
    """Runs Cypher on one Neo4j database.

    Arguments follow langchain-neo4j's ``Neo4jGraph``; each missing one falls back to an environment variable read
    here, at construction (never at import): ``url`` to ``NEO4J_URI`` then ``NEO4J_URL``, ``username`` to
    ``NEO4J_USERNAME`` (default ``neo4j``), ``password`` to ``NEO4J_PASSWORD`` (none: connect without auth),
    ``database`` to ``NEO4J_DATABASE`` (default ``neo4j``).

    Args:
        driver: an existing ``neo4j.Driver`` to use instead of url/credentials. It stays the caller's: ``close()``
            leaves it open.
        driver_config: extra keyword arguments for ``neo4j.GraphDatabase.driver`` (pool size, timeouts, TLS).
        verify: check at construction that the server answers, accepts the credentials and has the database, so a
            misconfiguration fails here with a clear :class:`BackendUnavailableError` rather than at the first query.
        timeout: seconds one transaction may run (enforced by the server); also caps the driver's connection
            timeout (30 s), pool acquisition (60 s) and transient-error retrying (30 s). ``driver_config`` wins.
    """

    dialect = Dialect.NEO4J

    def __init__(
        self,
        *,
        url: str | None = None,
        username: str | None = None,
        password: str | None = None,
        database: str | None = None,
        driver: Driver | None = None,
        driver_config: Mapping[str, Any] | None = None,
        verify: bool = True,
        timeout: float = DEFAULT_GRAPH_TIMEOUT,
    ) -> None:
        try:
            import neo4j
        except ImportError as err:  # pragma: no cover - a declared dependency
            raise BackendUnavailableError("Neo4j support needs the 'neo4j' package: pip install neo4j") from err
        if not timeout > 0:
            raise InvalidInputError("timeout must be positive")
        self.timeout = float(timeout)
        self.database: str = database or _env("NEO4J_DATABASE") or _DEFAULT_DATABASE
        self._owns_driver = driver is None
        if driver is not None:
            if url is not None or username is not None or password is not None or driver_config:
                raise InvalidInputError("pass either driver= or url/username/password/driver_config, not both")
            self._driver: Driver = driver
            self.url = "the given driver"  # only used in error messages
        else:
            resolved = url or _env("NEO4J_URI", "NEO4J_URL")
            if not resolved:
                raise BackendUnavailableError("no Neo4j URL: pass url= or set NEO4J_URI (e.g. bolt://localhost:7687)")
            self.url = resolved
            scheme = resolved.partition("://")[0].lower()
            if scheme not in _SCHEMES:
                # http(s):// would select the driver's preview Query API, whose transactions may change any release.
                raise BackendUnavailableError(
                    f"invalid Neo4j URL {resolved!r}: use one of {', '.join(s + '://' for s in _SCHEMES)}"
                )
            user = username or _env("NEO4J_USERNAME") or "neo4j"
            secret = password if password is not None else _env("NEO4J_PASSWORD")
            auth = (user, secret) if secret else None
            config = {"connection_timeout": min(30.0, self.timeout),
                      "connection_acquisition_timeout": min(60.0, self.timeout),
                      "max_transaction_retry_time": min(30.0, self.timeout), **dict(driver_config or {})}
            try:
                self._driver = neo4j.GraphDatabase.driver(resolved, auth=auth, **config)
            except (ValueError, neo4j.exceptions.ConfigurationError) as err:
                raise BackendUnavailableError(f"invalid Neo4j URL or driver configuration {resolved!r}: {err}") from err
        self._bookmarks: BookmarkManager = neo4j.GraphDatabase.bookmark_manager()
        self._lock = threading.Lock()
        self._closed = False
        if verify:
            try:
                self.verify()
            except BaseException:
                self.close()
                raise

    @classmethod
    def from_env(cls, **overrides: Any) -> Neo4jExecutor:
        """Connect using only the ``NEO4J_*`` environment variables (keyword arguments override them)."""
        return cls(**overrides)

    def verify(self) -> None:
        """Check reachability, credentials and the database with one auto-commit read.

        Deliberately not a managed transaction: those retry "unreachable" for up to 30 s, while a wrong address
        should fail at once.
        """
        import neo4j

        self._check_open()
        try:
            with self._driver.session(database=self.database, default_access_mode=neo4j.READ_ACCESS) as session:
                session.run(neo4j.Query("RETURN 1", timeout=min(30.0, self.timeout))).consume()
        except (neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError) as err:
            raise _unavailable(err, self.url, self.database) from err
        except ValueError as err:  # the driver's verdict on an address it cannot even resolve (e.g. a bad port)
            raise BackendUnavailableError(f"invalid Neo4j URL {self.url!r}: {err}") from err
        except OSError as err:  # resolver / socket failures the driver does not wrap
            raise BackendUnavailableError(f"Neo4j at {self.url} is unreachable: {err}") from err

    def run(self, cypher: str, params: Mapping[str, Any] | None = None, *, write: bool = True) -> list[Row]:
        self._check_open()
        if write:
            check_write(cypher)  # one rule for both backends (see neusym.symbolic.write_rules)
        import neo4j

        clean: dict[str, Any] = _clean(dict(params or {}))

        @neo4j.unit_of_work(timeout=self.timeout)
        def work(tx: ManagedTransaction) -> list[Row]:
            # Records must be read inside the transaction function: the result is gone once it returns.
            return [dict(zip(record.keys(), map(_plain, record), strict=True)) for record in tx.run(cypher, clean)]

        return self._session_call(work, cypher, write=write)

    def run_read_only(self, query: CheckedQuery, params: Mapping[str, Any] | None, *, timeout: float,
                      max_rows: int) -> list[Row]:
        """Guarded raw Cypher (see :mod:`neusym.symbolic.guard`), in one read transaction of a READ-mode session:
        Neo4j's own plan (EXPLAIN) must be read-only, free of ``LoadCSV`` and call only allowlisted procedures;
        then at most ``max_rows`` records are pulled. The transaction timeout is enforced by the server. The row cap
        is part of the statement (:func:`cap_rows`) and the fetch size, so no record beyond it is sent or decoded."""
        self._check_open()
        import neo4j

        query = cap_rows(query, max_rows, dict(params or {}))
        clean: dict[str, Any] = _clean(dict(params or {}))

        @neo4j.unit_of_work(timeout=min(timeout, self.timeout))
        def work(tx: ManagedTransaction) -> list[Row]:
            summary = tx.run("EXPLAIN " + query.text, clean).consume()
            _check_plan(summary.query_type, summary.plan)
            result = tx.run(query.text, clean)
            rows = [dict(zip(record.keys(), map(_plain, record), strict=True)) for record in result.fetch(max_rows)]
            result.consume()  # the rest is discarded by the server, not sent
            return rows

        return self._session_call(work, query.text, write=False, access_mode=neo4j.READ_ACCESS,
                                  fetch_size=max_rows + 1)

    def _session_call(self, work: Any, cypher: str, *, write: bool, access_mode: str | None = None,
                      fetch_size: int | None = None) -> list[Row]:
        import neo4j

        extra: dict[str, Any] = {} if fetch_size is None else {"fetch_size": max(1, int(fetch_size))}
        try:
            with self._driver.session(database=self.database, bookmark_manager=self._bookmarks,
                                      notifications_disabled_classifications=_QUIET_NOTIFICATIONS,
                                      default_access_mode=access_mode or neo4j.WRITE_ACCESS, **extra) as session:
                rows: list[Row] = session.execute_write(work) if write else session.execute_read(work)
                return rows
        except NeuSymError:  # our own verdict from inside the transaction function (e.g. the plan check)
            raise
        except (neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError, TypeError, ValueError, OverflowError) as err:
            if self._closed:
                raise ClosedError("Neo4j executor was closed while a query ran") from err
            if isinstance(err, ValueError) and "resolve address" in str(err):  # only reachable with verify=False
                raise BackendUnavailableError(f"invalid Neo4j URL {self.url!r}: {err}") from err
            if isinstance(err, TypeError | ValueError | OverflowError):  # a value the driver cannot send
                raise BackendError(f"Neo4j cannot take these parameters: {err}\nquery: {cypher[:500]}") from err
            mapped = _unavailable(err, self.url, self.database)
            if isinstance(mapped, BackendUnavailableError):
                raise mapped from err
            code = getattr(err, "code", None) or type(err).__name__
            message = getattr(err, "message", None) or str(err)
            raise BackendError(f"Neo4j error [{code}]: {message}\nquery: {cypher[:500]}") from err

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("Neo4j executor is closed")

    def close(self) -> None:
        """Idempotent; closes the driver only if this executor created it."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self._owns_driver:
            self._driver.close()
