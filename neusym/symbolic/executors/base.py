"""The one contract every graph backend implements.

The symbolic store depends only on this: a parameterised ``run`` that returns Neo4j-style rows (a list of dicts keyed
by the RETURN aliases) and ``close``. Backend quirks (parameter cleaning, result shapes, retries, timeouts) stay
inside each executor, so the Cypher above it is written once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from neusym.symbolic.dialects import Dialect
from neusym.symbolic.guard import CheckedQuery

__all__ = ["Executor", "ReadOnlyRunner", "Row"]

Row = dict[str, Any]


@runtime_checkable
class Executor(Protocol):
    dialect: Dialect

    def run(self, cypher: str, params: Mapping[str, Any] | None = None, *, write: bool = True) -> list[Row]:
        """Run one parameterised statement atomically and return its rows.

        ``write=False`` lets backends route to read replicas / read-only transactions. Every call is bounded in
        time (the executor's timeout); errors are raised as :class:`neusym.errors.BackendError` subclasses.
        """
        ...

    def close(self) -> None: ...


@runtime_checkable
class ReadOnlyRunner(Protocol):
    """Optional: an executor that can have the database itself vet and run untrusted read-only Cypher (see
    :mod:`neusym.symbolic.guard`). Both built-in executors implement it; for any other executor the guarded path
    falls back to ``run(..., write=False)``."""

    def run_read_only(self, query: CheckedQuery, params: Mapping[str, Any] | None, *, timeout: float,
                      max_rows: int) -> list[Row]:
        """EXPLAIN ``query`` and refuse (:class:`neusym.errors.UnsafeQueryError`) a plan that writes, loads CSV or
        calls a procedure the check did not approve; then run it read-only, server-side timeout ``timeout`` s,
        returning at most ``max_rows`` rows."""
        ...
