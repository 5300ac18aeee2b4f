"""Async twins without copies: :class:`threaded` turns a sync method into an awaitable one that runs it in a
worker thread, with the sync method's own signature and docstring (typed through ``ParamSpec``), so an async view
is one line per method and cannot drift from the method it runs.

The graph clients and the embedder are synchronous: a thread per call keeps an application's event loop free
while the database or the model works. ``AsyncNeuSymMemory`` (:mod:`neusym.facade`) is built on the same pieces.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from neusym.services.admin import Admin
from neusym.services.governance import Governance
from neusym.services.reflection import ReflectionService

__all__ = ["AsyncAdmin", "AsyncGovernance", "AsyncReflection", "AsyncView", "threaded"]

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")


class AsyncView(Generic[S]):
    """The async face of a sync object: its :class:`threaded` attributes run the object's methods in a thread."""

    def __init__(self, target: S) -> None:
        self._target = target


class threaded(Generic[S, P, R]):  # noqa: N801 - used like a decorator: ``add = threaded(NeuSymMemory.add)``
    """``name = threaded(Sync.name)`` on an :class:`AsyncView` subclass: ``await view.name(...)`` runs
    ``Sync.name(target, ...)`` in a worker thread."""

    def __init__(self, method: Callable[Concatenate[S, P], R]) -> None:
        self._method = method
        self.__doc__ = method.__doc__

    @overload
    def __get__(self, obj: None, owner: type) -> threaded[S, P, R]: ...
    @overload
    def __get__(self, obj: AsyncView[S], owner: type) -> Callable[P, Coroutine[Any, Any, R]]: ...
    def __get__(self, obj: AsyncView[S] | None, owner: type) -> Any:
        if obj is None:
            return self
        method, target = self._method, obj._target

        @functools.wraps(method)
        async def call(*args: P.args, **kwargs: P.kwargs) -> R:
            return await asyncio.to_thread(method, target, *args, **kwargs)

        return call


class AsyncGovernance(AsyncView[Governance]):
    """``mem.governance`` for asyncio (``await amem.governance.review_queue(user_id="ana")``)."""

    forget_preview = threaded(Governance.forget_preview)
    forget = threaded(Governance.forget)
    forget_tenant = threaded(Governance.forget_tenant)
    run_janitor = threaded(Governance.run_janitor)
    review_queue = threaded(Governance.review_queue)
    review_approve = threaded(Governance.review_approve)
    review_reject = threaded(Governance.review_reject)
    review_edit = threaded(Governance.review_edit)
    rollback = threaded(Governance.rollback)
    history = threaded(Governance.history)
    fact_history = threaded(Governance.fact_history)
    facts_at = threaded(Governance.facts_at)
    audit_log = threaded(Governance.audit_log)
    links = threaded(Governance.links)


class AsyncReflection(AsyncView[ReflectionService]):
    """``mem.reflection`` for asyncio."""

    reflect = threaded(ReflectionService.reflect)
    session_end = threaded(ReflectionService.session_end)
    build_context = threaded(ReflectionService.build_context)
    rewrite_query = threaded(ReflectionService.rewrite_query)


class AsyncAdmin(AsyncView[Admin]):
    """``mem.admin`` for asyncio."""

    stats = threaded(Admin.stats)
    cypher = threaded(Admin.cypher)
    graph = threaded(Admin.graph)
    reindex = threaded(Admin.reindex)
    reembed = threaded(Admin.reembed)
    export = threaded(Admin.export)
    restore = threaded(Admin.restore)
    import_file = threaded(Admin.import_file)
