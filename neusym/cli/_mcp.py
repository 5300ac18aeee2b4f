"""``neusym mcp``: serve the memory to MCP clients. The server lives in the ``mcp_neusym`` adapter package and is
imported only when the command runs, so the engine and the other commands never need the ``mcp`` SDK."""

from __future__ import annotations

from typing import Annotated

import typer

from neusym.cli._app import app
from neusym.cli._base import Opts, command
from neusym.errors import NeuSymError

__all__: list[str] = []

_SDK_MODULES = {"mcp", "mcp_neusym", "uvicorn", "starlette", "anyio", "sse_starlette", "httpx_sse"}


@command(app, "mcp")
def mcp_cmd(
    opts: Opts,
    http: Annotated[str | None, typer.Option(
        "--http", metavar="HOST:PORT",
        help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (e.g. 127.0.0.1:8765; port 0 picks "
             "one). A non-loopback HOST needs --token.")] = None,
    user_header: Annotated[str | None, typer.Option(
        "--user-header", envvar="NEUSYM_MCP_USER_HEADER", metavar="HEADER",
        help="HTTP: take the user from this request header on every call (e.g. X-NeuSym-User), for a server "
             "behind a gateway that authenticates users. Excludes --user.")] = None,
    allow_user: Annotated[list[str] | None, typer.Option(
        "--allow-user", help="With --user-header: serve only these users (repeat the option).")] = None,
    token: Annotated[str | None, typer.Option(
        "--token", envvar="NEUSYM_MCP_TOKEN", show_envvar=True,
        help="HTTP: require 'Authorization: Bearer TOKEN' on every request (prefer the environment variable: "
             "command lines are visible to other local users).")] = None,
    tools: Annotated[str | None, typer.Option(
        "--tools", metavar="NAMES",
        help="Comma-separated tools to expose (default all: remember, recall, query, forget, update, history, "
             "review_list, review_approve, review_reject, reflect, curate, import_memories).")] = None,
    read_scope: Annotated[str, typer.Option(
        "--read-scope", help="How far reads reach: user (every session of the user), agent or session.")]
    = "user",
) -> None:
    """Serve this memory to MCP clients (Claude Desktop, IDE agents, langchain-mcp-adapters): stdio by default,
    streamable HTTP with --http. The user comes from --user (or, over HTTP, --user-header), never from a tool
    argument; without either, every memory call is refused."""
    try:
        import mcp_neusym
    except ImportError as err:
        if (err.name or "").split(".")[0] in _SDK_MODULES:
            raise NeuSymError("`neusym mcp` needs the MCP SDK: pip install 'neusym[mcp]'") from None
        raise
    chosen = frozenset(t.strip() for t in tools.split(",") if t.strip()) if tools else frozenset(
        mcp_neusym.TOOL_NAMES)
    settings = mcp_neusym.ServerSettings(
        user_id=opts.user, user_header=user_header, allowed_users=frozenset(allow_user) if allow_user else None,
        token=token or None, agent_id=opts.agent, session_id=opts.session, read_scope=read_scope,  # type: ignore[arg-type]
        tools=chosen)
    address = mcp_neusym.parse_http_address(http) if http is not None else None
    mcp_neusym.run(opts.memory, settings, http=address, log_level="INFO" if opts.verbose else "WARNING")
