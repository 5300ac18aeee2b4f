"""Services built on the :class:`~neusym.engine.Engine`: governance (``mem.governance``) with its review decisions,
reflection (``mem.reflection``) and the operator's door (``mem.admin``), with their async views (:mod:`.aio`).
They resolve scopes and write only through the engine."""

from neusym.services.admin import Admin
from neusym.services.governance import Governance
from neusym.services.reflection import ReflectionService

__all__ = ["Admin", "Governance", "ReflectionService"]
