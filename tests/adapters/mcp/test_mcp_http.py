"""``neusym mcp --http`` on loopback, driven by the SDK's streamable HTTP client: the bearer token, a fixed user,
and the multi-tenant header rule (allowlist, isolation, a session pinned to its first user)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_helpers import contents, error_text, http_server, http_session, ok, server_env
from typer.testing import CliRunner

from mcp_neusym import TOOL_NAMES
from neusym.cli import app

pytestmark = pytest.mark.timeout(600)

TOKEN = "test-token-0123456789abcdef"


@pytest.fixture
def env(falkordb_dir: Path, graph_name: str) -> dict[str, str]:
    return server_env(falkordb_dir, graph_name)


async def test_http_with_a_token_and_a_fixed_user(env: dict[str, str]) -> None:
    with http_server({**env, "NEUSYM_MCP_TOKEN": TOKEN}, "--user", "ana") as srv:
        assert srv.url.startswith("http://127.0.0.1:") and srv.url.endswith("/mcp")
        async with httpx.AsyncClient() as raw:
            hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
            accept = {"Accept": "application/json, text/event-stream"}
            assert (await raw.post(srv.url, json=hello, headers=accept)).status_code == 401
            wrong = {**accept, "Authorization": "Bearer wrong-token-0123456789"}
            assert (await raw.post(srv.url, json=hello, headers=wrong)).status_code == 401
            foreign = {**accept, "Authorization": f"Bearer {TOKEN}", "Host": "evil.example:80"}
            assert (await raw.post(srv.url, json=hello, headers=foreign)).status_code in (403, 421), \
                "DNS-rebinding protection must refuse a foreign Host"

        auth = {"Authorization": f"Bearer {TOKEN}"}
        async with http_session(srv.url, auth) as s:
            assert [t.name for t in (await s.list_tools()).tools] == list(TOOL_NAMES)
            stored = ok(await s.call_tool("remember", {"content": "Ana prefers window seats on trains."}))
            assert stored["stored"]
        async with http_session(srv.url, auth) as s:  # a new connection sees it
            hits = ok(await s.call_tool("recall", {"query": "train seat preference"}))
            assert "Ana prefers window seats on trains." in contents(hits)


async def test_http_header_mapping_keeps_tenants_apart(env: dict[str, str]) -> None:
    args = ("--user-header", "X-NeuSym-User", "--allow-user", "ana", "--allow-user", "bob")
    with http_server({**env, "NEUSYM_MCP_TOKEN": TOKEN}, *args) as srv:
        def as_user(user: str | None) -> dict[str, str]:
            return {"Authorization": f"Bearer {TOKEN}", **({"X-NeuSym-User": user} if user else {})}

        async with http_session(srv.url, as_user("ana")) as ana:
            ok(await ana.call_tool("remember", {"content": "Ana's locker code is 7788."}))
        async with http_session(srv.url, as_user("bob")) as bob:
            ok(await bob.call_tool("remember", {"content": "Bob drinks green tea."}))
            hits = ok(await bob.call_tool("recall", {"query": "locker code", "k": 50}))
            assert not any("7788" in c for c in contents(hits))
        async with http_session(srv.url, as_user("ana")) as ana:
            assert any("7788" in c for c in contents(ok(await ana.call_tool("recall", {"query": "locker code"}))))
            assert not any("tea" in c for c in contents(ok(await ana.call_tool("recall", {"query": "tea",
                                                                                            "k": 50}))))
        async with http_session(srv.url, as_user("eve")) as eve:
            assert "not served" in error_text(await eve.call_tool("recall", {"query": "locker code"}))
        async with http_session(srv.url, as_user(None)) as nobody:
            assert "X-NeuSym-User header is missing" in error_text(await nobody.call_tool("query", {}))

        # one MCP session, then the header changes: refused, and nothing of Ana's leaks to "bob"
        current = {"user": "ana"}

        async def stamp(request: httpx.Request) -> None:
            request.headers["X-NeuSym-User"] = current["user"]

        client = httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, event_hooks={"request": [stamp]},
                                   timeout=httpx.Timeout(30.0, read=120.0))
        async with http_session(srv.url, client=client) as mixed:
            ok(await mixed.call_tool("recall", {"query": "locker"}))
            current["user"] = "bob"
            text = error_text(await mixed.call_tool("recall", {"query": "locker code"}))
            assert "belongs to user 'ana'" in text


def test_http_refuses_unsafe_configurations() -> None:
    """Refused before the memory is opened (exit 2, one line): the real command, in process."""
    runner = CliRunner()

    def run(*args: str) -> Any:
        return runner.invoke(app, ["mcp", *args], env={"NEUSYM_MCP_TOKEN": "", "NEUSYM_USER": ""})

    public = run("--http", "0.0.0.0:0", "--user", "ana")
    assert public.exit_code == 2 and "needs --token" in public.stderr
    both = run("--http", "127.0.0.1:0", "--user", "ana", "--user-header", "X-NeuSym-User")
    assert both.exit_code == 2 and "not both" in both.stderr
    header_on_stdio = run("--user-header", "X-NeuSym-User")
    assert header_on_stdio.exit_code == 2 and "needs --http" in header_on_stdio.stderr
    bad = run("--http", "localhost", "--user", "ana")
    assert bad.exit_code == 2 and "HOST:PORT" in bad.stderr
