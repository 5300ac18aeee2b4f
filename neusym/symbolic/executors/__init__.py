"""Graph executors: embedded/remote FalkorDB and Neo4j behind one :class:`Executor` contract."""

from neusym.symbolic.executors.base import Executor, Row

__all__ = ["Executor", "Row"]
