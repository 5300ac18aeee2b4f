"""Async twins without copies. The graph clients and the embedder are synchronous, so an async call is the sync
method run in a worker thread (the event loop stays free while the database or the model works); nothing here
writes a method twice.

* :class:`threaded` turns one sync method into an awaitable one with the sync method's own signature and docstring
  (typed through ``ParamSpec``): ``add = threaded(NeuSymMemory.add)``, one line per memory verb.
* :class:`AsyncDoor` is the async face of a whole door (``mem.governance``, ``mem.reflection``, ``mem.admin``):
  every public method of the door, looked up when called, so a method added to a service is awaitable at once.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

__all__ = ["AsyncDoor", "AsyncView", "threaded"]

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")


def _in_thread(method: Callable[..., R], *bound: Any) -> Callable[..., Coroutine[Any, Any, R]]:
    """``method`` (with ``bound`` leading arguments) as a coroutine function that runs it in a worker thread."""

    @functools.wraps(method)
    async def call(*args: Any, **kwargs: Any) -> R:
        return await asyncio.to_thread(method, *bound, *args, **kwargs)

    return call


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
        return _in_thread(self._method, obj._target)


class AsyncDoor(Generic[S]):
    """One door for asyncio: ``await amem.governance.review_queue(user_id="ana")`` runs
    ``mem.governance.review_queue`` in a worker thread. Only the door's public methods are offered; its values
    (``policy``, ``retrieval`` ...) are read on the sync door."""

    def __init__(self, door: S) -> None:
        self._door = door

    def __getattr__(self, name: str) -> Callable[..., Coroutine[Any, Any, Any]]:
        kind = type(self._door).__name__
        found = None if name.startswith("_") else inspect.getattr_static(self._door, name, None)
        if not inspect.isfunction(found):
            raise AttributeError(f"{kind} has no method {name!r} to await (values are read on the sync door)")
        return _in_thread(getattr(self._door, name))  # bound now: a method patched on the door is honoured

    def __dir__(self) -> list[str]:
        door = type(self._door)
        return sorted(n for n in dir(door) if not n.startswith("_") and inspect.isfunction(getattr(door, n)))
