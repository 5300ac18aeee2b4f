"""The one contract every graph backend implements.

The symbolic store depends only on this: a parameterised ``run`` that returns Neo4j-style rows (a list of dicts keyed
by the RETURN aliases) and ``close``. Backend quirks (parameter cleaning, result shapes, retries) stay inside each
executor, so the Cypher above it is written once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from neusym.symbolic.dialects import Dialect

__all__ = ["Executor", "Row"]

Row = dict[str, Any]


@runtime_checkable
class Executor(Protocol):
    dialect: Dialect

    def run(self, cypher: str, params: Mapping[str, Any] | None = None, *, write: bool = True) -> list[Row]:
        """Run one parameterised statement atomically and return its rows.

        ``write=False`` lets backends route to read replicas / read-only transactions. Errors are raised as
        :class:`neusym.errors.BackendError` subclasses.
        """
        ...

    def close(self) -> None: ...
