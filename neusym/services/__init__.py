"""Services built on the :class:`~neusym.engine.Engine`: governance (``mem.governance``) with its review decisions,
and reflection (``mem.reflection``). They resolve scopes and write only through the engine."""

from neusym.services.governance import Governance
from neusym.services.reflection import ReflectionService

__all__ = ["Governance", "ReflectionService"]
