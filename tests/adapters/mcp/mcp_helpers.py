"""Helpers for the MCP server tests (imported as ``mcp_helpers``; pytest puts this directory on ``sys.path``).

The server always runs as a user runs it: ``python -m neusym mcp ...`` in a subprocess, configured through the
environment (data dir, graph, the fast hashing embedder). Clients are the SDK's own: ``stdio_client`` spawning the
server, ``streamable_http_client`` against a server started with ``--http 127.0.0.1:0``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

ROOT = Path(__file__).resolve().parents[3]
_CLEARED = ("NEO4J_URI", "NEO4J_URL", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE", "NEUSYM_BACKEND",
            "FALKORDB_HOST", "FALKORDB_PORT", "NEUSYM_USER", "NEUSYM_AGENT", "NEUSYM_SESSION", "NEUSYM_MCP_TOKEN",
            "NEUSYM_MCP_USER_HEADER", "NEUSYM_INDEX_PATH")
TIMEOUT = timedelta(seconds=120)


def server_env(data_dir: Path, graph: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED}
    env.update(NEUSYM_DATA_DIR=str(data_dir), NEUSYM_GRAPH=graph, NEUSYM_EMBEDDER="hashing:256",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])), **extra)
    return env


@asynccontextmanager
async def stdio_session(env: dict[str, str], *args: str) -> AsyncIterator[ClientSession]:
    """A client session with a freshly spawned ``python -m neusym mcp ARGS`` (a new server process each time)."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "neusym", "mcp", *args], env=env,
                                   cwd=str(ROOT))
    async with stdio_client(params) as (read, write), ClientSession(read, write,
                                                                     read_timeout_seconds=TIMEOUT) as session:
        await session.initialize()
        yield session


@dataclass
class HttpServer:
    url: str
    process: subprocess.Popen[str]
    stderr: list[str] = field(default_factory=list)


@contextmanager
def http_server(env: dict[str, str], *args: str, startup_s: float = 120.0) -> Iterator[HttpServer]:
    """``python -m neusym mcp --http 127.0.0.1:0 ARGS`` in the background; yields the URL it announced."""
    proc = subprocess.Popen([sys.executable, "-m", "neusym", "mcp", "--http", "127.0.0.1:0", *args], env=env,
                            cwd=str(ROOT), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    found = threading.Event()

    def drain() -> None:  # keep reading stderr so the server never blocks on a full pipe
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "listening on" in line:
                found.set()

    threading.Thread(target=drain, daemon=True).start()
    deadline = time.monotonic() + startup_s
    while not found.wait(0.2):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"the HTTP server did not start (exit {proc.poll()}):\n{''.join(lines)}")
    url = re.search(r"http://\S+", next(x for x in lines if "listening on" in x))
    assert url is not None
    server = HttpServer(url.group(0), proc, lines)
    try:
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@asynccontextmanager
async def http_session(url: str, headers: dict[str, str] | None = None,
                       client: httpx.AsyncClient | None = None) -> AsyncIterator[ClientSession]:
    http = client or httpx.AsyncClient(headers=headers or {}, timeout=httpx.Timeout(30.0, read=120.0))
    async with http, streamable_http_client(url, http_client=http) as (read, write, _), \
            ClientSession(read, write, read_timeout_seconds=TIMEOUT) as session:
        await session.initialize()
        yield session


TRANSPORTS = ("stdio", "http")


@asynccontextmanager
async def served_session(transport: str, env: dict[str, str], *args: str) -> AsyncIterator[ClientSession]:
    """A client session on a NEW server process over ``transport``: ``stdio`` spawns it as the client's child,
    ``http`` starts ``--http 127.0.0.1:0`` and connects the streamable HTTP client; the server stops when the
    session ends, so consecutive sessions are server restarts on either transport."""
    if transport == "stdio":
        async with stdio_session(env, *args) as session:
            yield session
        return
    assert transport == "http", transport
    with http_server(env, *args) as srv:
        async with http_session(srv.url) as session:
            yield session


# ---------------------------------------------------------------------------------------------------- results
def ok(result: CallToolResult) -> dict[str, Any]:
    """The structured content of a successful call (fails the test with the error text otherwise)."""
    text = result.content[0].text if result.content and hasattr(result.content[0], "text") else ""
    assert not result.isError, f"tool error: {text}"
    assert result.structuredContent is not None
    return result.structuredContent


def error_text(result: CallToolResult) -> str:
    assert result.isError, f"expected a tool error, got {result.structuredContent}"
    text = result.content[0].text if hasattr(result.content[0], "text") else ""
    assert "Traceback" not in text and 'File "' not in text, f"a stack trace reached the client: {text}"
    return text


def contents(structured: dict[str, Any], key: str = "results") -> list[str]:
    return [m["content"] for m in structured[key]]


def resource_json(result: Any) -> dict[str, Any]:
    return json.loads(result.contents[0].text)  # type: ignore[no-any-return]
