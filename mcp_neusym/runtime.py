"""How a tool call runs: engine work in a worker thread, progress notifications, errors as MCP tool errors.

The engine is synchronous (its graph clients are), so every call runs in a worker thread and the event loop keeps
serving other requests and notifications. Long operations report MCP progress notifications (only when the client
sent a ``progressToken``; the SDK drops them otherwise): counted steps where the work has them (an import's
batches), a heartbeat where it does not (a reflection, a janitor pass), so clients that reset their request timeout
on progress do not give up on a slow but live call. Progress values always increase, as the protocol requires.

Errors: a :class:`~neusym.errors.NeuSymError` becomes an MCP tool error carrying its type and message (the model
can fix an unknown id or an empty query); anything else becomes "internal error" with the details in the server's
log. A stack trace never reaches the client.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.fastmcp.exceptions import ToolError

from neusym.errors import NeuSymError

__all__ = ["Progress", "guarded", "tool_error"]

log = logging.getLogger("mcp_neusym")

P = ParamSpec("P")
T = TypeVar("T")


def tool_error(err: BaseException) -> ToolError:
    """The MCP tool error for ``err``: the typed error's message, or a generic line for a bug."""
    if isinstance(err, ToolError):
        return err
    if isinstance(err, NeuSymError):
        text = str(err).strip() or type(err).__name__
        return ToolError(f"{type(err).__name__}: {text}")
    log.error("tool call failed", exc_info=err)
    return ToolError(f"internal error ({type(err).__name__}); the server log has the details")


def guarded(fn: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """Wrap an async tool so every failure leaves as :func:`tool_error` (the SDK then marks the result
    ``isError``). ``functools.wraps`` keeps the signature and annotations the SDK builds the schema from."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await fn(*args, **kwargs)
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as err:  # noqa: BLE001 - the one error contract of every tool
            raise tool_error(err) from None

    return wrapper


class Progress:
    """MCP progress notifications for one request; a no-op when the client asked for none.

    ``ctx`` is the SDK's ``Context``. Reports from a worker thread go through :meth:`step`, which hops to the
    event loop; :meth:`run` runs blocking work with a heartbeat.
    """

    def __init__(self, ctx: Any, *, heartbeat_s: float = 2.0) -> None:
        self._ctx = ctx
        self._last = -math.inf
        self._lock = threading.Lock()
        self.heartbeat_s = heartbeat_s
        self.sent = 0

    @property
    def wanted(self) -> bool:
        try:
            meta = self._ctx.request_context.meta
        except (AttributeError, ValueError, LookupError):
            return False
        return meta is not None and getattr(meta, "progressToken", None) is not None

    async def report(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send one notification; values that would not increase are dropped (the protocol forbids them)."""
        if not self.wanted:
            return
        with self._lock:
            if progress <= self._last:
                return
            self._last = progress
        try:
            await self._ctx.report_progress(progress, total, message)
            self.sent += 1
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):  # the client went away: keep working
            log.debug("progress notification not delivered (client gone)")

    def step(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """:meth:`report` from the worker thread that :meth:`run`/:meth:`run_steps` started."""
        if self.wanted:
            anyio.from_thread.run(self.report, progress, total, message)

    async def run_steps(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` in a worker thread; ``fn`` reports its own counted steps through :meth:`step`."""
        return await anyio.to_thread.run_sync(fn)

    async def run(self, fn: Callable[[], T], *, label: str) -> T:
        """Run ``fn`` (no step count) in a worker thread with a heartbeat: progress = seconds elapsed, then a
        last notification with ``total`` equal to ``progress`` when it is done."""
        started = time.monotonic()
        finished = anyio.Event()
        result: list[T] = []
        failure: list[BaseException] = []

        async def beat() -> None:
            await self.report(0.0, None, f"{label}: started")
            while not finished.is_set():
                with anyio.move_on_after(self.heartbeat_s):
                    await finished.wait()
                if not finished.is_set():
                    elapsed = time.monotonic() - started
                    await self.report(round(elapsed, 3), None, f"{label}: working ({elapsed:.0f}s)")

        async def work() -> None:
            try:
                result.append(await anyio.to_thread.run_sync(fn))
            except Exception as err:  # noqa: BLE001 - re-raised below as itself, not inside an ExceptionGroup
                failure.append(err)
            finally:
                finished.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(beat)
            tg.start_soon(work)
        if failure:
            raise failure[0]
        done = max(round(time.monotonic() - started, 3), 0.001)
        await self.report(done, done, f"{label}: done in {done:.1f}s")
        return result[0]


async def in_thread(fn: Callable[[], T]) -> T:
    """Blocking engine work off the event loop (short calls: no progress)."""
    return await anyio.to_thread.run_sync(fn)
