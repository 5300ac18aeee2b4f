"""A server's memory, opened in the background so the server answers ``initialize`` at once.

An MCP client starts the server and sends ``initialize`` straight away; many give up after a few seconds. Opening
the memory (importing the engine, starting the embedded graph, catching the indexes up) and loading the embedding
model take seconds on a small machine, and none of it is needed to answer ``initialize`` or list the tools. So
``neusym mcp`` starts serving at once while a background thread opens the memory and loads the model; a tool,
resource or prompt call waits for it (:meth:`OpeningMemory.ready`, off the event loop) and a failed open comes back
as that call's typed error.

The tools hold the memory through :class:`MemoryProxy`, which forwards every attribute to the opened memory; calls
only reach it after ``ready``, so the proxy never blocks the event loop.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, cast

import anyio.to_thread

from neusym.errors import BackendUnavailableError, NeuSymError
from neusym.loading import loading

if TYPE_CHECKING:
    from neusym.facade import NeuSymMemory

__all__ = ["MemoryProxy", "OpeningMemory"]

log = logging.getLogger("mcp_neusym")


class OpeningMemory:
    """Opens ``open_memory()`` in a daemon thread (:meth:`start`), loads its embedding model, and closes it
    (:meth:`close`: after the open has finished, whatever its outcome)."""

    def __init__(self, open_memory: Callable[[], AbstractContextManager[NeuSymMemory]]) -> None:
        self._open_memory = open_memory
        self._cm: AbstractContextManager[NeuSymMemory] | None = None
        self._memory: NeuSymMemory | None = None
        self._error: BaseException | None = None
        self._done = threading.Event()
        self._closed = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._open, name="neusym-mcp-open", daemon=True)

    def start(self) -> OpeningMemory:
        self._thread.start()
        return self

    def _open(self) -> None:
        try:
            with loading("the memory (graph and indexes)"):
                cm = self._open_memory()
                memory = cm.__enter__()
            self._cm, self._memory = cm, memory
            from neusym.embeddings import preload

            preload(memory.embedder)  # the first `remember` should not wait for the model either
        except BaseException as err:  # noqa: BLE001 - reported to every call, and logged once here
            self._error = err
            log.error("could not open the memory: %s", err)
        finally:
            self._done.set()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def get(self) -> NeuSymMemory:
        """The open memory (waits for the open); the open's error, typed, if it failed."""
        self._done.wait()
        if self._closed:
            from neusym.errors import ClosedError

            raise ClosedError("the server is shutting down")
        if self._memory is None:
            err = self._error
            if isinstance(err, NeuSymError):
                raise err
            raise BackendUnavailableError(f"the memory could not be opened: {type(err).__name__}: {err}")
        return self._memory

    async def ready(self) -> None:
        """Wait (off the event loop) until the open has finished."""
        if not self._done.is_set():
            await anyio.to_thread.run_sync(self._done.wait)

    def close(self) -> None:
        """Close the memory once the open has finished (idempotent)."""
        self._done.wait()
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self._cm is not None:
            self._cm.__exit__(None, None, None)


class MemoryProxy:
    """Stands for the memory an :class:`OpeningMemory` opens: attribute access waits for the open and forwards."""

    def __init__(self, opening: OpeningMemory) -> None:
        self._opening = opening

    def __getattr__(self, name: str) -> Any:
        return getattr(self._opening.get(), name)

    def as_memory(self) -> NeuSymMemory:
        """This proxy typed as what it stands for."""
        return cast("NeuSymMemory", self)
