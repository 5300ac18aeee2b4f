"""How ``neusym mcp`` starts and stops (issue 30 items 1 and 5).

* The server answers ``initialize`` and the listings while its memory is still opening (a background open, see
  :mod:`mcp_neusym.opening`); a call waits for the open, and a failed open comes back as the call's typed error.
* ``neusym mcp --http`` stopped with SIGTERM exits 0 and has stopped its embedded graph server by the time it exits
  (it used to die by the re-raised signal, rc -15, leaving the server to its watchdog for ~40 s).
"""

from __future__ import annotations

import signal
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from mcp.shared.memory import create_connected_server_and_client_session
from mcp_helpers import error_text, http_server, http_session, ok, server_env

from mcp_neusym import ServerSettings, build_server
from mcp_neusym.opening import MemoryProxy, OpeningMemory
from neusym import BackendUnavailableError, NeuSymMemory
from neusym.symbolic.executors import watchdog as wd

pytestmark = pytest.mark.timeout(600)


async def test_initialize_and_listings_do_not_wait_for_the_memory(memory: NeuSymMemory) -> None:
    release = threading.Event()
    entered = threading.Event()

    @contextmanager
    def slow_open() -> Iterator[NeuSymMemory]:
        entered.set()
        release.wait(60)
        yield memory  # the fixture owns (and closes) it

    opening = OpeningMemory(slow_open).start()
    server = build_server(MemoryProxy(opening).as_memory(), ServerSettings(user_id="ana"), ready=opening.ready)
    try:
        async with create_connected_server_and_client_session(server) as s:
            # connected and initialized while the open is blocked
            assert entered.is_set() and not opening.done
            assert "remember" in [t.name for t in (await s.list_tools()).tools]
            assert (await s.list_resources()).resources and (await s.list_prompts()).prompts
            assert not opening.done

            async def remember() -> dict[str, object]:
                return ok(await s.call_tool("remember", {"content": "Ana plays the cello on Sundays."}))

            async with anyio.create_task_group() as tg:
                results: list[dict[str, object]] = []

                async def call() -> None:
                    results.append(await remember())

                tg.start_soon(call)
                await anyio.sleep(0.2)
                assert results == [], "a call must wait for the memory"
                release.set()
            assert results and results[0]["stored"]
    finally:
        release.set()
        opening.close()
    assert [r.content for r in memory.query(user_id="ana")] == ["Ana plays the cello on Sundays."]


async def test_a_failed_open_is_each_calls_typed_error() -> None:
    @contextmanager
    def broken() -> Iterator[NeuSymMemory]:
        raise BackendUnavailableError("graph server at db:7687 is unreachable")
        yield  # pragma: no cover

    opening = OpeningMemory(broken).start()
    server = build_server(MemoryProxy(opening).as_memory(), ServerSettings(user_id="ana"), ready=opening.ready)
    try:
        async with create_connected_server_and_client_session(server) as s:
            text = error_text(await s.call_tool("recall", {"query": "anything"}))
            assert "BackendUnavailableError" in text and "unreachable" in text
    finally:
        opening.close()


def test_http_server_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    data_dir = tmp_path / "own"  # its own embedded server, so stopping it is the MCP server's job alone
    env = server_env(data_dir, "g")
    with http_server(env, "--user", "ana") as srv:
        async def use() -> None:
            async with http_session(srv.url) as s:
                ok(await s.call_tool("remember", {"content": "Ana keeps bees."}))

        anyio.run(use)
        graph_pid = wd.read_lock(data_dir).get("pid")
        assert isinstance(graph_pid, int) and wd.pid_alive(graph_pid)
        srv.process.send_signal(signal.SIGTERM)
        try:
            rc = srv.process.wait(60)
        except subprocess.TimeoutExpired:
            srv.process.kill()
            raise
        assert rc == 0, "".join(srv.stderr)
        assert not wd.pid_alive(graph_pid), "the embedded graph server must stop with the MCP server"
